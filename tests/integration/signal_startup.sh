#!/bin/sh
# signal_startup.sh - SIGUSR1 (what opcontrol --dump sends) and SIGHUP
# arriving while oprofiled starts up must not kill it: the daemon blocks the
# signals its signalfd takes before any thread exists, so they wait for the
# main loop. Before, the kernel plugin's kallsyms thread (started while the
# plugins load, before the main thread blocked them) left them unblocked,
# and their default action killed the daemon (a pull right after start did
# the same). The test sends SIGUSR1 and SIGHUP every few milliseconds from
# the moment the daemon's log says it started (before its plugins load)
# until it answers opcontrol --status, then checks it is alive, took the
# dumps, and stops cleanly. oprofiled --pid profiles tests/integration/hot
# (cpu-clock, 2 kHz).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
HOT=$B/tests/integration/hot
W=$B/tests/integration/signal_startup.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
hot=
opd=
cleanup() {
	for p in $opd $hot; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap cleanup EXIT

"$HOT" 600000 &
hot=$!
round=0
while [ $round -lt 3 ]; do
	round=$((round + 1))
	SD=$W/sess$round
	LOG=$SD/samples/oprofiled.log
	rm -f stop
	"$OPD" --session-dir="$SD" --events=TIMER:500000 --pid=$hot > opd$round.out 2> opd$round.err &
	opd=$!
	# from the log's first line on (written before the plugins load):
	# SIGUSR1 and SIGHUP every 2 ms until the daemon answers --status
	(
		n=0
		until [ -s "$LOG" ] || [ -e stop ]; do :; done
		while [ ! -e stop ] && kill -USR1 $opd 2> /dev/null; do
			kill -HUP $opd 2> /dev/null
			n=$((n + 1))
			sleep 0.002
		done
		echo $n > sent
	) &
	spam=$!
	i=0
	until "$OPC" --session-dir="$SD" --status > st.out 2>&1; do
		kill -0 $opd 2> /dev/null || break
		[ $i -ge 500 ] && break
		sleep 0.02
		i=$((i + 1))
	done
	touch stop
	wait $spam
	sent=$(cat sent 2> /dev/null || echo 0)
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" opd$round.err; then
		echo "SKIP: the kernel forbids perf_event_open here"
		exit 77
	fi
	if ! kill -0 $opd 2> /dev/null; then
		wait $opd
		bad "round $round: the daemon died during start-up (exit status $?) after $sent SIGUSR1"
		tail -5 opd$round.err
		tail -20 "$LOG"
		opd=
		continue
	fi
	echo "round $round: $sent SIGUSR1 and SIGHUP sent during start-up; the daemon answers --status"
	[ "$sent" -ge 1 ] || bad "round $round: no signal was sent before the daemon answered"
	# the pending SIGUSR1 became a dump once the main loop ran
	i=0
	until grep -q "OProfile-ng Statistics" "$LOG" 2> /dev/null || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "OProfile-ng Statistics" "$LOG" || bad "round $round: no dump logged for the SIGUSR1 sent during start-up"
	kill -TERM $opd
	wait $opd
	rc=$?
	opd=
	[ $rc -eq 0 ] || bad "round $round: the daemon exited $rc on SIGTERM"
done
echo "$fail failed"
[ $fail -eq 0 ]
