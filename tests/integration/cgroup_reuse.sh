#!/bin/sh
# cgroup_reuse.sh - a reused pid never gets a cgroup label that lies
# (issue 20), live: one pid N is given to two processes in turn, the
# first in cgroup A (2 parts of CPU), the second in cgroup B (1 part),
# by setting /proc/sys/kernel/ns_last_pid (reuse_pid.py; the pid counter
# is put back after each fork). Two system-wide daemons with the cgroup
# plugin watch them at once:
#   s1 --separate=thread: one set of files for tgid N holds both
#      processes; the index has two lines for N (two start times, two
#      cgroups), so N gets no cgroup label in the pprof export and
#      `opreport cgroup:` leaves it out, both warning "pids were reused in
#      different cgroups; use --separate=cgroup";
#   s2 --separate=cgroup,thread: N's files are split by cgroup; opreport
#      cgroup:A / cgroup:B and the export's labels of pid N count exactly
#      what each cgroup's files hold, 2:1.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
OPR=$B/tools/opreport/opreport
OPX=$B/tools/opexport
HOT=$B/tests/integration/hot
DUMP=$B/tests/integration/sp_dump
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/cgroup_reuse.work
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
. "$S/tests/integration/net_util.sh" # net_pprof: the upstream pprof
fail=0

