#!/bin/bash
# bench_callgraph.sh - call-graph profiling cost beside perf, in one run
# (on demand, not in make check). A fixed amount of work (cg_tree ROUNDS
# rounds: main -> mid -> leaf_b 3x / leaf_c 1x) runs bare, under
# `oprofiled --ext-feature=callgraph:depth=32` and under
# `perf record -g` (frame pointers) at the same cpu-clock rate (4 kHz);
# prints wall and CPU time (workload + profiler), the overhead of each
# profiler over the bare run and their ratio, then the bytes on disk per
# million call-graph samples (sample files + stack table vs perf.data).
# Usage: OP_BUILDDIR=build tests/bench/bench_callgraph.sh [ROUNDS]
# SPDX-License-Identifier: MIT
set -u
B=$(cd "${OP_BUILDDIR:-.}" && pwd) # absolute: helpers and plugins are looked up by it
D=$B/core/oprofiled
P=$B/tests/integration/cg_tree
ROUNDS=${1:-400}
W=$(mktemp -d /tmp/bench_callgraph.XXXXXX)
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
for x in "$D" "$P"; do
	[ -x "$x" ] || { echo "bench_callgraph: $x is not built (make $x)"; exit 1; }
done
command -v perf >/dev/null || { echo "bench_callgraph: perf is not installed"; exit 1; }

# run "$@"; prints "wall_s cpu_s" (cpu = user + sys of the command and its children)
measure() {
	local t0 t1 c0 c1 me=$BASHPID
	c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/"$me"/stat)
	t0=$(date +%s.%N)
	"$@" >"$W/out.$me" 2>&1 || { echo "bench_callgraph: failed: $*" >&2; cat "$W/out.$me" >&2; }
	t1=$(date +%s.%N)
	c1=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/"$me"/stat)
	awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.3f %.3f\n", b - a, (d - c) / hz }'
}

read -r bw bc < <(measure "$P" 0 "$ROUNDS")
read -r ow oc < <(measure "$D" --session-dir="$W/op" --events=TIMER:250000 \
	--ext-feature=callgraph:depth=32 -- "$P" 0 "$ROUNDS")
read -r pw pc < <(measure perf record -q -o "$W/perf.data" -e cpu-clock -c 250000 -g -- "$P" 0 "$ROUNDS")

op_samples=$(awk '$1 == "samples_with_chain:" { print $2 }' "$W/op/samples/oprofiled.log" | tail -1)
# the sample files proper (flat + {cg} arcs) and the stack table, apart
op_odb=$(find "$W/op/samples/current" -path "$W/op/samples/current/stats" -prune -o \
	-path "$W/op/samples/current/callgraph" -prune -o -type f -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }')
op_tab=$(du -sB1 "$W/op/samples/current/callgraph" | cut -f1)
perf_samples=$(perf report -i "$W/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
[ -n "$perf_samples" ] || perf_samples=$(perf script -i "$W/perf.data" -F ip 2>/dev/null | grep -c .)
perf_bytes=$(stat -c %s "$W/perf.data")

echo "workload: $P 0 $ROUNDS (fixed work), cpu-clock every 250 us (4 kHz), $(nproc) CPUs"
printf "%-40s %8s %8s %10s\n" "run" "wall s" "cpu s" "overhead"
printf "%-40s %8s %8s %10s\n" "bare" "$bw" "$bc" "-"
awk -v w="$ow" -v c="$oc" -v bc="$bc" 'BEGIN { printf "%-40s %8s %8s %9.1f%%\n",
	"oprofiled --ext-feature=callgraph:depth=32", w, c, 100 * (c - bc) / bc }'
awk -v w="$pw" -v c="$pc" -v bc="$bc" 'BEGIN { printf "%-40s %8s %8s %9.1f%%\n",
	"perf record -g (fp, max 127 frames)", w, c, 100 * (c - bc) / bc }'
awk -v oc="$oc" -v pc="$pc" -v bc="$bc" 'BEGIN { o = oc - bc; p = pc - bc;
	if (p > 0) printf "CPU overhead ratio oprofiled / perf record: %.2f\n", o / p }'
awk -v s="$op_samples" -v o="$op_odb" -v t="$op_tab" 'BEGIN { if (s > 0)
	printf "oprofiled: %d samples with chains: sample files %d bytes + stack table %d bytes allocated = %.1f MB per million samples at this run length\n",
		s, o, t, (o + t) / s }'
awk -v s="$perf_samples" -v b="$perf_bytes" 'BEGIN { if (s > 0)
	printf "perf.data: %d samples, %d bytes = %.1f MB per million samples\n", s, b, b / s }'
echo "(oprofiled aggregates: its files grow with distinct pcs, arcs and stacks, not with samples,"
echo " so its bytes per million samples fall as a run gets longer; perf.data grows linearly)"
rm -rf "$W"
