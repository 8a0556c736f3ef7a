#!/bin/sh
# bench_fleet.sh - the daemon's cost at fleet rates (issue 20), beside perf
# record at the same rate, in the same run. Run by hand from the build
# directory as root (system-wide); see tests/bench/README.md.
#   bench_fleet.sh [SECONDS=60] [WARMUP=20] [RATES="99 19"]
# Both CPUs are kept busy (one spinning shell per online CPU). For each rate,
# oprofiled with conf/fleet.conf (call graphs, cgroup labels, thread split;
# --frequency=RATE, no rotation during the window) and then perf record -F
# RATE -a -g run system-wide; after WARMUP seconds (start-up and the
# kallsyms pass excluded) the time on CPU of every thread of the profiler
# is summed from /proc/PID/task/*/schedstat (nanoseconds: utime+stime in
# /proc/PID/stat counts 10 ms ticks, too coarse for 0.01 % of a CPU), and
# again SECONDS later: CPU per cent of one CPU in steady state, nanoseconds
# per sample (samples from the session's counters, and perf's from perf
# report --stats), voluntary context switches (wake-ups) per second of all
# threads, RSS at the end. Then, for oprofiled only, strace -c -f counts its
# system calls over STRACE seconds (default 10; 0 skips it) after the
# window (strace slows the traced process, so not during it); the count
# does not depend on the machine's load. Last an idle check: the daemon's
# wake-ups per second while profiling a sleeping command (no samples).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
CONF=$S/conf/fleet.conf
SECS=${1:-60}
WARM=${2:-20}
RATES=${3:-99 19}
STRACE=${STRACE:-10}
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
spin=
trap 'for p in $spin; do kill $p 2> /dev/null; done; rm -rf "$T"' EXIT
[ -x "$OPD" ] || { echo "missing $OPD: make first"; exit 2; }
command -v perf > /dev/null || { echo "perf is not installed"; exit 2; }
[ "$(id -u)" = 0 ] || { echo "system-wide profiling needs root"; exit 2; }
ncpu=$(getconf _NPROCESSORS_ONLN)