[ "$(id -u)" = 0 ] || { echo "SKIP: making cgroups and reusing a pid need root"; exit 77; }
[ -w /proc/sys/kernel/ns_last_pid ] || { echo "SKIP: no writable /proc/sys/kernel/ns_last_pid"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: python3 is needed to fork with a chosen pid"; exit 77; }
fleet_make_cgroups opreuse
cleanup() {
	for p in ${d1:-} ${d2:-}; do kill "$p" 2> /dev/null && wait "$p" 2> /dev/null; done
	rmdir "$CA" "$CB" 2> /dev/null
}
trap cleanup EXIT
REUSE="python3 $S/tests/integration/reuse_pid.py"

"$OPD" --session-dir="$W/s1" --system-wide --separate=thread --events=TIMER:499Hz \
	--ext-feature=cgroup > o1 2> e1 &
d1=$!
"$OPD" --session-dir="$W/s2" --system-wide --separate=cgroup,thread --events=TIMER:499Hz \
	--ext-feature=cgroup > o2 2> e2 &
d2=$!
fleet_wait_started $d1 "$W/s1" e1
fleet_wait_started $d2 "$W/s2" e2
# the first process: whatever pid it gets, in A; then the same pid, in B
timeout 60 $REUSE --pid-file=pid "$CA" "$HOT" 1600 > r1.out 2> r1.err || { echo "FAIL: first process"; cat r1.err; fail=1; }
N=$(cat pid 2> /dev/null)
[ -n "$N" ] || { echo "FAIL: no pid from the first process"; exit 1; }
sleep 0.3
timeout 60 $REUSE --pid=$N --pid-file=pid2 "$CB" "$HOT" 800 > r2.out 2> r2.err || { echo "FAIL: second process"; cat r2.err; fail=1; }
[ "$(cat pid2 2> /dev/null)" = "$N" ] || { echo "SKIP: pid $N could not be reused ($(cat r2.err))"; exit 77; }
echo "pid $N: first in $PA, then in $PB"
sleep 0.3
kill -TERM $d1 $d2
wait $d1 || { echo "FAIL: oprofiled (s1) exited non-zero"; cat e1; fail=1; }
wait $d2 || { echo "FAIL: oprofiled (s2) exited non-zero"; cat e2; fail=1; }
d1= d2=

# both sessions' indexes name N twice: A then B, at two start times
for s in s1 s2; do
	awk -v n=$N '$1 == n { print $2, $3 }' "$W/$s/samples/current/stats/cgroups" | sort -u > idx.$s
	awk -v a=$PA -v b=$PB '$2 == a { ta = $1 } $2 == b { tb = $1 } END { exit !(ta && tb && tb > ta) }' idx.$s ||
		{ echo "FAIL: $s's index does not hold pid $N in $PA, then in $PB"; cat idx.$s; fail=1; }
done

hotre="{root}$HOT/{dep}/" # the application hot, as opreport's "hot" row
# s1: no split; N's hot samples are both processes' together
"$DUMP" "$W/s1/samples/current" > f1
n1=$(awk -v r="$hotre" -v t=".$N.$N.all" '$1 ~ /^[0-9]+$/ && index($3, r) && substr($3, length($3) - length(t) + 1) == t { s += $1 } END { print s + 0 }' f1)
echo "s1 (--separate=thread): $n1 hot samples of tgid $N"
[ "$n1" -ge 300 ] || { echo "FAIL: too few samples of tgid $N in s1"; fail=1; }
"$OPR" --session-dir="$W/s1" "cgroup:$PA" "tgid:$N" > q1 2> q1.err &&
	{ echo "FAIL: cgroup:$PA selected the reused tgid $N in s1"; cat q1; fail=1; }
# B is the index's last line for N: what the old rule (last line wins) labelled all of N's samples
"$OPR" --session-dir="$W/s1" "cgroup:$PB" "tgid:$N" > q1b 2>&1 &&
	{ echo "FAIL: cgroup:$PB selected the reused tgid $N in s1 (the first process was in $PA)"; cat q1b; fail=1; }
cat q1.err
grep -q "pids were reused in different cgroups" q1.err && grep -q -- "--separate=cgroup" q1.err ||
	{ echo "FAIL: no warning about the reused pid from opreport"; fail=1; }

# s2: split by cgroup; each cgroup's files of tgid N
"$DUMP" "$W/s2/samples/current" > f2
cnt() { # PREFIX: samples of tgid N below PREFIX in s2 (all images / hot only with a 2nd arg)
	awk -v p="$1" -v r="${2:-}" -v t=".$N.$N.all" '$1 ~ /^[0-9]+$/ && index($3, p) == 1 && (r == "" || index($3, r)) && substr($3, length($3) - length(t) + 1) == t { s += $1 } END { print s + 0 }' f2
}
allA=$(cnt "{cgroup}$PA/") allB=$(cnt "{cgroup}$PB/")
hotA=$(cnt "{cgroup}$PA/" "$hotre") hotB=$(cnt "{cgroup}$PB/" "$hotre")
echo "s2 (--separate=cgroup,thread): tgid $N: $hotA hot samples in $PA's files, $hotB in $PB's"
awk -v a="$hotA" -v b="$hotB" 'BEGIN { r = b ? a / b : 0; printf "ratio A:B = %.2f\n", r; exit !(a >= 200 && r > 1.6 && r < 2.5) }' ||
	{ echo "FAIL: tgid $N's split files are not 2:1"; fail=1; }
rhot() { awk '$1 ~ /^[0-9]+$/ && $3 == "hot" { print $1; exit }' "$1"; }
"$OPR" --session-dir="$W/s2" "cgroup:$PA" "tgid:$N" > qa 2> qa.err || { echo "FAIL: opreport s2 cgroup:$PA"; cat qa.err; fail=1; }
"$OPR" --session-dir="$W/s2" "cgroup:$PB" "tgid:$N" > qb 2> qb.err || { echo "FAIL: opreport s2 cgroup:$PB"; cat qb.err; fail=1; }
rsum() { awk '/^\t/ { next } $1 ~ /^[0-9]+$/ && NF >= 3 { s += $1 } END { print s + 0 }' "$1"; } # top rows only
echo "opreport cgroup:$PA tgid:$N: $(rsum qa) samples, $(rhot qa) of hot; cgroup:$PB: $(rsum qb), $(rhot qb)"
[ "$(rhot qa)" = "$hotA" ] && [ "$(rhot qb)" = "$hotB" ] && [ "$(rsum qa)" = "$allA" ] && [ "$(rsum qb)" = "$allB" ] ||
	{ echo "FAIL: opreport cgroup: of tgid $N: $(rsum qa)/$(rsum qb) ($(rhot qa)/$(rhot qb) hot), files $allA/$allB ($hotA/$hotB)"; fail=1; }

if net_pprof > gobuild.log 2>&1; then
	# s1: pid N's samples carry no cgroup label at all (which one would be a lie)
	"$OPX" --session-dir="$W/s1" --format=pprof -o s1.pb.gz 2> x1.err || { echo "FAIL: opexport s1"; cat x1.err; fail=1; }
	grep "pids were reused" x1.err || { echo "FAIL: opexport does not warn about the reused pid"; cat x1.err; fail=1; }
	HOME=$W "$PPROF" -tags -sample_index=samples -tagfocus="pid=^$N\$" s1.pb.gz > t1 2> t1.err
	grep -q "pid: Total" t1 || { echo "FAIL: no samples of pid $N in s1's export"; cat t1 t1.err; fail=1; }
	grep -q "cgroup:" t1 && { echo "FAIL: pid $N's samples carry a cgroup label in s1"; cat t1; fail=1; }
	# s2: exact labels from the split
	"$OPX" --session-dir="$W/s2" --format=pprof -o s2.pb.gz 2> x2.err || { echo "FAIL: opexport s2"; cat x2.err; fail=1; }
	HOME=$W "$PPROF" -tags -sample_index=samples -tagfocus="pid=^$N\$" s2.pb.gz > t2 2> t2.err
	sed -n '/cgroup: Total/,/^ *$/p' t2
	la=$(awk -v c="$PA" '/^ *[a-z_]+: Total/ { key = $1 } key == "cgroup:" && $NF == c { print $1 + 0 }' t2)
	lb=$(awk -v c="$PB" '/^ *[a-z_]+: Total/ { key = $1 } key == "cgroup:" && $NF == c { print $1 + 0 }' t2)
	[ "${la:-0}" = "$allA" ] && [ "${lb:-0}" = "$allB" ] ||
		{ echo "FAIL: pid $N's labels $PA=${la:-none} $PB=${lb:-none}, files $allA/$allB"; cat t2; fail=1; }
else
	echo "FAIL: building the upstream pprof"; cat gobuild.log; fail=1
fi
exit $fail
