#!/bin/sh
# bench_sync.sh - the daemon's aggregation cost per sample (bench_sync) next
# to what perf pays per sample to aggregate the same kind of profile after
# the fact (perf report --stdio on a perf.data of the hot workload), in the
# same run. Run by hand from the build directory.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-sync.XXXXXX")
trap 'rm -rf "$T"' EXIT
echo "== oprofiled stages (synthetic stream)"
(cd "$T" && "$B/tests/bench/bench_sync" "${1:-3000000}")
if ! command -v perf >/dev/null 2>&1; then
	echo "perf not installed: no comparison"; exit 0
fi
echo "== perf report on a 4 kHz cpu-clock profile of tests/integration/hot"
perf record -q -e cpu-clock -F 4000 -o "$T/perf.data" -- "$B/tests/integration/hot" 3000 >/dev/null 2>&1
n=$(perf report -i "$T/perf.data" --stdio -F overhead,sample 2>/dev/null | awk '/^ +[0-9.]+%/{s+=$2} END{print s+0}')
t0=$(date +%s%N)
perf report -i "$T/perf.data" --stdio > /dev/null 2>&1
t1=$(date +%s%N)
echo "perf report: $n samples in $(( (t1 - t0) / 1000000 )) ms = $(( n ? (t1 - t0) / n : 0 )) ns/sample (start-up included)"
