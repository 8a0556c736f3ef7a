# tests/integration

# shared by the security tests: an unprivileged user beside root
EXTRA_DIST += tests/integration/test_user.sh

# --- report: opreport/ophelp golden and live tests, fixture programs (issue 4) ---
# the directory (not tests/data/report: the build tree has one too, full of objects)
EXTRA_DIST += tests/data/report/golden
# mkfixture: the golden test's session builder; the fx_* programs are the live
# tests' workloads (report_golden.sh compiles its own copies with fixed flags)
check_PROGRAMS += tests/data/report/mkfixture tests/data/report/fx_dyn tests/data/report/fx_cxx \
	tests/data/report/fx_dlopen
check_LTLIBRARIES += tests/data/report/libfx.la
tests_data_report_mkfixture_SOURCES = tests/data/report/mkfixture.c \
	tests/integration/test_util.c tests/integration/test_util.h
tests_data_report_mkfixture_LDADD = lib/libopng.la
tests_data_report_fx_dyn_SOURCES = tests/data/report/fx_c.c
tests_data_report_fx_dyn_CFLAGS = $(AM_CFLAGS) -g -fno-inline
tests_data_report_fx_dyn_LDFLAGS = -Wl,--export-dynamic
tests_data_report_fx_cxx_SOURCES = tests/data/report/fx_cxx.cpp
tests_data_report_fx_cxx_CXXFLAGS = -g
tests_data_report_fx_dlopen_SOURCES = tests/data/report/fx_dlopen.c
tests_data_report_fx_dlopen_LDADD = $(DL_LIBS)
tests_data_report_libfx_la_SOURCES = tests/data/report/fx_lib.c
tests_data_report_libfx_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
# opcount tool: counts, exit status, CSV/JSON, per-thread/CPU, intervals, errors
dist_check_SCRIPTS += tests/integration/opcount.sh
TESTS += tests/integration/opcount.sh
dist_check_SCRIPTS += tests/integration/report_golden.sh
if BUILD_REPORT
TESTS += tests/integration/report_golden.sh
endif
# sample path (perf): live launch / --pid / system-wide / record+replay
check_PROGRAMS += tests/integration/perf_probe
tests_integration_perf_probe_SOURCES = tests/integration/perf_probe.c
tests_integration_perf_probe_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_integration_perf_probe_LDADD = core/libopsample.la lib/libopng.la -lpthread
# replay.c needs lib/libopng (op_trust); -no-install keeps perf_probe a real
# binary (run path into the build tree), not a libtool wrapper script
tests_integration_perf_probe_LDFLAGS = -no-install
dist_check_SCRIPTS += tests/integration/perf_layer.sh
TESTS += tests/integration/perf_layer.sh
dist_check_SCRIPTS += tests/integration/report_ophelp.sh
TESTS += tests/integration/report_ophelp.sh
dist_check_SCRIPTS += tests/integration/report_live.sh
if BUILD_REPORT
TESTS += tests/integration/report_live.sh
endif
# issue 14 hole 7: opreport on hostile names, ".." paths, symlinks below samples/, perf maps
dist_check_SCRIPTS += tests/integration/report_hostile.sh tests/integration/report_perfmap.sh
if BUILD_REPORT
TESTS += tests/integration/report_hostile.sh tests/integration/report_perfmap.sh
endif
# issue 15 item 5: lost-sample figures from the stats/ files to opreport (--append, kinds, damage)
dist_check_SCRIPTS += tests/integration/report_stats.sh
if BUILD_REPORT
TESTS += tests/integration/report_stats.sh
endif
# core: launch-mode profile of a 3:1 workload, checked through the sample files;
# event choice and validation (core_events.sh)
check_PROGRAMS += tests/integration/hot tests/integration/hot_check
tests_integration_hot_SOURCES = tests/integration/hot.c
tests_integration_hot_CFLAGS = $(AM_CFLAGS) -O2 -g
tests_integration_hot_check_SOURCES = tests/integration/hot_check.c \
	tests/integration/test_util.c tests/integration/test_util.h
