#!/bin/sh
# bad_config.sh - a broken oprofiled.conf stops the daemon before it starts:
# a syntax error, an unknown plugin, a bad event and a bad separate value
# are each reported as FILE:LINE: what, the daemon (started as the systemd
# unit starts it, --daemonize) exits non-zero and leaves no daemon, lock or
# session behind; --check-config reports the same errors. A daemon whose
# start fails after it detached reports the reason to the starting process.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
W=$B/tests/integration/bad_config.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# $1 case name, $2 the bad line (it lands on line 4), $3 pattern of the message after FILE:4:
check() {
	name=$1 line=$2 what=$3
	f=$W/$name.conf
	sd=$W/$name.sess
	{
		echo "# $name: line 4 is wrong"
		echo "session_dir = \"$sd\";"
		echo 'sync_interval = 1;'
		echo "$line"
		echo 'rotate_keep = 2;'
	} > "$f"
	"$OPD" --config="$f" --system-wide --daemonize > "$name.out" 2> "$name.err"
	rc=$?
	[ $rc -ne 0 ] && ok || bad "$name: oprofiled started (exit 0)"
	if grep -q "^oprofiled: $f:4: .*$what" "$name.err"; then ok
	else bad "$name: no '$f:4: ...$what' message"; cat "$name.err"; fi
	[ ! -e "$sd" ] && ok || bad "$name: the session $sd was left behind"
	if [ "$4" = check ]; then
		"$OPD" --config="$f" --system-wide --check-config > "$name.cc" 2>&1
		rc=$?
		[ $rc -ne 0 ] && grep -q "$f:4: .*$what" "$name.cc" && ok ||
			{ bad "$name: --check-config (exit $rc) did not report it"; cat "$name.cc"; }
	fi
}

check syntax 'separate = ;' 'syntax error' check
check separate 'separate = "lib,bogus";' 'unknown --separate value "bogus"' check
check plugin 'plugins = ( { name = "nosuch"; args = ""; } );' 'unknown plugin "nosuch"' check
check event 'events = "NO_SUCH_EVENT:100000";' 'events: "NO_SUCH_EVENT:100000" cannot be used' run
check type 'ring_pages = "many";' 'expected an integer' check
check interval 'rotate_interval = "soon";' 'interval "soon"' check

# a start that fails after the daemon detached still reaches the starting process
"$OPD" --session-dir="$W/late.sess" --events=TIMER:1000000 --pid=4194303 --daemonize \
	> late.out 2> late.err
rc=$?
if [ $rc -ne 0 ] && grep -q "4194303" late.err && grep -q "stopped before profiling began" late.err
then ok
else bad "a daemon that failed after detaching: exit $rc"; cat late.err; fi
[ ! -e "$W/late.sess" ] && ok || bad "late: the session was left behind"

# nothing of the attempts is still running
if pgrep -f "oprofiled --config=$W/" > /dev/null 2>&1; then
	bad "an oprofiled of this test still runs: $(pgrep -f "oprofiled --config=$W/" | tr '\n' ' ')"
else
	ok
fi

echo "bad_config: $npass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
# the work directory stays only when something failed (distcheck wants a clean tree)
cd "$B" && rm -rf "$W"
