#!/bin/sh
# log_reopen.sh - a SIGHUP after the log was moved away (logrotate) moves
# every stage's messages to the new log at once (issue 16: one struct op_log
# for the whole daemon): main's own lines, the sample files' (--verbose=sfile:
# "opened ..."), the pipeline's statistics with perf's and the plugins'
# sections (SIGUSR1), control's (opcontrol --save); the moved-away log gets
# none of them after the SIGHUP.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
HOT=$B/tests/integration/hot
W=$B/tests/integration/log_reopen.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
SD=$W/sess
LOG=$SD/samples/oprofiled.log
OLD=$SD/samples/oprofiled.log.1
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
hot=
opd=
cleanup() {
	for p in $opd $hot; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap cleanup EXIT
# wait until FILE has a line matching RE (5 s)
wait_for() {
	i=0
	until grep -q "$2" "$1" 2> /dev/null; do
		[ $i -ge 50 ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}

"$HOT" 600000 &
hot=$!
"$OPD" --session-dir="$SD" --events=TIMER:1000000 --verbose=sfile --pid=$hot > opd.out 2> opd.err &
opd=$!
i=0
until "$OPC" --session-dir="$SD" --status > st0.out 2>&1; do
	if ! kill -0 $opd 2> /dev/null || [ $i -ge 100 ]; then
		if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" opd.err; then
			echo "SKIP: the kernel forbids perf_event_open here"; exit 77
		fi
		echo "FAIL: the daemon did not answer opcontrol --status"; cat opd.err st0.out
		exit 1
	fi
	sleep 0.2
	i=$((i + 1))
done
wait_for "$LOG" "oprofiled: opened " || bad "no sample file was opened before the SIGHUP"

# logrotate: move the log away, then SIGHUP
mv "$LOG" "$OLD"
kill -HUP $opd
wait_for "$LOG" "SIGHUP: sample files closed, log reopened" ||
	bad "main's SIGHUP line is not in the new log"
# the sample files were closed: the next samples reopen them, logged (sfile)
wait_for "$LOG" "oprofiled: opened " || bad "the sample files' messages did not move to the new log"
# the statistics: the pipeline's block, perf's and the plugins' sections
kill -USR1 $opd
wait_for "$LOG" "^-- OProfile-ng Statistics --" || bad "SIGUSR1's statistics did not go to the new log"
wait_for "$LOG" "^-- plugin timer --" || bad "the plugins' statistics did not go to the new log"
# control
"$OPC" --session-dir="$SD" --save=after > save.out 2>&1 || { bad "opcontrol --save failed"; cat save.out; }
wait_for "$LOG" "control: samples/current saved as samples/after" ||
	bad "control's messages did not move to the new log"
kill $opd
wait $opd 2> /dev/null
opd=
grep -q "profiling stopped" "$LOG" || bad "the stop line is not in the new log"
# the old log ends where it was moved
for re in "log reopened" "control: samples/current saved" "profiling stopped" "^-- plugin timer --"; do
	grep -q "$re" "$OLD" && bad "the moved-away log still got \"$re\""
done
if [ $fail -ne 0 ]; then
	echo "--- new log:"; tail -30 "$LOG"; echo "--- old log:"; tail -10 "$OLD"
	exit 1
fi
echo "PASS: after SIGHUP every stage writes to the new log"
exit 0
