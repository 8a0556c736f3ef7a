#!/bin/sh
# optop_bad.sh - optop on bad input: a session no daemon runs on, a missing
# directory, a session the user may not read, a terminal too small, a user
# without --session-dir (tests/integration/test_user.sh), bad options: a
# clear message, a non-zero exit, nothing left behind. SIGINT, SIGTERM and
# SIGHUP (also tmux closing the terminal) stop the private daemon and
# remove its temporary session.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPTOP=$B/tools/optop/optop
W=$B/tests/integration/optop_bad.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
SOCK=optop-bad-$$
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
trap 'tmux -L "$SOCK" kill-server 2> /dev/null' EXIT

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: plays root's private daemon and a user against it: needs root"; exit 77
fi
. "$S/tests/integration/test_user.sh"
op_test_user

# expect STATUS PATTERN CMD...: the exit status and a message on stderr
expect() {
	want=$1 pat=$2
	shift 2
	"$@" > out 2> err
	rc=$?
	if [ $rc -ne "$want" ] || ! grep -q -- "$pat" err; then
		bad "$*: exit $rc (expected $want), stderr:"; cat err
	fi
}

# 1. a finished session: no daemon runs there
"$OPD" --session-dir="$W/done" --config= -- /bin/true > /dev/null 2>&1 ||
	{ echo "FAIL: oprofiled could not make a session"; exit 1; }
expect 1 "nothing to watch on $W/done - start oprofiled there" "$OPTOP" --session-dir="$W/done" --stdio -n 1
# 2. no such directory
expect 1 "session-dir=$W/none: No such file or directory" "$OPTOP" --session-dir="$W/none" --stdio -n 1
# 3. a session the user may not read (root's, private)
chmod 755 "$W"
expect 1 "cannot read $W/done/samples/current: Permission denied" \
	op_as_user "$OPTOP" --session-dir="$W/done" --stdio -n 1
# 4. a user without --session-dir: no private daemon, no directory made
mkdir -m 1777 "$W/utmp"
expect 1 "needs root - run it as root, or give --session-dir" \
	op_as_user env TMPDIR="$W/utmp" "$OPTOP" --stdio -n 1
[ -z "$(ls "$W/utmp")" ] || bad "the user's optop left $(ls "$W/utmp")"
# 5. bad options
expect 2 "\-d 0: expected seconds from 0.1 to 3600" "$OPTOP" -d 0 --stdio
expect 2 "\-\-sort=cost: expected samples, symbol or image" "$OPTOP" --sort=cost --stdio
expect 2 "\-\-pid/--tid=12x: expected numbers" "$OPTOP" --pid=12x --stdio
expect 2 "unexpected argument" "$OPTOP" --stdio extra
expect 1 "curses view needs a terminal - use --stdio" "$OPTOP" < /dev/null

# 6. a terminal too small: said before anything starts, nothing left behind
mkdir "$W/small"
tmux -L "$SOCK" new-session -d -s small -x 40 -y 8 \
	"TMPDIR='$W/small' '$OPTOP' 2> '$W/small.err'; echo \$? > '$W/small.rc'; sleep 30"
i=0
while [ ! -s small.rc ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
[ "$(cat small.rc 2> /dev/null)" = 1 ] || bad "a 40x8 terminal: exit '$(cat small.rc 2> /dev/null)'"
grep -q "terminal is too small: 40x8, optop needs at least 60x10" small.err ||
	{ bad "no message for a 40x8 terminal"; cat small.err; }
[ -z "$(ls "$W/small")" ] || bad "a too small terminal left $(ls "$W/small")"
tmux -L "$SOCK" kill-server 2> /dev/null

# 7. signals: the private daemon stops, its session goes
# wait_ready DIR: the private session below DIR has a live control socket; echo its daemon pid
wait_ready() {
	i=0
	while [ $i -lt 100 ]; do
		for d in "$1"/optop-*; do
			if [ -S "$d/control" ] && [ -s "$d/lock" ]; then
				cat "$d/lock"
				return 0
			fi
		done
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
for sig in INT TERM HUP; do
	mkdir "$W/sig$sig"
	TMPDIR="$W/sig$sig" "$OPTOP" --stdio -d 1 > "sig$sig.out" 2> "sig$sig.err" &
	top=$!
	if ! dpid=$(wait_ready "$W/sig$sig"); then
		bad "SIG$sig: the private daemon did not start"; cat "sig$sig.err"; kill $top; continue
	fi
	sleep 1.5
	kill -"$sig" $top
	wait $top
	rc=$?
	[ $rc -eq 0 ] || { bad "SIG$sig: exit $rc"; cat "sig$sig.err"; }
	[ -z "$(ls "$W/sig$sig")" ] || bad "SIG$sig left $(ls "$W/sig$sig")"
	kill -0 "$dpid" 2> /dev/null && bad "SIG$sig: the private oprofiled ($dpid) still runs"
done
# the terminal closing under the curses view (tmux sends SIGHUP)
mkdir "$W/tty"
tmux -L "$SOCK" new-session -d -s tty -x 100 -y 30 "TMPDIR='$W/tty' '$OPTOP' -d 1"
if dpid=$(wait_ready "$W/tty"); then
	sleep 1.5
	tmux -L "$SOCK" kill-server
	i=0
	while { [ -n "$(ls "$W/tty")" ] || kill -0 "$dpid" 2> /dev/null; } && [ $i -lt 100 ]; do
		sleep 0.2; i=$((i + 1))
	done
	[ -z "$(ls "$W/tty")" ] || bad "closing the terminal left $(ls "$W/tty")"
	kill -0 "$dpid" 2> /dev/null && bad "closing the terminal: the private oprofiled still runs"
else
	bad "the curses view's private daemon did not start"
fi

if [ $fail -eq 0 ]; then
	echo "PASS: optop_bad.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
