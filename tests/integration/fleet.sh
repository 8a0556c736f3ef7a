#!/bin/sh
# fleet.sh - fleet defaults (issue 20), end to end:
# 1. conf/fleet.conf loads (--check-config: every plugin it names loads,
#    99 Hz, 60 s rotation, a bounded keep, call graphs);
# 2. the daemon samples at the asked frequency: a busy loop of 3 s of CPU
#    gets 99 +- 15 % samples a second under fleet.conf, 19 +- 20 % with
#    --frequency=19;
# 3. kallsyms stored once: a 2 s rotation over a syscall-heavy workload,
#    then a restart on the same session: every session's stats/kallsyms is
#    one inode, samples/.kallsyms holds one copy, and opreport names kernel
#    functions in every rotated session; oparchive of a rotated session
#    copies the snapshot and opreport archive: names them from the copy.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPR=$B/tools/opreport/opreport
OPA=$B/tools/oparchive
HOT=$B/tests/integration/hot
CONF=$S/conf/fleet.conf
W=$B/tests/integration/fleet.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0

# 1. the config
"$OPD" --config="$CONF" --session-dir="$W/chk" --check-config > chk.out 2> chk.err ||
	{ echo "FAIL: fleet.conf does not load"; cat chk.err chk.out; exit 1; }
for want in "frequency = 99;" "rotate_interval = 60;" "rotate_keep = 15;" "system_wide = true;"; do
	grep -qF "$want" chk.out || { echo "FAIL: --check-config of fleet.conf lacks \"$want\""; fail=1; }
done
grep -q '"callgraph"' chk.out || { echo "FAIL: fleet.conf does not turn call graphs on"; fail=1; }
grep -q '"cgroup"' chk.out || { echo "FAIL: fleet.conf does not load the cgroup plugin"; fail=1; }

# 2. the rate: samples of hot, which runs 3 s of its own CPU time (cpu-clock
# on a launched command counts that task's CPU time, whatever else runs)
rate() { # $1 session, $2.. daemon options; prints samples and Hz * 10
	s=$1; shift
	"$OPD" --config="$CONF" --session-dir="$W/$s" --rotate=0 "$@" -- "$HOT" 3000 \
		> "$s.out" 2> "$s.err" ||
		{ echo "FAIL: oprofiled ($s) exited non-zero" >&2; cat "$s.err" >&2; echo 0 0; return; }
	n=$(cat "$W/$s/samples/current/stats/total_samples" 2> /dev/null || echo 0)
	echo "$n" $((n * 10 / 3))
}
set -- $(rate r99)
echo "fleet.conf: $1 samples in 3 CPU seconds = $(($2 / 10)).$(($2 % 10)) Hz"
[ "$2" -ge 842 ] && [ "$2" -le 1139 ] || { echo "FAIL: asked 99 Hz, got $(($2 / 10)) Hz"; fail=1; }
set -- $(rate r19 --frequency=19)
echo "--frequency=19: $1 samples in 3 CPU seconds = $(($2 / 10)).$(($2 % 10)) Hz"
[ "$2" -ge 152 ] && [ "$2" -le 228 ] || { echo "FAIL: asked 19 Hz, got $(($2 / 10)) Hz"; fail=1; }
grep -q "TIMER:19Hz" "$W/r19/samples/oprofiled.log" ||
	{ echo "FAIL: the log does not say the default event ran at 19Hz"; fail=1; }

# 3. kallsyms once across rotations and a restart
DD=$(readlink -f "$(command -v dd)")
"$OPD" --config="$CONF" --session-dir="$W/k" --rotate=2 --rotate-keep=10 -- sh -c \
	"timeout 9 $DD if=/dev/zero of=/dev/null bs=512 2> /dev/null; true" > k.out 2> k.err ||
	{ echo "FAIL: oprofiled (rotation) exited non-zero"; cat k.err; fail=1; }
"$OPD" --config="$CONF" --session-dir="$W/k" --rotate=2 --rotate-keep=10 -- sh -c \
	"timeout 3 $DD if=/dev/zero of=/dev/null bs=512 2> /dev/null; true" > k2.out 2> k2.err ||
	{ echo "FAIL: oprofiled (restart) exited non-zero"; cat k2.err; fail=1; }
K=$W/k/samples
nrot=$(ls -d "$K"/rotate-* 2> /dev/null | wc -l)
echo "rotated sessions: $nrot, plus previous/ and current/"
[ "$nrot" -ge 3 ] || { echo "FAIL: only $nrot rotations"; fail=1; }
inodes=$(ls -i "$K"/*/stats/kallsyms | awk '{ print $1 }' | sort -u | wc -l)
nks=$(ls "$K"/*/stats/kallsyms | wc -l)
copies=$(ls "$K/.kallsyms" | wc -l)
echo "kallsyms: $nks sessions, $inodes inode(s), $copies stored cop(y/ies), $(du -sk "$K" | cut -f1) KiB in all"
[ "$nks" -ge $((nrot + 2)) ] || { echo "FAIL: a session lacks stats/kallsyms"; fail=1; }
[ "$inodes" -eq 1 ] || { echo "FAIL: $inodes different kallsyms files, expected one"; ls -li "$K"/*/stats/kallsyms; fail=1; }
[ "$copies" -eq 1 ] || { echo "FAIL: $copies copies in samples/.kallsyms"; fail=1; }
links=$(stat -c %h "$K/.kallsyms/"*)
[ "$links" -eq $((nks + 1)) ] || { echo "FAIL: link count $links, expected $((nks + 1))"; fail=1; }
grep -q "linked to the same kernel's earlier copy" "$K/oprofiled.log" ||
	{ echo "FAIL: the restart did not reuse the stored copy"; fail=1; }
# kernel functions named in every rotated session
for d in "$K"/rotate-*; do
	n=${d##*/}
	"$OPR" --session-dir="$W/k" "session:$n" -l image:vmlinux > "rep.$n" 2> "rep.$n.err"
	syms=$(awk '$1 ~ /^[0-9]+$/ && $NF != "(no" && NF >= 3 { n++ } END { print n + 0 }' "rep.$n")
	if [ "$syms" -lt 1 ] || grep -q "no symbols" "rep.$n"; then
		echo "FAIL: $n: no kernel function named"; cat "rep.$n" "rep.$n.err"; fail=1
	fi
done
echo "kernel symbols named in all $nrot rotated sessions, e.g.: $(awk '$1 ~ /^[0-9]+$/ { print $NF; exit }' "rep.$n")"
# oparchive copies what the report needs
first=$(ls -d "$K"/rotate-* | head -1)
first=${first##*/}
"$OPA" --session-dir="$W/k" -o "$W/arc" "session:$first" image:vmlinux > arc.out 2>&1 ||
	{ echo "FAIL: oparchive"; cat arc.out; fail=1; }
ak=$(find "$W/arc" -path "*stats/kallsyms" -type f | head -1)
[ -n "$ak" ] && cmp -s "$ak" "$K/$first/stats/kallsyms" || { echo "FAIL: the archive lacks the kallsyms snapshot"; fail=1; }
"$OPR" -l "archive:$W/arc" "session:$first" image:vmlinux > arc.rep 2> arc.err || { echo "FAIL: opreport archive:"; cat arc.err; fail=1; }
cmp -s arc.rep "rep.$first" || { echo "FAIL: the archive's report differs from the session's"; diff arc.rep "rep.$first" | head; fail=1; }
exit $fail
