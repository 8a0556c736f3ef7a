#!/bin/sh
# model_fallback.sh - hardware models in the real daemon with the real plugin
# .so files: on a machine without a usable PMU (this VM) a hardware event is
# an error naming the reason, and without --events the timer model takes
# over; a forced --cpu-type is claimed by its model, encodes raw events
# (which this kernel then refuses), counts counters and refuses IBS events.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
W=$B/tests/integration/model_fallback.work
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=1; }
show() { echo "--- $1:"; cat "$1" 2>/dev/null; }

no_perf() {
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$1"; then
		echo "SKIP: the kernel forbids perf_event_open here (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
		exit 77
	fi
}

for p in amd64 intel timer; do
	[ -f "$OP_PLUGIN_DIR/$p.so" ] || { echo "FAIL: $OP_PLUGIN_DIR/$p.so not built"; exit 1; }
done
if [ -e /sys/bus/event_source/devices/cpu ]; then
	has_pmu=1
else
	has_pmu=0
fi

# 1. no --events: a hardware model if the PMU is usable, else the timer with the reason logged
"$OPD" --session-dir="$W/s1" -- true >out1 2>err1
rc=$?
no_perf err1
log1=$W/s1/samples/oprofiled.log
[ $rc -eq 0 ] || { bad "oprofiled -- true exited $rc"; show err1; show "$log1"; }
if [ $has_pmu -eq 0 ]; then
	grep -q "oprofiled: model timer, cpu type timer (4)" "$log1" ||
		bad "the timer model did not take over"
	grep -q "declines this CPU: no hardware PMU: perf_event_open(cycles) fails with" "$log1" ||
		bad "the log does not say why the hardware model declined"
else
	grep -q "oprofiled: model \(amd64\|intel\)-" "$log1" || bad "no hardware model claimed a CPU with a PMU"
fi

# 2. a hardware event: an error naming the reason (no PMU), or it runs (PMU)
"$OPD" --session-dir="$W/s2" --events=CPU_CLK_UNHALTED:100000 -- true >out2 2>err2
rc=$?
no_perf err2
if [ $has_pmu -eq 0 ]; then
	[ $rc -ne 0 ] || bad "--events=CPU_CLK_UNHALTED:100000 succeeded without a PMU"
	grep -q "event CPU_CLK_UNHALTED cannot be used with model timer" err2 ||
		bad "the error does not name the event and the timer model"
	grep -q "no hardware PMU" err2 || bad "the error does not say there is no hardware PMU"
	grep -q "declines this CPU" err2 || bad "the error does not name the declining model"
	[ $fail -eq 0 ] || show err2
fi

# 3. forced cpu type: claimed without a PMU, raw events encoded from the catalogue
# (a failed run may remove its new session: keep the log outside it)
log3=$W/log3
"$OPD" --session-dir="$W/s3" --log-file="$log3" --cpu-type=x86-64/family17h \
	--events=RETIRED_INSTRUCTIONS:100000 -- true >out3 2>err3
rc=$?
grep -q "oprofiled: model amd64-family17h, cpu type x86-64/family17h (89)" "$log3" ||
	{ bad "--cpu-type=x86-64/family17h not claimed by amd64-family17h"; show "$log3"; }
if [ $has_pmu -eq 0 ]; then
	[ $rc -ne 0 ] || bad "a raw hardware event opened on a machine without PMU"
	grep -q "type 4 config 0xc0" err3 || { bad "the raw event 0xc0 was not what perf was asked for"; show err3; }
fi

# 4. too many events for the forced CPU's counters (family 10h: 4)
"$OPD" --session-dir="$W/s4" --cpu-type=x86-64/family10 \
	--events=CPU_CLK_UNHALTED:100000,RETIRED_INSTRUCTIONS:100000,DATA_CACHE_ACCESSES:100000,DATA_CACHE_MISSES:100000,RETIRED_UOPS:100000 \
	-- true >out4 2>err4
rc=$?
[ $rc -ne 0 ] || bad "5 events on family10 accepted"
grep -q "Too many events specified: CPU only has 4 counters." err4 || { bad "no 'Too many events' message"; show err4; }

# 5. an IBS event given as a counter event
"$OPD" --session-dir="$W/s5" --cpu-type=x86-64/family10 --events=IBS_OP_ALL:100000 -- true >out5 2>err5
rc=$?
[ $rc -ne 0 ] || bad "IBS_OP_ALL accepted as a counter event"
grep -q "ext:ibs_op" err5 || { bad "the IBS refusal does not say ext:ibs_op"; show err5; }

# 6. forced to the timer: the hardware models stay silent
"$OPD" --session-dir="$W/s6" --cpu-type=timer -- true >out6 2>err6
rc=$?
[ $rc -eq 0 ] || { bad "--cpu-type=timer exited $rc"; show err6; }
grep -q "oprofiled: model timer, cpu type timer (4)" "$W/s6/samples/oprofiled.log" || bad "--cpu-type=timer did not pick the timer"

# 7. the out-of-tree vendor model (sdk/examples/vendor-model, built in-tree): forced and claimed
vm=$B/sdk/examples/vendor-model/.libs/vendor_model.so
if [ -f "$vm" ]; then
	mkdir -p "$W/plugins" && chmod 0755 "$W/plugins"
	cp "$vm" "$OP_PLUGIN_DIR/timer.so" "$W/plugins/" && chmod 0644 "$W/plugins/"*.so
	"$OPD" --plugin-dir="$W/plugins" --ext-feature=vendor_model --cpu-type=vendor/demo \
		--session-dir="$W/s7" --events=DEMO_CLOCK:250000 -- true >out7 2>err7
	rc=$?
	[ $rc -eq 0 ] || { bad "the vendor model run exited $rc"; show err7; }
	grep -q "oprofiled: model vendor-demo, cpu type vendor/demo (1000)" "$W/s7/samples/oprofiled.log" ||
		{ bad "vendor/demo not claimed by the vendor model"; show "$W/s7/samples/oprofiled.log"; }
	# not forced: the vendor model stays silent and the timer takes over
	"$OPD" --plugin-dir="$W/plugins" --ext-feature=vendor_model --session-dir="$W/s8" -- true >out8 2>err8
	grep -q "oprofiled: model timer" "$W/s8/samples/oprofiled.log" || bad "the vendor model claimed an unforced CPU"
else
	bad "$vm not built (check_LTLIBRARIES)"
fi

[ $fail -eq 0 ] && { cd "$B" && rm -rf "$W"; }
exit $fail
