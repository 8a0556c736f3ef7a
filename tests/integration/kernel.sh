#!/bin/sh
# kernel.sh - kernel samples resolve to kernel functions: a syscall-heavy
# program (dd of 512-byte blocks, /dev/zero -> /dev/null) profiled at 4 kHz
# gives kernel samples in its {dep}/{kern}/vmlinux file whose keys
# (pc - _text), resolved through the session's snapshot
# samples/current/stats/kallsyms, all name a kernel function, most of them
# on the read/write system call path.
# Then a save (opcontrol --save) asked for while the kallsyms pass still
# runs: the saved session and the new samples/current both get the
# snapshot.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
DUMP=$B/tests/integration/sp_dump
OPC=$B/tools/opcontrol
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/kernel.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
DD=$(command -v dd) || { echo "FAIL: no dd"; exit 1; }
DD=$(readlink -f "$DD")

"$OPD" --session-dir="$W/s" --events=TIMER:250000 -- "$DD" if=/dev/zero of=/dev/null bs=512 \
	count=1000000 > out 2> err
rc=$?
if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" err; then
	echo "SKIP: the kernel forbids perf_event_open here"; exit 77
fi
if grep -q "sampling user space only" err; then
	# a user at perf_event_paranoid >= 2: the daemon fell back to user space
	echo "SKIP: no kernel samples for this user (perf_event_paranoid >= 2, not root): run as root"
	exit 77
fi
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat err; exit 1; }
C=$W/s/samples/current
K=$C/stats/kallsyms
[ -s "$K" ] || { echo "FAIL: no kallsyms snapshot in the session"; exit 1; }
# the snapshot's _text is the running kernel's (when /proc shows addresses)
pt=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
st=$(awk '$3 == "_text" { print $1; exit }' "$K")
[ -n "$st" ] || { echo "FAIL: the snapshot has no _text"; fail=1; }
[ "$pt" = "0000000000000000" ] || [ "$pt" = "$st" ] || { echo "FAIL: snapshot _text $st, /proc $pt"; fail=1; }
f="$C/{root}$DD/{dep}/{kern}/vmlinux/TIMER.250000.0.all.all.all"
[ -f "$f" ] || { echo "FAIL: no kernel sample file for dd"; "$DUMP" "$C"; exit 1; }
"$DUMP" --ksyms="$K" "$f" > syms || { echo "FAIL: invalid kernel sample file"; cat syms; exit 1; }
awk '$1 != "resolved" { s[$2] += $1 } END { for (k in s) print s[k], k }' syms | sort -rn > funcs
head -5 funcs
set -- $(tail -1 syms)
res=$2 tot=$4
echo "kernel samples $tot, resolved to a function $res"
[ "$tot" -ge 300 ] || { echo "FAIL: only $tot kernel samples"; fail=1; }
[ "$res" -eq "$tot" ] || { echo "FAIL: $((tot - res)) kernel samples resolve to no function"; fail=1; }
path=$(awk '$2 ~ /(read|write|zero|syscall|SYSCALL|fdget|rw_verify|security_file|fsnotify|copy|clear_user|x64_sys)/ { s += $1 } END { print s + 0 }' funcs)
echo "on the read/write syscall path: $path"
[ $((path * 100)) -ge $((tot * 50)) ] || { echo "FAIL: < 50 % of kernel samples on the syscall path"; fail=1; }

# 2. The kallsyms pass reads a FIFO under a fake proc root (kernel:proc=),
# fed only after the save was asked for; samples of user mode only, so that
# no kernel address makes the daemon wait for the pass before the save.
P=$W/proc
mkdir -p "$P/sys/kernel"
cp "$S/tests/data/kernel/proc-a/modules" "$P/"
cp "$S/tests/data/kernel/proc-a/sys/kernel/kptr_restrict" "$P/sys/kernel/"
mkfifo "$P/kallsyms"
"$OPD" --session-dir="$W/s2" --events=TIMER:250000:0:0:1 --ext-feature=kernel:proc="$P" \
	-- sleep 2 > out2 2> err2 &
dpid=$!
i=0
while ! grep -q "profiling started" "$W/s2/samples/oprofiled.log" 2> /dev/null && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1))
done
(sleep 0.5; cat "$S/tests/data/kernel/proc-a/kallsyms" > "$P/kallsyms") &
fpid=$!
"$OPC" --session-dir="$W/s2" --save=early > save.out 2>&1 || { echo "FAIL: opcontrol --save=early"; cat save.out; fail=1; }
wait $fpid
wait $dpid || { echo "FAIL: oprofiled (fake proc root) exited non-zero"; cat err2; fail=1; }
exp=$S/tests/data/kernel/proc-a/kallsyms.expected
for d in early current; do
	if cmp -s "$exp" "$W/s2/samples/$d/stats/kallsyms"; then
		echo "samples/$d/stats/kallsyms: the snapshot"
	else
		echo "FAIL: samples/$d/stats/kallsyms is not the snapshot of the fake kallsyms"; fail=1
	fi
done

if [ $fail -eq 0 ]; then
	echo "PASS: kernel.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
