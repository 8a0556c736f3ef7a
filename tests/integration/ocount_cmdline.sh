#!/bin/sh
# ocount_cmdline.sh - OProfile 1.x ocount command lines run live through the
# front-end: counts of a command on stdout (task-clock matches the CPU time
# the workload reports), -e with kernel/user flags, -f FILE, -p PID, -r TID,
# -s until SIGINT, -t, -c, -i SEC, -i SEC:N, -b (OProfile's brief lines),
# -C CPUS (-C 0, -C 0,1 -c); -V shows the opcount command; options without
# an opcount equivalent fail naming the option.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
OCOUNT=$OP_BUILDDIR/tools/ocount
DEMO=$OP_BUILDDIR/tools/op-demo
. "$OP_SRCDIR/tests/integration/sig_util.sh"
W=$OP_BUILDDIR/tests/ocount_cmdline.tmp
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "ocount_cmdline: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# the count of event $2 in ocount output $1, without thousands separators
count_of() { awk -v e="$2" '$1 == e { gsub(",", "", $2); print $2; exit }' "$1"; }

# 1. ocount COMMAND: the counts on stdout, the command's stdout too, nothing on stderr
"$OCOUNT" -e task-clock,context-switches "$DEMO" 300 >"$W/1.out" 2>"$W/1.err" || bad "ocount COMMAND failed: $(cat "$W/1.err")"
[ ! -s "$W/1.err" ] && ok || bad "ocount wrote to stderr: $(cat "$W/1.err")"
tc=$(count_of "$W/1.out" task-clock)
# op-demo burns 300 ms of CPU: task-clock (ns) between 0.25 and 1 s
if [ -n "$tc" ] && [ "$tc" -gt 250000000 ] && [ "$tc" -lt 1000000000 ]; then ok
else bad "task-clock of a 300 ms workload: '$tc' ns: $(cat "$W/1.out")"; fi
[ -n "$(count_of "$W/1.out" context-switches)" ] && ok || bad "no context-switches count"
grep -q "^op-demo: ran" "$W/1.out" && ok || bad "the command's output is missing"

# 2. -e NAME:um:kernel:user: user only -> opcount's :u; -f FILE
"$OCOUNT" -e task-clock:0:0:1 -f "$W/2.txt" "$DEMO" 200 >"$W/2.out" 2>&1 || bad "ocount -e ...:0:0:1 -f failed: $(cat "$W/2.out")"
[ -n "$(count_of "$W/2.txt" task-clock:u)" ] && ok || bad "-f: no task-clock:u count in the file: $(cat "$W/2.txt")"
grep -q "task-clock" "$W/2.out" && bad "-f: counts also on stdout" || ok

# 3. -p PID and -r TID: until the process ends; -t per thread
"$DEMO" 600 >/dev/null &
pid=$!
"$OCOUNT" -p $pid -t -e task-clock >"$W/3.out" 2>&1 &
oc=$!
"$DEMO" 600 >/dev/null &
pid2=$!
"$OCOUNT" -r $pid2 -e task-clock >"$W/3r.out" 2>&1 &
oc2=$!
wait $pid $pid2
for p in $oc $oc2; do
	t=0
	while kill -0 $p 2>/dev/null && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
	kill -0 $p 2>/dev/null && { kill -INT $p; bad "ocount -p/-r did not end with its process"; }
done
wait $oc || bad "ocount -p -t failed: $(cat "$W/3.out")"
wait $oc2 || bad "ocount -r failed: $(cat "$W/3r.out")"
grep -q "$pid" "$W/3.out" && [ -n "$(awk '/task-clock/ { print; exit }' "$W/3.out")" ] && ok ||
	bad "ocount -p -t: no per-thread task-clock row: $(cat "$W/3.out")"
c=$(awk '/task-clock/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9,]+$/ && length($i) > 3) { gsub(",", "", $i); print $i; exit } }' "$W/3r.out")
[ -n "$c" ] && [ "$c" -gt 100000000 ] && ok || bad "ocount -r: task-clock '$c' for 600 ms of CPU: $(cat "$W/3r.out")"

# 4. -s -c -i: system-wide per CPU, intervals, until SIGINT
"$OCOUNT" -s -c -i 0.2 -e task-clock >"$W/4.out" 2>&1 &
oc=$!
sig_wait_blocked $oc 2
sleep 1
kill -INT $oc
wait $oc && ok || bad "ocount -s did not end cleanly on SIGINT: $(cat "$W/4.out")"
[ "$(grep -c task-clock "$W/4.out")" -ge 4 ] && ok || bad "ocount -s -c -i 0.2: too few rows: $(cat "$W/4.out")"

