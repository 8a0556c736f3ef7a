#!/bin/sh
# durability.sh - sample files are usable at any time: while the daemon runs
# (after SIGUSR1) they pass full validation (odb_check) and their counts grow
# between two reads; after SIGKILL of the daemon every file still validates;
# a restart with --append on the same session (stale lock) adds to them:
# no file disappears and no count goes down. 4 kHz, launch mode.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
HOT=$B/tests/integration/hot
DUMP=$B/tests/integration/sp_dump
W=$B/tests/integration/durability.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
S=$W/s
C=$S/samples/current
dpid=
cleanup() { [ -n "$dpid" ] && kill -KILL "$dpid" 2>/dev/null; pkill_hot; }
pkill_hot() { for p in $(cat hotpid 2>/dev/null); do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT

total() { awk '$1 == "TOTAL" { print $3 }' "$1"; }

"$OPD" --session-dir="$S" --events=TIMER:250000 -- "$HOT" 15000 > out 2> err &
dpid=$!
i=0
while [ ! -s "$S/lock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 2
if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" err; then
	echo "SKIP: the kernel forbids perf_event_open here"; exit 77
fi
kill -0 $dpid 2>/dev/null || { echo "FAIL: the daemon died"; cat err; exit 1; }
# the launched command (child of the daemon), killed at the end
pgrep -P $dpid > hotpid 2>/dev/null

# 1. read while running, after SIGUSR1, twice: valid and growing
kill -USR1 $dpid
sleep 0.5
"$DUMP" "$C" > r1 || { echo "FAIL: a sample file fails validation while the daemon runs"; grep BAD r1; fail=1; }
sleep 1.5
kill -USR1 $dpid
sleep 0.5
"$DUMP" "$C" > r2 || { echo "FAIL: a sample file fails validation while the daemon runs (2)"; grep BAD r2; fail=1; }
t1=$(total r1) t2=$(total r2)
echo "while running: $t1 then $t2 samples"
[ "${t1:-0}" -ge 1000 ] || { echo "FAIL: only ${t1:-0} samples readable after 2.5 s at 4 kHz"; fail=1; }
[ "${t2:-0}" -gt "${t1:-0}" ] || { echo "FAIL: counts did not grow while running"; fail=1; }

# 2. SIGKILL: every file still validates
sleep 1
kill -KILL $dpid
wait $dpid 2>/dev/null
dpid=
pkill_hot
"$DUMP" "$C" > r3 || { echo "FAIL: a sample file is invalid after SIGKILL"; grep BAD r3; fail=1; }
t3=$(total r3)
echo "after SIGKILL: $t3 samples"
[ "${t3:-0}" -ge "${t2:-0}" ] || { echo "FAIL: fewer samples after SIGKILL than while running"; fail=1; }

# 3. restart with --append (the dead daemon's lock file is stale): counts only grow
"$OPD" --session-dir="$S" --append --events=TIMER:250000 -- "$HOT" 1000 > out2 2> err2 ||
	{ echo "FAIL: restart with --append after SIGKILL"; cat err2; fail=1; }
"$DUMP" "$C" > r4 || { echo "FAIL: invalid sample file after the restart"; grep BAD r4; fail=1; }
t4=$(total r4)
echo "after the --append restart: $t4 samples"
[ "${t4:-0}" -gt "${t3:-0}" ] || { echo "FAIL: the restart added nothing"; fail=1; }
# file by file: none lost, none decreased
awk 'NR == FNR { if ($1 != "TOTAL") old[$3] = $1; next }
     $1 != "TOTAL" { new[$3] = $1 }
     END { for (f in old) if (!(f in new) || new[f] < old[f]) { print "FAIL: " f ": " old[f] " -> " new[f]; bad = 1 }
           exit bad }' r3 r4 || fail=1
[ ! -d "$S/samples/previous" ] || { echo "FAIL: --append rotated samples/current"; fail=1; }

if [ $fail -eq 0 ]; then
	echo "PASS: durability.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
