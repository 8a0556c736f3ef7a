#!/bin/sh
# churn.sh - process churn under a system-wide profile (cpu-clock 4 kHz):
# sp_churn forks and execs 2000 short-lived children (each spins 1 ms of CPU
# time). >= 99 % of all user samples must be attributed to an image (in a
# sample file, per the daemon's statistics), the children's own samples
# must be found in the sp_churn image (>= 40 % of the nominal 8000, >= 90 %
# of them inside child_spin by its ELF symbol). Needs root or paranoid <= 0.
# The same workload under perf record: tests/bench/bench_sample_path.sh churn.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
PROG=$B/tests/integration/sp_churn
DUMP=$B/tests/integration/sp_dump
W=$B/tests/integration/churn.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
N=${CHURN_N:-2000}
US=${CHURN_US:-1000}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$(id -u)" -ne 0 ] && [ "$paranoid" -gt 0 ]; then
	echo "SKIP: system-wide profiling needs root or perf_event_paranoid <= 0 (is $paranoid)"
	exit 77
fi

"$OPD" --session-dir="$W/s" --system-wide --events=TIMER:250000 > out 2> err &
dpid=$!
i=0
while ! grep -q "profiling started" "$W/s/samples/oprofiled.log" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
if ! kill -0 $dpid 2>/dev/null; then
	wait $dpid
	grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" err &&
		{ echo "SKIP: the kernel forbids perf_event_open here"; exit 77; }
	echo "FAIL: the daemon did not start"; cat err; exit 1
fi
"$PROG" $N $US > churn.out 2>&1 || { echo "FAIL: sp_churn"; cat churn.out; fail=1; }
sleep 0.3
kill -TERM $dpid
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }

C=$W/s/samples/current
"$DUMP" "$C" > files || { echo "FAIL: invalid sample files"; grep BAD files | head; fail=1; }
LOG=$W/s/samples/oprofiled.log
stat() { sed -n '/-- OProfile-ng Statistics --/,$p' "$LOG" | grep -F "$1" | tail -1 | sed 's/.*: //'; }
user=$(stat "Nr. user samples:")
nomap=$(stat "Nr. samples lost: no mapping:")
noapp=$(stat "Nr. user samples lost: no app info:")
infiles=$(awk '$1 != "TOTAL" && $3 !~ /\{dep\}\/\{kern\}/ { s += $1 } END { print s + 0 }' files)
app=$(awk -v p="{root}$PROG/{dep}/{root}$PROG/" '$1 != "TOTAL" && index($3, p) == 1 { s += $1 } END { print s + 0 }' files)
echo "user samples $user (lost: no mapping $nomap, no app $noapp), in user sample files $infiles"
[ "${user:-0}" -ge 1000 ] || { echo "FAIL: only ${user:-0} user samples"; fail=1; }
[ $((infiles * 100)) -ge $((${user:-0} * 99)) ] ||
	{ echo "FAIL: < 99 % of user samples attributed to an image"; fail=1; }
echo "attributed: $(awk -v a="$infiles" -v u="$user" 'BEGIN { printf "%.3f %%", u ? 100 * a / u : 0 }')"
f="$C/{root}$PROG/{dep}/{root}$PROG/TIMER.250000.0.all.all.all"
if [ -f "$f" ]; then
	"$DUMP" --sym="$PROG:child_spin" "$f" > sym
	read -r _ in _ all _ < sym
	echo "children: $app samples in sp_churn's own image, $in of $all inside child_spin"
	[ "$app" -ge $((N * US * 4 / 1000 * 4 / 10)) ] || { echo "FAIL: too few child samples"; fail=1; }
	[ $((in * 100)) -ge $((all * 90)) ] || { echo "FAIL: child samples outside child_spin"; fail=1; }
else
	echo "FAIL: no sample file for sp_churn's image"; fail=1
fi

if [ $fail -eq 0 ]; then
	echo "PASS: churn.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
