#!/bin/sh
# cgroup.sh - cgroup labels (issue 20): two workloads in cgroups of their
# own, made by the test under the cgroup v2 (else the v1 name=systemd)
# hierarchy: A starts before the daemon (its record is synthesized from
# /proc), B is started while it samples system-wide (its exec record).
# The cgroup plugin's index stats/cgroups names each process's cgroup;
# opreport cgroup:GLOB reports each workload under its own cgroup and not
# under the other's; opexport's pprof carries each process's cgroup as a
# "cgroup" label on its samples (read back with the upstream pprof -tags); a rotation carries A (still alive) into the next
# session's index; cgroup: without the plugin or without --separate=thread
# says what is missing. The cgroups are removed at the end.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
OPR=$B/tools/opreport/opreport
OPC=$B/tools/opcontrol
OPX=$B/tools/opexport
HOT=$B/tests/integration/hot
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/cgroup.work
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
. "$S/tests/integration/net_util.sh" # net_pprof: the upstream pprof
fail=0

fleet_make_cgroups optest
cleanup() {
	[ -n "${apid:-}" ] && kill "$apid" 2> /dev/null && wait "$apid" 2> /dev/null
	rmdir "$CA" "$CB" 2> /dev/null
}
trap cleanup EXIT

# A: in its cgroup before the daemon starts
sh -c "echo \$\$ > $CA/cgroup.procs && exec $HOT 9000" &
apid=$!
sleep 0.3
grep -q "optest-a.$$" /proc/$apid/cgroup || { echo "FAIL: A is not in $CA"; cat /proc/$apid/cgroup; exit 1; }

"$OPD" --session-dir="$W/s" --system-wide --separate=lib,kernel,thread --events=TIMER:199Hz \
	--ext-feature=cgroup > out 2> err &
dpid=$!
fleet_wait_started $dpid "$W/s" err
# B: exec'd in its cgroup while the daemon runs
sh -c "echo \$\$ > $CB/cgroup.procs && exec $HOT 1500" &
bpid=$!
wait $bpid
"$OPC" --session-dir="$W/s" --dump > dump.out 2>&1 || { echo "FAIL: opcontrol --dump"; cat dump.out; fail=1; }
cp "$W/s/samples/current/stats/cgroups" first.idx 2> /dev/null
"$OPC" --session-dir="$W/s" --save=first > save.out 2>&1 || { echo "FAIL: opcontrol --save"; cat save.out; fail=1; }
sleep 1
kill -TERM $dpid
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }
kill "$apid" 2> /dev/null; wait "$apid" 2> /dev/null; a=$apid; apid=

IDX=$W/s/samples/first/stats/cgroups
[ -f "$IDX" ] || { echo "FAIL: no stats/cgroups in the saved session"; ls "$W/s/samples/first/stats"; exit 1; }
head -1 "$IDX" | grep -q "^# oprofile-ng cgroups 1:" || { echo "FAIL: no header line"; fail=1; }
echo "index: $(wc -l < "$IDX") lines"
grep " $PA " "$IDX" | head -2
grep " $PB " "$IDX" | head -2
awk -v p=$a -v c=$PA '$1 == p && $3 == c { f = 1 } END { exit !f }' "$IDX" ||
	{ echo "FAIL: A (pid $a, synthesized) not indexed in $PA"; fail=1; }
awk -v p=$bpid -v c=$PB '$1 == p && $3 == c { f = 1 } END { exit !f }' "$IDX" ||
	{ echo "FAIL: B (pid $bpid, exec) not indexed in $PB"; fail=1; }
# every line has five fields and a start time
awk 'NR > 1 && (NF != 5 || $2 !~ /^[0-9]+$/ || $3 !~ /^\//) { bad++ } END { exit bad > 0 }' "$IDX" ||
	{ echo "FAIL: malformed index lines"; fail=1; }

# opreport cgroup: each workload under its own cgroup only
"$OPR" --session-dir="$W/s" session:first "cgroup:$PA" > ra 2> ra.err || { echo "FAIL: opreport cgroup:$PA"; cat ra.err; fail=1; }
"$OPR" --session-dir="$W/s" session:first "cgroup:/optest-b.$$*" > rb 2> rb.err || { echo "FAIL: opreport cgroup:/optest-b.$$*"; cat rb.err; fail=1; }
head -12 ra
# the hot binary is the top image of both, and of nothing else here
sa=$(awk '$3 == "hot" { print $1; exit }' ra)
sb=$(awk '$3 == "hot" { print $1; exit }' rb)
echo "hot samples: cgroup A $sa, cgroup B $sb"
[ "${sa:-0}" -ge 100 ] || { echo "FAIL: A's report has ${sa:-no} samples of hot"; fail=1; }
[ "${sb:-0}" -ge 100 ] || { echo "FAIL: B's report has ${sb:-no} samples of hot"; fail=1; }
others=$(awk 'NR > 4 && $3 != "hot" && $3 != "vmlinux" && $1 ~ /^[0-9]+$/ { s += $1 } END { print s + 0 }' ra)
[ $((others * 10)) -le "${sa:-0}" ] || { echo "FAIL: cgroup A's report holds $others samples of other images"; cat ra; fail=1; }
# per process: A's and B's tgid only
"$OPR" --session-dir="$W/s" session:first "cgroup:$PA" --merge=tid -m cpu > /dev/null 2>&1
"$OPR" --session-dir="$W/s" session:first "cgroup:$PA" "tgid:$bpid" > rab 2>&1 &&
	{ echo "FAIL: cgroup A and B's tgid selected something"; cat rab; fail=1; }
