# tests/fuzz
# fuzz_odb: libFuzzer target for lib/odb (tests/fuzz/run-fuzz.sh, on demand);
# built here with gcc as a TAP regression runner over tests/fuzz/corpus/odb.
check_PROGRAMS += tests/fuzz/fuzz_odb
TESTS += tests/fuzz/fuzz_odb
SANITIZER_TESTS += tests/fuzz/fuzz_odb
tests_fuzz_fuzz_odb_SOURCES = tests/fuzz/fuzz_odb.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_odb_LDADD = lib/libopng.la
EXTRA_DIST += tests/fuzz/corpus/odb
dist_noinst_SCRIPTS += tests/fuzz/run-fuzz.sh
# fuzz_names: libFuzzer target for lib/op_mangle + lib/op_events (build line in
# the file header); built here as a TAP regression runner over tests/fuzz/corpus/names.
check_PROGRAMS += tests/fuzz/fuzz_names
TESTS += tests/fuzz/fuzz_names
SANITIZER_TESTS += tests/fuzz/fuzz_names
tests_fuzz_fuzz_names_SOURCES = tests/fuzz/fuzz_names.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_names_LDADD = lib/libopng.la
EXTRA_DIST += tests/fuzz/corpus/names
# fuzz_perf: libFuzzer target for the sample path's decoder, ring walker, merge
# and replay reader (build line in the file header); built here as a TAP
# regression runner over tests/fuzz/corpus/perf.
check_PROGRAMS += tests/fuzz/fuzz_perf
TESTS += tests/fuzz/fuzz_perf
SANITIZER_TESTS += tests/fuzz/fuzz_perf
tests_fuzz_fuzz_perf_SOURCES = tests/fuzz/fuzz_perf.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_perf_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_fuzz_fuzz_perf_LDADD = core/libopsample.la lib/libopng.la
EXTRA_DIST += tests/fuzz/corpus/perf
# run-fuzz.sh must know every fuzz_*.c of this directory
dist_check_SCRIPTS += tests/fuzz/fuzz_targets.sh
TESTS += tests/fuzz/fuzz_targets.sh
# fuzz_opimport: libFuzzer target for lib/op_abi (opimport's conversion); built
# here as a TAP regression runner over tests/fuzz/corpus/opimport (issue 17).
check_PROGRAMS += tests/fuzz/fuzz_opimport
TESTS += tests/fuzz/fuzz_opimport
SANITIZER_TESTS += tests/fuzz/fuzz_opimport
tests_fuzz_fuzz_opimport_SOURCES = tests/fuzz/fuzz_opimport.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_opimport_LDADD = lib/libopng.la
EXTRA_DIST += tests/fuzz/corpus/opimport
# --- issue 19: fuzz_buildid: libFuzzer target for lib/op_buildid (ELF notes and the
# session's build-id index); built here as a TAP regression runner over tests/fuzz/corpus/buildid.
check_PROGRAMS += tests/fuzz/fuzz_buildid
TESTS += tests/fuzz/fuzz_buildid
SANITIZER_TESTS += tests/fuzz/fuzz_buildid
tests_fuzz_fuzz_buildid_SOURCES = tests/fuzz/fuzz_buildid.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_buildid_LDADD = lib/libopng.la
EXTRA_DIST += tests/fuzz/corpus/buildid
# --- issue 18: fuzz_jitdump / fuzz_jitmap: libFuzzer targets for lib/op_jit's
# jitdump and perf-map readers; built here as TAP regression runners over
# tests/fuzz/corpus/jitdump and tests/fuzz/corpus/jitmap ---
check_PROGRAMS += tests/fuzz/fuzz_jitdump tests/fuzz/fuzz_jitmap
TESTS += tests/fuzz/fuzz_jitdump tests/fuzz/fuzz_jitmap
SANITIZER_TESTS += tests/fuzz/fuzz_jitdump tests/fuzz/fuzz_jitmap
tests_fuzz_fuzz_jitdump_SOURCES = tests/fuzz/fuzz_jitdump.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_jitdump_LDADD = lib/libopng.la
tests_fuzz_fuzz_jitmap_SOURCES = tests/fuzz/fuzz_jitmap.c tests/fuzz/corpus_runner.c tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_jitmap_LDADD = lib/libopng.la
EXTRA_DIST += tests/fuzz/corpus/jitdump tests/fuzz/corpus/jitmap
# --- issue 19: fuzz_cgstacks: libFuzzer target for lib/op_cg_read (the call-graph
# stack table) and libopprofile's load + pprof encoding of it; built here as a TAP
# regression runner over tests/fuzz/corpus/cgstacks.
if BUILD_EXPORT
check_PROGRAMS += tests/fuzz/fuzz_cgstacks
TESTS += tests/fuzz/fuzz_cgstacks
SANITIZER_TESTS += tests/fuzz/fuzz_cgstacks
tests_fuzz_fuzz_cgstacks_SOURCES = tests/fuzz/fuzz_cgstacks.c tests/fuzz/corpus_runner.c \
	tests/fuzz/corpus_runner.h
tests_fuzz_fuzz_cgstacks_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/profile \
	-I$(top_builddir)/lib/profile $(PROTOBUF_C_CFLAGS)
tests_fuzz_fuzz_cgstacks_LDADD = lib/libopprofile.la lib/libopng.la $(PROTOBUF_C_LIBS)
$(tests_fuzz_fuzz_cgstacks_OBJECTS): lib/profile/profile.pb-c.h
else
EXTRA_DIST += tests/fuzz/fuzz_cgstacks.c
endif
EXTRA_DIST += tests/fuzz/corpus/cgstacks