tests_integration_hot_check_LDADD = lib/libopng.la
dist_check_SCRIPTS += tests/integration/hot.sh
TESTS += tests/integration/hot.sh
dist_check_SCRIPTS += tests/integration/core_events.sh
TESTS += tests/integration/core_events.sh
# --- models helper: ophelp over every catalogue; hardware models vs the timer fallback in oprofiled
dist_check_SCRIPTS += tests/integration/ophelp_catalogues.sh tests/integration/model_fallback.sh
TESTS += tests/integration/ophelp_catalogues.sh tests/integration/model_fallback.sh
# --- callgraph (issue 5): live call graphs of a known call tree
check_PROGRAMS += tests/integration/cg_tree
tests_integration_cg_tree_SOURCES = tests/integration/cg_tree.c
tests_integration_cg_tree_CFLAGS = $(AM_CFLAGS) -g -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls -falign-functions=64 -falign-loops=64
dist_check_SCRIPTS += tests/integration/callgraph.sh
TESTS += tests/integration/callgraph.sh
# --- callgraph (issue 15): 2^16 distinct stacks then a new function; [no stack] accounting,
# the growing stack table and its budget, the flame graph (process, kernel, zoom/search), FIFO
check_PROGRAMS += tests/integration/cg_many
tests_integration_cg_many_SOURCES = tests/integration/cg_many.c
tests_integration_cg_many_CFLAGS = $(AM_CFLAGS) -g -fno-omit-frame-pointer -fno-inline \
	-fno-optimize-sibling-calls
dist_check_SCRIPTS += tests/integration/callgraph_stacks.sh tests/integration/cg_table.py
EXTRA_DIST += tests/integration/fg_script.js
TESTS += tests/integration/callgraph_stacks.sh
# --- ibs: synthetic IBS sessions replayed through oprofiled; IBS absent on this machine ---
check_PROGRAMS += tests/integration/ibs_gen
tests_integration_ibs_gen_SOURCES = tests/integration/ibs_gen.c tests/integration/ibs_rules.h
tests_integration_ibs_gen_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_integration_ibs_gen_LDADD = lib/libopng.la
dist_check_SCRIPTS += tests/integration/ibs_replay.sh tests/integration/ibs_unavailable.sh
TESTS += tests/integration/ibs_replay.sh tests/integration/ibs_unavailable.sh
# --- deploy (issue 7): service mode from the unit's ExecStart, opcontrol, rotation; bad configs
dist_check_SCRIPTS += tests/integration/deploy.sh tests/integration/bad_config.sh
TESTS += tests/integration/deploy.sh tests/integration/bad_config.sh
# issue 16: plugins.NAME.enabled = false in the list and in the group form of plugins
dist_check_SCRIPTS += tests/integration/plugin_enabled.sh
TESTS += tests/integration/plugin_enabled.sh
# --- samplepath (issue 3): bad input never damages a session (failed starts roll back)
dist_check_SCRIPTS += tests/integration/bad_input.sh
TESTS += tests/integration/bad_input.sh
# sample path: sample-file reader (validation, ELF symbols, kallsyms) and workloads
check_PROGRAMS += tests/integration/sp_dump tests/integration/sp_threads \
	tests/integration/sp_dlopen_pie tests/integration/sp_dlopen_nopie tests/integration/sp_churn
check_LTLIBRARIES += tests/integration/libsphot.la
tests_integration_sp_dump_SOURCES = tests/integration/sp_dump.c \
	tests/integration/test_util.c tests/integration/test_util.h
