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
check_PROGRAMS += tests/unit/test_kernel
TESTS += tests/unit/test_kernel
SANITIZER_TESTS += tests/unit/test_kernel
tests_unit_test_kernel_SOURCES = tests/unit/test_kernel.c tests/unit/mock_host.c \
	tests/unit/mock_host.h plugins/kernel/kernel.c plugins/kernel/kernel.h
tests_unit_test_kernel_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/lib -I$(top_srcdir)/tests/unit \
	-I$(top_srcdir)/plugins/kernel -DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_kernel_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_kernel_LDADD = lib/libopng.la $(CMOCKA_LIBS)
# the kallsyms/modules formats (lib/op_ksyms.c)
check_PROGRAMS += tests/unit/test_ksyms
TESTS += tests/unit/test_ksyms
SANITIZER_TESTS += tests/unit/test_ksyms
tests_unit_test_ksyms_SOURCES = tests/unit/test_ksyms.c
tests_unit_test_ksyms_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_ksyms_LDADD = lib/libopng.la $(CMOCKA_LIBS)
# the trust rule: owners and modes of a file and the directories above it (lib/op_trust.c)
check_PROGRAMS += tests/unit/test_op_trust
TESTS += tests/unit/test_op_trust
SANITIZER_TESTS += tests/unit/test_op_trust
tests_unit_test_op_trust_SOURCES = tests/unit/test_op_trust.c
tests_unit_test_op_trust_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_op_trust_LDADD = lib/libopng.la $(CMOCKA_LIBS)
check_PROGRAMS += tests/unit/test_mock_host
TESTS += tests/unit/test_mock_host
SANITIZER_TESTS += tests/unit/test_mock_host
tests_unit_test_mock_host_SOURCES = tests/unit/test_mock_host.c tests/unit/mock_host.c \
	tests/unit/mock_host.h
tests_unit_test_mock_host_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/tests/unit
tests_unit_test_mock_host_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_mock_host_LDADD = $(CMOCKA_LIBS)
# dlopens the built plugins: not a sanitizer test
check_PROGRAMS += tests/unit/test_plugin_so
TESTS += tests/unit/test_plugin_so
tests_unit_test_plugin_so_SOURCES = tests/unit/test_plugin_so.c tests/unit/mock_host.c \
	tests/unit/mock_host.h
tests_unit_test_plugin_so_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/tests/unit \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_plugin_so_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_plugin_so_LDADD = $(CMOCKA_LIBS) $(DL_LIBS)
endif
EXTRA_DIST += tests/data/kernel/proc-a/kallsyms tests/data/kernel/proc-a/kallsyms.expected \
	tests/data/kernel/proc-a/modules tests/data/kernel/proc-a/sys/kernel/kptr_restrict \
	tests/data/kernel/proc-zero/kallsyms tests/data/kernel/proc-zero/modules \
	tests/data/kernel/proc-zero/sys/kernel/kptr_restrict

# --- names: sample-file names and events/ parser ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_mangle
TESTS += tests/unit/test_mangle
SANITIZER_TESTS += tests/unit/test_mangle
tests_unit_test_mangle_SOURCES = tests/unit/test_mangle.c
tests_unit_test_mangle_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_mangle_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_events
TESTS += tests/unit/test_events
SANITIZER_TESTS += tests/unit/test_events
tests_unit_test_events_SOURCES = tests/unit/test_events.c
tests_unit_test_events_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_events_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_events_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
EXTRA_DIST += \
	tests/data/events/broken/bad_name/events \
	tests/data/events/broken/bad_name/unit_masks \
	tests/data/events/broken/code_too_big/events \
	tests/data/events/broken/code_too_big/unit_masks \
	tests/data/events/broken/include_missing/events \
	tests/data/events/broken/include_missing/unit_masks \
	tests/data/events/broken/unused_mask/events \
	tests/data/events/broken/unused_mask/unit_masks \
	tests/data/events/test/base/events \
	tests/data/events/test/base/unit_masks \
	tests/data/events/test/cycle_a/events \
	tests/data/events/test/cycle_a/unit_masks \
	tests/data/events/test/cycle_b/events \
	tests/data/events/test/cycle_b/unit_masks \
	tests/data/events/test/fam10ibs/events \
	tests/data/events/test/fam10ibs/unit_masks \
	tests/data/events/test/includer/events \
	tests/data/events/test/includer/unit_masks \
	tests/data/events/test/modifiers/events \
	tests/data/events/test/modifiers/unit_masks \
	tests/data/events/test/nounits/events \
	tests/data/events/test/nounits/unit_masks

