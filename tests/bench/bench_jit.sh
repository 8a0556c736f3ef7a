#!/bin/sh
# bench_jit.sh - reading a perf jitdump of N functions: lib/op_jit
# (bench_jit -f, thread CPU time, median of RUNS) beside perf inject --jit
# on the same dump in the same run (perf's only jitdump reader; it also
# writes one ELF file per function, so the ratio bounds what reading alone
# costs perf from above). The dump comes from
# tests/integration/jit_progs/jit_dump -n N, recorded by perf record -k mono
# so that perf inject finds it through the MMAP of jit-PID.dump.
# Usage: tests/bench/bench_jit.sh [N=100000] [RUNS=5]   (from the build dir, root)
# SPDX-License-Identifier: MIT
set -u
N=${1:-100000}
RUNS=${2:-5}
B=${OP_BUILDDIR:-$(pwd)}
JD=$B/tests/integration/jit_progs/jit_dump
BJ=$B/tests/bench/bench_jit
for f in "$JD" "$BJ"; do
	[ -x "$f" ] || { echo "bench_jit.sh: $f missing (make check; make tests/bench/bench_jit)"; exit 2; }
done
command -v perf > /dev/null || { echo "bench_jit.sh: perf not installed"; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/bench_jit.XXXXXX")
trap 'rm -rf "$W"' EXIT

perf record -q -k mono -e cpu-clock -o "$W/perf.data" -- "$JD" -n "$N" "$W" 200 > "$W/jd.out" 2>&1 ||
	{ echo "bench_jit.sh: perf record of jit_dump failed"; cat "$W/jd.out"; exit 1; }
dump=$(ls "$W"/jit-*.dump)
"$BJ" -f "$dump" "$RUNS" | tee "$W/ours.out"
ours=$(sed -n 's/^RESULT read_ns //p' "$W/ours.out")

best=
for r in $(seq "$RUNS"); do
	find "$W" -name 'jitted-*.so' -delete; rm -f "$W/inj.data"
	# user+system CPU seconds of perf inject (it is single-threaded)
	/usr/bin/time -o "$W/time" -f '%U %S' perf inject --jit -i "$W/perf.data" -o "$W/inj.data" \
		> /dev/null 2> "$W/inj.err" || { echo "bench_jit.sh: perf inject failed"; cat "$W/inj.err"; exit 1; }
	t=$(tail -n 1 "$W/time" | awk '{ printf "%.0f", ($1 + $2) * 1e9 }')
	echo "perf inject --jit run $r: $(awk -v t="$t" 'BEGIN { printf "%.1f ms", t / 1e6 }'), $(ls "$W" | grep -c '^jitted-.*\.so$') ELF files"
	best="$best $t"
done
perf_ns=$(echo $best | tr ' ' '\n' | sort -n | sed -n "$(((RUNS + 1) / 2))p")
awk -v o="$ours" -v p="$perf_ns" -v n="$N" 'BEGIN {
	printf "RESULT jitdump %d functions: op_jit %.1f ms, perf inject --jit %.1f ms, perf/ours %.0fx\n",
		n, o / 1e6, p / 1e6, p / o }'
