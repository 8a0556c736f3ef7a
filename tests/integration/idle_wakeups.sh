#!/bin/sh
# idle_wakeups.sh - a daemon with nothing to sample must not wake more than
# a few times a second (issue 20). oprofiled profiles a command that only
# sleeps (launch mode at 99 Hz: its events never fire), and the voluntary
# context switches of every daemon thread (/proc/PID/task/*/status) are
# counted over 8 s of that idle run: at most 3 a second are allowed. The
# adaptive poll wait (core/perf.c, perf_adapt_wait) brings it to about one.
# Then a busy loop under the same daemon options still gets its samples
# (the longer idle wait loses nothing: the kernel wakes the poll when a
# ring is half full, and stop drains the rest).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
HOT=$B/tests/integration/hot
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/idle_wakeups.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
fail=0

# voluntary context switches of all threads of process $1
switches() {
	cat /proc/"$1"/task/*/status 2> /dev/null | awk '/^voluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}

"$OPD" --session-dir="$W/s" --events=TIMER:99Hz -- sleep 12 > out 2> err &
dpid=$!
fleet_wait_started $dpid "$W/s" err
sleep 1 # start-up and the kallsyms pass are over
a=$(switches $dpid)
sleep 8
b=$(switches $dpid)
n=$((b - a))
echo "idle daemon: $n voluntary context switches in 8 s"
[ "$n" -ge 1 ] || { echo "FAIL: no wake-up counted at all (is /proc/PID/task/*/status readable?)"; fail=1; }
[ "$n" -le 24 ] || { echo "FAIL: $n wake-ups in 8 s, more than 3 a second"; fail=1; }
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }

# the same daemon on a busy loop: samples at 99 Hz for ~2 s all arrive
"$OPD" --session-dir="$W/s2" --events=TIMER:99Hz -- "$HOT" 2000 > out2 2> err2 ||
	{ echo "FAIL: oprofiled (busy) exited non-zero"; cat err2; fail=1; }
tot=$(cat "$W/s2/samples/current/stats/total_samples" 2> /dev/null || echo 0)
echo "busy loop at 99 Hz: $tot samples"
[ "$tot" -ge 100 ] || { echo "FAIL: only $tot samples of a busy loop at 99 Hz"; fail=1; }
exit $fail
