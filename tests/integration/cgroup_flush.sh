#!/bin/sh
# cgroup_flush.sh - the cgroup plugin buffers its index lines (issue 20: a
# write() per new process was most of the daemon's system calls on a host
# that starts processes all the time) and nothing is lost: every process
# forked since the last dump is in stats/cgroups after the next
# opcontrol --dump, after a save (in the saved session's index) and after
# the daemon stopped. Short-lived children of this shell (known to the
# daemon since start-up) are started in three batches; each child's line
# carries this shell's cgroup. The plugin's statistics show fewer write()s
# than lines (the buffering is really there).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
W=$B/tests/integration/cgroup_flush.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
fail=0
N=40

[ "$(id -u)" = 0 ] || { echo "SKIP: system-wide profiling (every process's records) needs root"; exit 77; }
"$OPD" --session-dir="$W/s" --system-wide --separate=lib,kernel,cgroup --events=TIMER:99Hz \
	--sync-interval=3600 --ext-feature=cgroup > out 2> err &
dpid=$!
trap 'kill $dpid 2> /dev/null' EXIT
fleet_wait_started $dpid "$W/s" err

# $1: batch name; N children of this shell, each writes its pid and execs
batch() {
	: > "$1.pids"
	i=0
	while [ $i -lt $N ]; do
		sh -c "echo \$\$ >> $1.pids; exec /bin/true"
		i=$((i + 1))
	done
	[ "$(wc -l < "$1.pids")" -eq $N ] || { echo "FAIL: batch $1 started $(wc -l < "$1.pids") processes"; fail=1; }
}
# $1: batch, $2: index file: every pid of the batch has a line in this shell's cgroup
check() {
	[ -f "$2" ] || { echo "FAIL: no index $2"; fail=1; return; }
	cg=$(awk -v p=$$ '$1 == p { print $3; exit }' "$2")
	[ -n "$cg" ] || { echo "FAIL: this shell ($$) is not in $2"; fail=1; return; }
	missing=$(awk -v c="$cg" 'NR == FNR { seen[$1] = ($3 == c); next } !seen[$1] { print $1 }' "$2" "$1.pids")
	if [ -n "$missing" ]; then
		echo "FAIL: batch $1: $(echo $missing | wc -w) of $N processes not in $2 (cgroup $cg): $missing"
		fail=1
	else
		echo "batch $1: all $N processes in $(basename "$(dirname "$(dirname "$2")")")'s index, cgroup $cg"
	fi
}

batch one
"$OPC" --session-dir="$W/s" --dump > dump.out 2>&1 || { echo "FAIL: opcontrol --dump"; cat dump.out; fail=1; }
check one "$W/s/samples/current/stats/cgroups"
# the dump printed the plugin's statistics: lines buffered, fewer write()s
lw=$(awk '/^lines_written:/ { v = $2 } END { print v + 0 }' "$W/s/samples/oprofiled.log")
iw=$(awk '/^index_writes:/ { v = $2 } END { print v + 0 }' "$W/s/samples/oprofiled.log")
echo "after the dump: $lw lines written in $iw write()s"
[ "$lw" -ge $N ] || { echo "FAIL: only $lw index lines written"; fail=1; }
[ "$iw" -ge 1 ] && [ $((iw * 4)) -le "$lw" ] ||
	{ echo "FAIL: $iw write()s for $lw lines: not buffered"; fail=1; }

batch two
"$OPC" --session-dir="$W/s" --save=two > save.out 2>&1 || { echo "FAIL: opcontrol --save"; cat save.out; fail=1; }
check two "$W/s/samples/two/stats/cgroups"

batch three
"$OPC" --session-dir="$W/s" --stop > stop.out 2>&1 || { echo "FAIL: opcontrol --stop"; cat stop.out; fail=1; }
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }
trap - EXIT
check three "$W/s/samples/current/stats/cgroups"
# batch two's processes are gone: not carried into the new session
awk 'NR == FNR { p[$1] = 1; next } $1 in p { n++ } END { exit n > 0 }' two.pids "$W/s/samples/current/stats/cgroups" ||
	{ echo "FAIL: processes that exited before the save were carried into the next session"; fail=1; }
grep -q "write_errors: 0" "$W/s/samples/oprofiled.log" || { echo "FAIL: index write errors"; grep write_errors "$W/s/samples/oprofiled.log"; fail=1; }

[ $fail = 0 ] && rm -rf "$W"
exit $fail
