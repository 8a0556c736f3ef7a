#!/bin/sh
# cgroup_split.sh - --separate=cgroup (issue 20), live: two workloads in
# two cgroups made by the test (2:1 in CPU time) under one system-wide
# daemon with the cgroup plugin and --separate=cgroup only (no thread
# split). Each cgroup gets its own set of sample files below
# {cgroup}/<path>/ (read with sp_dump, our odb reader, not opreport);
# `opreport cgroup:A` and `cgroup:B` count exactly what those files hold;
# opreport shows a column per cgroup and --merge=cgroup folds them; the
# pprof export's cgroup labels (upstream pprof -tags) count the same; the
# config key separate = "cgroup" works; --separate=cgroup without the
# plugin is refused naming it. The cgroups are removed at the end.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
OPR=$B/tools/opreport/opreport
OPX=$B/tools/opexport
HOT=$B/tests/integration/hot
DUMP=$B/tests/integration/sp_dump
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/cgroup_split.work
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
. "$S/tests/integration/net_util.sh" # net_pprof: the upstream pprof
fail=0

fleet_make_cgroups opsplit
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	rmdir "$CA" "$CB" 2> /dev/null
}
trap cleanup EXIT

"$OPD" --session-dir="$W/s" --system-wide --separate=cgroup --events=TIMER:499Hz \
	--ext-feature=cgroup > out 2> err &
dpid=$!
fleet_wait_started $dpid "$W/s" err
# A and B exec'd in their cgroups while the daemon samples, 2:1 in CPU time
sh -c "echo \$\$ > $CA/cgroup.procs && exec $HOT 2400" &
apid=$!
sh -c "echo \$\$ > $CB/cgroup.procs && exec $HOT 1200" &
bpid=$!
wait $apid $bpid
sleep 0.3
kill -TERM $dpid
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }
dpid=

# the sample files, as our odb reader counts them: "<count> <keys> <relpath>"
# (the whole session's may include other tests' processes: only the two
# cgroups' files must all be sound)
"$DUMP" "$W/s/samples/current" > files
for c in a b; do
	"$DUMP" "$W/s/samples/current/{cgroup}/opsplit-$c.$$" > files.$c ||
		{ echo "FAIL: sp_dump found bad files in cgroup $c's"; grep BAD files.$c; fail=1; }
done
tail -1 files
hotre="{root}$HOT/{dep}/" # the application hot, as opreport's "hot" row
sum_of() { # PREFIX [PATH-REGEX]: samples of the files below PREFIX (whose path matches)
	awk -v p="$1" -v r="${2:-}" '$1 ~ /^[0-9]+$/ && index($3, p) == 1 && (r == "" || index($3, r)) { s += $1 } END { print s + 0 }' files
}
sumA=$(sum_of "{cgroup}$PA/")
sumB=$(sum_of "{cgroup}$PB/")
hotA=$(sum_of "{cgroup}$PA/" "$hotre")
hotB=$(sum_of "{cgroup}$PB/" "$hotre")
echo "split files: cgroup A $sumA samples ($hotA of hot), cgroup B $sumB ($hotB of hot)"
[ "$hotA" -ge 300 ] && [ "$hotB" -ge 150 ] || { echo "FAIL: too few hot samples in the split files"; fail=1; }
# 2:1 in CPU time
awk -v a="$hotA" -v b="$hotB" 'BEGIN { r = b ? a / b : 0; printf "ratio A:B = %.2f\n", r; exit !(r > 1.6 && r < 2.5) }' ||
	{ echo "FAIL: the split files' hot samples are not 2:1"; fail=1; }
# no thread split in the two cgroups' names (others' paths may hold spaces: not read)
cat files.a files.b | awk '$1 ~ /^[0-9]+$/ && $NF !~ /\.all\.all\.all$/ { bad = 1 } END { exit bad }' ||
	{ echo "FAIL: a file name carries tgid/tid/cpu without --separate=thread/cpu"; cat files.a files.b; fail=1; }

# opreport: cgroup: selects the split exactly, no thread split needed
rsum() { awk '/^\t/ { next } $1 ~ /^[0-9]+$/ && NF >= 3 { s += $1 } END { print s + 0 }' "$1"; } # top rows only
rhot() { awk '$1 ~ /^[0-9]+$/ && $3 == "hot" { print $1; exit }' "$1"; }
for c in A B; do
	eval p=\$P$c sum=\$sum$c hot=\$hot$c
	"$OPR" --session-dir="$W/s" "cgroup:$p" > r$c 2> r$c.err || { echo "FAIL: opreport cgroup:$p"; cat r$c.err; fail=1; }
	echo "opreport cgroup:$p: $(rsum r$c) samples, $(rhot r$c) of hot"
	[ "$(rsum r$c)" = "$sum" ] || { echo "FAIL: opreport cgroup:$p counts $(rsum r$c), its files $sum"; cat r$c; fail=1; }
	[ "$(rhot r$c)" = "$hot" ] || { echo "FAIL: opreport cgroup:$p has $(rhot r$c) of hot, its files $hot"; fail=1; }
