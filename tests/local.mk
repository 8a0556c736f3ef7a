# tests/ - one fragment per kind of test
include $(srcdir)/tests/unit/local.mk
include $(srcdir)/tests/abi/local.mk
include $(srcdir)/tests/plugins/local.mk
include $(srcdir)/tests/integration/local.mk
include $(srcdir)/tests/fuzz/local.mk
include $(srcdir)/tests/bench/local.mk
