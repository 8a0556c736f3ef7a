#!/bin/sh
# report_ophelp.sh - ophelp against the events catalogue: full listing of
# x86-64/generic (golden), unit masks with defaults, --check-events with the
# events parser's messages, -r and the timer-mode explanation on a machine
# without a hardware PMU, the built-in TIMER event and its 10 kHz limit,
# errors for unknown CPU types and events.
# OP_UPDATE_GOLDEN=1 rewrites the golden file.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
OPHELP=$OP_BUILDDIR/tools/ophelp
G=$OP_SRCDIR/tests/data/report/golden
W=$OP_BUILDDIR/tests/report_ophelp.tmp
OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$OP_SRCDIR/events}
export OPROFILE_EVENTS_DIR
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

"$OPHELP" --cpu-type=x86-64/generic >"$W/generic.txt" 2>"$W/generic.err" || bad "listing x86-64/generic failed: $(cat "$W/generic.err")"
[ "${OP_UPDATE_GOLDEN:-0}" = 1 ] && cp "$W/generic.txt" "$G/ophelp_x86-64_generic.txt"
if diff -u "$G/ophelp_x86-64_generic.txt" "$W/generic.txt"; then ok; else bad "ophelp --cpu-type=x86-64/generic differs from golden"; fi
grep -q "Unit masks (default 0x7)" "$W/generic.txt" && ok || bad "no unit-mask default line"

# validation with the parser's messages
"$OPHELP" --cpu-type=x86-64/generic --check-events=CPU_CLK_UNHALTED:100000,RETIRED_MMX_FP_INSTRUCTIONS:1000:0x3 >"$W/c1" 2>&1 &&
	grep -q "^CPU_CLK_UNHALTED:100000:0x0:1:1 counter" "$W/c1" && grep -q "^RETIRED_MMX_FP_INSTRUCTIONS:1000:0x3:1:1" "$W/c1" && ok ||
	bad "valid spec rejected: $(cat "$W/c1")"
for spec in CPU_CLK_UNHALTED:10 NO_SUCH_EVENT:100000 CPU_CLK_UNHALTED RETIRED_MMX_FP_INSTRUCTIONS:1000:0x80; do
	if "$OPHELP" --cpu-type=x86-64/generic --check-events="$spec" >"$W/c2" 2>&1; then
		bad "invalid spec $spec accepted"
	elif grep -q "ophelp error: .*$(echo "$spec" | cut -d: -f1)" "$W/c2"; then ok
	else bad "no message naming $spec: $(cat "$W/c2")"; fi
done
# -u prints the default unit mask in decimal, as OProfile's ophelp
[ "$("$OPHELP" --cpu-type=x86-64/generic -u RETIRED_MMX_FP_INSTRUCTIONS)" = 7 ] && ok || bad "-u default"

# this machine's CPU type
if [ ! -d /sys/bus/event_source/devices/cpu ]; then
	[ "$("$OPHELP" -r)" = "CPU with timer interrupt" ] && ok || bad "-r without a PMU should print OProfile's name of timer mode"
	"$OPHELP" >"$W/timer" 2>&1 && grep -q "No hardware performance counters" "$W/timer" &&
		grep -q "timer mode" "$W/timer" && ok || bad "no timer-mode explanation: $(cat "$W/timer")"
	"$OPHELP" --check-events=CPU_CLK_UNHALTED:100000 >/dev/null 2>&1 && bad "timer mode accepted CPU_CLK_UNHALTED" || ok
	# what oprofiled uses here by default
	out=$("$OPHELP" --check-events=TIMER:250000 2>&1) && ok || bad "this machine's TIMER:250000 refused: $out"
	out=$("$OPHELP" -d 2>&1) && [ "$out" = "TIMER:250000:0:1:1" ] && ok || bad "ophelp -d here: $out"
else
	[ -n "$("$OPHELP" -r)" ] && ok || bad "-r printed nothing"
fi

# CPU type timer (any machine: --cpu-type=timer): the TIMER event is listed and
# validated with the timer plugin's limit (10 kHz: period >= 100000 ns), -d
# gives the daemon's default TIMER:250000
"$OPHELP" --cpu-type=timer >"$W/tl" 2>&1 && grep -q "^TIMER: (counter: all)" "$W/tl" &&
	grep -q "min count: 100000, max count: 1000000000" "$W/tl" && grep -q "timer mode" "$W/tl" && ok ||
	bad "timer listing lacks the TIMER event: $(cat "$W/tl")"
out=$("$OPHELP" --cpu-type=timer --check-events=TIMER:250000 2>&1) && [ "$out" = "TIMER:250000:0x0:1:1 counter 0" ] && ok ||
	bad "TIMER:250000 (the daemon's default) refused: $out"
out=$("$OPHELP" --cpu-type=timer --check-events=TIMER:100000:0:0:1 2>&1) && [ "$out" = "TIMER:100000:0x0:0:1 counter 0" ] && ok ||
	bad "TIMER:100000:0:0:1 (10 kHz, user only) refused: $out"
for spec in TIMER:10000 TIMER:99999; do
	if "$OPHELP" --cpu-type=timer --check-events=$spec >"$W/c3" 2>&1; then
		bad "$spec (above 10 kHz) accepted"
	elif grep -q "ophelp error: .*count ${spec#TIMER:} is below the minimum 100000 for TIMER" "$W/c3"; then ok
	else bad "$spec: no message giving the limit: $(cat "$W/c3")"; fi
done
"$OPHELP" --cpu-type=timer --check-events=TIMER:2000000000 >"$W/c3" 2>&1 && bad "TIMER:2000000000 accepted" ||
	{ grep -q "above the maximum 1000000000 for TIMER" "$W/c3" && ok || bad "TIMER:2000000000: $(cat "$W/c3")"; }
out=$("$OPHELP" --cpu-type=timer -d 2>&1) && [ "$out" = "TIMER:250000:0:1:1" ] && ok || bad "timer -d: $out"
out=$("$OPHELP" --cpu-type=timer -u TIMER 2>&1) && [ "$out" = 0 ] && ok || bad "timer -u TIMER: $out"
"$OPHELP" --cpu-type=timer TIMER >"$W/c3" 2>&1 && grep -q "sampling period in ns" "$W/c3" && ok ||
	bad "ophelp --cpu-type=timer TIMER: $(cat "$W/c3")"

# unknown CPU type
"$OPHELP" --cpu-type=nosuch/cpu >/dev/null 2>"$W/e" && bad "unknown cpu type accepted" ||
	{ grep -q "no events catalogue for CPU type \"nosuch/cpu\"" "$W/e" && ok || bad "message: $(cat "$W/e")"; }

echo "report_ophelp: $npass passed, $fail failed"
# keep the work directory only when something failed (distclean leaves nothing)
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
