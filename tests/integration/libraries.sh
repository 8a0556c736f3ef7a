#!/bin/sh
# libraries.sh - samples in a dlopen'd library: a PIE and a non-PIE main
# program dlopen() libsphot.so and spend their time in its sp_lib_hot();
# the samples must land in the library's {dep} file of the program, at file
# offsets inside sp_lib_hot by its ELF symbol (>= 95 %), and that file must
# hold most of the program's user samples. 4 kHz, launch mode.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
DUMP=$B/tests/integration/sp_dump
LIB=$B/tests/integration/.libs/libsphot.so
W=$B/tests/integration/libraries.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
[ -f "$LIB" ] || { echo "FAIL: $LIB not built"; exit 1; }
LIBREAL=$(readlink -f "$LIB")

for v in pie nopie; do
	PROG=$B/tests/integration/sp_dlopen_$v
	"$OPD" --session-dir="$W/$v" --events=TIMER:250000 -- "$PROG" "$LIB" 600 > out 2> err
	rc=$?
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" err; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	[ $rc -eq 0 ] || { echo "FAIL: $v: oprofiled exited $rc"; cat err; fail=1; continue; }
	"$DUMP" "$W/$v/samples/current" > files.$v || { echo "FAIL: $v: invalid sample files"; fail=1; }
	# <session>/samples/current/{root}<prog>/{dep}/{root}<lib>/TIMER...
	rel="{root}$PROG/{dep}/{root}$LIBREAL/TIMER.250000.0.all.all.all"
	f="$W/$v/samples/current/$rel"
	if [ ! -f "$f" ]; then
		echo "FAIL: $v: no sample file $rel"; cat files.$v; fail=1; continue
	fi
	"$DUMP" --sym="$LIBREAL:sp_lib_hot" "$f" > sym.$v || { echo "FAIL: $v: $f"; fail=1; continue; }
	read -r _ in _ all range < sym.$v
	user=$(awk '$1 != "TOTAL" && $3 !~ /\{kern\}/ { s += $1 } END { print s + 0 }' files.$v)
	echo "$v: $in of $all library samples inside sp_lib_hot $range; program user samples $user"
	[ "$all" -ge 1000 ] || { echo "FAIL: $v: only $all samples in the library (expected ~2400)"; fail=1; }
	[ $((in * 100)) -ge $((all * 95)) ] || { echo "FAIL: $v: < 95 % inside sp_lib_hot"; fail=1; }
	[ $((all * 100)) -ge $((user * 90)) ] || { echo "FAIL: $v: the library holds < 90 % of user samples"; fail=1; }
done
# the main programs really are PIE / non-PIE
od -An -j16 -N2 -tu2 "$B/tests/integration/sp_dlopen_pie" | grep -q ' 3$' || { echo "FAIL: sp_dlopen_pie is not ET_DYN"; fail=1; }
od -An -j16 -N2 -tu2 "$B/tests/integration/sp_dlopen_nopie" | grep -q ' 2$' || { echo "FAIL: sp_dlopen_nopie is not ET_EXEC"; fail=1; }

if [ $fail -eq 0 ]; then
	echo "PASS: libraries.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
