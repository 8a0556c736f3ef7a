#!/bin/sh
# fleet_rotate.sh - the daemon at fleet defaults (conf/fleet.conf:
# system-wide, 99 Hz, call graphs, cgroup labels, a session every 60 s, the
# newest rotate_keep kept) for FLEET_SECONDS (default 90 in make check;
# the issue's 10-minute run: FLEET_SECONDS=600). Every 5 s the disk use of
# the whole session directory is measured; it must stay below the bound
# README.md states: (rotate_keep + 1) sessions of at most
# FLEET_SESSION_MB (64) each, plus one kallsyms copy per distinct kernel
# and the log. At the end: at most rotate_keep rotated sessions, all of
# them and current/ sharing one kallsyms copy, each with its cgroup index,
# and opreport reads the last one. FLEET_ROTATE (default: fleet.conf's
# 60 s) shortens the rotation to see pruning in a short run.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPR=$B/tools/opreport/opreport
CONF=$S/conf/fleet.conf
W=$B/tests/integration/fleet_rotate.work
T=${FLEET_SECONDS:-90}
SESSION_MB=${FLEET_SESSION_MB:-64}
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
. "$S/tests/integration/fleet_util.sh"
fail=0

keep=$(sed -n 's/^rotate_keep = \([0-9]*\);.*/\1/p' "$CONF")
[ -n "$keep" ] || { echo "FAIL: no rotate_keep in $CONF"; exit 1; }
rot=
[ -n "${FLEET_ROTATE:-}" ] && rot="--rotate=$FLEET_ROTATE"
"$OPD" --config="$CONF" --session-dir="$W/s" $rot > out 2> err &
dpid=$!
fleet_wait_started $dpid "$W/s" err
echo "fleet defaults for $T s: rotate_keep $keep, at most $SESSION_MB MB a session"
max=0 el=0 t0=$(date +%s) said=0
while [ $el -lt "$T" ]; do
	sleep 5
	el=$(($(date +%s) - t0))
	kill -0 $dpid 2> /dev/null || { echo "FAIL: oprofiled died after $el s"; cat err; exit 1; }
	kb=$(du -sk "$W/s" 2> /dev/null | cut -f1)
	[ "$kb" -gt "$max" ] && max=$kb
	if [ $((el / 60)) -gt $said ]; then
		said=$((el / 60))
		echo "  $el s: $kb KiB, $(ls -d "$W/s/samples"/rotate-* 2> /dev/null | wc -l) rotated sessions"
	fi
done
set -- $(cut -d' ' -f14,15 /proc/$dpid/stat)
cpu_ticks=$(($1 + $2)) el=$(($(date +%s) - t0))
rss=$(awk '/^VmRSS/ { print $2 }' /proc/$dpid/status)
kill -TERM $dpid
wait $dpid || { echo "FAIL: oprofiled exited non-zero"; cat err; fail=1; }
kb=$(du -sk "$W/s" | cut -f1)
[ "$kb" -gt "$max" ] && max=$kb
K=$W/s/samples
# the kallsyms copies (one per distinct kernel) and the log
ks=$(cat "$K"/.kallsyms/* 2> /dev/null | wc -c)
bound=$(((keep + 1) * SESSION_MB * 1024 + ks / 1024 + 1024))
echo "bound: $((keep + 1)) x $SESSION_MB MB + kallsyms $((ks / 1024)) KiB + 1 MB (log) = $bound KiB"
nrot=$(ls -d "$K"/rotate-* 2> /dev/null | wc -l)
echo "largest disk use $max KiB (bound $bound KiB), $nrot rotated sessions in $el s, daemon CPU $cpu_ticks ticks ($(awk -v t=$cpu_ticks -v hz="$(getconf CLK_TCK)" -v s=$el 'BEGIN { printf "%.2f", t / hz / s * 100 }') % of a CPU, start-up included), RSS $rss KiB"
for d in "$K"/rotate-*; do
	[ -d "$d" ] && echo "  ${d##*/}: $(du -sk "$d" | cut -f1) KiB apparent with its kallsyms link"
done | tail -3
[ "$max" -le "$bound" ] || { echo "FAIL: disk use $max KiB above the bound $bound KiB"; fail=1; }
[ "$nrot" -le "$keep" ] || { echo "FAIL: $nrot rotated sessions kept, rotate_keep is $keep"; fail=1; }
[ "$nrot" -ge $((T / ${FLEET_ROTATE:-60} - 1)) ] || { echo "FAIL: only $nrot rotations in $T s"; fail=1; }
inodes=$(ls -i "$K"/*/stats/kallsyms | awk '{ print $1 }' | sort -u | wc -l)
copies=$(ls "$K/.kallsyms" | wc -l)
echo "kallsyms: $inodes inode(s) for $(ls "$K"/*/stats/kallsyms | wc -l) sessions, $copies stored"
[ "$inodes" -eq 1 ] && [ "$copies" -eq 1 ] || { echo "FAIL: kallsyms stored more than once"; fail=1; }
for d in "$K"/rotate-* "$K/current"; do
	[ -d "$d" ] || continue
	[ -s "$d/stats/cgroups" ] || { echo "FAIL: ${d##*/} has no cgroup index"; fail=1; }
done
last=$(ls -d "$K"/rotate-* 2> /dev/null | tail -1)
last=${last:-$K/current}
"$OPR" --session-dir="$W/s" "session:${last##*/}" --merge=tid,tgid > rep 2> rep.err ||
	{ echo "FAIL: opreport session:${last##*/}"; cat rep.err; fail=1; }
exit $fail
