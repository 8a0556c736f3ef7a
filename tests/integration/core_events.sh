#!/bin/sh
# core_events.sh - oprofiled's event choice: the timer model's TIMER, a
# hardware model forced with --cpu-type whose events are validated against
# the events/ catalogue (unknown name with a suggestion, count below the
# minimum, unit mask not allowed), and a start-up failure leaving no
# session directory behind.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
W=$B/tests/integration/core_events.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-${OP_SRCDIR:-.}/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0

# expect_err DESCRIPTION PATTERN ARGS... : oprofiled fails, says PATTERN, leaves no session
expect_err() {
	what=$1 pat=$2
	shift 2
	"$OPD" --session-dir="$W/s" "$@" > out 2> err
	rc=$?
	if [ $rc -eq 0 ] || ! grep -q -- "$pat" err; then
		echo "FAIL: $what: rc $rc, expected a message matching '$pat'"; cat err; fail=1
	fi
	if [ -e "$W/s" ]; then
		echo "FAIL: $what: the session directory was left behind"; fail=1
		rm -rf "$W/s"
	fi
}

expect_err "hardware event with the timer model" "the only event is TIMER" \
	--events=CPU_CLK_UNHALTED:100000 -- /bin/true
expect_err "misspelt event" "did you mean CPU_CLK_UNHALTED" \
	--ext-feature=intel --cpu-type=i386/skylake --events=CPU_CLK_UNHALTE:100000 -- /bin/true
expect_err "count below the minimum" "below the minimum" \
	--ext-feature=intel --cpu-type=i386/skylake --events=CPU_CLK_UNHALTED:10 -- /bin/true
expect_err "unit mask not allowed" "unit mask 0x99 is not allowed" \
	--ext-feature=intel --cpu-type=i386/skylake --events=CPU_CLK_UNHALTED:100000:0x99 -- /bin/true
expect_err "bad kernel flag" "flag must be 0 or 1" \
	--events=TIMER:250000:0:2 -- /bin/true
expect_err "too many fields" "too many ':' fields" \
	--events=TIMER:1:2:3:4:5 -- /bin/true
expect_err "same event twice" "given twice" \
	--events=TIMER:250000,TIMER:250000 -- /bin/true

# the catalogue accepts the event; only the missing PMU stops it here
"$OPD" --session-dir="$W/s" --ext-feature=intel --cpu-type=i386/skylake \
	--events=CPU_CLK_UNHALTED:100000 -- /bin/true > out 2> err
if grep -q "CPU_CLK_UNHALTED" err && ! grep -q "perf_event_open" err; then
	echo "FAIL: a valid skylake event was refused before perf_event_open"; cat err; fail=1
fi
rm -rf "$W/s"

# TIMER with an explicit period names the files after it
"$OPD" --session-dir="$W/t" --events=TIMER:500000 -- /bin/sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' > out 2> err
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: TIMER:500000: rc $rc"; cat err; fail=1
elif [ -z "$(find "$W/t/samples/current" -name 'TIMER.500000.0.all.all.all' | head -1)" ]; then
	echo "FAIL: no TIMER.500000.0.all.all.all file"; find "$W/t/samples/current"; fail=1
fi

if [ $fail -eq 0 ]; then
	echo "PASS: core_events.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
