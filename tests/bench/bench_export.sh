#!/bin/sh
# bench_export.sh - opexport --format=pprof at scale (issue 19): a system-wide
# session of real programs (images_workload.sh, both CPUs) recorded by
# oprofiled --system-wide --separate=thread,cpu at 10 kHz while
# `perf record -a -e cpu-clock -c 100000` records the same seconds; the
# stream oprofiled recorded is replayed --append until the session holds
# >= 1 M samples (each replay adds the same samples again: same files, the
# counts grow). Then, median of RUNS with CPU (user+sys: opexport reads,
# loads symbols and deflates on threads) and peak RSS (/usr/bin/time), and 2 RUNS + 1 pairs of
# opexport and opreport -l run alternately (the median of their ratios):
# opexport --format=pprof (with symbols, and --no-symbols) beside opreport -l
# --merge=all (one column: the sample files differ in tid, tgid and cpu) on
# the same session, and perf's own route to folded stacks and pprof-like
# export, `perf script` (which stackcollapse-perf.pl / pprof converters read)
# on the comparable perf.data. Sizes: the pprof file against perf.data and
# perf.data gzip'd, both of the same recorded seconds (before the replays),
# with the thread/cpu labels and with oprofiled's default --separate (the
# recorded stream replayed into a second session).
# BENCH_RT=1 runs every timed command under `chrt -f 10` (SCHED_FIFO): on a
# machine that other jobs load, the two tools then get the CPUs as on a quiet
# one (an oversubscribed machine takes more from opexport's threads, which
# wait for each other, than from opreport's one); the recording is not.
# Usage: [BENCH_RT=1] tests/bench/bench_export.sh [BUILD_DIR] [SECS=30] [MIN_SAMPLES=1000000] [RUNS=3]
#        (as root; run by hand, never in `make check`; prints a table)
# SPDX-License-Identifier: MIT
set -u
build=$(cd "${1:-.}" && pwd)
secs=${2:-30}
minsamples=${3:-1000000}
runs=${4:-3}
W=$build/tests/bench_export.tmp
rm -rf "$W" && mkdir -p "$W"
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$build/plugins/.libs}
OPD=$build/core/oprofiled
R=$build/tools/opreport/opreport
X=$build/tools/opexport
for b in "$OPD" "$R" "$X" /usr/bin/time; do
	[ -x "$b" ] || { echo "bench_export: $b missing (make first; apt-get install time)"; exit 1; }
done
command -v perf >/dev/null || { echo "bench_export: perf is not installed"; exit 1; }
PERIOD=100000 # ns of cpu-clock: 10 kHz per CPU. Never more (2-core VM).
RT= # what timed commands run under
if [ -n "${BENCH_RT:-}" ]; then
	command -v chrt >/dev/null || { echo "bench_export: BENCH_RT needs chrt (util-linux)"; exit 1; }
	RT="chrt -f 10"
fi
sh "$(dirname "$0")/images_workload.sh" "$W" || exit 1

med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
measure() { # LABEL CMD...: RUNS runs, one row (median wall, median CPU user+sys, max RSS, output bytes)
	label=$1; shift
	: >"$W/walls"; : >"$W/rss"; : >"$W/cpus"
	i=0
	while [ $i -lt "$runs" ]; do
		$RT /usr/bin/time -f '%e %M %U %S' -o "$W/time" "$@" >"$W/out" 2>"$W/err" ||
			{ echo "bench_export: $label failed:"; head -5 "$W/err"; }
		read -r wall rss usr sys <"$W/time"
		echo "$wall" >>"$W/walls"; echo "$rss" >>"$W/rss"
		awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f\n", u + s }' >>"$W/cpus"
		i=$((i + 1))
	done
	m=$(med <"$W/walls") c=$(med <"$W/cpus")
	echo "$label $m $c $(sort -n "$W/rss" | tail -1)" >>"$W/medians"
	printf '%-44s %8s %8s %8s %8s %10s %12s\n' "$label" "$m" "$(sort -n "$W/walls" | head -1)" \
		"$(sort -n "$W/walls" | tail -1)" "$c" "$(sort -n "$W/rss" | tail -1)" "$(wc -c <"$W/out")"
}
op_samples() { "$R" --session-dir="$1" --merge=all 2>/dev/null | awk '/^ *[0-9]+ +[0-9.]+ / { s += $1 } END { print s + 0 }'; }