tests_integration_sp_dump_LDADD = lib/libopng.la
tests_integration_sp_threads_SOURCES = tests/integration/sp_threads.c tests/integration/sp_work.h
tests_integration_sp_threads_LDADD = -lpthread
tests_integration_sp_dlopen_pie_SOURCES = tests/integration/sp_dlopen.c
tests_integration_sp_dlopen_pie_CFLAGS = $(AM_CFLAGS) -fPIE
tests_integration_sp_dlopen_pie_LDFLAGS = -pie
tests_integration_sp_dlopen_pie_LDADD = $(DL_LIBS)
tests_integration_sp_dlopen_nopie_SOURCES = tests/integration/sp_dlopen.c
tests_integration_sp_dlopen_nopie_CFLAGS = $(AM_CFLAGS) -fno-pie
tests_integration_sp_dlopen_nopie_LDFLAGS = -no-pie
tests_integration_sp_dlopen_nopie_LDADD = $(DL_LIBS)
tests_integration_sp_churn_SOURCES = tests/integration/sp_churn.c tests/integration/sp_work.h
tests_integration_libsphot_la_SOURCES = tests/integration/sp_lib.c tests/integration/sp_work.h
tests_integration_libsphot_la_CFLAGS = $(AM_CFLAGS) -O1 -g
tests_integration_libsphot_la_LDFLAGS = -rpath /nowhere -avoid-version -shared
dist_check_SCRIPTS += tests/integration/threads.sh
TESTS += tests/integration/threads.sh
dist_check_SCRIPTS += tests/integration/libraries.sh
TESTS += tests/integration/libraries.sh
dist_check_SCRIPTS += tests/integration/kernel.sh
TESTS += tests/integration/kernel.sh
dist_check_SCRIPTS += tests/integration/durability.sh
TESTS += tests/integration/durability.sh
dist_check_SCRIPTS += tests/integration/churn.sh
TESTS += tests/integration/churn.sh
# fixed-work workload of tests/bench/bench_sample_path.sh (overhead)
check_PROGRAMS += tests/integration/sp_fixed
tests_integration_sp_fixed_SOURCES = tests/integration/sp_fixed.c
EXTRA_DIST += tests/bench/bench_sample_path.sh tests/bench/README.md
# --- security (issue 14, hole 8): idle, slow and non-reading control clients
# cannot stop the sampling nor delay SIGTERM
dist_check_SCRIPTS += tests/integration/control_clients.sh
TESTS += tests/integration/control_clients.sh

# --- issue 16: opcontrol --dump == SIGUSR1 (stats files incl. throttled/), save carries
# them; a SIGHUP log reopen moves every stage's messages
dist_check_SCRIPTS += tests/integration/dump_stats.sh tests/integration/log_reopen.sh
TESTS += tests/integration/dump_stats.sh tests/integration/log_reopen.sh
# dump_stats.sh lowers kernel.perf_event_max_sample_rate, a knob of the whole
# machine, for a moment to make the kernel throttle: it runs after every other
# test of the run, alone (optop.sh, started beside it by make -j2 check, had
# its 4 kHz perf_event_open refused with EINVAL)
tests/integration/dump_stats.log: $(TEST_LOGS:tests/integration/dump_stats.log=)
EXTRA_DIST += tests/integration/ctl_clients.py
# issue 14 hole 5: root's opcontrol refuses forged locks and control sockets (root only)
dist_check_SCRIPTS += tests/integration/opcontrol_trust.sh
TESTS += tests/integration/opcontrol_trust.sh
# --- security (issue 14, holes 1, 2, 4, 9): what a root oprofiled trusts in a session directory
dist_check_SCRIPTS += tests/integration/session_trust.sh
TESTS += tests/integration/session_trust.sh
# --- build (issue 15 item 18): configure silent beside the core/ build directory
dist_check_SCRIPTS += tests/integration/configure_quiet.sh
TESTS += tests/integration/configure_quiet.sh
# issue 14 hole 6: --record creates its file, never through a symlink
dist_check_SCRIPTS += tests/integration/record_trust.sh
TESTS += tests/integration/record_trust.sh
# --- ophelp, operf, ocount front-ends and man pages (issue 17, front)
dist_check_SCRIPTS += tests/integration/ophelp_options.sh
TESTS += tests/integration/ophelp_options.sh
dist_check_SCRIPTS += tests/integration/operf_cmdline.sh tests/integration/ocount_cmdline.sh
TESTS += tests/integration/operf_cmdline.sh tests/integration/ocount_cmdline.sh
dist_check_SCRIPTS += tests/integration/man_pages.sh
TESTS += tests/integration/man_pages.sh

