# plugins/ - one fragment per plugin
include $(srcdir)/plugins/timer/local.mk
include $(srcdir)/plugins/kernel/local.mk
include $(srcdir)/plugins/callgraph/local.mk
include $(srcdir)/plugins/ibs/local.mk
include $(srcdir)/plugins/amd64/local.mk
include $(srcdir)/plugins/intel/local.mk
# header-only helpers compiled into each plugin (plugins/common/plugin_util.h)
EXTRA_DIST += plugins/common/plugin_util.h
# --- issue 20: cgroup labels ---
include $(srcdir)/plugins/cgroup/local.mk
# --- issue 18: JIT code as ELF images in the session ---
include $(srcdir)/plugins/jit/local.mk
# --- issue 20: network plugins (pprof pull, push) ---
include $(srcdir)/plugins/pprof/local.mk
include $(srcdir)/plugins/push/local.mk