echo "== bench_export: $(nproc) CPUs, load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== recording $secs s: oprofiled --system-wide --separate=thread,cpu and perf record -a, both -c $PERIOD"
"$OPD" --session-dir="$W/s" --system-wide --separate=thread,cpu --events=TIMER:$PERIOD \
	--record="$W/stream" >"$W/opd.log" 2>&1 &
opid=$!
perf record -q -a -e cpu-clock -c $PERIOD -o "$W/perf.data" >"$W/perfrec.log" 2>&1 &
ppid=$!
sleep 2
sh "$W/workload.sh" "$secs" & a=$!
sh "$W/workload.sh" "$secs" & b=$!
wait $a $b
kill -TERM $opid; kill -INT $ppid
wait $opid $ppid
n1=$(op_samples "$W/s")
[ "$n1" -gt 0 ] || { echo "bench_export: no samples recorded"; tail -5 "$W/opd.log"; exit 1; }

# the recorded seconds alone: sizes beside perf.data of the same seconds, with
# thread/cpu labels and (the stream replayed with oprofiled's default
# --separate=lib,kernel) without
"$X" --session-dir="$W/s" -o "$W/rec.pb.gz" 2>/dev/null
"$X" --session-dir="$W/s" --no-symbols -o "$W/rec-nosym.pb.gz" 2>/dev/null
"$OPD" --session-dir="$W/sdef" --events=TIMER:$PERIOD --replay="$W/stream" >"$W/replay-def.log" 2>&1 ||
	{ echo "bench_export: replay failed:"; tail -5 "$W/replay-def.log"; exit 1; }
