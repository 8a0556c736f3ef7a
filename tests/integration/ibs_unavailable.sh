#!/bin/sh
# ibs_unavailable.sh - on a machine without the ibs_op/ibs_fetch PMUs (this
# VM: no IBS under the hypervisor), --ext-feature=ibs must say clearly that
# IBS is not available and why, exit non-zero and leave no session behind.
# On a machine with IBS the plugin is pointed at an empty sysfs instead.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-.}
PLUG=${OP_PLUGIN_DIR:-$B/plugins/.libs}
: "${OPROFILE_EVENTS_DIR:=${OP_SRCDIR:-.}/events}"
export OPROFILE_EVENTS_DIR
W=$B/tests/ibs_unavailable.$$
fail() { echo "FAIL: $*"; exit 1; }

rm -rf "$W"
mkdir -p "$W" || fail "cannot create $W"
SYS=/sys
EXTRA=
if [ -e /sys/bus/event_source/devices/ibs_op ]; then
	echo "this machine has IBS: simulating its absence with an empty sysfs"
	mkdir -p "$W/sys" && SYS=$W/sys && EXTRA="|sysfs=$SYS"
fi

for spec in "op:IBS_OP_ALL:100000:1" "fetch:IBS_FETCH_ALL:100000:0|op:IBS_OP_ALL,IBS_OP_LOAD:100000:3"; do
	S=$W/session
	"$B/core/oprofiled" --plugin-dir="$PLUG" --session-dir="$S" \
		"--ext-feature=ibs:$spec$EXTRA" -- /bin/sh -c "touch '$W/ran'" > "$W/out.txt" 2>&1
	rc=$?
	cat "$W/out.txt"
	[ $rc -ne 0 ] || fail "oprofiled --ext-feature=ibs:$spec exited 0 without IBS"
	grep -q "ibs: error: AMD IBS is not available on this machine: $SYS/bus/event_source/devices/ibs_[a-z]* does not exist" "$W/out.txt" ||
		fail "no clear 'IBS is not available' message on stderr"
	grep -q "PMU not available due to virtualization" "$W/out.txt" || fail "the message does not say why"
	[ ! -e "$S" ] || { find "$S"; fail "the session directory $S was left behind"; }
	[ ! -e "$W/ran" ] || fail "the command was started although IBS is not available"
done
ls -A "$W" | grep -v '^out.txt$' | grep -v '^sys$' && fail "files left behind in $W"
rm -rf "$W"
echo "ibs_unavailable: refused clearly, non-zero exit, nothing left behind"
exit 0
