#!/bin/sh
# bench_optop.sh - issue 21: optop's own CPU at the default refresh (2 s)
# beside perf top at the same sampling rate (4 kHz cpu-clock), each for
# SECONDS (>= 60), the workload a generated program of NFUNCS functions
# (default 12000) called round-robin, two copies (both CPUs busy), so that
# the profile holds >= 10,000 distinct symbols. Three runs, each in tmux:
# 1. optop alone (its private system-wide daemon, the curses view);
# 2. perf top -F 4000 -d 2 (its TUI);
# 3. optop --session-dir on a --daemonize'd service started at the
#    beginning (a session of minutes of the whole machine's activity).
# CPU from /proc/PID/stat (utime + stime, all threads) over the steady
# state (after a 5 s start) and for the whole run; the daemon's own CPU
# is printed beside optop's (perf top samples in its own process). At the
# end of each optop run its cumulative view, filtered to the workload,
# says how many of the workload's symbols it resolved.
# Goal: optop <= 1 % of one CPU, >= 10x less than perf top.
# Usage: tests/bench/bench_optop.sh [SECONDS=60] [NFUNCS=12000]; root, from the build dir.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
SECS=${1:-60}
NFUNCS=${2:-12000}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
OPR=$B/tools/opreport/opreport
OPTOP=$B/tools/optop/optop
W=$B/tests/bench/bench_optop.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
SOCK=bench-optop-$$
HZ=$(getconf CLK_TCK)
[ "$(id -u)" = 0 ] || { echo "bench_optop: needs root (system-wide sampling)"; exit 1; }
for t in tmux perf gcc; do
	command -v $t > /dev/null || { echo "bench_optop: $t is missing"; exit 1; }
done
[ -x "$OPTOP" ] || { echo "bench_optop: $OPTOP is missing: build first"; exit 1; }
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 1
work=
cleanup() {
	tmux -L "$SOCK" kill-server 2> /dev/null
	"$OPC" --session-dir="$W/s" --stop --wait=20 > /dev/null 2>&1
	[ -n "$work" ] && kill $work 2> /dev/null
	wait 2> /dev/null
}
trap cleanup EXIT

# the workload: NFUNCS functions, each a short loop, called in turn for $1 seconds
awk -v n="$NFUNCS" 'BEGIN {
	print "#include <stdlib.h>\n#include <time.h>\nstatic volatile unsigned long sink;"
	for (i = 0; i < n; i++)
		printf "__attribute__((noinline)) void f%05d(void) { for (unsigned i = 0; i < 3000; i++) sink += i ^ %d; }\n", i, i
	printf "static void (*const tab[])(void) = {"
	for (i = 0; i < n; i++)
		printf "%sf%05d", i ? "," : "", i
	print "};"
	print "int main(int argc, char **argv) {"
	print "\ttime_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 10);"
	print "\twhile (time(NULL) < end)"
	print "\t\tfor (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) tab[i]();"
	print "\treturn 0;\n}"
}' > many_syms.c
gcc -O1 -g -o many_syms many_syms.c || { echo "bench_optop: cannot build the workload"; exit 1; }

# utime + stime of PID in ticks
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
pct() { awk -v a="$1" -v b="$2" -v s="$3" -v hz="$HZ" 'BEGIN { printf "%.3f", 100 * (b - a) / hz / s }'; }
# pane_pid of the tmux session $1 (the command, exec'd by tmux's shell)
pane_pid() { tmux -L "$SOCK" display -p -t "$1" '#{pane_pid}'; }