done
# a glob selects both, a container ID or unit that is not there nothing
"$OPR" --session-dir="$W/s" "cgroup:/opsplit-*.$$" --merge=cgroup > rab 2>&1 || { echo "FAIL: cgroup: glob"; cat rab; fail=1; }
[ "$(rsum rab)" = $((sumA + sumB)) ] || { echo "FAIL: cgroup:/opsplit-*.$$ counts $(rsum rab), not $((sumA + sumB))"; fail=1; }
"$OPR" --session-dir="$W/s" cgroup:/no-such-cgroup > rn 2>&1 && { echo "FAIL: an unknown cgroup selected something"; fail=1; }
# the listing: a column per cgroup (as per cpu or tid), or one with --merge=cgroup
"$OPR" --session-dir="$W/s" > rall 2> rall.err || { echo "FAIL: opreport of the split session"; cat rall.err; fail=1; }
sed -n 3p rall | cut -c1-100
[ "$(sed -n 3p rall | grep -o 'cgroup:' | wc -l)" -ge 3 ] || { echo "FAIL: no cgroup columns"; head -5 rall; fail=1; }
"$OPR" --session-dir="$W/s" --merge=cgroup > rm 2> rm.err || { echo "FAIL: opreport --merge=cgroup"; cat rm.err; fail=1; }
sed -n 3p rm | grep -q cgroup: && { echo "FAIL: --merge=cgroup still splits"; fail=1; }
[ "$(rhot rm)" -ge $((hotA + hotB)) ] || { echo "FAIL: --merge=cgroup: hot $(rhot rm), split files $((hotA + hotB))"; fail=1; }

# the pprof export: the cgroup label of every sample from the split, counts equal
if net_pprof > gobuild.log 2>&1; then
	"$OPX" --session-dir="$W/s" --format=pprof -o s.pb.gz 2> x.err || { echo "FAIL: opexport"; cat x.err; fail=1; }
	HOME=$W "$PPROF" -tags -sample_index=samples s.pb.gz > tags 2> tags.err || { echo "FAIL: pprof -tags"; cat tags.err; fail=1; }
	sed -n '/cgroup: Total/,/^ *$/p' tags | grep -e "Total" -e opsplit
	for c in A B; do
		eval p=\$P$c sum=\$sum$c
		got=$(awk -v c="$p" '/^ *[a-z_]+: Total/ { key = $1 } key == "cgroup:" && $NF == c { print $1 + 0 }' tags)
		[ "${got:-0}" = "$sum" ] || { echo "FAIL: pprof cgroup=$p labels ${got:-no} samples, its files $sum"; fail=1; }
	done
else
	echo "FAIL: building the upstream pprof"; cat gobuild.log; fail=1
fi

# the config key, in a launch-mode run started inside cgroup A
cat > split.conf << EOF
events = "TIMER:499Hz";
separate = "cgroup";
plugins = ( { name = "cgroup"; } );
EOF
sh -c "echo \$\$ > $CA/cgroup.procs && exec $OPD --session-dir=$W/c --config=$W/split.conf -- $HOT 400" > oc 2> ec ||
	{ echo "FAIL: oprofiled with separate = \"cgroup\" in the config"; cat ec; fail=1; }
"$DUMP" "$W/c/samples/current" > cfiles
n=$(awk -v p="{cgroup}$PA/" -v r="$hotre" 'index($3, p) == 1 && index($3, r) { s += $1 } END { print s + 0 }' cfiles)
echo "config separate = \"cgroup\": $n hot samples in cgroup A's files"
[ "$n" -ge 50 ] || { echo "FAIL: the config key made no split"; cat cfiles; fail=1; }

# --separate=cgroup without the plugin: refused, naming it
"$OPD" --session-dir="$W/n" --separate=cgroup --events=TIMER:499Hz -- "$HOT" 100 > on 2> en &&
	{ echo "FAIL: --separate=cgroup without the cgroup plugin started"; fail=1; }
cat en
grep -q "needs the cgroup plugin" en && grep -q -- "--ext-feature=cgroup" en ||
	{ echo "FAIL: the refusal does not name the cgroup plugin"; fail=1; }
ls "$W/n/samples/current" 2> /dev/null | grep -q . && { echo "FAIL: the refused run wrote samples"; fail=1; }
exit $fail
