#!/bin/sh
# threads.sh - threads and CPUs: a live 2-thread profile (4 kHz,
# --separate=thread, recorded with --record) has per-thread sample files for
# both tids, each holding its thread's samples; then the one recorded stream
# replayed with --separate=none, thread and cpu gives, image by image, counts
# that sum exactly to the unseparated ones (all files validated by odb_check).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
PROG=$B/tests/integration/sp_threads
DUMP=$B/tests/integration/sp_dump
W=$B/tests/integration/threads.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
MS=600

"$OPD" --session-dir="$W/live" --events=TIMER:250000 --separate=thread --record="$W/rec.data" \
	-- "$PROG" $MS > tids 2> err
rc=$?
if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" err; then
	echo "SKIP: the kernel forbids perf_event_open here"; exit 77
fi
[ $rc -eq 0 ] || { echo "FAIL: live run exited $rc"; cat err; exit 1; }
read -r t1 t2 < tids
"$DUMP" "$W/live/samples/current" > live.txt || { echo "FAIL: invalid sample files"; cat live.txt; fail=1; }
tgid=$(grep -o "TIMER\.250000\.0\.[0-9]*\.$t1\.all" live.txt | head -1 | cut -d. -f4)
# the program's own image, per thread: each thread spun MS ms (4 samples/ms)
for t in $t1 $t2; do
	n=$(awk -v t="$t" -v p="$PROG" '$3 ~ "sp_threads/TIMER.250000.0.[0-9]+."t".all$" { s += $1 } END { print s + 0 }' live.txt)
	echo "thread $t (process ${tgid:-?}): $n samples in sp_threads"
	# >= 40 % of the nominal 4*MS: a loaded VM loses some to preemption, never most
	[ "$n" -ge $((MS * 4 * 4 / 10)) ] || { echo "FAIL: thread $t has $n samples"; fail=1; }
done
[ -n "$tgid" ] && [ "$tgid" != "$t1" ] || { echo "FAIL: tgid of the threads not found / equal to tid"; fail=1; }

# same stream, three separations
for sep in none thread cpu; do
	"$OPD" --session-dir="$W/$sep" --events=TIMER:250000 --separate=$sep --replay="$W/rec.data" \
		> /dev/null 2> err_$sep || { echo "FAIL: replay --separate=$sep"; cat err_$sep; fail=1; }
	"$DUMP" "$W/$sep/samples/current" > $sep.txt || { echo "FAIL: $sep: invalid files"; fail=1; }
	# image (file name without the tgid.tid.cpu fields) -> count
	awk '$1 != "TOTAL" { p = $3; sub(/\.[^.]*\.[^.]*\.[^.]*$/, "", p); s[p] += $1 }
	     END { for (p in s) print p, s[p] }' $sep.txt | LC_ALL=C sort > $sep.img
	tail -1 $sep.txt
done
total=$(awk '$1 == "TOTAL" { print $3 }' none.txt)
[ "${total:-0}" -ge $((MS * 4)) ] || { echo "FAIL: only ${total:-0} samples in the unseparated replay"; fail=1; }
for sep in thread cpu; do
	cmp -s none.img $sep.img || { echo "FAIL: --separate=$sep counts differ from the total:"; diff none.img $sep.img; fail=1; }
	t=$(awk '$1 == "TOTAL" { print $3 }' $sep.txt)
	[ "$t" = "$total" ] || { echo "FAIL: $sep total $t != $total"; fail=1; }
done
# thread files name both tids, cpu files name real cpus (not 'all')
grep -q "\.$t1\.all$" thread.txt && grep -q "\.$t2\.all$" thread.txt ||
	{ echo "FAIL: replayed thread files lack a tid"; fail=1; }
grep -v TOTAL cpu.txt | grep -qv "\.all\.all\.[0-9][0-9]*$" &&
	{ echo "FAIL: a --separate=cpu file without a cpu number"; fail=1; }
# the live files are the replayed thread files
cmp -s live.txt thread.txt || { echo "FAIL: live and replayed thread files differ"; diff live.txt thread.txt; fail=1; }

if [ $fail -eq 0 ]; then
	echo "PASS: threads.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