# 4b. -b: a blank line, then EVENT,COUNT,PERCENT (ocount's brief format)
"$OCOUNT" -b -e task-clock,context-switches "$DEMO" 300 >"$W/b.out" 2>"$W/b.err" || bad "ocount -b failed: $(cat "$W/b.err")"
tc=$(awk -F, '$1 ~ /^task-clock(:u)?$/ && $3 ~ /^[0-9]+\.[0-9][0-9]$/ { print $2 }' "$W/b.out")
if [ -n "$tc" ] && [ "$tc" -gt 250000000 ] && [ "$tc" -lt 1000000000 ]; then ok
else bad "-b: task-clock of a 300 ms workload: '$tc': $(cat "$W/b.out")"; fi
grep -Eq '^context-switches(:u)?,[0-9]+,[0-9]+\.[0-9][0-9]$' "$W/b.out" && ok || bad "-b: no context-switches line: $(cat "$W/b.out")"
# -i SEC:N: N intervals then the command is killed; with -b each starts with timestamp,SEC
"$OCOUNT" -b -i 0.1:3 -e task-clock "$DEMO" 5000 >"$W/bi.out" 2>&1 || bad "ocount -b -i 0.1:3 failed: $(cat "$W/bi.out")"
[ "$(grep -c '^timestamp,[0-9]*\.[0-9]$' "$W/bi.out")" = 3 ] &&
	[ "$(grep -Ec '^task-clock(:u)?,[0-9]+,' "$W/bi.out")" = 3 ] && ok || bad "-b -i 0.1:3: $(cat "$W/bi.out")"

# 4c. -C CPUS: every task on those CPUs until SIGINT (system-wide rights)
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	"$OCOUNT" -C 0 -b -e cpu-clock >"$W/c0.out" 2>&1 &
	oc=$!
	sig_wait_blocked $oc 2
	sleep 0.5
	kill -INT $oc
	wait $oc || bad "ocount -C 0 did not end cleanly on SIGINT: $(cat "$W/c0.out")"
	# cpu-clock of one CPU is its wall time: about the 0.5 s counted
	c=$(awk -F, '$1 == "cpu-clock" { print $2 }' "$W/c0.out")
	[ -n "$c" ] && [ "$c" -gt 300000000 ] && [ "$c" -lt 2000000000 ] && ok ||
		bad "ocount -C 0 -b: cpu-clock '$c' for 0.5 s: $(cat "$W/c0.out")"
	if [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ]; then
		"$OCOUNT" -C 0,1 -c -b -e task-clock,cpu-clock >"$W/c01.out" 2>&1 &
		oc=$!
		sig_wait_blocked $oc 2
		sleep 0.5
		kill -INT $oc
		wait $oc || bad "ocount -C 0,1 -c did not end cleanly on SIGINT: $(cat "$W/c01.out")"
		# one CPU,EVENT,COUNT,PERCENT line per CPU and event, cpu-clock ~0.5 s each
		n=$(awk -F, 'NF == 4 && ($1 == 0 || $1 == 1) && ($2 == "task-clock" || $2 == "cpu-clock")' "$W/c01.out" | wc -l)
		cc=$(awk -F, '$2 == "cpu-clock" && $3 > 300000000 && $3 < 2000000000' "$W/c01.out" | wc -l)
		[ "$n" = 4 ] && [ "$cc" = 2 ] && ok || bad "ocount -C 0,1 -c -b: $(cat "$W/c01.out")"
		"$OCOUNT" -C 0,1 -e cpu-clock >"$W/c2.out" 2>&1 &
		oc=$!
		sig_wait_blocked $oc 2
		sleep 0.3
		kill -INT $oc
		wait $oc
		grep -q "Event counts (actual) for CPUs 0,1:" "$W/c2.out" && ok || bad "ocount -C 0,1 text: $(cat "$W/c2.out")"
	fi
else
	echo "ocount_cmdline: -C checks skipped: counting CPUs needs root or kernel.perf_event_paranoid <= 0"
fi

# 5. -V: the opcount command line
"$OCOUNT" -V -e task-clock:0:1:1 true >"$W/5.out" 2>&1 || bad "ocount -V failed"
grep -q "opcount --events=task-clock --output=- -- true" "$W/5.out" && ok || bad "-V: $(head -2 "$W/5.out")"

# 6. what opcount has no equivalent for, and bad values
expect_fail() { # regex args...
	re=$1; shift
	if "$OCOUNT" "$@" >"$W/bad.out" 2>&1; then bad "ocount $* succeeded"
	elif grep -q -- "$re" "$W/bad.out"; then ok
	else bad "ocount $*: no '$re' in: $(cat "$W/bad.out")"; fi
}
expect_fail 'more than one target' -C 0 -s
expect_fail 'more than one target' -C 0 true
expect_fail 'cpu-list=0,x: item 2 is not a CPU number' -C 0,x
expect_fail '--process-list=1,2 is not supported' -p 1,2
expect_fail 'expected SEC\[:N\]' -i 1:0 -s
expect_fail 'expected SEC\[:N\]' -i 1:x -s
expect_fail 'unit mask value 0x3 of task-clock is not supported' -e task-clock:0x3 true
expect_fail 'kernel and user both 0' -e task-clock:0:0:0 true
expect_fail 'the kernel flag of task-clock is "2"' -e task-clock:0:2 true
expect_fail 'seconds between 0.01' -i 0 -s
expect_fail 'nothing to count'
expect_fail 'more than one target' -s true
expect_fail '--separate-thread goes with' -t true
expect_fail 'unknown option --bogus' --bogus true
expect_fail "unknown event" -e no_such_event_xyz true
"$OCOUNT" -v | grep -q "^ocount: oprofile-ng [0-9]" && ok || bad "-v"
"$OCOUNT" -? | grep -q "^Usage: ocount" && "$OCOUNT" -u | grep -q -- "--process-list" &&
	"$OCOUNT" --usage | grep -q -- "--events" && "$OCOUNT" -h | grep -q -- "-s, --system-wide" && ok ||
	bad "-?/-u/--usage/-h"

echo "ocount_cmdline: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