# --- opcount: live counting tests on software events (perf_event). They pass
# under ASan+UBSan too (the page toucher is not instrumented, so shadow memory
# adds no faults), so they run there as well ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_opcount
TESTS += tests/unit/test_opcount
SANITIZER_TESTS += tests/unit/test_opcount
tests_unit_test_opcount_SOURCES = tests/unit/test_opcount.c
tests_unit_test_opcount_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/opcount
tests_unit_test_opcount_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_opcount_LDADD = lib/libopcount.la $(CMOCKA_LIBS)
endif

# --- core: buffer sync, trans, sfile hash, session ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_sync tests/unit/test_trans tests/unit/test_sfile \
	tests/unit/test_session
TESTS += tests/unit/test_sync tests/unit/test_trans tests/unit/test_sfile tests/unit/test_session
SANITIZER_TESTS += tests/unit/test_sync tests/unit/test_trans tests/unit/test_sfile \
	tests/unit/test_session
tests_unit_test_sync_SOURCES = tests/unit/test_sync.c
tests_unit_test_sync_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_sync_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_sync_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
tests_unit_test_trans_SOURCES = tests/unit/test_trans.c tests/unit/core_fixture.h
tests_unit_test_trans_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_trans_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_trans_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
tests_unit_test_sfile_SOURCES = tests/unit/test_sfile.c tests/unit/core_fixture.h
tests_unit_test_sfile_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_sfile_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_sfile_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
tests_unit_test_session_SOURCES = tests/unit/test_session.c
tests_unit_test_session_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_session_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_session_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
endif

# --- loader: plugin loader (real fixture plugins, dlopen: no sanitizer run),
# options and config file ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_ext
TESTS += tests/unit/test_ext
tests_unit_test_ext_SOURCES = tests/unit/test_ext.c
tests_unit_test_ext_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_ext_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_ext_LDADD = core/libopload.la lib/libopng.la $(CMOCKA_LIBS)
EXTRA_tests_unit_test_ext_DEPENDENCIES = $(check_LTLIBRARIES)
check_PROGRAMS += tests/unit/test_ext_reg
TESTS += tests/unit/test_ext_reg
SANITIZER_TESTS += tests/unit/test_ext_reg
tests_unit_test_ext_reg_SOURCES = tests/unit/test_ext_reg.c
tests_unit_test_ext_reg_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_ext_reg_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_ext_reg_LDADD = core/libopload.la lib/libopng.la $(CMOCKA_LIBS)
check_PROGRAMS += tests/unit/test_options tests/unit/test_config
TESTS += tests/unit/test_options tests/unit/test_config
SANITIZER_TESTS += tests/unit/test_options tests/unit/test_config
tests_unit_test_options_SOURCES = tests/unit/test_options.c tests/unit/options_fixture.h
tests_unit_test_options_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_options_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_options_LDADD = core/libopload.la lib/libopng.la $(CMOCKA_LIBS)
tests_unit_test_config_SOURCES = tests/unit/test_config.c tests/unit/options_fixture.h
tests_unit_test_config_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_config_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBCONFIG_CFLAGS)
tests_unit_test_config_LDADD = core/libopload.la lib/libopng.la $(LIBCONFIG_LIBS) $(CMOCKA_LIBS)
# the setting values both take: a leaf, built alone
check_PROGRAMS += tests/unit/test_optval
TESTS += tests/unit/test_optval
SANITIZER_TESTS += tests/unit/test_optval
tests_unit_test_optval_SOURCES = tests/unit/test_optval.c core/optval.c core/optval.h
tests_unit_test_optval_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_optval_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_optval_LDADD = $(CMOCKA_LIBS)
endif

