#!/bin/sh
# bench_report_scale.sh - opreport beside perf report on the SAME workload at scale.
# One multi-image workload (>= 100 distinct binaries + their libraries, on both
# CPUs) is sampled at the same time by `oprofiled --pid` and
# `perf record -p -e cpu-clock` (both follow the children), both at 10 kHz
# (period 100000 ns).  Then `opreport -l` vs `perf report --stdio --sort dso,sym` and `opreport` vs
# `perf report --stdio --sort dso` are timed (median of RUNS, peak RSS from
# /usr/bin/time).  With BIG_SECS > 0 a second, longer recording gives perf
# report's marginal cost per sample.  A 10x session (the biggest recording plus
# 9 --append replays of oprofiled's recorded stream of it: same samples, 10x
# the counts) shows that opreport's time does not grow with the sample count;
# perf report at that count is extrapolated (linear) and labelled so.
# Usage: tests/bench/bench_report_scale.sh [BUILD_DIR] [SECS=55] [BIG_SECS=0] [RUNS=3]
#        e.g. `... . 55 120`: ~0.6 M and ~1.5 M samples on this 2-CPU VM
#        (as root; run by hand, never in `make check`; prints a table)
# SPDX-License-Identifier: MIT
set -u
build=$(cd "${1:-.}" && pwd)
secs=${2:-55}
bigsecs=${3:-0}
runs=${4:-3}
W=$build/tests/bench_report_scale.tmp
rm -rf "$W" && mkdir -p "$W"
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$build/plugins/.libs}
OPD=$build/core/oprofiled
R=$build/tools/opreport/opreport
for b in "$OPD" "$R"; do
	[ -x "$b" ] || { echo "bench_report_scale: $b missing (make first)"; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench_report_scale: /usr/bin/time missing (apt-get install time)"; exit 1; }
command -v perf >/dev/null || { echo "bench_report_scale: perf is not installed"; exit 1; }
PERIOD=100000 # ns of cpu-clock: 10 kHz per CPU. Never more (2-core VM).

# ---- the workload ------------------------------------------------------------
# real programs and their libraries (tests/bench/images_workload.sh)
sh "$(dirname "$0")/images_workload.sh" "$W" || exit 1

med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# measure LABEL CMD...: RUNS runs; one table row (median/min/max wall, max RSS)
measure() {
	label=$1; shift
	: >"$W/walls"; : >"$W/rss"
	i=0
	while [ $i -lt "$runs" ]; do
		/usr/bin/time -f '%e %M' -o "$W/time" "$@" >"$W/out" 2>"$W/err" ||
			{ echo "bench_report_scale: $label failed:"; head -5 "$W/err"; }
		read -r wall rss <"$W/time"
		echo "$wall" >>"$W/walls"; echo "$rss" >>"$W/rss"
		i=$((i + 1))
	done
	m=$(med <"$W/walls")
	echo "$label $m" >>"$W/medians"
	printf '%-46s %9s %7s %7s %7s %9s %7s\n' "$label" "$NS" "$m" \
		"$(sort -n "$W/walls" | head -1)" "$(sort -n "$W/walls" | tail -1)" \
		"$(sort -n "$W/rss" | tail -1)" "$(wc -l <"$W/out")"
}

# record TAG SECONDS: oprofiled and perf record attach to the same workload
# (its parent shell; both follow the children) at the same time.
record() {
	tag=$1 s=$2
	sh -c "sleep 1; sh '$W/workload.sh' $s & sh '$W/workload.sh' $s & wait" & wpid=$!
	sleep 0.2
	"$OPD" --session-dir="$W/op$tag" --pid=$wpid --events=TIMER:$PERIOD \
		--record="$W/stream$tag" >"$W/opd$tag.log" 2>&1 &
	opid=$!
	perf record -q -e cpu-clock -c $PERIOD -p $wpid -o "$W/perf$tag.data" >"$W/perfrec$tag.log" 2>&1 &
	ppid=$!
	wait $wpid
	sleep 1 # both stop by themselves when the process exits; make sure they do
	kill -TERM $opid 2>/dev/null; kill -INT $ppid 2>/dev/null
	wait $opid $ppid
}

# top-level (application) lines of the summary; nested lines start with a tab
op_samples() { "$R" --session-dir="$1" 2>/dev/null | awk '/^ *[0-9]+ +[0-9.]+ / { s += $1 } END { print s + 0 }'; }
perf_samples() { perf report -i "$1" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }'; }

header() {
	printf '%-46s %9s %7s %7s %7s %9s %7s\n' "report" "samples" "med s" "min s" "max s" "maxRSS KiB" "lines"
}

echo "== bench_report_scale: $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== workload: $(wc -l <"$W/progs") programs x --version, 30 filters, python3, perl, gzip/bzip2/xz; 2 copies"
echo "== recording: oprofiled --pid=W --events=TIMER:$PERIOD and perf record -p W -e cpu-clock -c $PERIOD at the same time"
tags=1
record 1 "$secs"
if [ "$bigsecs" -gt 0 ]; then
	record 2 "$bigsecs"
	tags="1 2"
fi
big=${tags##* }
echo "== load average after recording: $(cut -d' ' -f1-3 /proc/loadavg)"

# the 10x session: the biggest recording's stream replayed 9 more times
cp -a "$W/op$big" "$W/op10x"
t0=$(date +%s.%N)
k=1
while [ $k -lt 10 ]; do
	"$OPD" --session-dir="$W/op10x" --append --events=TIMER:$PERIOD --replay="$W/stream$big" >>"$W/replay.log" 2>&1 ||
		{ echo "bench_report_scale: replay failed:"; tail -5 "$W/replay.log"; exit 1; }
	k=$((k + 1))
done
t1=$(date +%s.%N)

for t in $tags; do
	secs_t=$secs; [ "$t" = 2 ] && secs_t=$bigsecs
	ops=$(op_samples "$W/op$t")
	eval "ops$t=$ops"
	eval "ps$t=$(perf_samples "$W/perf$t.data")"
	"$R" --session-dir="$W/op$t" >"$W/op$t.summary" 2>/dev/null
	# distinct images holding samples: every image line of the summary (apps and, nested, their libraries)
	opimg=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { print $3 }' "$W/op$t.summary" | sort -u | wc -l)
	perf report -i "$W/perf$t.data" --stdio --sort dso 2>/dev/null >"$W/perf$t.dso"
	perfimg=$(grep -c '^ *[0-9.]*%' "$W/perf$t.dso")
	echo "run $t (${secs_t} s): oprofiled $ops samples, $opimg distinct image names, session $(du -sk "$W/op$t/samples" | cut -f1) KiB;" \
		"perf $(eval echo \$ps$t) samples, $perfimg dsos, perf.data $(du -k "$W/perf$t.data" | cut -f1) KiB"
done
ops10x=$(op_samples "$W/op10x")
echo "10x session (run $big + 9 --append replays of its stream, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s): $ops10x samples, $(du -sk "$W/op10x/samples" | cut -f1) KiB"
echo
echo "== load average before timing: $(cut -d' ' -f1-3 /proc/loadavg); $runs runs each"
: >"$W/medians"
header
for t in $tags; do
	NS=$(eval echo \$ops$t); measure "opreport -l (run $t)" "$R" --session-dir="$W/op$t" -l
	NS=$(eval echo \$ps$t);  measure "perf report --stdio --sort dso,sym (run $t)" perf report -i "$W/perf$t.data" --stdio --sort dso,sym
	NS=$(eval echo \$ops$t); measure "opreport (image summary, run $t)" "$R" --session-dir="$W/op$t"
	NS=$(eval echo \$ps$t);  measure "perf report --stdio --sort dso (run $t)" perf report -i "$W/perf$t.data" --stdio --sort dso
done
NS=$ops10x; measure "opreport -l (10x session)" "$R" --session-dir="$W/op10x" -l
NS=$ops10x; measure "opreport (image summary, 10x session)" "$R" --session-dir="$W/op10x"
echo "== load average after timing: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
get() { awk -v l="$1" '{ k = $0; sub(/ [^ ]*$/, "", k); if (k == l) print $NF }' "$W/medians"; }
for t in $tags; do
	awk -v t="$t" -v o="$(get "opreport -l (run $t)")" -v p="$(get "perf report --stdio --sort dso,sym (run $t)")" \
	    -v s="$(get "opreport (image summary, run $t)")" -v d="$(get "perf report --stdio --sort dso (run $t)")" \
	    -v n="$(eval echo \$ps$t)" 'BEGIN {
		printf "measured:  run %s, %d samples: perf report dso,sym / opreport -l = %.1fx; perf report dso / opreport = %.1fx; perf %.2f us/sample\n",
			t, n, (o > 0 ? p / o : 0), (s > 0 ? d / s : 0), (n > 0 ? 1e6 * p / n : 0)
	}'
done
awk -v ob="$(get "opreport -l (run $big)")" -v o10="$(get 'opreport -l (10x session)')" \
    -v sb="$(get "opreport (image summary, run $big)")" -v s10="$(get 'opreport (image summary, 10x session)')" \
    -v n10="$ops10x" -v p1="$(get 'perf report --stdio --sort dso,sym (run 1)')" -v n1="$ps1" \
    -v p2="$(get 'perf report --stdio --sort dso,sym (run 2)')" -v n2="${ps2:-0}" 'BEGIN {
	printf "measured:  opreport -l on the 10x session (%d samples) / on run with 1/10 of them: %.2f; summary: %.2f\n",
		n10, (ob > 0 ? o10 / ob : 0), (sb > 0 ? s10 / sb : 0)
	us = n1 > 0 ? 1e6 * p1 / n1 : 0
	if (p2 > 0 && n2 > n1) {
		printf "measured:  perf report dso,sym marginal cost %d -> %d samples: %.2f us/sample\n",
			n1, n2, 1e6 * (p2 - p1) / (n2 - n1)
		us = 1e6 * p2 / n2
	}
	# proportional to the biggest measured point: a lower bound when perf
	# report cost per sample grows with the count (as measured here)
	printf "EXTRAPOLATED (not measured): perf report dso,sym at %.2f us/sample: 10 M samples ~ %.0f s, %d samples ~ %.0f s;" \
		" opreport -l on the %d-sample session: %.2f s (measured) => >= ~%.0fx at 10 M\n",
		us, us * 10, n10, us * n10 / 1e6, n10, o10, (o10 > 0 ? us * 10 / o10 : 0)
}'
