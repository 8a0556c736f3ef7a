# tests/bench
# opcount workloads (page toucher, fork K children, ping-pong, spin, threads):
# built for the integration test and the bench script
check_PROGRAMS += tests/bench/count_workloads
tests_bench_count_workloads_SOURCES = tests/bench/count_workloads.c

# lib/odb hot path: ns per update / insert (run by hand: tests/bench/bench_odb)
noinst_PROGRAMS += tests/bench/bench_odb
tests_bench_bench_odb_SOURCES = tests/bench/bench_odb.c
tests_bench_bench_odb_LDADD = lib/libopng.la
check_PROGRAMS += tests/bench/bench_opcount_read
tests_bench_bench_opcount_read_SOURCES = tests/bench/bench_opcount_read.c
tests_bench_bench_opcount_read_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/opcount
tests_bench_bench_opcount_read_LDADD = lib/libopcount.la
EXTRA_DIST += tests/bench/bench_opcount.sh
# sample path read side (perf): ns per record through walk/queue/sort/decode/deliver,
# and live reader CPU per sample against perf record (tests/bench/bench_perf.sh)
noinst_PROGRAMS += tests/bench/bench_perf_read
tests_bench_bench_perf_read_SOURCES = tests/bench/bench_perf_read.c
tests_bench_bench_perf_read_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_bench_bench_perf_read_LDADD = core/libopsample.la lib/libopng.la
tests_bench_bench_perf_read_LDFLAGS = -no-install
EXTRA_DIST += tests/bench/bench_perf.sh
EXTRA_DIST += tests/bench/bench_report.sh tests/bench/report_vs_perf.sh
# issue 4 at scale: opreport -l vs perf report on the same >= 1 M-sample workload (run by hand)
EXTRA_DIST += tests/bench/bench_report_scale.sh tests/bench/images_workload.sh
# core aggregation stages: ns per sample through sync, and sync+trans+sfile+odb
# (run by hand: tests/bench/bench_sync.sh puts them next to perf report's cost)
noinst_PROGRAMS += tests/bench/bench_sync
tests_bench_bench_sync_SOURCES = tests/bench/bench_sync.c
tests_bench_bench_sync_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_bench_bench_sync_LDADD = core/libopsample.la lib/libopng.la
EXTRA_DIST += tests/bench/bench_sync.sh
# call graphs (issue 5): oprofiled --ext-feature=callgraph:depth=32 beside perf record -g
# (CPU overhead ratio, bytes per million samples); run by hand, needs tests/integration/cg_tree
EXTRA_DIST += tests/bench/bench_callgraph.sh
# long-running daemon with rotation under churn: RSS/fds/disk over time (issue 7, owner: deploy)
EXTRA_DIST += tests/bench/soak.sh
# a long replay stream made of N copies of a real --record file (bench_sample_path.sh pipeline)
noinst_PROGRAMS += tests/bench/replay_loop
tests_bench_replay_loop_SOURCES = tests/bench/replay_loop.c
tests_bench_replay_loop_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core
tests_bench_replay_loop_LDADD = core/libopsample.la lib/libopng.la
tests_bench_replay_loop_LDFLAGS = -no-install
# the kernel's floor for sampling one command: cpu-clock rings nobody reads
# (bench_sample_path.sh overhead)
noinst_PROGRAMS += tests/bench/bare_sampler
tests_bench_bare_sampler_SOURCES = tests/bench/bare_sampler.c
# opannotate --source/--assembly beside perf annotate, in-process disassembly vs objdump (by hand)
EXTRA_DIST += tests/bench/bench_annotate.sh
# --- issue 19: opexport --format=pprof at >= 1 M samples beside opreport -l and perf (run by hand) ---
EXTRA_DIST += tests/bench/bench_export.sh
# --- issue 20: daemon CPU and RSS at fleet rates beside perf record (by hand) ---
EXTRA_DIST += tests/bench/bench_fleet.sh
# --- issue 18: JIT conversion cost per 1000 functions, anon samples claimed vs not (run by hand) ---
noinst_PROGRAMS += tests/bench/bench_jitconv
tests_bench_bench_jitconv_SOURCES = tests/bench/bench_jitconv.c tests/abi/sync_host.h
tests_bench_bench_jitconv_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/core -I$(top_srcdir)/lib \
	-I$(top_srcdir)/tests/abi
tests_bench_bench_jitconv_LDADD = core/libopload.la core/libopsample.la lib/libopng.la
tests_bench_bench_jitconv_LDFLAGS = -no-install
# --- issue 18: JIT formats: libopagent write rate, jitdump and perf-map read rates
# for 100k functions, and reading beside perf inject --jit (run by hand:
# tests/bench/bench_jit [functions] [runs], tests/bench/bench_jit.sh [N] [RUNS]) ---
noinst_PROGRAMS += tests/bench/bench_jit
EXTRA_DIST += tests/bench/bench_jit.sh
tests_bench_bench_jit_SOURCES = tests/bench/bench_jit.c
tests_bench_bench_jit_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/lib/opagent
tests_bench_bench_jit_LDADD = lib/opagent/libopagent.la lib/libopng.la
tests_bench_bench_jit_LDFLAGS = -no-install
# --- issue 21: optop against perf top ---
EXTRA_DIST += tests/bench/bench_optop.sh
# --- end issue 21 ---
# --- issue 20: daemon CPU/RSS with the pprof and push plugins, bytes pushed per host-hour vs perf.data ---
EXTRA_DIST += tests/bench/bench_net.sh
EXTRA_DIST += tests/bench/rss_breakdown.sh
# --- issue 20: privsep: the helper processes of a daemon, for bench_net.sh and rss_breakdown.sh ---
EXTRA_DIST += tests/bench/net_helpers.sh
# --- issue 20: process churn: syscalls per new process / (cgroup, binary) pair, CPU vs perf ---
EXTRA_DIST += tests/bench/bench_churn.sh
# --- issue 19: the pprof encoder's gzip stage alone, zlib vs libdeflate levels (run by hand:
# tests/bench/bench_gzip.sh) ---
if BUILD_EXPORT
noinst_PROGRAMS += tests/bench/bench_gzip
tests_bench_bench_gzip_SOURCES = tests/bench/bench_gzip.c
tests_bench_bench_gzip_CFLAGS = $(AM_CFLAGS) $(LIBDEFLATE_CFLAGS) $(ZLIB_CFLAGS)
tests_bench_bench_gzip_LDADD = $(LIBDEFLATE_LIBS) $(ZLIB_LIBS)
endif
EXTRA_DIST += tests/bench/bench_gzip.sh