"$OPR" --session-dir="$W/s" session:first cgroup:/no-such-cgroup > rn 2>&1 &&
	{ echo "FAIL: an unknown cgroup selected something"; fail=1; }

# the pprof export: every sample of A's and B's process carries its
# process's cgroup as a "cgroup" label, which the upstream pprof reads
if net_pprof > gobuild.log 2>&1; then
	"$OPX" --session-dir="$W/s" session:first --format=pprof -o first.pb.gz 2> x.err ||
		{ echo "FAIL: opexport --format=pprof"; cat x.err; fail=1; }
	for w in "$a $PA" "$bpid $PB"; do
		set -- $w
		# the samples of that process: one cgroup tag, its own, on all of them
		HOME=$W "$PPROF" -tags -sample_index=samples -tagfocus="pid=^$1\$" first.pb.gz > tags.$1 2> tags.$1.err ||
			{ echo "FAIL: pprof -tags -tagfocus=pid=$1"; cat tags.$1.err; fail=1; }
		awk -v c="$2" '
			/^ *[a-z_]+: Total/ { key = $1; tot[key] = $3 }
			key == "cgroup:" && $NF != "" && $1 ~ /^[0-9]/ { n++; if ($NF == c) own = $1 }
			END { exit !(tot["pid:"] >= 100 && n == 1 && own == tot["cgroup:"] && own == tot["pid:"]) }
		' tags.$1 || { echo "FAIL: pid $1's samples do not all carry cgroup $2"; cat tags.$1; fail=1; }
	done
	sed -n '/cgroup: Total/,/^ *$/p' tags.$a
	# no sample of another process carries A's cgroup
	HOME=$W "$PPROF" -tags -sample_index=samples -tagfocus="cgroup=^$PA\$" first.pb.gz > tags.ca 2> tags.ca.err
	awk '/^ *pid: Total/ { k = 1; next } /^ *$/ { k = 0 } k && $1 ~ /^[0-9]/ { print $NF }' tags.ca > ca.pids
	[ "$(sort -u ca.pids)" = "$a" ] || { echo "FAIL: cgroup $PA is on samples of pids $(tr '\n' ' ' < ca.pids), not only $a"; cat tags.ca; fail=1; }
else
	echo "FAIL: building the upstream pprof"; cat gobuild.log; fail=1
fi

# the rotation (the save) carried the live A into the new current's index
CUR=$W/s/samples/current/stats/cgroups
awk -v p=$a -v c=$PA '$1 == p && $3 == c { f = 1 } END { exit !f }' "$CUR" ||
	{ echo "FAIL: A not carried into samples/current/stats/cgroups after the save"; fail=1; }
grep -q "lines_carried" "$W/s/samples/oprofiled.log" || { echo "FAIL: no cgroup statistics in the log"; fail=1; }

# without --separate=thread, cgroup: says why it selects nothing
"$OPD" --session-dir="$W/s2" --events=TIMER:199Hz --ext-feature=cgroup -- "$HOT" 300 > o2 2> e2 ||
	{ echo "FAIL: oprofiled (no thread split)"; cat e2; fail=1; }
"$OPR" --session-dir="$W/s2" "cgroup:/*" > r2 2>&1 && { echo "FAIL: cgroup: on files without processes"; fail=1; }
grep -q "separate=thread" r2 || { echo "FAIL: no hint at --separate=thread"; cat r2; fail=1; }
# without the plugin, cgroup: says so
"$OPD" --session-dir="$W/s3" --events=TIMER:199Hz --separate=thread -- "$HOT" 300 > o3 2> e3 ||
	{ echo "FAIL: oprofiled (no plugin)"; cat e3; fail=1; }
"$OPR" --session-dir="$W/s3" "cgroup:/*" > r3 2>&1 && { echo "FAIL: cgroup: without an index"; fail=1; }
grep -q "ext-feature=cgroup" r3 || { echo "FAIL: no hint at the cgroup plugin"; cat r3; fail=1; }
exit $fail
