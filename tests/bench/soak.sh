#!/bin/sh
# soak.sh - long-running oprofiled (run on demand, for hours if you like):
# the daemon profiles the whole system at 1 kHz in daemon mode with timed
# rotation while a churn workload starts many short processes of many
# binaries; every INTERVAL it records the daemon's RSS, open file
# descriptors, open sample files and the session's disk use. At the end it
# compares the second half with the first: RSS, fds and disk use must stay
# flat (bounded by the sample-file LRU and rotate_keep).
#
#   tests/bench/soak.sh [DURATION_S [INTERVAL_S [ROTATE_S [KEEP]]]]
#   (defaults 1800 30 60 3; run from the build directory or set OP_BUILDDIR)
#
# Output: one line per sample (t, rss_kb, fds, open_sample_files, samples,
# rotations, disk_kb), then a verdict. Exit 1 if something grew.
# SPDX-License-Identifier: MIT
set -u
DUR=${1:-1800}
IVL=${2:-30}
ROT=${3:-60}
KEEP=${4:-3}
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
HOT=$B/tests/integration/hot
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
W=${SOAK_DIR:-$B/tests/bench/soak.work}
SD=$W/sess
[ -x "$OPD" ] && [ -x "$OPC" ] || { echo "soak: build oprofiled and opcontrol first (make)"; exit 2; }
rm -rf "$W"
mkdir -p "$W"
cat > "$W/oprofiled.conf" <<EOF
session_dir = "$SD";
events = "TIMER:1000000";
system_wide = true;
daemonize = true;
max_open_files = 64;   # small, so that the LRU evicts all the time
sync_interval = 5;
stats_interval = 300;
rotate_interval = $ROT;
rotate_keep = $KEEP;
EOF
if ! "$OPD" --config="$W/oprofiled.conf" > "$W/start.out" 2>&1; then
	echo "soak: oprofiled did not start:"; cat "$W/start.out"; exit 2
fi
pid=$(cat "$SD/lock")
churn_pid=
stop_all() {
	[ -n "$churn_pid" ] && kill "$churn_pid" 2>/dev/null
	"$OPC" --session-dir="$SD" --stop > /dev/null 2>&1 || kill "$pid" 2>/dev/null
}
trap stop_all EXIT INT TERM

# churn: many short-lived processes of many binaries (new sample-file sets,
# task table entries, mmaps) plus some CPU in one known program
(
	bins=""
	for b in /bin/true /bin/ls /bin/cat /usr/bin/env /usr/bin/sort /usr/bin/sed /usr/bin/awk \
		/usr/bin/head /usr/bin/tail /usr/bin/wc /usr/bin/tr /usr/bin/cut /usr/bin/uniq \
		/usr/bin/md5sum /usr/bin/sha1sum /usr/bin/date /usr/bin/id /bin/grep; do
		[ -x "$b" ] && bins="$bins $b"
	done
	while :; do
		for b in $bins; do
			"$b" --version > /dev/null 2>&1 < /dev/null
			head -c 200000 /dev/urandom | "$b" > /dev/null 2>&1
		done
		"$HOT" 100 > /dev/null 2>&1
	done
) &
churn_pid=$!

rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null; }
fds() { ls "/proc/$pid/fd" 2>/dev/null | wc -l; }
field() { sed -n "s/^$1: \([0-9]*\).*/\1/p" "$W/status"; }
printf '%6s %8s %5s %6s %10s %5s %8s\n' t_s rss_kb fds sfiles samples rot disk_kb | tee "$W/soak.txt"
t0=$(date +%s)
while :; do
	now=$(date +%s)
	t=$((now - t0))
	kill -0 "$pid" 2>/dev/null || { echo "soak: the daemon died"; tail -20 "$SD/samples/oprofiled.log"; exit 1; }
	"$OPC" --session-dir="$SD" --status > "$W/status" 2>&1
	sf=$(field "open sample files")
	smp=$(field samples)
	nrot=$(sed -n 's/^rotation: .*done \([0-9]*\).*/\1/p' "$W/status")
	disk=$(du -sk "$SD" | cut -f1)
	printf '%6d %8s %5s %6s %10s %5s %8s\n' "$t" "$(rss)" "$(fds)" "$sf" "$smp" "$nrot" "$disk" |
		tee -a "$W/soak.txt"
	[ "$t" -ge "$DUR" ] && break
	sleep "$IVL"
done

# verdict: maxima of the second half against the first (after one rotation period of warm-up)
awk -v warm="$ROT" -v dur="$DUR" -v keep="$KEEP" '
NR > 1 && $1 >= warm {
	half = ($1 < warm + (dur - warm) / 2) ? 1 : 2
	if ($2 > rss[half]) rss[half] = $2
	if ($3 > fd[half]) fd[half] = $3
	if ($7 > dk[half]) dk[half] = $7
	n[half]++
}
END {
	if (!n[1] || !n[2]) { print "soak: too short to judge (give a longer DURATION)"; exit 0 }
	printf "max RSS %d -> %d kB, max fds %d -> %d, max disk %d -> %d kB (first -> second half)\n",
		rss[1], rss[2], fd[1], fd[2], dk[1], dk[2]
	bad = 0
	if (rss[2] > rss[1] * 1.10 + 1024) { print "soak: RSS grew"; bad = 1 }
	if (fd[2] > fd[1] + 8) { print "soak: open file descriptors grew"; bad = 1 }
	if (dk[2] > dk[1] * 1.5 + 4096) { print "soak: disk use grew"; bad = 1 }
	if (!bad) print "soak: flat"
	exit bad
}' "$W/soak.txt"