# issue 17 (diff): differential opreport { A } { B } and -c in -X / --json
check_PROGRAMS += tests/integration/diff_work
tests_integration_diff_work_SOURCES = tests/integration/diff_work.c
tests_integration_diff_work_CFLAGS = $(AM_CFLAGS) -O2 -g
dist_check_SCRIPTS += tests/integration/report_diff.sh
if BUILD_REPORT
TESTS += tests/integration/report_diff.sh
endif

# --- opimport (issue 17): a live session rewritten in foreign ABIs by abi_gen, converted back
check_PROGRAMS += tests/integration/abi_gen
tests_integration_abi_gen_SOURCES = tests/integration/abi_gen.c
tests_integration_abi_gen_LDADD = lib/libopng.la
dist_check_SCRIPTS += tests/integration/opimport.sh
TESTS += tests/integration/opimport.sh
# opannotate (issue 17): annotated source and assembly of a live profile
check_PROGRAMS += tests/integration/annot_work
tests_integration_annot_work_SOURCES = tests/integration/annot_work.c
tests_integration_annot_work_CFLAGS = $(AM_CFLAGS) -O2 -g
dist_check_SCRIPTS += tests/integration/opannotate.sh
if BUILD_REPORT
TESTS += tests/integration/opannotate.sh
endif
# --- oparchive, archive:, opgprof (issue 17, archive)
dist_check_SCRIPTS += tests/integration/oparchive.sh tests/integration/opgprof.sh
TESTS += tests/integration/oparchive.sh tests/integration/opgprof.sh
# --vmlinux of opreport and opannotate (issue 17): a stand-in vmlinux built from a live session's kallsyms
dist_check_SCRIPTS += tests/integration/vmlinux.sh
if BUILD_REPORT
TESTS += tests/integration/vmlinux.sh
endif

# golden tests of opannotate and opgprof (issue 17) on report_golden.sh's fixture
dist_check_SCRIPTS += tests/integration/tools_golden.sh
if BUILD_REPORT
TESTS += tests/integration/tools_golden.sh
endif

# --- issue 19: build IDs in the session (stats/buildids), debug info by build ID and debuginfod
dist_check_SCRIPTS += tests/integration/buildid.sh tests/integration/debuginfod.sh
if BUILD_REPORT
TESTS += tests/integration/buildid.sh tests/integration/debuginfod.sh
endif
# --- issue 18: JIT test programs (tests/integration/jit_progs; also the
# workloads of the jit plugin's end-to-end tests) and their checks ---
JIT_PROGS_CODE = tests/integration/jit_progs/jit_code.c tests/integration/jit_progs/jit_code.h
check_PROGRAMS += tests/integration/jit_progs/jit_opagent tests/integration/jit_progs/jit_dump \
	tests/integration/jit_progs/jit_perfmap tests/integration/jit_progs/opagent_compat \
	tests/integration/jit_progs/jit_read
# -no-install: real binaries (no libtool wrapper), so /proc/PID/exe and comm are theirs
tests_integration_jit_progs_jit_opagent_SOURCES = tests/integration/jit_progs/jit_opagent.c \
	$(JIT_PROGS_CODE)
tests_integration_jit_progs_jit_opagent_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/opagent
tests_integration_jit_progs_jit_opagent_LDADD = lib/opagent/libopagent.la
tests_integration_jit_progs_jit_opagent_LDFLAGS = -no-install
tests_integration_jit_progs_jit_dump_SOURCES = tests/integration/jit_progs/jit_dump.c \
	$(JIT_PROGS_CODE)
tests_integration_jit_progs_jit_perfmap_SOURCES = tests/integration/jit_progs/jit_perfmap.c \
	$(JIT_PROGS_CODE)
# built against OProfile's header text, not ours: no -I lib/opagent
tests_integration_jit_progs_opagent_compat_SOURCES = tests/integration/jit_progs/opagent_compat.c \
	tests/integration/jit_progs/oprofile_opagent.h
tests_integration_jit_progs_opagent_compat_LDADD = lib/opagent/libopagent.la
tests_integration_jit_progs_opagent_compat_LDFLAGS = -no-install
tests_integration_jit_progs_jit_read_SOURCES = tests/integration/jit_progs/jit_read.c
tests_integration_jit_progs_jit_read_LDADD = lib/libopng.la
tests_integration_jit_progs_jit_read_LDFLAGS = -no-install
dist_check_SCRIPTS += tests/integration/jit_progs.sh
TESTS += tests/integration/jit_progs.sh

