#!/bin/sh
# cgroup_stacks.sh - whole stacks of a --separate=cgroup session carry their
# cgroup (issue 19/20; the stack table's version 4 split level), live: two
# workloads in two cgroups made by the test, 2:1 in CPU time (cg_tree in A,
# hot in B), under one system-wide call-graph daemon with the cgroup plugin
# and --separate=cgroup. The stack table is version 4; the pprof export's
# stack samples (more than one location) of both cgroups carry a cgroup
# label, and the upstream pprof's -tags totals per cgroup equal opreport
# cgroup:A / cgroup:B (the flat split files); opreport -c and
# --callgraph-output=folded with cgroup:A show only A's stacks (cg_tree's,
# no hot frame; folded total = A's flat total) and with cgroup:B only B's.
# The cgroups are removed at the end.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
OPR=$B/tools/opreport/opreport
OPX=$B/tools/opexport
HOT=$B/tests/integration/hot
CG=$B/tests/integration/cg_tree
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/cgroup_stacks.work
if [ ! -x "$OPX" ]; then
	echo "SKIP: $OPX is not built (configure found no libbfd, protobuf-c or zlib)"
	exit 77
fi
command -v protoc > /dev/null 2>&1 || { echo "FAIL: protoc missing: run tools/install-deps.sh"; exit 1; }
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
. "$S/tests/integration/net_util.sh" # net_pprof: the upstream pprof; $PROTO
net_need_system_wide
fail=0

fleet_make_cgroups opstk
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2> /dev/null && wait "$dpid" 2> /dev/null
	rmdir "$CA" "$CB" 2> /dev/null
}
trap cleanup EXIT

"$OPD" --session-dir="$W/s" --system-wide --separate=cgroup --events=TIMER:499Hz \
	--ext-feature=cgroup --ext-feature=callgraph > out 2> err &