# one optop run in tmux (session $1, optop's arguments after): its CPU and
# its private daemon's over SECS after a 5 s start; sets o_pct, o_all, d_pct
# and rows_many (rows of many_syms in the cumulative view at the end)
run_optop() {
	name=$1
	shift
	tmux -L "$SOCK" new-session -d -s "$name" -x 160 -y 50 "exec '$OPTOP' $*"
	sleep 0.5
	opid=$(pane_pid "$name")
	t0=$(cpu_ticks "$opid")
	sleep 5
	dpid=$(pgrep -P "$opid" oprofiled | head -1)
	[ -n "$dpid" ] || dpid=$svc
	a=$(cpu_ticks "$opid")
	d_a=$(cpu_ticks "$dpid")
	sleep "$SECS"
	b=$(cpu_ticks "$opid")
	d_b=$(cpu_ticks "$dpid")
	tmux -L "$SOCK" capture-pane -p -t "$name" > "$name.screen"
	# the cumulative view filtered to the workload: how many of its symbols were seen
	tmux -L "$SOCK" send-keys -t "$name" z / many_syms Enter
	sleep 3
	tmux -L "$SOCK" capture-pane -p -t "$name" > "$name.many"
	rows_many=$(sed -n 's/^ \([0-9]*\) rows |.*/\1/p' "$name.many")
	tmux -L "$SOCK" send-keys -t "$name" q
	sleep 2
	o_pct=$(pct "$a" "$b" "$SECS")
	o_all=$(pct "$t0" "$b" $((SECS + 5)))
	d_pct=$(pct "$d_a" "$d_b" "$SECS")
}

total=$((3 * SECS + 60))
./many_syms $total > /dev/null &
work=$!
./many_syms $total > /dev/null &
work="$work $!"
# a service beside, for the --session-dir run at the end (its session is then minutes old)
"$OPD" --system-wide --daemonize --session-dir="$W/s" --events=TIMER:250000 --config= \
	> opd.out 2>&1 || { echo "bench_optop: oprofiled failed"; cat opd.out; exit 1; }
svc=$(cat "$W/s/lock")

# 1. optop alone: its private daemon (4 kHz cpu-clock), the curses view, default refresh
run_optop private
echo "optop (private daemon, curses, -d 2): $o_pct % of one CPU over ${SECS} s (with its start: $o_all %)"
echo "  its oprofiled meanwhile:           $d_pct % (sampling 2 CPUs at 4 kHz, a dump every 2 s)"
echo "  distinct many_syms symbols seen:   ${rows_many:-?} (of $NFUNCS)"
priv_o=$o_pct priv_d=$d_pct priv_rows=${rows_many:-0}

# 2. perf top at the same rate, its TUI at the same refresh
tmux -L "$SOCK" new-session -d -s perf -x 160 -y 50 "exec perf top -e cpu-clock -F 4000 -d 2 2> '$W/perf.err'"
sleep 0.5
ppid=$(pane_pid perf)
p0=$(cpu_ticks "$ppid")
sleep 5
pa=$(cpu_ticks "$ppid")
sleep "$SECS"
pb=$(cpu_ticks "$ppid")
tmux -L "$SOCK" capture-pane -p -t perf > perf.screen
tmux -L "$SOCK" send-keys -t perf q
sleep 2
p_pct=$(pct "$pa" "$pb" "$SECS")
p_all=$(pct "$p0" "$pb" $((SECS + 5)))
echo "perf top (-F 4000, -d 2):            $p_pct % of one CPU over ${SECS} s (with its start: $p_all %)"

# 3. optop on the service's session (minutes of the whole system's activity)
files=$(find "$W/s/samples/current" -type f -name '*.*.*.*.*.*' | wc -l)
run_optop watch --session-dir="$W/s"
echo "optop --session-dir on the service (${files} sample files): $o_pct % of one CPU (with its start: $o_all %)"
echo "  the service meanwhile:             $d_pct %"

awk -v o="$priv_o" -v p="$p_pct" -v d="$priv_d" -v w="$o_pct" -v n="$priv_rows" 'BEGIN {
	printf "perf top / optop: %.1fx; perf top / (optop + its oprofiled): %.1fx\n", p / (o > 0 ? o : 0.001), p / (o + d > 0 ? o + d : 0.001)
	printf "RESULT optop %.3f %% oprofiled %.3f %% perf_top %.3f %% optop_watch %.3f %% symbols %d\n", o, d, p, w, n
	printf "goal: optop <= 1 %%: %s; >= 10x less than perf top: %s; >= 10000 symbols: %s\n", (o <= 1) ? "met" : "NOT met", (p >= 10 * o) ? "met" : "NOT met", (n >= 10000) ? "yes" : "no"
}'