# --- report: opreport stages (issue 4) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_report_spec
TESTS += tests/unit/test_report_spec
SANITIZER_TESTS += tests/unit/test_report_spec
tests_unit_test_report_spec_SOURCES = tests/unit/test_report_spec.c tools/opreport/opreport_spec.c
tests_unit_test_report_spec_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tests_unit_test_report_spec_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_report_spec_LDADD = $(CMOCKA_LIBS)
if BUILD_REPORT
check_PROGRAMS += tests/unit/test_report_symbols
TESTS += tests/unit/test_report_symbols
SANITIZER_TESTS += tests/unit/test_report_symbols
tests_unit_test_report_symbols_SOURCES = tests/unit/test_report_symbols.c
tests_unit_test_report_symbols_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tests_unit_test_report_symbols_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -g
tests_unit_test_report_symbols_LDADD = tools/opreport/libopreport.la lib/libopng.la $(BFD_LIBS) $(CMOCKA_LIBS)
# issue 14 hole 7: escaping of names in text output, UTF-8 in SVG
check_PROGRAMS += tests/unit/test_report_text
TESTS += tests/unit/test_report_text
SANITIZER_TESTS += tests/unit/test_report_text
tests_unit_test_report_text_SOURCES = tests/unit/test_report_text.c tools/opreport/opreport_text.c \
	tools/opreport/flamegraph.c
tests_unit_test_report_text_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tests_unit_test_report_text_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_report_text_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
endif

# --- perf: sample path (ring reader, decoder, merge, record/replay, /proc synthesis) ---
EXTRA_DIST += tests/unit/fake_ring.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_ring tests/unit/test_perf_decode
TESTS += tests/unit/test_ring tests/unit/test_perf_decode
SANITIZER_TESTS += tests/unit/test_ring tests/unit/test_perf_decode
tests_unit_test_ring_SOURCES = tests/unit/test_ring.c tests/unit/fake_ring.h
tests_unit_test_ring_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_ring_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_ring_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
tests_unit_test_perf_decode_SOURCES = tests/unit/test_perf_decode.c tests/unit/fake_ring.h
tests_unit_test_perf_decode_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_perf_decode_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_perf_decode_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
endif
# --- models helper: hardware-model plugins (amd64, intel) through the mock host,
# cross-checked against libpfm4 (LIBPFM_ENCODE_INACTIVE; forced PMUs in re-executed children)
EXTRA_DIST += tests/unit/model_check.h
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_model_amd64 tests/unit/test_model_intel
TESTS += tests/unit/test_model_amd64 tests/unit/test_model_intel
SANITIZER_TESTS += tests/unit/test_model_amd64 tests/unit/test_model_intel
tests_unit_test_model_amd64_SOURCES = tests/unit/test_model_amd64.c tests/unit/mock_host.c \
	tests/unit/mock_host.h plugins/amd64/amd64.c plugins/common/model_pfm.c
tests_unit_test_model_amd64_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit \
	-I$(top_srcdir)/plugins/common -DTEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_model_amd64_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_model_amd64_LDADD = lib/libopng.la $(PFM_LIBS) $(CMOCKA_LIBS)
tests_unit_test_model_intel_SOURCES = tests/unit/test_model_intel.c tests/unit/mock_host.c \
	tests/unit/mock_host.h plugins/intel/intel.c plugins/common/model_pfm.c
tests_unit_test_model_intel_CPPFLAGS = $(tests_unit_test_model_amd64_CPPFLAGS)
tests_unit_test_model_intel_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_model_intel_LDADD = lib/libopng.la $(PFM_LIBS) $(CMOCKA_LIBS)
check_PROGRAMS += tests/unit/test_catalogues
TESTS += tests/unit/test_catalogues
SANITIZER_TESTS += tests/unit/test_catalogues
tests_unit_test_catalogues_SOURCES = tests/unit/test_catalogues.c
tests_unit_test_catalogues_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_catalogues_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_catalogues_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif

# --- callgraph plugin on the mock host (issue 5) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_callgraph
TESTS += tests/unit/test_callgraph
SANITIZER_TESTS += tests/unit/test_callgraph
tests_unit_test_callgraph_SOURCES = tests/unit/test_callgraph.c tests/unit/mock_host.c \
	tests/unit/mock_host.h plugins/callgraph/callgraph.c
tests_unit_test_callgraph_CPPFLAGS = -I$(top_srcdir)/sdk -I$(top_srcdir)/lib -I$(top_srcdir)/tests/unit
tests_unit_test_callgraph_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_callgraph_LDADD = $(CMOCKA_LIBS)
endif

# --- ibs helper: the ibs plugin on the mock host (rules shared with the replay test) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_ibs
TESTS += tests/unit/test_ibs
SANITIZER_TESTS += tests/unit/test_ibs
tests_unit_test_ibs_SOURCES = tests/unit/test_ibs.c tests/unit/mock_host.c \
	tests/unit/mock_host.h plugins/ibs/ibs.c plugins/ibs/ibs_decode.c \
	tests/integration/ibs_rules.h
tests_unit_test_ibs_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/sdk -I$(top_srcdir)/lib \
	-I$(top_srcdir)/tests/unit -I$(top_srcdir)/plugins/ibs
tests_unit_test_ibs_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_ibs_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif

# --- deploy: save/reset/rotate of samples/current (core/rotate.c, linked into oprofiled) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_rotate
TESTS += tests/unit/test_rotate
SANITIZER_TESTS += tests/unit/test_rotate
tests_unit_test_rotate_SOURCES = tests/unit/test_rotate.c core/rotate.c core/rotate.h
tests_unit_test_rotate_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_rotate_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_rotate_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
endif
# issue 15 item 5: the stats/ files (kinds of kernel losses, --append, full disk)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_stats
TESTS += tests/unit/test_stats
SANITIZER_TESTS += tests/unit/test_stats
tests_unit_test_stats_SOURCES = tests/unit/test_stats.c
tests_unit_test_stats_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_stats_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_stats_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
endif
# issue 14 hole 6: the --record writer's file creation (new file, no symlink, overwrite)
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_replay
TESTS += tests/unit/test_replay
SANITIZER_TESTS += tests/unit/test_replay
tests_unit_test_replay_SOURCES = tests/unit/test_replay.c
tests_unit_test_replay_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_replay_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_replay_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
endif

# --- issue 16: the daemon's pipeline object (core/pipeline.c) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_pipeline
TESTS += tests/unit/test_pipeline
SANITIZER_TESTS += tests/unit/test_pipeline
tests_unit_test_pipeline_SOURCES = tests/unit/test_pipeline.c
tests_unit_test_pipeline_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_unit_test_pipeline_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(LIBCONFIG_CFLAGS)
tests_unit_test_pipeline_LDADD = core/libopdaemon.la core/libopsample.la core/libopload.la \
	core/liboplog.la lib/libopng.la $(LIBCONFIG_LIBS) $(DL_LIBS) $(CMOCKA_LIBS)
endif

