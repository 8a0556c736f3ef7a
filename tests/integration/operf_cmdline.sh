#!/bin/sh
# operf_cmdline.sh - OProfile 1.x operf command lines run live through the
# front-end (cpu-clock, short workloads) and the sessions read back: a
# command into ./oprofile_data that opreport finds by default; -d, -e TIMER:P,
# -t (per-thread sample files), -c, -g (call-graph files), -a (samples added),
# -s until SIGINT, -p PID until the process ends; -V shows the oprofiled
# command; bad command lines fail naming what is wrong.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
OPERF=$OP_BUILDDIR/tools/operf
R=$OP_BUILDDIR/tools/opreport/opreport
DEMO=$OP_BUILDDIR/tools/op-demo
W=$OP_BUILDDIR/tests/operf_cmdline.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$OP_SRCDIR/events}
. "$OP_SRCDIR/tests/integration/sig_util.sh"
if [ ! -x "$OP_BUILDDIR/core/oprofiled" ]; then
	echo "operf_cmdline: SKIP: core/oprofiled is not built"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "operf_cmdline: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# samples of symbol $2 in opreport -l output $1
samples_of() { awk -v s="$2" '$NF == s { print $1; exit }' "$1"; }
total_of() { awk '/^ *[0-9]+ +[0-9.]+ +op-demo *$/ { print $1; exit }' "$1"; }

# 1. operf COMMAND: ./oprofile_data, which opreport reads without options
mkdir -p "$W/cwd" && cd "$W/cwd" || exit 1
if "$OPERF" "$DEMO" 800 >"$W/1.out" 2>&1; then ok; else bad "operf COMMAND failed: $(cat "$W/1.out")"; fi
[ -d oprofile_data/samples/current ] && ok || bad "no ./oprofile_data/samples/current"
"$R" -l >"$W/1.rep" 2>"$W/1.err" || bad "opreport in the operf directory failed: $(cat "$W/1.err")"
hot=$(samples_of "$W/1.rep" op_demo_hot) cold=$(samples_of "$W/1.rep" op_demo_cold)
if [ -n "$hot" ] && [ -n "$cold" ] && [ "$hot" -gt $((2 * cold)) ]; then ok
else bad "opreport of operf's session: op_demo_hot '$hot' / op_demo_cold '$cold' samples (3:1 expected)"; cat "$W/1.rep"; fi
grep -q "^Profiling through timer interrupt" "$W/1.rep" && ok || bad "no timer header in the report"

# 2. -d DIR -e TIMER:500000 -t -c -g
"$OPERF" -d "$W/s2" -e TIMER:500000 -t -c -g "$DEMO" 400 >"$W/2.out" 2>&1 || bad "operf -d -e -t -c -g failed: $(cat "$W/2.out")"
[ "$(find "$W/cwd/oprofile_data" -newer "$W/1.rep" -type f | wc -l)" = 0 ] && ok ||
	bad "-d: samples went to ./oprofile_data"
f=$(find "$W/s2/samples/current" -path '*op-demo/{dep}/{root}*op-demo/TIMER.500000.*' -type f | head -1)
case $f in
*/TIMER.500000.0.[0-9]*.[0-9]*.[0-9]*) ok ;; # event.count.um.tgid.tid.cpu: -t and -c
*) bad "-t -c: sample file '$f' is not per thread and CPU: $(find "$W/s2/samples/current" -type f -name 'TIMER*' | head -3)" ;;
esac
find "$W/s2/samples/current" -type d -name '{cg}' | grep -q . && ok || bad "-g: no call-graph files in $W/s2"
# -m cpu: one column (with -c and the demo on both CPUs there is one per CPU)
"$R" --session-dir="$W/s2" -m cpu >"$W/2.rep" 2>&1 && grep -q "TIMER:500000" "$W/2.rep" && ok ||
	bad "opreport --session-dir of -d: $(head -5 "$W/2.rep")"