# --- issue 19: opexport checked by pprof, protoc and speedscope's schema (live) ---
dist_check_SCRIPTS += tests/integration/opexport.sh
EXTRA_DIST += tests/integration/speedscope_check.js
if BUILD_REPORT
if BUILD_EXPORT
TESTS += tests/integration/opexport.sh
endif
endif
# the pprof binary, Go's build cache and the npm packages opexport.sh keeps between runs
clean-local: clean-opexport
clean-opexport:
	-rm -rf tests/pprof tests/gocache tests/npm tests/opexport.tmp
.PHONY: clean-opexport
# --- issue 20: fleet defaults (rates, idle wake-ups, kallsyms once, cgroup labels) ---
dist_check_SCRIPTS += tests/integration/idle_wakeups.sh
TESTS += tests/integration/idle_wakeups.sh
dist_check_SCRIPTS += tests/integration/cgroup.sh
if BUILD_REPORT
TESTS += tests/integration/cgroup.sh
endif
dist_check_SCRIPTS += tests/integration/fleet.sh tests/integration/fleet_rotate.sh
if BUILD_REPORT
TESTS += tests/integration/fleet.sh tests/integration/fleet_rotate.sh
endif
EXTRA_DIST += tests/integration/fleet_util.sh
# --- issue 18: JIT code end to end, live: plugins/jit with the jit_progs programs ---
dist_check_SCRIPTS += tests/integration/jit.sh
TESTS += tests/integration/jit.sh
# --- issue 21: optop: the curses view through tmux, --stdio, a watched service, bad input,
# callers in a call-graph session ---
dist_check_SCRIPTS += tests/integration/optop.sh tests/integration/optop_service.sh \
	tests/integration/optop_bad.sh tests/integration/optop_callgraph.sh
if BUILD_OPTOP
TESTS += tests/integration/optop.sh tests/integration/optop_service.sh \
	tests/integration/optop_bad.sh tests/integration/optop_callgraph.sh
endif
# --- end issue 21 ---
# --- issue 20: the pprof pull and push plugins, against the upstream pprof CLI,
# protoc and a loopback receiver (push_receiver.py; push_check.py checks requests) ---
dist_check_SCRIPTS += tests/integration/pprof_pull.sh tests/integration/push.sh \
	tests/integration/push_spool.sh tests/integration/push_stall.sh \
	tests/integration/push_receiver.py tests/integration/push_check.py \
	tests/integration/pprof_shares.py
EXTRA_DIST += tests/integration/net_util.sh
# the tests that stop a background tool with SIGINT wait until it blocks the signal
EXTRA_DIST += tests/integration/sig_util.sh
if BUILD_PPROF_PLUGIN
TESTS += tests/integration/pprof_pull.sh
endif
# --- issue 20: /metrics (Prometheus text, parsed by python3-prometheus-client) and quiet plugin
# dumps; push to an https store (a TLS receiver with a certificate the test makes) ---
dist_check_SCRIPTS += tests/integration/pprof_metrics.sh tests/integration/push_tls.sh
if BUILD_PPROF_PLUGIN
if BUILD_PUSH_PLUGIN
TESTS += tests/integration/pprof_metrics.sh
endif
endif
if BUILD_PUSH_PLUGIN
TESTS += tests/integration/push_tls.sh
endif
if BUILD_PUSH_PLUGIN
TESTS += tests/integration/push.sh tests/integration/push_spool.sh tests/integration/push_stall.sh
endif
# net_util.sh builds the pprof CLI where opexport.sh does (tests/pprof): clean-opexport removes it
# --- issue 20: --separate=cgroup (a split on disk) and exact cgroup labels for reused pids ---
dist_check_SCRIPTS += tests/integration/cgroup_split.sh tests/integration/cgroup_reuse.sh \
	tests/integration/reuse_pid.py
if BUILD_REPORT
TESTS += tests/integration/cgroup_split.sh tests/integration/cgroup_reuse.sh
endif