# issue 17 (diff): differential opreport - { } splitting, diff % arithmetic, row matching
if HAVE_CMOCKA
if BUILD_REPORT
check_PROGRAMS += tests/unit/test_report_diff
TESTS += tests/unit/test_report_diff
SANITIZER_TESTS += tests/unit/test_report_diff
tests_unit_test_report_diff_SOURCES = tests/unit/test_report_diff.c
tests_unit_test_report_diff_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools/opreport
tests_unit_test_report_diff_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_report_diff_LDADD = tools/opreport/libopreport.la lib/libopng.la $(BFD_LIBS) $(CMOCKA_LIBS) -lm
endif
endif
# --- opimport (issue 17): lib/op_abi, the abi file and the sample-file conversion
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_op_abi
TESTS += tests/unit/test_op_abi
SANITIZER_TESTS += tests/unit/test_op_abi
tests_unit_test_op_abi_SOURCES = tests/unit/test_op_abi.c
tests_unit_test_op_abi_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_op_abi_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
# --- issue 18: lib/op_jit (jitdump and perf-map readers) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_jit
TESTS += tests/unit/test_jit
SANITIZER_TESTS += tests/unit/test_jit
tests_unit_test_jit_SOURCES = tests/unit/test_jit.c
tests_unit_test_jit_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_jit_LDADD = lib/libopng.la $(CMOCKA_LIBS)
# libopagent written, read back with lib/op_jit
check_PROGRAMS += tests/unit/test_opagent
TESTS += tests/unit/test_opagent
SANITIZER_TESTS += tests/unit/test_opagent
tests_unit_test_opagent_SOURCES = tests/unit/test_opagent.c
tests_unit_test_opagent_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/opagent
tests_unit_test_opagent_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) -pthread
tests_unit_test_opagent_LDADD = lib/opagent/libopagent.la lib/libopng.la $(CMOCKA_LIBS) -lpthread
endif
# --- issue 19: build IDs (lib/op_buildid.c) against readelf on real fixtures ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_buildid tests/unit/buildid_sha1 tests/unit/buildid_md5 \
	tests/unit/buildid_none
TESTS += tests/unit/test_buildid
SANITIZER_TESTS += tests/unit/test_buildid
tests_unit_test_buildid_SOURCES = tests/unit/test_buildid.c tests/unit/buildid_fixture.h
tests_unit_test_buildid_CPPFLAGS = $(AM_CPPFLAGS) -DFIX_DIR='"$(abs_top_builddir)/tests/unit"'
tests_unit_test_buildid_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_buildid_LDADD = lib/libopng.la $(CMOCKA_LIBS)
tests_unit_buildid_sha1_SOURCES = tests/unit/buildid_fix.c
tests_unit_buildid_sha1_LDFLAGS = -Wl,--build-id=sha1
tests_unit_buildid_md5_SOURCES = tests/unit/buildid_fix.c
tests_unit_buildid_md5_LDFLAGS = -Wl,--build-id=md5
tests_unit_buildid_none_SOURCES = tests/unit/buildid_fix.c
tests_unit_buildid_none_LDFLAGS = -Wl,--build-id=none
# the daemon's side: what cookie_intern reads, the index text, stats/buildids
check_PROGRAMS += tests/unit/test_cookie_buildid
TESTS += tests/unit/test_cookie_buildid
SANITIZER_TESTS += tests/unit/test_cookie_buildid
tests_unit_test_cookie_buildid_SOURCES = tests/unit/test_cookie_buildid.c tests/unit/buildid_fixture.h
tests_unit_test_cookie_buildid_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core \
	-DFIX_DIR='"$(abs_top_builddir)/tests/unit"'
tests_unit_test_cookie_buildid_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cookie_buildid_LDADD = core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
endif
# --- issue 19: libopprofile (model, diff, pprof read back by protobuf-c, session load) ---
if HAVE_CMOCKA
if BUILD_EXPORT
check_PROGRAMS += tests/unit/test_op_profile
TESTS += tests/unit/test_op_profile
SANITIZER_TESTS += tests/unit/test_op_profile
tests_unit_test_op_profile_SOURCES = tests/unit/test_op_profile.c
tests_unit_test_op_profile_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/profile \
	-I$(top_builddir)/lib/profile $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_op_profile_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_op_profile_LDADD = lib/libopprofile.la lib/libopng.la $(PROTOBUF_C_LIBS) \
	$(ZLIB_LIBS) $(CMOCKA_LIBS)