# nanoseconds on CPU of all threads of $1 (first field of schedstat)
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ n += $1 } END { printf "%d", n }'; }
# voluntary context switches of all threads of $1
vcs() { cat /proc/"$1"/task/*/status 2> /dev/null | awk '/^voluntary_ctxt/ { n += $2 } END { print n + 0 }'; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
# wait until file $1 holds text $2 (at most 20 s)
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2> /dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
}
# $1 pid: CPU ns and wake-ups over the window after the warm-up; sets
# d_ns, d_vcs, d_rss
window() {
	sleep "$WARM"
	a=$(cpu_ns "$1")
	va=$(vcs "$1")
	sleep "$SECS"
	b=$(cpu_ns "$1")
	vb=$(vcs "$1")
	d_ns=$((b - a))
	d_vcs=$((vb - va))
	d_rss=$(rss "$1")
}
pct() { awk -v t="$1" -v s="$SECS" 'BEGIN { printf "%.4f", t / 1e9 / s * 100 }'; }
ns_per() { awk -v t="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.0f", t / n; else print "-" }'; }
per_s() { awk -v d="$1" -v s="$SECS" 'BEGIN { printf "%.2f", d / s }'; }
# $1 pid: system calls a second of all its threads over $STRACE seconds
sys_per_s() {
	[ "$STRACE" -gt 0 ] && command -v strace > /dev/null || { echo -; return; }
	timeout -s INT "$STRACE" strace -c -f -p "$1" -o "$T/strace" > /dev/null 2>&1
	# the total line: % time, seconds, usecs/call, calls, [errors], total
	awk -v s="$STRACE" '$NF == "total" { c = $4 } END { printf "%.1f", c / s }' "$T/strace"
}

for c in $(seq "$ncpu"); do
	sh -c 'while :; do :; done' &
	spin="$spin $!"
done
echo "bench_fleet: $ncpu CPUs busy, window $SECS s after $WARM s of warm-up"
printf "%-6s %-26s %8s %8s %9s %9s %9s %8s\n" rate profiler "cpu %" samples "ns/sample" "wakeups/s" \
	"syscall/s" "RSS KiB"
for r in $RATES; do
	# oprofiled at fleet defaults
	"$OPD" --config="$CONF" --session-dir="$T/s$r" --frequency="$r" --rotate=0 > "$T/o$r" 2>&1 &
	p=$!
	wait_for "$T/s$r/samples/oprofiled.log" "profiling started"
	"$OPC" --session-dir="$T/s$r" --dump > /dev/null 2>&1
	n0=$(cat "$T/s$r/samples/current/stats/total_samples" 2> /dev/null || echo 0)
	window $p
	"$OPC" --session-dir="$T/s$r" --dump > /dev/null 2>&1
	n1=$(cat "$T/s$r/samples/current/stats/total_samples" 2> /dev/null || echo 0)
	sc=$(sys_per_s $p)
	kill -TERM $p
	wait $p
	# the counters count from the start: the warm-up's share is removed pro rata
	n=$(awk -v a="$n0" -v b="$n1" -v w="$WARM" -v s="$SECS" 'BEGIN { printf "%d", (b - a) * s / (w + s) }')
	[ "$n" -gt 0 ] || n=$((r * ncpu * SECS))
	printf "%-6s %-26s %8s %8s %9s %9s %9s %8s\n" "$r" "oprofiled (fleet.conf)" "$(pct $d_ns)" "$n" \
		"$(ns_per $d_ns $n)" "$(per_s $d_vcs)" "$sc" "$d_rss"
	od=$d_ns
	# perf record at the same rate, call graphs too
	perf record -F "$r" -a -g -o "$T/perf$r.data" > "$T/p$r" 2>&1 &
	p=$!
	window $p
	kill -INT $p
	wait $p
	n=$(perf report -i "$T/perf$r.data" --stats 2> /dev/null | awk '/SAMPLE events:/ { print $3; exit }')
	n=$(awk -v n="${n:-0}" -v w="$WARM" -v s="$SECS" 'BEGIN { printf "%d", n * s / (w + s) }')
	printf "%-6s %-26s %8s %8s %9s %9s %9s %8s\n" "$r" "perf record -F $r -a -g" "$(pct $d_ns)" "$n" \
		"$(ns_per $d_ns $n)" "$(per_s $d_vcs)" - "$d_rss"
	awk -v o="$od" -v p="$d_ns" -v r="$r" 'BEGIN { if (p > 0) printf "%-6s oprofiled / perf record CPU: %.2f\n", r, o / p; else printf "%-6s perf record used no measurable CPU\n", r }'
	echo "       bytes on disk: oprofiled $(du -sk "$T/s$r" | cut -f1) KiB (of it kallsyms $(($(stat -c %s "$T/s$r/samples/current/stats/kallsyms" 2> /dev/null || echo 0) / 1024)) KiB), perf.data $(($(stat -c %s "$T/perf$r.data") / 1024)) KiB"
done
for p in $spin; do kill $p 2> /dev/null; done
spin=

# idle: a sleeping command, nothing to sample
"$OPD" --config="$CONF" --session-dir="$T/idle" --rotate=0 -- sleep $((WARM / 4 + 12)) > "$T/oi" 2>&1 &
p=$!
wait_for "$T/idle/samples/oprofiled.log" "profiling started"
sleep 2
a=$(cat /proc/$p/task/*/status | awk '/^voluntary_ctxt/ { n += $2 } END { print n }')
sleep 10
b=$(cat /proc/$p/task/*/status | awk '/^voluntary_ctxt/ { n += $2 } END { print n }')
wait $p
echo "idle daemon (fleet.conf, nothing sampled): $(awk -v d=$((b - a)) 'BEGIN { printf "%.1f", d / 10 }') wake-ups a second"
