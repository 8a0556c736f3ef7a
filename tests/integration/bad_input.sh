#!/bin/sh
# bad_input.sh - oprofiled refuses bad input with a clear message and a
# non-zero exit, and never damages what a session already recorded: unknown
# --separate value, bad --pid, missing or unrunnable command, bad event,
# unwritable / symlinked session dir, a second daemon on the session (lock).
# The data-loss bug: a start-up failing after the session was opened (bad
# event, dead --pid) must not rotate samples/current away (nor delete
# samples/previous): every file under samples/ is checksummed before and after.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
HOT=$B/tests/integration/hot
W=$B/tests/integration/bad_input.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
S=$W/s

# checksums of every recorded file (the log grows with each attempt: not data)
sums() { (cd "$S/samples" && find . -type f ! -name oprofiled.log | LC_ALL=C sort | xargs md5sum); }

# two real profiles: samples/previous and samples/current both hold data
for i in 1 2; do
	"$OPD" --session-dir="$S" --events=TIMER:250000 -- "$HOT" 300 > out 2> err
	rc=$?
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" err; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	[ $rc -eq 0 ] || { echo "FAIL: setup profile $i exited $rc"; cat err; exit 1; }
done
n=$(find "$S/samples/current" "$S/samples/previous" -name 'TIMER.*' | wc -l)
[ "$n" -ge 2 ] || { echo "FAIL: setup: no sample files in current and previous"; exit 1; }
sums > before

# expect RC_OP PATTERN -- oprofiled args...: non-zero exit, message, nothing touched
expect() {
	pat=$1; shift
	"$OPD" "$@" > out 2> err
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "FAIL: oprofiled $* exited 0"; fail=1
	elif ! grep -q -- "$pat" err; then
		echo "FAIL: oprofiled $*: no message matching '$pat':"; cat err; fail=1
	fi
	sums > after
	if ! cmp -s before after; then
		echo "FAIL: oprofiled $* changed recorded samples:"; diff before after; fail=1
	fi
	[ -e "$S/lock" ] && [ -z "${LOCKED:-}" ] && { echo "FAIL: $*: lock file left"; fail=1; }
	[ -e "$S/samples/previous.staged" ] && { echo "FAIL: $*: staged dir left"; fail=1; }
	return 0
}

expect 'unknown --separate value "bogus"' --session-dir="$S" --separate=bogus -- "$HOT" 10
expect 'is not a process id' --session-dir="$S" --pid=abc
# a pid that existed and is gone: fails after the session was opened (the bug)
sh -c 'exit 0' & dead=$!; wait $dead
expect "pid $dead" --session-dir="$S" --pid=$dead
expect 'nothing to profile' --session-dir="$S"
expect 'cannot run' --session-dir="$S" -- "$W/no/such/program"
expect 'cannot run' --session-dir="$S" -- no_such_program_oprofile_ng
# a bad event fails after session_open too (plugins, models): the bug
expect 'bad count 10' --session-dir="$S" --events=TIMER:10 -- "$HOT" 10
expect 'NOSUCH' --session-dir="$S" --events=NOSUCH -- "$HOT" 10
# symlinked session dir
ln -s "$S" "$W/link"
expect 'symbolic link' --session-dir="$W/link" -- "$HOT" 10
# a session dir that is a file
: > "$W/file"
expect 'not a directory' --session-dir="$W/file" -- "$HOT" 10
# unwritable session dir: as an unprivileged user (root may write anywhere)
if [ "$(id -u)" -ne 0 ]; then
	chmod 0555 "$S"
	expect 'not writable' --session-dir="$S" -- "$HOT" 10
	chmod 0755 "$S"
elif command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups \
	test -x "$OPD" 2> /dev/null; then
	chmod 0555 "$S"
	RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	$RUNAS "$OPD" --session-dir="$S" -- "$HOT" 10 > out 2> err
	rc=$?
	[ $rc -ne 0 ] && grep -q 'not writable' err ||
		{ echo "FAIL: unwritable session dir (as nobody): rc $rc"; cat err; fail=1; }
	chmod 0755 "$S"
	sums > after
	cmp -s before after || { echo "FAIL: unwritable run changed samples"; fail=1; }
else
	echo "note: unwritable-dir step skipped (root without setpriv, or the build dir is not readable by nobody)"
fi

# a second daemon on the same session: the lock (held here by flock(1), as a
# running daemon holds it) refuses it before anything is moved
if command -v flock > /dev/null; then
	echo 4242 > "$S/lock"
	flock -n "$S/lock" sleep 4 &
	fl=$!
	sleep 0.5
	LOCKED=1 expect 'another oprofiled (pid 4242) is using' --session-dir="$S" -- "$HOT" 10
	wait $fl
	rm -f "$S/lock"
else
	echo "note: lock step skipped (no flock(1)); hot.sh checks the lock against a live daemon"
fi

# and the session still works: the next good start rotates as usual
"$OPD" --session-dir="$S" --events=TIMER:250000 -- "$HOT" 100 > out 2> err ||
	{ echo "FAIL: a good start after the failures"; cat err; fail=1; }
(cd "$S/samples" && find previous -type f | LC_ALL=C sort | xargs md5sum | sed 's| previous/| ./current/|') > prev_now
grep ' ./current/' before > cur_before
cmp -s cur_before prev_now || { echo "FAIL: the old current did not become previous intact"; diff cur_before prev_now; fail=1; }

# an interrupted start (killed before commit) leaves samples/previous.staged:
# the next start puts it back as current, losing nothing
sums > before
mv "$S/samples/current" "$S/samples/previous.staged"
mkdir -p "$S/samples/current/stats"
"$OPD" --session-dir="$S" --append --events=TIMER:10 -- "$HOT" 10 > out 2> err
[ -d "$S/samples/previous.staged" ] && { echo "FAIL: staged dir not recovered"; fail=1; }
sums > after
cmp -s before after || { echo "FAIL: recovery of a staged current changed samples"; diff before after; fail=1; }

if [ $fail -eq 0 ]; then
	echo "PASS: bad_input.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
