#!/bin/sh
# dump_stats.sh - `opcontrol --dump` and SIGUSR1 are one action (issue 16):
# both sync the sample files, log the same statistics block and write the
# same stats/ files, stats/throttled/ included; save writes the stats files
# (throttled/ too) into the session it sets aside and the new session starts
# without the old throttled events.
# oprofiled --pid profiles tests/integration/hot at 2 kHz (cpu-clock). To
# make the kernel throttle it, perf_event_max_sample_rate is lowered for a
# moment (root; restored on exit): at 100/s the kernel allows one sample per
# tick. Without a throttle within 30 s the throttled/ checks skip (77) after
# the rest of the comparison ran. The knob is the whole machine's: make check
# runs this test after all the others, alone (tests/integration/local.mk).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
HOT=$B/tests/integration/hot
W=$B/tests/integration/dump_stats.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
RATE=/proc/sys/kernel/perf_event_max_sample_rate
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
SD=$W/sess
CUR=$SD/samples/current
LOG=$SD/samples/oprofiled.log
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
log_tail() { echo "--- daemon log:"; tail -40 "$LOG" 2> /dev/null; }
hot=
opd=
old_rate=
restore_rate() {
	[ -n "$old_rate" ] && echo "$old_rate" > "$RATE" 2> /dev/null
	old_rate=
}
cleanup() {
	restore_rate
	for p in $opd $hot; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap cleanup EXIT

"$HOT" 600000 &
hot=$!
"$OPD" --session-dir="$SD" --events=TIMER:500000 --pid=$hot > opd.out 2> opd.err &
opd=$!
i=0
until "$OPC" --session-dir="$SD" --status > st0.out 2>&1; do
	if ! kill -0 $opd 2> /dev/null || [ $i -ge 100 ]; then
		if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" opd.err; then
			echo "SKIP: the kernel forbids perf_event_open here"; exit 77
		fi
		echo "FAIL: the daemon did not answer opcontrol --status"; cat opd.err st0.out; log_tail
		exit 1
	fi
	sleep 0.2
	i=$((i + 1))
done

# the stats/ tree as "relative-path value" lines, and as names only
# the counter files (stats/buildids, the build-id index, is compared whole: issue 19)
tree() { (cd "$1/stats" && find . -type f ! -name buildids | sort | while read -r f; do echo "$f $(cat "$f")"; done); }
names() { tree "$1" | sed 's/ .*//'; }
# the last statistics block of the log: its labels (numbers stripped)
last_block() {
	awk '/^-- OProfile-ng Statistics --/ { n++; delete b; k = 0 } n { b[k++] = $0 }
	     END { for (i = 0; i < k; i++) print b[i] }' "$LOG" |
		sed 's/[0-9][0-9]*/N/g' | grep -v "^\(oprofiled\|[A-Za-z0-9_]*\): \|^$"
}
# wait until the log has more statistics blocks than $1
wait_block() {
	i=0
	while [ "$(grep -c '^-- OProfile-ng Statistics --' "$LOG")" -le "$1" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# the block is written line by line: wait until the log stops growing
	prev=-1
	while [ "$(wc -c < "$LOG")" != "$prev" ] && [ $i -lt 80 ]; do
		prev=$(wc -c < "$LOG")
		sleep 0.2
		i=$((i + 1))
	done
}
blocks() { grep -c '^-- OProfile-ng Statistics --' "$LOG"; }

# 1. make the kernel throttle the event, if this machine lets us
throttled=no why=
if [ "$(id -u)" != 0 ] || [ ! -w "$RATE" ]; then
	why="not root: $RATE cannot be lowered"
else
	old_rate=$(cat "$RATE")
	if ! echo 100 > "$RATE" 2> rate.err; then
		why="$RATE refused 100: $(cat rate.err) (perf_cpu_time_max_percent 0 or 100?)"
		old_rate=
	else
		i=0
		while [ $i -lt 30 ]; do
			sleep 1
			kill -USR1 $opd
			sleep 0.3
			[ -d "$CUR/stats/throttled" ] && { throttled=yes; break; }
			i=$((i + 1))
		done
		restore_rate
		[ $throttled = yes ] || why="no THROTTLE record within 30 s at max_sample_rate 100"
	fi
fi
sleep 1 # samples of the restored rate, no more throttling

# 2. opcontrol --dump, then SIGUSR1: the same files and log block
rm -rf "$CUR/stats"
n=$(blocks)
"$OPC" --session-dir="$SD" --dump > dump.out 2>&1 || { bad "opcontrol --dump failed"; cat dump.out; }
wait_block "$n"
[ -d "$CUR/stats" ] || bad "opcontrol --dump wrote no samples/current/stats/"
tree "$CUR" > dump.tree
cp "$CUR/stats/buildids" dump.bids 2> /dev/null
last_block > dump.block
rm -rf "$CUR/stats"
n=$(blocks)
kill -USR1 $opd
wait_block "$n"
[ -d "$CUR/stats" ] || bad "SIGUSR1 wrote no samples/current/stats/"
tree "$CUR" > usr1.tree
cp "$CUR/stats/buildids" usr1.bids 2> /dev/null
last_block > usr1.block
[ -s dump.tree ] || bad "opcontrol --dump: empty stats tree"
[ "$(sed 's/ .*//' dump.tree)" = "$(sed 's/ .*//' usr1.tree)" ] ||
	{ bad "--dump and SIGUSR1 wrote different stats files"; diff dump.tree usr1.tree; }
# the index only grows too: every image of the first is in the second, the same
[ -s dump.bids ] && [ -s usr1.bids ] && [ -z "$(grep -vxFf usr1.bids dump.bids)" ] ||
	bad "stats/buildids: missing, or an image of --dump's changed or left at SIGUSR1"
# counters only grow between the two
join dump.tree usr1.tree | awk '$2 > $3 { print; bad = 1 } END { exit bad }' > shrunk.out ||
	{ bad "a counter shrank from --dump to SIGUSR1"; cat shrunk.out; }
[ -s dump.block ] || bad "opcontrol --dump logged no statistics block"
cmp -s dump.block usr1.block || { bad "--dump and SIGUSR1 logged different blocks"; diff dump.block usr1.block; }
grep -q "^./total_samples " dump.tree || bad "no stats/total_samples after --dump"
tot=$(sed -n 's/^.\/total_samples //p' usr1.tree)
[ "${tot:-0}" -gt 0 ] || bad "SIGUSR1: total_samples is ${tot:-missing}"
if [ $throttled = yes ]; then
	grep -q "^./throttled/TIMER " dump.tree || { bad "--dump wrote no stats/throttled/TIMER"; cat dump.tree; }
	grep -q "^./throttled/TIMER " usr1.tree || { bad "SIGUSR1 wrote no stats/throttled/TIMER"; cat usr1.tree; }
fi

# 3. save: the stats (throttled/ too) go with the session set aside
"$OPC" --session-dir="$SD" --save=kept > save.out 2>&1 || { bad "opcontrol --save failed"; cat save.out; }
[ -f "$SD/samples/kept/stats/total_samples" ] || bad "save: no stats/total_samples in samples/kept"
if [ $throttled = yes ]; then
	[ -f "$SD/samples/kept/stats/throttled/TIMER" ] || bad "save: no stats/throttled/TIMER in samples/kept"
fi
sleep 0.5
"$OPC" --session-dir="$SD" --dump > dump2.out 2>&1 || bad "opcontrol --dump after save failed"
[ -f "$CUR/stats/total_samples" ] || bad "dump after save: no stats/total_samples"
[ -d "$CUR/stats/throttled" ] && bad "the new session inherited the old one's throttled events"

kill $opd
wait $opd 2> /dev/null
opd=
grep -q "profiling stopped" "$LOG" || { bad "the daemon did not stop cleanly"; log_tail; }
if [ $fail -ne 0 ]; then
	log_tail
	exit 1
fi
if [ $throttled = no ]; then
	echo "SKIP: the comparison passed; the throttled/ part could not run: $why"
	exit 77
fi
echo "PASS: --dump == SIGUSR1 (stats files incl. throttled/, log block), save carries them"
exit 0
