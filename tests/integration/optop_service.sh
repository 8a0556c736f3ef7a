#!/bin/sh
# optop_service.sh - optop --session-dir on a running --daemonize'd service
# (system-wide, 2 kHz cpu-clock, beside tests/integration/hot): it shows the
# hot functions, asking the daemon to dump through the control socket, and
# leaves the service as it was: still running, the same samples/ entries,
# samples/current the same directory. After the service stops, its sample
# files hold exactly the samples its own stats/total_samples counted
# (nothing lost or counted twice by optop's dumps), and its status said
# every dump request came from optop. A user of the session's group gets a
# read-only view with a message saying so (tests/integration/test_user.sh).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
OPR=$B/tools/opreport/opreport
OPTOP=$B/tools/optop/optop
HOT=$B/tests/integration/hot
W=$B/tests/integration/optop_service.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
SD=$W/svc
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
hot=
cleanup() {
	"$OPC" --session-dir="$SD" --stop --wait=10 > /dev/null 2>&1
	[ -n "$hot" ] && kill "$hot" 2> /dev/null
	wait 2> /dev/null
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: a system-wide service needs root"; exit 77
fi
. "$S/tests/integration/test_user.sh"
op_test_user
group=$(getent group "$OP_GID" | cut -d: -f1)

# a name of its own: rows show base names, and other tests may run hot too
cp "$HOT" "$W/optop_hot" || exit 99
"$W/optop_hot" 60000 > /dev/null 2>&1 &
hot=$!
# the service as its unit starts it; its group may read the session
"$OPD" --system-wide --daemonize --session-dir="$SD" --session-group="$group" \
	--events=TIMER:500000 --config= > opd.out 2> opd.err
rc=$?
if [ $rc -ne 0 ]; then
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" opd.err; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	echo "FAIL: oprofiled --daemonize exited $rc"; cat opd.err; exit 1
fi
sleep 1
"$OPC" --session-dir="$SD" --status > st0.out 2>&1 || { bad "no status"; cat st0.out; }
req0=$(sed -n 's/.*; requests \([0-9]*\);.*/\1/p' st0.out)
ls -a "$SD/samples" > entries.before
cur_ino=$(stat -c %i "$SD/samples/current")

# 1. root's optop on the service: dumps each refresh, shows the hot functions
"$OPTOP" --session-dir="$SD" --stdio -d 1 -n 4 --rows=40 > top.out 2> top.err
rc=$?
[ $rc -eq 0 ] || { bad "optop --session-dir exited $rc"; cat top.err; }
grep -q "read-only" top.out top.err && bad "root's optop did not control the service"
awk 'BEGIN { RS = "" } { last = $0 } END { print last }' top.out > last
awk 'seen { print $3, $4 } /^ +samples +%/ { seen = 1 }' last > leaders
grep -qx "optop_hot work_big" leaders && grep -qx "optop_hot work_small" leaders ||
	{ bad "optop did not show the hot functions"; cat top.out; }

# 2. the service as it was
"$OPC" --session-dir="$SD" --status > st1.out 2>&1 || bad "the service stopped answering"
req1=$(sed -n 's/.*; requests \([0-9]*\);.*/\1/p' st1.out)
# one dump per refresh (the baseline and 4 refreshes), plus this status request
[ -n "$req0" ] && [ "$req1" -eq $((req0 + 6)) ] ||
	bad "the service counted $req0 -> $req1 requests, expected 5 dumps and 1 status"
ls -a "$SD/samples" > entries.after
cmp -s entries.before entries.after || { bad "samples/ changed"; diff entries.before entries.after; }
[ "$(stat -c %i "$SD/samples/current")" = "$cur_ino" ] || bad "samples/current was replaced"
grep -q "^saves: 0, resets: 0" st1.out || bad "a save or reset happened: $(grep saves st1.out)"

# 3. a user of the session's group: read-only, said so, rows still shown
op_as_user "$OPTOP" --session-dir="$SD" --stdio -d 1 -n 2 --rows=20 > user.out 2> user.err
rc=$?
[ $rc -eq 0 ] || { bad "the group's optop exited $rc"; cat user.err; }
grep -q "read-only: the daemon does not take our dump requests" user.err ||
	{ bad "no read-only message for the user"; cat user.err; }
grep -q "read-only" user.out || bad "the user's header does not say read-only"
grep -q "optop_hot  *work_big" user.out ||
	{ bad "the user's view shows nothing"; cat user.out; }

# 4. stop the service: the files hold what its own counters say, no more, no less
"$OPC" --session-dir="$SD" --stop --wait=30 > stop.out 2>&1 || { bad "--stop failed"; cat stop.out; }
kill "$hot" 2> /dev/null
total=$(cat "$SD/samples/current/stats/total_samples")
lost=0
for f in "$SD"/samples/current/stats/lost_*; do
	[ -f "$f" ] && case $f in *_by_kernel) ;; *) lost=$((lost + $(cat "$f"))) ;; esac
done
files=$("$OPR" --session-dir="$SD" 2> report.err | awk '/^ +[0-9]+ +[0-9.]+ / { s += $1 } END { print s + 0 }')
echo "service: $total samples received, $lost not attributed, $files in the sample files"
[ "$total" -gt 1000 ] || bad "too few samples: $total"
# one writer per sample file (odb_open refuses a second): the daemon never
# damages its own files, so opreport skips none and every attributed sample
# is in them
if grep -q "skipping sample file" report.err; then
	bad "opreport skipped damaged sample files of the service:"
	grep "skipping sample file" report.err | sed 's/^/  /'
fi
[ "$files" -eq $((total - lost)) ] ||
	bad "the sample files hold $files samples, the service counted $total - $lost"

if [ $fail -eq 0 ]; then
	echo "PASS: optop_service.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
