#!/bin/sh
# push_hostile.sh - the push plugin against a hostile helper program
# (push_hostile.c, put in OP_HELPER_DIR as oprofiled-push): for each kind
# of misbehaviour - a datagram that is no message, an answer to another
# request, an impossible HTTP status, a short answer, a descriptor nobody
# asked for, a flood of log lines, silence, death, an error text full of
# terminal escapes - a live daemon pushing every second logs it, kills and
# restarts the helper (counted), keeps every profile in the spool (nothing
# dropped), still answers opcontrol, and ends cleanly on SIGTERM.
# Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_hostile push
export OP_HELPER_DIR=$B/tests/integration/push_hostile
[ -x "$OP_HELPER_DIR/oprofiled-push" ] ||
	{ echo "FAIL: $OP_HELPER_DIR/oprofiled-push was not built (make check builds it)"; exit 1; }

P=$(net_free_port) # nobody listens: the hostile helper never connects anyway
for mode in garbage wrongid status short fd flood exit silent text; do
	secs=4
	[ $mode = silent ] && secs=10 # timeout=1 + 5 s of grace before the kill
	"$OPD" --session-dir="$W/$mode" --events=TIMER:1000000 \
		"--ext-feature=push:url=http://127.0.0.1:$P,interval=1s,timeout=1,service=$mode" \
		-- "$HOT" $((secs * 1000)) > "$mode.out" 2> "$mode.err" &
	dpid=$!
	net_pids="$net_pids $dpid"
	if ! net_wait 20 grep -q "pushing to" "$W/$mode/samples/oprofiled.log"; then
		no_perf "$mode.err"
		echo "FAIL: $mode: the push plugin did not start"; cat "$mode.err"; fail=1
		continue
	fi
	# the daemon answers while its helper misbehaves
	sleep 2
	timeout 5 "$B/tools/opcontrol" --session-dir="$W/$mode" --status > "$mode.status" ||
		{ echo "FAIL: $mode: opcontrol --status got no answer"; fail=1; }
	wait $dpid
	rc=$?
	log=$W/$mode/samples/oprofiled.log
	lost=$(sed -n 's/^helper_lost: //p' "$log" | tail -1)
	dropped=$(sed -n 's/^dropped: //p' "$log" | tail -1)
	left=$(sed -n 's/.*stopping: \([0-9]*\) profiles wait in the spool.*/\1/p' "$log")
	why=$(grep -m1 "helper oprofiled-push: .*restarting it" "$log" | sed 's/.*helper oprofiled-push: //')
	echo "note: $mode: rc $rc, helpers lost $lost, dropped $dropped, left in the spool $left: ${why:-(no restart)}"
	[ $rc -eq 0 ] || { echo "FAIL: $mode: oprofiled exited $rc"; cat "$mode.err"; fail=1; }
	[ "$dropped" = 0 ] && [ "${left:-0}" -ge 1 ] ||
		{ echo "FAIL: $mode: profiles lost (dropped $dropped, spooled $left)"; fail=1; }
	if [ $mode = text ]; then
		# a failed transfer, not a broken protocol: counted as failed, the text cleaned
		grep -q "^failed: [1-9]" "$log" || { echo "FAIL: text: no failure counted"; fail=1; }
		grep -q "last error: .*?\[2J?evil?" "$log" ||
			{ echo "FAIL: text: the error text was not kept, cleaned"; grep "last error" "$log"; fail=1; }
		if grep -q "$(printf '\033')" "$log" "$mode.status"; then
			echo "FAIL: text: an escape byte reached the log or the status"; fail=1
		fi
	else
		[ "${lost:-0}" -ge 1 ] && [ -n "$why" ] ||
			{ echo "FAIL: $mode: the helper was not given up and restarted"; grep helper "$log"; fail=1; }
	fi
done

net_finish push_hostile.sh
