#!/bin/sh
# model_unload.sh - issue 20 RSS: the hardware-model plugins oprofiled loads
# only to ask their detect() go again when their models are not picked, and
# with them libpfm4 (2.1 MB RSS). On this machine (no PMU: the timer is
# picked) a live daemon has no amd64.so, intel.so or libpfm in its
# /proc/PID/maps, the log says why they went, opcontrol --status lists only
# the plugins still loaded, and samples still arrive. A model plugin the
# user asked for (--ext-feature=intel, a plugins entry) stays loaded with
# libpfm4; a picked model (--cpu-type) stays while the other one goes.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
HOT=$B/tests/integration/hot
W=$B/tests/integration/model_unload.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=1; }
show() { echo "--- $1:"; cat "$1" 2> /dev/null; }
hot=
opd=
cleanup() {
	for p in $opd $hot; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap cleanup EXIT

for p in amd64 intel timer; do
	[ -f "$OP_PLUGIN_DIR/$p.so" ] || { echo "FAIL: $OP_PLUGIN_DIR/$p.so not built"; exit 1; }
done
if [ -e /sys/bus/event_source/devices/cpu ]; then
	echo "SKIP: this machine has a hardware PMU: a hardware model is picked, not the timer"
	exit 77
fi

# start a daemon on hot with the extra options $2..., session $1; wait for its status
start() {
	sd=$1
	shift
	"$OPD" --session-dir="$sd" --events=TIMER:1000000 --pid=$hot "$@" > "$sd.out" 2> "$sd.err" &
	opd=$!
	i=0
	until "$OPC" --session-dir="$sd" --status > "$sd.status" 2>&1; do
		if ! kill -0 $opd 2> /dev/null || [ $i -ge 100 ]; then
			if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$sd.err"; then
				echo "SKIP: the kernel forbids perf_event_open here"
				exit 77
			fi
			echo "FAIL: the daemon did not answer opcontrol --status"
			show "$sd.err"
			show "$sd.status"
			exit 1
		fi
		sleep 0.2
		i=$((i + 1))
	done
	cp /proc/$opd/maps "$sd.maps"
}

# stop the daemon; its samples of hot must be on disk
stop_check_samples() {
	sleep 1
	kill $opd
	wait $opd 2> /dev/null
	opd=
	total=$(cat "$1/samples/current/stats/total_samples" 2> /dev/null || echo 0)
	[ "$total" -ge 100 ] || bad "$1: only '$total' samples in 1 s at 1 kHz with the model plugins unloaded"
	find "$1/samples/current" -path "*tests/integration/hot/*" -type f | grep -q . ||
		bad "$1: no sample file of hot"
}

"$HOT" 600000 &
hot=$!

# 1. nothing asked for: the timer is picked, both model plugins and libpfm4 go
start "$W/s1"
grep -q "/timer\.so" "$W/s1.maps" || bad "timer.so is not mapped: the maps check below proves nothing"
for so in /amd64.so /intel.so libpfm; do
	grep -q "$so" "$W/s1.maps" && bad "$so still mapped after the timer was picked"
done
LOG1=$W/s1/samples/oprofiled.log
for p in amd64 intel; do
	grep -q "plugin \"$p\" (.*/$p.so) unloaded: only probed, model timer picked" "$LOG1" ||
		bad "the log does not say why $p was unloaded"
	grep -q -- "^-- plugin $p --" "$W/s1.status" && bad "opcontrol --status still lists $p"
done
grep -q -- "^-- plugin timer --" "$W/s1.status" || bad "opcontrol --status does not list the timer"
[ $fail -eq 0 ] || { show "$W/s1.status"; show "$LOG1"; }
stop_check_samples "$W/s1"

# 2. --ext-feature=intel: asked for, so it stays with libpfm4 although the timer is picked
start "$W/s2" --ext-feature=intel
grep -q "/intel\.so" "$W/s2.maps" || bad "--ext-feature=intel: intel.so was unloaded"
grep -q "libpfm" "$W/s2.maps" || bad "--ext-feature=intel: libpfm4 was unloaded under it"
grep -q "/amd64\.so" "$W/s2.maps" && bad "--ext-feature=intel: the probed amd64.so stays mapped"
LOG2=$W/s2/samples/oprofiled.log
grep -q "oprofiled: model timer, cpu type timer (4)" "$LOG2" || bad "--ext-feature=intel: the timer was not picked"
grep -q "plugin \"intel\" .*unloaded" "$LOG2" && bad "--ext-feature=intel: intel logged as unloaded"
grep -q "plugin \"amd64\" (.*) unloaded: only probed" "$LOG2" || bad "--ext-feature=intel: amd64 not unloaded"
grep -q -- "^-- plugin intel --" "$W/s2.status" || bad "opcontrol --status does not list the requested intel"
[ $fail -eq 0 ] || { show "$W/s2.status"; show "$LOG2"; }
stop_check_samples "$W/s2"

# 3. a forced cpu type picks amd64's model: amd64 stays, intel goes (the raw
# event then fails to open without a PMU: the log says what happened first)
L3=$W/log3
"$OPD" --session-dir="$W/s3" --log-file="$L3" --cpu-type=x86-64/family17h \
	--events=RETIRED_INSTRUCTIONS:100000 -- true > out3 2> err3
grep -q "oprofiled: model amd64-family17h, cpu type x86-64/family17h (89)" "$L3" ||
	bad "--cpu-type=x86-64/family17h not claimed by amd64-family17h"
grep -q "plugin \"intel\" (.*) unloaded: only probed, model amd64-family17h picked" "$L3" ||
	bad "--cpu-type=x86-64/family17h: intel not unloaded"
grep -q "plugin \"amd64\" .*unloaded" "$L3" && bad "--cpu-type=x86-64/family17h: the picked amd64 was unloaded"
[ $fail -eq 0 ] || show "$L3"

# 4. a plugins entry of the config file is asked for too: amd64 stays, intel goes
printf '%s\n' 'plugins = { amd64 = { args = ""; }; };' > c4.conf
"$OPD" --config="$W/c4.conf" --session-dir="$W/s4" -- true > out4 2> err4 ||
	{ bad "the plugins.amd64 run exited $?"; show err4; }
L4=$W/s4/samples/oprofiled.log
grep -q "oprofiled: model timer, cpu type timer (4)" "$L4" || bad "plugins.amd64: the timer was not picked"
grep -q "plugin \"amd64\" .*unloaded" "$L4" && bad "plugins.amd64: the configured amd64 was unloaded"
grep -q "plugin \"intel\" (.*) unloaded: only probed, model timer picked" "$L4" ||
	bad "plugins.amd64: the probed intel was not unloaded"
[ $fail -eq 0 ] || show "$L4"

[ $fail -eq 0 ] && { cd "$B" && rm -rf "$W"; }
exit $fail