dpid=$!
fleet_wait_started $dpid "$W/s" err
# A and B exec'd in their cgroups while the daemon samples, 2:1 in CPU time:
# hot burns CPU time, cg_tree runs rounds, as many as take 2.4 s of CPU here
rounds=$(python3 -c '
import resource, subprocess, sys
subprocess.run([sys.argv[1], "0", "600"], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(int(600 * 2.4 / max(r.ru_utime + r.ru_stime, 0.001)))' "$CG") || { echo "FAIL: timing cg_tree"; exit 1; }
echo "cg_tree: $rounds rounds for 2.4 s of CPU"
sh -c "echo \$\$ > $CA/cgroup.procs && exec $CG 0 $rounds" > /dev/null &
apid=$!
sh -c "echo \$\$ > $CB/cgroup.procs && exec $HOT 1200" &
bpid=$!
wait $apid $bpid
sleep 0.3
kill -TERM $dpid
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }
dpid=

# the stack table: version 4 (a split level), stacks stored with their key
tab=$W/s/samples/current/callgraph/stacks
ver=$(od -An -tu4 -j8 -N4 "$tab" 2> /dev/null | tr -d ' ')
echo "stack table version ${ver:-none}"
[ "$ver" = 4 ] || { echo "FAIL: the stack table of a --separate=cgroup session is not version 4"; fail=1; }
# the plugin's count of stacks stored with a key: at least A's and B's samples
nsplit=$(awk '$1 == "stacks_split:" { print $2; exit }' "$W/s/samples/oprofiled.log")
echo "stacks_split: ${nsplit:-none}"

# the flat split files per cgroup, as opreport counts them (top rows only)
rsum() { awk '/^\t/ { next } $1 ~ /^[0-9]+$/ && NF >= 3 { s += $1 } END { print s + 0 }' "$1"; }
for c in A B; do
	eval p=\$P$c
	"$OPR" --session-dir="$W/s" "cgroup:$p" > r$c 2> r$c.err || { echo "FAIL: opreport cgroup:$p"; cat r$c.err; fail=1; }
	eval sum$c=$(rsum r$c)
done
echo "opreport: cgroup A $sumA samples, cgroup B $sumB"
[ "$sumA" -ge 300 ] && [ "$sumB" -ge 150 ] || { echo "FAIL: too few samples in the split files"; fail=1; }
awk -v a="$sumA" -v b="$sumB" 'BEGIN { r = b ? a / b : 0; printf "ratio A:B = %.2f\n", r; exit !(r > 1.5 && r < 2.6) }' ||
	{ echo "FAIL: the cgroups' samples are not 2:1"; fail=1; }
[ "${nsplit:-0}" -ge $((sumA + sumB)) ] || { echo "FAIL: stacks_split ${nsplit:-none} < the two cgroups' $((sumA + sumB)) samples"; fail=1; }

# the pprof export: stack samples labelled with their cgroup, totals per cgroup exact
if net_pprof > gobuild.log 2>&1; then
	"$OPX" --session-dir="$W/s" --format=pprof -o s.pb.gz 2> x.err || { echo "FAIL: opexport"; cat x.err; fail=1; }
	gzip -dc s.pb.gz | protoc --decode=perftools.profiles.Profile -I"$(dirname "$PROTO")" "$PROTO" \
		> s.txt 2> s.perr || { echo "FAIL: protoc --decode"; head -5 s.perr; fail=1; }
	# samples with more than one location (whole stacks) per cgroup label value
	python3 - s.txt "$PA" "$PB" << 'EOF' > stk.txt || { echo "FAIL: stack samples of A or B without their cgroup label"; fail=1; }
import re, sys
t = open(sys.argv[1]).read()
strs = [eval(s) for s in re.findall(r'^string_table: (".*")$', t, re.M)]
per = {}
for s in re.findall(r'^sample \{\n(.*?)^\}', t, re.M | re.S):
    if len(re.findall(r'^  location_id:', s, re.M)) < 2:
        continue
    lab = dict((strs[int(k)], strs[int(v)]) for k, v in
               re.findall(r'^  label \{\n    key: (\d+)\n    str: (\d+)', s, re.M))
    n = int(re.findall(r'^  value: (\d+)', s, re.M)[0])
    c = lab.get('cgroup', '(none)')
    per[c] = per.get(c, 0) + n
for c in sorted(per):
    print('stack samples cgroup=%s: %d' % (c, per[c]))
# hot (B) has no frame pointers: its stacks are mostly one frame, like flat samples
sys.exit(0 if per.get(sys.argv[2], 0) >= 100 else 1)
EOF
	grep -e "$PA" -e "$PB" -e "(none)" stk.txt
	HOME=$W "$PPROF" -tags -sample_index=samples s.pb.gz > tags 2> tags.err || { echo "FAIL: pprof -tags"; cat tags.err; fail=1; }
	for c in A B; do
		eval p=\$P$c sum=\$sum$c
		got=$(awk -v c="$p" '/^ *[a-z_]+: Total/ { key = $1 } key == "cgroup:" && $NF == c { print $1 + 0 }' tags)
		echo "pprof -tags cgroup=$p: ${got:-no} samples, opreport cgroup:$p $sum"
		[ "${got:-0}" = "$sum" ] || { echo "FAIL: pprof cgroup=$p labels ${got:-no} samples, opreport cgroup:$p $sum"; fail=1; }
	done
	# an export of cgroup:A holds only A's samples, stacks included
	"$OPX" --session-dir="$W/s" --format=pprof -o a.pb.gz "cgroup:$PA" 2> xa.err || { echo "FAIL: opexport cgroup:A"; cat xa.err; fail=1; }
	HOME=$W "$PPROF" -tags -sample_index=samples a.pb.gz > atags 2> atags.err || { echo "FAIL: pprof -tags (A)"; cat atags.err; fail=1; }
	got=$(awk '/^ *[a-z_]+: Total/ { key = $1; next } key == "cgroup:" && NF >= 3 { print $NF, $1 + 0 }' atags | tr '\n' ' ')
	echo "opexport cgroup:A, pprof -tags cgroup: $got"
	[ "$got" = "$PA $sumA " ] || { echo "FAIL: the export of cgroup:A is not exactly A's $sumA samples"; fail=1; }
else
	echo "FAIL: building the upstream pprof"; cat gobuild.log; fail=1
fi

# opreport -c / folded with cgroup: select the stacks of the cgroup only
for c in A B; do
	eval p=\$P$c sum=\$sum$c
	"$OPR" --session-dir="$W/s" --callgraph-output=folded "cgroup:$p" > f$c 2> f$c.err ||
		{ echo "FAIL: opreport --callgraph-output=folded cgroup:$p"; cat f$c.err; fail=1; }
	"$OPR" --session-dir="$W/s" -c "cgroup:$p" > c$c 2> c$c.err ||
		{ echo "FAIL: opreport -c cgroup:$p"; cat c$c.err; fail=1; }
	ftot=$(awk '{ s += $NF } END { print s + 0 }' f$c)
	nost=$(awk '/\[no stack\]/ { s += $NF } END { print s + 0 }' f$c)
	echo "folded cgroup:$p: $ftot samples ($nost [no stack]), $(wc -l < f$c) stacks"
	# A's stacks end in A's flat samples: more stacks (B's) would make the total larger
	[ "$ftot" = "$sum" ] || { echo "FAIL: folded cgroup:$p sums $ftot, its flat files $sum"; fail=1; }
	awk -v s="$sum" -v n="$nost" 'BEGIN { exit !(n * 10 < s) }' ||
		{ echo "FAIL: folded cgroup:$p: $nost of $sum samples have no stack"; fail=1; }
done
grep -q "leaf_b" fA && grep -q "leaf_b" cA || { echo "FAIL: cg_tree's stacks missing under cgroup:A"; fail=1; }
grep -q "work_big" fA || grep -q "work_big" cA && { echo "FAIL: hot (cgroup B) frames under cgroup:A"; grep work_big fA | head -3; fail=1; }
grep -q "work_big" fB && grep -q "work_big" cB || { echo "FAIL: hot's stacks missing under cgroup:B"; fail=1; }
grep -q "leaf_b" fB || grep -q "leaf_b" cB && { echo "FAIL: cg_tree (cgroup A) frames under cgroup:B"; grep leaf_b fB | head -3; fail=1; }
exit $fail