"$X" --session-dir="$W/sdef" -o "$W/def.pb.gz" 2>/dev/null
"$X" --session-dir="$W/sdef" --no-symbols -o "$W/def-nosym.pb.gz" 2>/dev/null
gzip -c "$W/perf.data" >"$W/perf.data.gz"
psamples=$(perf report -i "$W/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')

# replays until >= MIN_SAMPLES
k=1
while [ $((n1 * k)) -lt "$minsamples" ]; do
	"$OPD" --session-dir="$W/s" --append --separate=thread,cpu --events=TIMER:$PERIOD \
		--replay="$W/stream" >>"$W/replay.log" 2>&1 ||
		{ echo "bench_export: replay failed:"; tail -5 "$W/replay.log"; exit 1; }
	k=$((k + 1))
done
n=$(op_samples "$W/s")
nfiles=$(find "$W/s/samples/current" -type f -name 'TIMER.*' | wc -l)
echo "session: $n samples ($n1 recorded x $k), $nfiles sample files, $(du -sk "$W/s/samples" | cut -f1) KiB;" \
	"perf.data: $psamples samples"
echo
echo "== load average before timing: $(cut -d' ' -f1-3 /proc/loadavg); $runs runs each${RT:+; under $RT}"
: >"$W/medians"
printf '%-44s %8s %8s %8s %8s %10s %12s\n' "" "med s" "min s" "max s" "cpu s" "maxRSS KiB" "out bytes"
measure "opexport --format=pprof" "$X" --session-dir="$W/s" --format=pprof
measure "opexport --format=pprof --no-symbols" "$X" --session-dir="$W/s" --format=pprof --no-symbols
measure "opexport --format=pprof -g (lines)" "$X" --session-dir="$W/s" --format=pprof -g
measure "opreport -l" "$R" --session-dir="$W/s" -l --merge=all
measure "opexport --format=speedscope" "$X" --session-dir="$W/s" --format=speedscope
measure "perf script (same seconds, $psamples samples)" perf script -i "$W/perf.data"
# the two alternately (other load on the machine hits both alike): the median ratio of pairs
: >"$W/pairs"
i=0
while [ $i -lt $((runs * 2 + 1)) ]; do
	$RT /usr/bin/time -f '%e %U %S' -o "$W/tx" "$X" --session-dir="$W/s" --format=pprof >/dev/null 2>&1
	$RT /usr/bin/time -f '%e %U %S' -o "$W/tr" "$R" --session-dir="$W/s" -l --merge=all >/dev/null 2>&1
	paste -d' ' "$W/tx" "$W/tr" >>"$W/pairs"
	i=$((i + 1))
done
pw=$(awk '$4 > 0 { print $1 / $4 }' "$W/pairs" | med)
pc=$(awk '$5 + $6 > 0 { print ($2 + $3) / ($5 + $6) }' "$W/pairs" | med)
pw=${pw:-0} pc=${pc:-0}
echo
get() { awk -v l="$1" '{ k = $0; sub(/ [^ ]* [^ ]* [^ ]*$/, "", k); if (k == l) print $(NF - 2) }' "$W/medians"; }
getc() { awk -v l="$1" '{ k = $0; sub(/ [^ ]* [^ ]* [^ ]*$/, "", k); if (k == l) print $(NF - 1) }' "$W/medians"; }
getr() { awk -v l="$1" '{ k = $0; sub(/ [^ ]* [^ ]* [^ ]*$/, "", k); if (k == l) print $NF }' "$W/medians"; }
awk -v x="$(get 'opexport --format=pprof')" -v r="$(get 'opreport -l')" \
    -v xm="$(getr 'opexport --format=pprof')" -v rm="$(getr 'opreport -l')" \
    -v xc="$(getc 'opexport --format=pprof')" -v rc="$(getc 'opreport -l')" \
    -v xn="$(get 'opexport --format=pprof --no-symbols')" \
    -v pb="$(wc -c <"$W/rec.pb.gz")" -v pn="$(wc -c <"$W/rec-nosym.pb.gz")" \
    -v db="$(wc -c <"$W/def.pb.gz")" -v dn="$(wc -c <"$W/def-nosym.pb.gz")" \
    -v pd="$(wc -c <"$W/perf.data")" -v pz="$(wc -c <"$W/perf.data.gz")" -v n="$n" -v f="$nfiles" \
    -v n1="$n1" -v ps="$psamples" 'BEGIN {
	printf "RESULT export time: opexport pprof %.2f s, --no-symbols %.2f s, opreport -l %.2f s: opexport/opreport = %.2f (%d samples, %d files)\n",
		x, xn, r, (r > 0 ? x / r : 0), n, f
	printf "RESULT export cpu (user+sys; opexport reads, loads symbols and deflates on threads): opexport %.2f s, opreport -l %.2f s: %.2f\n", xc, rc, (rc > 0 ? xc / rc : 0)
	printf "RESULT export alternating (%d pairs, median of the ratios): opexport/opreport -l wall %.2f, cpu %.2f\n", '"$((runs * 2 + 1))"', '"$pw"', '"$pc"'
	printf "RESULT export rss: opexport %d KiB, opreport -l %d KiB: %.2f\n", xm, rm, (rm > 0 ? xm / rm : 0)
	printf "RESULT export size (the %s s recorded): perf.data %d B, gzip %d B\n", "'"$secs"'", pd, pz
	printf "RESULT export size --separate=thread,cpu: pprof %d B (--no-symbols %d B): perf.data/pprof = %.0fx, perf.data.gz/pprof = %.1fx\n",
		pb, pn, (pb > 0 ? pd / pb : 0), (pb > 0 ? pz / pb : 0)
	printf "RESULT export size default --separate: pprof %d B (--no-symbols %d B): perf.data/pprof = %.0fx, perf.data.gz/pprof = %.1fx\n",
		db, dn, (db > 0 ? pd / db : 0), (db > 0 ? pz / db : 0)
	# the two recorders may keep different numbers of samples (rings lost under load): per sample too
	if (n1 > 0 && ps > 0 && pb > 0 && db > 0)
		printf "RESULT export size per sample (oprofiled %d, perf %d samples): perf.data %.1f B, gzip %.1f B; pprof %.2f B (thread/cpu), %.2f B (default): perf.data/pprof = %.0fx / %.0fx\n",
			n1, ps, pd / ps, pz / ps, pb / n1, db / n1, (pd / ps) / (pb / n1), (pd / ps) / (db / n1)
}'
echo "oprofiled's own figures of the recording (kernel ring losses under load):"
grep -E 'lost by the kernel \(ring full\)' "$W/s/samples/oprofiled.log" | head -2
