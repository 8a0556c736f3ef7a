#!/bin/sh
# bench_optop.sh - issue 21: optop's own CPU at the default refresh (2 s) on
# a system-wide session with >= 10,000 distinct symbols, beside perf top at
# the same sampling rate (4 kHz cpu-clock), each for SECONDS (>= 60).
# The workload is a generated program of NFUNCS functions (default 12000)
# called round-robin, two copies (both CPUs busy). optop runs its curses
# view in tmux on a --daemonize'd oprofiled's session (a dump request per
# refresh); perf top runs its TUI in tmux. CPU from /proc/PID/stat
# (utime + stime, all threads), over the steady-state window (after a
# 5 s start) and for the whole run; the daemon's own CPU in the optop
# window is printed too (perf top samples in its own process).
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

total=$((2 * SECS + 40))
./many_syms $total > /dev/null &
work=$!
./many_syms $total > /dev/null &
work="$work $!"
"$OPD" --system-wide --daemonize --session-dir="$W/s" --events=TIMER:250000 --config= \
	> opd.out 2>&1 || { echo "bench_optop: oprofiled failed"; cat opd.out; exit 1; }
dpid=$(cat "$W/s/lock")
sleep 10
"$OPC" --session-dir="$W/s" --dump > /dev/null
nsyms=$("$OPR" --session-dir="$W/s" -l image:"$W/many_syms" 2> /dev/null | grep -c ' f[0-9][0-9][0-9][0-9][0-9]$')
echo "session: $nsyms distinct symbols of many_syms sampled (of $NFUNCS) before optop starts"

# optop: the curses view at the default refresh
tmux -L "$SOCK" new-session -d -s optop -x 160 -y 50 "exec '$OPTOP' --session-dir='$W/s'"
sleep 0.5
opid=$(pane_pid optop)
t0=$(cpu_ticks "$opid")
sleep 5
a=$(cpu_ticks "$opid")
d_a=$(cpu_ticks "$dpid")
sleep "$SECS"
b=$(cpu_ticks "$opid")
d_b=$(cpu_ticks "$dpid")
tmux -L "$SOCK" capture-pane -p -t optop > optop.screen
tmux -L "$SOCK" send-keys -t optop q
sleep 1
rows=$(awk '$2 ~ /%$/ && $3 == "many_syms"' optop.screen | wc -l)
[ "$rows" -gt 0 ] || { echo "bench_optop: optop showed no many_syms rows:"; cat optop.screen; }
nsyms=$("$OPR" --session-dir="$W/s" -l image:"$W/many_syms" 2> /dev/null | grep -c ' f[0-9][0-9][0-9][0-9][0-9]$')
echo "session: $nsyms distinct symbols of many_syms when optop stops"
"$OPC" --session-dir="$W/s" --stop --wait=20 > /dev/null

# perf top at the same rate, its TUI at the same refresh
tmux -L "$SOCK" new-session -d -s perf -x 160 -y 50 "exec perf top -e cpu-clock -F 4000 -d 2 2> '$W/perf.err'"
sleep 0.5
ppid=$(pane_pid perf)
p0=$(cpu_ticks "$ppid")
sleep 5
pa=$(cpu_ticks "$ppid")
sleep "$SECS"
pb=$(cpu_ticks "$ppid")
tmux -L "$SOCK" capture-pane -p -t perf > perf.screen
grep -q "f[0-9][0-9][0-9][0-9][0-9]" perf.screen || { echo "bench_optop: perf top shows no many_syms symbol:"; head -20 perf.screen; }
tmux -L "$SOCK" send-keys -t perf q

o_pct=$(pct "$a" "$b" "$SECS")
o_all=$(pct "$t0" "$b" $((SECS + 5)))
d_pct=$(pct "$d_a" "$d_b" "$SECS")
p_pct=$(pct "$pa" "$pb" "$SECS")
p_all=$(pct "$p0" "$pb" $((SECS + 5)))
echo "optop (curses, -d 2):       $o_pct % of one CPU over ${SECS} s (with its start: $o_all %)"
echo "  oprofiled meanwhile:      $d_pct % (sampling 2 CPUs at 4 kHz, a dump every 2 s)"
echo "perf top (-F 4000, -d 2):   $p_pct % of one CPU over ${SECS} s (with its start: $p_all %)"
awk -v o="$o_pct" -v p="$p_pct" -v d="$d_pct" 'BEGIN {
	printf "perf top / optop: %.1fx; perf top / (optop + oprofiled): %.1fx\n", p / (o > 0 ? o : 0.001), p / (o + d > 0 ? o + d : 0.001)
	printf "RESULT optop %.3f %% perf_top %.3f %% oprofiled %.3f %%\n", o, p, d
	printf "goal: optop <= 1 %%: %s; >= 10x less than perf top: %s\n", o <= 1 ? "met" : "NOT met", p >= 10 * o ? "met" : "NOT met"
}'