$(tests_unit_test_op_profile_OBJECTS): lib/profile/profile.pb-c.h
endif
endif
# --- issue 20: lib/op_cgroups, lib/op_ksyms_store, "<N>Hz" event counts ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_fleet_lib
TESTS += tests/unit/test_fleet_lib
SANITIZER_TESTS += tests/unit/test_fleet_lib
tests_unit_test_fleet_lib_SOURCES = tests/unit/test_fleet_lib.c
tests_unit_test_fleet_lib_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_fleet_lib_LDADD = lib/libopng.la $(CMOCKA_LIBS)
# opreport_spec.c's cgroup: reads the index through lib/op_cgroups
tests_unit_test_report_spec_LDADD += lib/libopng.la
endif
# --- issue 18: lib/op_jitelf, read back by readelf, nm and addr2line (libbfd) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_jitelf
TESTS += tests/unit/test_jitelf
SANITIZER_TESTS += tests/unit/test_jitelf
tests_unit_test_jitelf_SOURCES = tests/unit/test_jitelf.c
tests_unit_test_jitelf_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_jitelf_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
# --- issue 18: plugins/jit through the real loader and buffer sync, on written dumps and maps ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_jitplug
TESTS += tests/unit/test_jitplug
tests_unit_test_jitplug_SOURCES = tests/unit/test_jitplug.c tests/abi/sync_host.h
tests_unit_test_jitplug_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core -I$(top_srcdir)/lib \
	-I$(top_srcdir)/tests/abi
tests_unit_test_jitplug_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_jitplug_LDADD = core/libopload.la core/libopsample.la lib/libopng.la $(CMOCKA_LIBS)
EXTRA_tests_unit_test_jitplug_DEPENDENCIES = plugins/jit.la
endif

# --- issue 20: the push plugin's bounded spool ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_push_spool
TESTS += tests/unit/test_push_spool
SANITIZER_TESTS += tests/unit/test_push_spool
tests_unit_test_push_spool_SOURCES = tests/unit/test_push_spool.c plugins/push/spool.c \
	plugins/push/spool.h
tests_unit_test_push_spool_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/push
tests_unit_test_push_spool_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_push_spool_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
# --- issue 19: the stack table reader's version 3 context nodes (lib/op_cg_read) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_cg_read
TESTS += tests/unit/test_cg_read
SANITIZER_TESTS += tests/unit/test_cg_read
tests_unit_test_cg_read_SOURCES = tests/unit/test_cg_read.c
tests_unit_test_cg_read_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cg_read_LDADD = lib/libopng.la $(CMOCKA_LIBS)
endif
# --- issue 20: privsep: plugins/common/np_child (spawn, drop, messages) ---
if HAVE_CMOCKA
check_PROGRAMS += tests/unit/test_np_child tests/unit/np_child_helper
TESTS += tests/unit/test_np_child
tests_unit_test_np_child_SOURCES = tests/unit/test_np_child.c tests/unit/np_child_test.h \
	plugins/common/np_child.c plugins/common/np_child.h
tests_unit_test_np_child_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-DHELPER_DIR='"$(abs_top_builddir)/tests/unit"'
tests_unit_test_np_child_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_np_child_LDADD = lib/libopng.la $(CMOCKA_LIBS)
EXTRA_tests_unit_test_np_child_DEPENDENCIES = tests/unit/np_child_helper
# the helper it spawns: a plain executable (no libtool library), as every helper
tests_unit_np_child_helper_SOURCES = tests/unit/np_child_helper.c tests/unit/np_child_test.h \
	plugins/common/np_child.c plugins/common/np_child.h lib/op_trust.c lib/op_trust.h
tests_unit_np_child_helper_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common
endif
# --- end issue 20: privsep ---
# --- issue 20: the push plugin's URL setting and query escaping (liburiparser) ---
if HAVE_CMOCKA
if BUILD_PUSH_PLUGIN
check_PROGRAMS += tests/unit/test_push_url
TESTS += tests/unit/test_push_url
SANITIZER_TESTS += tests/unit/test_push_url
endif
endif
tests_unit_test_push_url_SOURCES = tests/unit/test_push_url.c plugins/push/push_url.c \
	plugins/push/push_url.h
tests_unit_test_push_url_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/push \
	$(URIPARSER_CFLAGS)
tests_unit_test_push_url_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_push_url_LDADD = $(URIPARSER_LIBS) $(CMOCKA_LIBS)
# --- end issue 20: liburiparser ---
