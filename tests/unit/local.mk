# tests/unit
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_odb
TESTS += tests/unit/test_odb
SANITIZER_TESTS += tests/unit/test_odb
tests_unit_test_odb_SOURCES = tests/unit/test_odb.c
tests_unit_test_odb_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_odb_LDADD = lib/libopng.la $(CMOCKA_LIBS)
check_PROGRAMS += tests/unit/test_odb_corrupt
TESTS += tests/unit/test_odb_corrupt
SANITIZER_TESTS += tests/unit/test_odb_corrupt
tests_unit_test_odb_corrupt_SOURCES = tests/unit/test_odb_corrupt.c
tests_unit_test_odb_corrupt_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_odb_corrupt_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif

# --- plugins helper: mock host + timer/kernel plugin tests ---
EXTRA_DIST += tests/unit/mock_host.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_timer
TESTS += tests/unit/test_timer
SANITIZER_TESTS += tests/unit/test_timer
tests_unit_test_timer_SOURCES = tests/unit/test_timer.c tests/unit/mock_host.c \
	tests/unit/mock_host.h plugins/timer/timer.c
tests_unit_test_timer_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/tests/unit
tests_unit_test_timer_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_timer_LDADD = $(CMOCKA_LIBS)
endif

# --- names: sample-file names and events/ parser ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_mangle
TESTS += tests/unit/test_mangle
SANITIZER_TESTS += tests/unit/test_mangle
tests_unit_test_mangle_SOURCES = tests/unit/test_mangle.c
tests_unit_test_mangle_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_mangle_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif

# --- opcount: live counting tests on software events (perf_event; not under
# ASan: the tests count page faults, which a sanitizer's shadow memory adds) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_opcount
TESTS += tests/unit/test_opcount
tests_unit_test_opcount_SOURCES = tests/unit/test_opcount.c
tests_unit_test_opcount_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_opcount_LDADD = lib/libopcount.la $(CMOCKA_LIBS)
endif

# --- core: buffer sync, trans, sfile hash, session ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_sync tests/unit/test_trans
TESTS += tests/unit/test_sync tests/unit/test_trans
SANITIZER_TESTS += tests/unit/test_sync tests/unit/test_trans
tests_unit_test_sync_SOURCES = tests/unit/test_sync.c
tests_unit_test_sync_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_sync_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_sync_LDADD = core/libopsync.la lib/libopng.la $(CMOCKA_LIBS)
tests_unit_test_trans_SOURCES = tests/unit/test_trans.c tests/unit/core_fixture.h
tests_unit_test_trans_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_trans_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_trans_LDADD = core/libopsync.la lib/libopng.la $(CMOCKA_LIBS)
endif
