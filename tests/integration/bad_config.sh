#!/bin/sh
# bad_config.sh - a broken oprofiled.conf stops the daemon before it starts:
# a syntax error, an unknown or invalid plugin, bad events, bad plugin args
# and settings, a bad separate value, out-of-range numbers (also those
# libconfig 1.5 cuts to 32 bits) are each reported as FILE:LINE: what, the
# daemon (started as the systemd unit starts it, --daemonize) exits non-zero
# and leaves no daemon, lock or session behind; --check-config reports the
# same errors and touches no session (the same for command-line options).
# A daemon whose start fails after it detached reports the reason to the
# starting process.
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
	if [ $rc -ne 0 ]; then ok
	else
		bad "$name: oprofiled started (exit 0)"
		# stop it: a failing run leaves no daemon behind either
		[ -s "$sd/lock" ] && kill "$(cat "$sd/lock")" 2> /dev/null && sleep 1
	fi
	if grep -q "^oprofiled: $f:4: .*$what" "$name.err"; then ok
	else bad "$name: no '$f:4: ...$what' message"; cat "$name.err"; fi
	[ ! -e "$sd" ] && ok || { bad "$name: the session $sd was left behind"; rm -rf "$sd"; }
	if [ "$4" = check ]; then
		"$OPD" --config="$f" --system-wide --check-config > "$name.cc" 2>&1
		rc=$?
		[ $rc -ne 0 ] && grep -q "^oprofiled: $f:4: .*$what" "$name.cc" && ok ||
			{ bad "$name: --check-config (exit $rc) did not report it"; cat "$name.cc"; }
		[ ! -e "$sd" ] && ok || bad "$name: --check-config created the session $sd"
	fi
}

check syntax 'separate = ;' 'syntax error' check
check separate 'separate = "lib,bogus";' 'unknown --separate value "bogus"' check
check plugin 'plugins = ( { name = "nosuch"; args = ""; } );' 'unknown plugin "nosuch"' check
check event 'events = "NO_SUCH_EVENT:100000";' 'events: "NO_SUCH_EVENT:100000" cannot be used' check
check type 'ring_pages = "many";' 'expected an integer' check
check interval 'rotate_interval = "soon";' 'interval "soon"' check
# what --check-config passed and a start refused (issue 15, item 3)
check ev_bogus 'events = "BOGUS:5";' 'events: "BOGUS:5" cannot be used' check
check ev_timer 'events = "TIMER:5";' 'events: "TIMER:5" cannot be used' check
check ev_colons 'events = "::::::";' 'events: "::::::" cannot be used' check
check cg_depth 'plugins = ( { name = "callgraph"; args = "depth=0"; } );' \
	'plugin "callgraph" could not be loaded' check
check timer_freq 'plugins = ( { name = "timer"; args = "freq=abc"; } );' \
	'plugin "timer" could not be loaded' check
check plugin_name 'plugins = ( { name = "../timer"; } );' 'plugin name "../timer" is not valid' check
check ring_pages 'ring_pages = 1048576;' '"ring_pages": 1048576 is out of range, expected 1..65536' check
# integers libconfig 1.5 cut to 32 bits: they ran as 1, 60 and 100 Hz (item 4)
check open_files 'max_open_files = 4294967297;' \
	'"max_open_files": 4294967297 is out of range, expected 1..1048576' check
check rotate 'rotate_interval = 4294967356;' \
	'"rotate_interval": 4294967356 is out of range, expected 0..31622400 seconds' check
check timer_hz 'plugins = { timer = { frequency = 4294967396; }; };' \
	'plugin "timer" could not be loaded' check
if grep -q "bad frequency '4294967396' in config plugins.timer.frequency: expected 1..10000 Hz" \
	timer_hz.cc; then ok
else bad "timer_hz: the timer plugin did not see 4294967396"; cat timer_hz.cc; fi

# the same from the command line: --check-config names the option
opt_check() {
	name=$1
	shift
	"$OPD" --config= --session-dir="$W/$name.sess" --check-config "$@" > "$name.cc" 2>&1
	rc=$?
	[ $rc -ne 0 ] && grep -q -- "$what" "$name.cc" && ok ||
		{ bad "$name: --check-config $* (exit $rc) did not report it"; cat "$name.cc"; }
	[ ! -e "$W/$name.sess" ] && ok || bad "$name: --check-config created the session"
}
what='--events=BOGUS:5: event BOGUS cannot be used\|event BOGUS cannot be used'
opt_check cmd_event -a --events=BOGUS:5
# the plugin names the option and its bad value; the core's line names the
# option without its arguments (they may hold a secret, e.g. a push URL)
what="bad frequency 'abc' in --ext-feature=timer:freq=abc"
opt_check cmd_timer -a --ext-feature=timer:freq=abc
what='--ext-feature=timer:...: plugin "timer" could not be loaded'
opt_check cmd_timer2 -a --ext-feature=timer:freq=abc
what="bad depth '0' in --ext-feature=callgraph:depth=0"
opt_check cmd_cg -a --ext-feature=callgraph:depth=0
what='--ext-feature=callgraph:...: plugin "callgraph" could not be loaded'
opt_check cmd_cg2 -a --ext-feature=callgraph:depth=0
what='--ring-pages=1048576: expected a whole number 1..65536'
opt_check cmd_ring -a --ring-pages=1048576
what='cannot run /no/such/command'
opt_check cmd_launch -- /no/such/command
# a good configuration still passes, and prints itself (as a user, the kernel
# plugin's warning that /proc/kallsyms hides the addresses is the one line allowed)
if "$OPD" --config= --session-dir="$W/good.sess" -a --events=TIMER:1000000 \
	--ext-feature=callgraph:depth=8 --check-config > good.cc 2> good.all &&
	{ if [ "$(id -u)" = 0 ]; then cp good.all good.err
	  else grep -v 'kallsyms shows zero addresses' good.all > good.err || true; fi; } &&
	grep -q '{ name = "callgraph"; args = "depth=8"; }' good.cc && [ ! -s good.err ] &&
	[ ! -e "$W/good.sess" ]
then ok
else bad "a good configuration: --check-config failed or printed to stderr"; cat good.cc good.all; fi

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
