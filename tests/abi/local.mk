# tests/abi
# (owner: loader) pins sizes/offsets of every SDK struct and the constants
if HAVE_CMOCKA
check_PROGRAMS += tests/abi/test_abi
TESTS += tests/abi/test_abi
SANITIZER_TESTS += tests/abi/test_abi
tests_abi_test_abi_SOURCES = tests/abi/test_abi.c
tests_abi_test_abi_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_abi_test_abi_LDADD = $(CMOCKA_LIBS)
endif

# --- issue 18: SDK 1.2 - a 1.0, a 1.1 and a 1.2 plugin in one loader, the
# proc hook, anon resolver and session hook through the real buffer sync ---
if HAVE_CMOCKA
check_LTLIBRARIES += tests/abi/fx_v11.la tests/abi/fx_sdk12.la
tests_abi_fx_v11_la_SOURCES = tests/abi/fx_v11.c
tests_abi_fx_v11_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
tests_abi_fx_sdk12_la_SOURCES = tests/abi/fx_sdk12.c
tests_abi_fx_sdk12_la_LDFLAGS = $(OP_FIXTURE_LDFLAGS)
check_PROGRAMS += tests/abi/test_sdk12
TESTS += tests/abi/test_sdk12
tests_abi_test_sdk12_SOURCES = tests/abi/test_sdk12.c tests/abi/sync_host.h
tests_abi_test_sdk12_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_abi_test_sdk12_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_abi_test_sdk12_LDADD = core/libopload.la core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
EXTRA_tests_abi_test_sdk12_DEPENDENCIES = $(check_LTLIBRARIES)
endif
