#!/bin/sh
# bench_fleet.sh - the daemon's cost at fleet rates (issue 20), beside perf
# record at the same rate, in the same run. Run by hand from the build
# directory as root (system-wide); see tests/bench/README.md.
#   bench_fleet.sh [SECONDS=60] [WARMUP=20] [RATES="99 19"]
# Both CPUs are kept busy (one spinning shell per online CPU). For each rate,
# oprofiled with conf/fleet.conf (call graphs, cgroup labels, thread split;
# --frequency=RATE, no rotation during the window), with ALT="options" a
# second oprofiled with those options added (e.g. ALT=--separate=lib,kernel;
# ALT_OPD=PATH runs another build's oprofiled as the second one, ALT_NAME
# labels its row: a before/after comparison under the same load),
# and perf record -F RATE -a -g run system-wide AT THE SAME TIME: the host's
# other work (process churn on a shared machine costs the daemon most: new
# sample files, side-band records) is the same for all of them. After
# WARMUP seconds (start-up and the kallsyms pass excluded) the time on CPU
# of every thread of each profiler is summed from /proc/PID/task/*/schedstat
# (nanoseconds: utime+stime in /proc/PID/stat counts 10 ms ticks, too coarse
# for 0.01 % of a CPU), and again SECONDS later: CPU per cent of one CPU in
# steady state, nanoseconds per sample (oprofiled's samples counted by its
# session over the window, perf's from perf report --stats pro rata),
# voluntary context switches (wake-ups) per second of all threads, RSS at
# the end, and the host's new processes a second (/proc/stat). Then strace
# -c -f counts each oprofiled's system calls over STRACE seconds (default
# 10; 0 skips it), after the window (strace slows the traced process). Last
# an idle check: the daemon's wake-ups per second while profiling a
# sleeping command (no samples).
# SPDX-License-Identifier: MIT
set -u
B=$(cd "${OP_BUILDDIR:-.}" && pwd) # absolute: helpers and plugins are looked up by it
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
echo "bench_fleet: $ncpu CPUs busy, window $SECS s after $WARM s of warm-up; the profilers run side by side"
printf "%-6s %-30s %8s %8s %9s %9s %9s %8s\n" rate profiler "cpu %" samples "ns/sample" "wakeups/s" \
	"syscall/s" "RSS KiB"
now_s() { date +%s.%N; }
# a sessions's sample count (a dump first: the counters are written at dumps)
nsamples() {
	"$OPC" --session-dir="$1" --dump > /dev/null 2>&1
	cat "$1/samples/current/stats/total_samples" 2> /dev/null || echo 0
}
row() { # rate name ns samples vcs syscalls rss
	printf "%-6s %-30s %8s %8s %9s %9s %9s %8s\n" "$1" "$2" "$(pct $3)" "$4" "$(ns_per $3 $4)" \
		"$(per_s $5)" "$6" "$7"
}
for r in $RATES; do
	# oprofiled at fleet defaults, (ALT) a second one with other options,
	# and perf record at the same rate with call graphs, all at once: the
	# host's process churn (other work on a shared machine) is the same
	# for all of them
	"$OPD" --config="$CONF" --session-dir="$T/s$r" --frequency="$r" --rotate=0 > "$T/o$r" 2>&1 &
	po=$!
	pa=
	if [ -n "${ALT:-}${ALT_OPD:-}" ]; then
		# shellcheck disable=SC2086
		"${ALT_OPD:-$OPD}" --config="$CONF" --session-dir="$T/a$r" --frequency="$r" --rotate=0 $ALT \
			> "$T/oa$r" 2>&1 &
		pa=$!
	fi
	t0=$(now_s)
	perf record -F "$r" -a -g -o "$T/perf$r.data" > "$T/p$r" 2>&1 &
	pp=$!
	wait_for "$T/s$r/samples/oprofiled.log" "profiling started"
	[ -z "$pa" ] || wait_for "$T/a$r/samples/oprofiled.log" "profiling started"
	sleep "$WARM"
	n0=$(nsamples "$T/s$r")
	[ -z "$pa" ] || na0=$(nsamples "$T/a$r")
	f0=$(awk '/^processes/ { print $2 }' /proc/stat)
	o0=$(cpu_ns $po) ov0=$(vcs $po) p0=$(cpu_ns $pp) pv0=$(vcs $pp)
	[ -z "$pa" ] || { a0=$(cpu_ns $pa); av0=$(vcs $pa); }
	sleep "$SECS"
	o1=$(cpu_ns $po) ov1=$(vcs $po) p1=$(cpu_ns $pp) pv1=$(vcs $pp)
	[ -z "$pa" ] || { a1=$(cpu_ns $pa); av1=$(vcs $pa); }
	f1=$(awk '/^processes/ { print $2 }' /proc/stat)
	n1=$(nsamples "$T/s$r")
	[ -z "$pa" ] || na1=$(nsamples "$T/a$r")
	sc=$(sys_per_s $po)
	[ -z "$pa" ] || sca=$(sys_per_s $pa)
	row "$r" "oprofiled (fleet.conf)" $((o1 - o0)) $((n1 - n0)) $((ov1 - ov0)) "$sc" "$(rss $po)"
	[ -z "$pa" ] || row "$r" "${ALT_NAME:-oprofiled ${ALT:-}}" $((a1 - a0)) $((na1 - na0)) $((av1 - av0)) "$sca" "$(rss $pa)"
	prss=$(rss $pp)
	kill -INT $pp
	wait $pp
	t1=$(now_s)
	# perf's samples of its whole run, pro rata for the window
	n=$(perf report -i "$T/perf$r.data" --stats 2> /dev/null | awk '/SAMPLE events:/ { print $3; exit }')
	n=$(awk -v n="${n:-0}" -v a="$t0" -v b="$t1" -v s="$SECS" 'BEGIN { printf "%d", n * s / (b - a) }')
	row "$r" "perf record -F $r -a -g" $((p1 - p0)) "$n" $((pv1 - pv0)) - "$prss"
	kill -TERM $po $pa
	wait $po $pa
	awk -v o=$((o1 - o0)) -v p=$((p1 - p0)) -v r="$r" 'BEGIN { if (p > 0) printf "%-6s oprofiled / perf record CPU: %.2f\n", r, o / p; else printf "%-6s perf record used no measurable CPU\n", r }'
	echo "       host: $(per_s $((f1 - f0))) new processes a second during the window"
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