# --- issue 19: stack samples carry pid/tid/cpu (stack table version 3 context, live) ---
dist_check_SCRIPTS += tests/integration/opexport_ctx.sh
if BUILD_REPORT
if BUILD_EXPORT
TESTS += tests/integration/opexport_ctx.sh
endif
endif
# --- hashbug: the daemon's sample files under churn, collisions, a cut fd budget, readers ---
check_PROGRAMS += tests/integration/sf_wide
tests_integration_sf_wide_SOURCES = tests/integration/sf_wide.c
tests_integration_sf_wide_CFLAGS = $(AM_CFLAGS) -O1 -fno-inline
dist_check_SCRIPTS += tests/integration/sfile_stress.sh
TESTS += tests/integration/sfile_stress.sh
# --- end hashbug ---

# --- issue 20: cgroup index lines buffered, complete at every dump/save/stop ---
dist_check_SCRIPTS += tests/integration/cgroup_flush.sh
TESTS += tests/integration/cgroup_flush.sh
# --- issue 20: model plugins only probed are unloaded (libpfm4 RSS) ---
dist_check_SCRIPTS += tests/integration/model_unload.sh
TESTS += tests/integration/model_unload.sh

# --- issue 19/20: stack samples of a --separate=cgroup session carry their cgroup (table version 4) ---
dist_check_SCRIPTS += tests/integration/cgroup_stacks.sh
if BUILD_REPORT
if BUILD_EXPORT
TESTS += tests/integration/cgroup_stacks.sh
endif
endif
# --- issue 20: privsep: the pull helper's process, restarts, a hostile helper, an unprivileged daemon ---
dist_check_SCRIPTS += tests/integration/pull_privsep.sh
if BUILD_PPROF_PLUGIN
check_PROGRAMS += tests/integration/pull_hostile
TESTS += tests/integration/pull_privsep.sh
endif
# a plain executable, as every helper (it stands in for oprofiled-pull)
tests_integration_pull_hostile_SOURCES = tests/integration/pull_hostile.c \
	plugins/common/np_child.c plugins/common/np_child.h lib/op_trust.c lib/op_trust.h
tests_integration_pull_hostile_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/plugins/common \
	-I$(top_srcdir)/plugins/pprof
# --- end issue 20: privsep ---
# --- issue 20: privsep push (libcurl in the helper oprofiled-push: its identity,
# the daemon's maps, killed mid-request, stop while a request hangs; a hostile helper) ---
dist_check_SCRIPTS += tests/integration/push_privsep.sh tests/integration/push_hostile.sh
if BUILD_PUSH_PLUGIN
TESTS += tests/integration/push_privsep.sh tests/integration/push_hostile.sh
# a hostile stand-in for the helper, alone in a directory of its own (OP_HELPER_DIR)
check_PROGRAMS += tests/integration/push_hostile/oprofiled-push
endif
tests_integration_push_hostile_oprofiled_push_SOURCES = tests/integration/push_hostile.c \
	plugins/push/push_wire.h plugins/common/np_child.c plugins/common/np_child.h \
	lib/op_trust.c lib/op_trust.h
tests_integration_push_hostile_oprofiled_push_CPPFLAGS = $(AM_CPPFLAGS) \
	-I$(top_srcdir)/plugins/common -I$(top_srcdir)/plugins/push
# --- end issue 20: privsep push ---
# --- signals during start-up: blocked before any thread exists ---
dist_check_SCRIPTS += tests/integration/signal_startup.sh
TESTS += tests/integration/signal_startup.sh

# --- issue 20: on-demand helpers (helper_idle: socket activation for pull, spawn per spool for push) ---
dist_check_SCRIPTS += tests/integration/pull_ondemand.sh tests/integration/push_ondemand.sh
TESTS += tests/integration/pull_ondemand.sh tests/integration/push_ondemand.sh
# --- issue 20: push proxy ---
dist_check_SCRIPTS += tests/integration/push_proxy.sh tests/integration/push_proxy.py
if BUILD_PUSH_PLUGIN
TESTS += tests/integration/push_proxy.sh
endif
# --- end issue 20: push proxy ---