# 3. -a: the second run adds to the first
"$OPERF" -d "$W/s3" "$DEMO" 300 >/dev/null 2>&1 && "$R" --session-dir="$W/s3" >"$W/3a.rep" 2>&1 || bad "operf -d s3 failed"
"$OPERF" -d "$W/s3" -a "$DEMO" 300 >/dev/null 2>&1 && "$R" --session-dir="$W/s3" >"$W/3b.rep" 2>&1 || bad "operf -a failed"
n1=$(total_of "$W/3a.rep") n2=$(total_of "$W/3b.rep")
if [ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -gt $((n1 + n1 / 2)) ]; then ok
else bad "-a: $n1 samples after the first run, $n2 after the appended one"; fi
"$OPERF" -d "$W/s3" "$DEMO" 300 >/dev/null 2>&1 && "$R" --session-dir="$W/s3" >"$W/3c.rep" 2>&1
n3=$(total_of "$W/3c.rep")
[ -n "$n3" ] && [ "$n3" -lt "$n2" ] && ok || bad "without -a the session starts anew: $n3 samples after $n2"

# 4. -s: system-wide until SIGINT, with the demo running meanwhile
"$OPERF" -s -d "$W/s4" >"$W/4.out" 2>&1 &
op=$!
sig_wait_blocked $op 2
sleep 1
"$DEMO" 400 >/dev/null
kill -INT $op
wait $op && ok || bad "operf -s did not end cleanly on SIGINT: $(cat "$W/4.out")"
"$R" --session-dir="$W/s4" >"$W/4.rep" 2>&1 && grep -q "op-demo" "$W/4.rep" && ok ||
	bad "operf -s: the demo is not in the report: $(head -20 "$W/4.rep")"

# 5. -p PID: until the process ends
"$DEMO" 1500 >/dev/null &
pid=$!
"$OPERF" -p $pid -d "$W/s5" >"$W/5.out" 2>&1 &
op=$!
wait $pid
t=0
while kill -0 $op 2>/dev/null && [ $t -lt 100 ]; do sleep 0.1; t=$((t + 1)); done
if kill -0 $op 2>/dev/null; then
	kill -INT $op; bad "operf -p did not end with its process"
fi
wait $op || bad "operf -p failed: $(cat "$W/5.out")"
"$R" --session-dir="$W/s5" -l >"$W/5.rep" 2>&1 && [ -n "$(samples_of "$W/5.rep" op_demo_hot)" ] && ok ||
	bad "operf -p: no op_demo_hot samples: $(head -20 "$W/5.rep")"

# 6. -V: the oprofiled command line; -l accepted
"$OPERF" -V misc -l -d "$W/s6" -e TIMER true >"$W/6.out" 2>&1 || bad "operf -V -l -e TIMER failed: $(cat "$W/6.out")"
grep -q "oprofiled --session-dir=$W/s6 --events=TIMER --verbose=misc -- true" "$W/6.out" && ok ||
	bad "-V: no oprofiled command line: $(head -3 "$W/6.out")"

# 7. bad command lines, version and usage
expect_fail() { # regex args...
	re=$1; shift
	if "$OPERF" "$@" >"$W/bad.out" 2>&1; then bad "operf $* succeeded"
	elif grep -q -- "$re" "$W/bad.out"; then ok
	else bad "operf $*: no '$re' in: $(cat "$W/bad.out")"; fi
}
expect_fail 'nothing to profile'
expect_fail 'more than one target' -s true
expect_fail 'more than one target' -p 1 true
expect_fail '--pid=abc: expected one process id' -p abc
expect_fail 'unknown level "loud"' -V loud true
expect_fail 'unknown option --bogus' --bogus true
expect_fail 'option -e needs a value' -e
expect_fail 'empty directory name' -d "" true
expect_fail 'NO_SUCH' -d "$W/s7" -e NO_SUCH:100000 true
"$OPERF" -v | grep -q "^operf: oprofile-ng [0-9]" && ok || bad "-v: $("$OPERF" -v 2>&1)"
[ "$("$OPERF" --version)" = "$("$OPERF" -v)" ] && ok || bad "--version"
"$OPERF" -? | grep -q "^Usage: operf" && "$OPERF" -u | grep -q -- "--system-wide" &&
	"$OPERF" --usage | grep -q -- "--callgraph" && ok || bad "-?/-u/--usage"
"$OPERF" -h | grep -q -- "-s, --system-wide" && ok || bad "-h"

cd "$OP_BUILDDIR" || exit 1
echo "operf_cmdline: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
