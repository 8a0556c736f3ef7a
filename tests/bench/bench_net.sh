#!/bin/bash
# bench_net.sh - issue 20's fleet figures for the network plugins (on
# demand, not in make check): oprofiled system-wide at RATE Hz per CPU with
# call graphs, rotation every 60 s, the pprof pull plugin (one 10 s pull
# during the run) and the push plugin (each rotation, to a loopback
# receiver), both CPUs busy; beside it, in the same run and on the same
# workload, the same daemon without the two plugins (what they add) and
# `perf record -a -F RATE -g`. Prints each one's CPU share (steady state:
# from 15 s on), the daemons' RSS, the bytes pushed and perf.data's size,
# both extrapolated to a host-hour from the SECONDS measured (the
# extrapolation is linear: say so when quoting).
# Usage: OP_BUILDDIR=build tests/bench/bench_net.sh [SECONDS=180] [RATE=99]
# SPDX-License-Identifier: MIT
set -u
B=$(cd "${OP_BUILDDIR:-.}" && pwd) # absolute: helpers and plugins are looked up by it
S=$(cd "$(dirname "$0")/../.." && pwd)
D=$B/core/oprofiled
HOT=$B/tests/integration/hot
SECS=${1:-180}
RATE=${2:-99}
W=$(mktemp -d /tmp/bench_net.XXXXXX)
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OP_HELPER_DIR=${OP_HELPER_DIR:-$B/plugins/libexec}
. "$S/tests/bench/net_helpers.sh"
for x in "$D" "$HOT" "$OP_PLUGIN_DIR/pprof.so" "$OP_PLUGIN_DIR/push.so"; do
	[ -e "$x" ] || { echo "bench_net: $x is not built (make && make check TESTS=)"; exit 1; }
done
command -v perf > /dev/null || { echo "bench_net: perf is not installed"; exit 1; }
[ "$SECS" -ge 60 ] || { echo "bench_net: SECONDS must be >= 60 (one rotation)"; exit 1; }
pids=
trap 'kill $pids 2>/dev/null; wait 2>/dev/null' EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# issue 20: the network plugins' helper processes (children of the daemon
# named oprofiled-*): their CPU and memory count with the daemon's
helpers_sum() { # PID FIELD: the sum of a /proc/PID/status field (kB) over the helpers
	_t=0
	for _h in $(helpers "$1"); do _t=$((_t + $(awk -v f="$2:" '$1 == f { print $2 }' /proc/$_h/status))); done
	echo $_t
}
# issue 20 on demand: helpers that came and went (helper_idle) count too: the
# daemon's reaped children's time (cutime + cstime; it has no other children)
helpers_ticks() {
	_t=$(awk '{ print $16 + $17 }' "/proc/$1/stat")
	for _h in $(helpers "$1"); do _t=$((_t + $(cpu_ticks $_h))); done
	echo $_t
}

python3 "$S/tests/integration/push_receiver.py" --dir "$W/recv" --port-file "$W/recv.port" &
pids="$pids $!"
for _ in $(seq 100); do [ -s "$W/recv.port" ] && break; sleep 0.1; done
RP=$(cat "$W/recv.port")
PP=$(free_port)

# both CPUs busy for the whole run
for _ in 1 2; do
	"$HOT" $(((SECS + 30) * 1000)) > /dev/null 2>&1 &
	pids="$pids $!"
done
period=$((1000000000 / RATE))
"$D" --session-dir="$W/op" --system-wide --events=TIMER:$period --rotate=60s \
	--ext-feature=callgraph --ext-feature=pprof:listen=127.0.0.1:$PP \
	--ext-feature=push:url=http://127.0.0.1:$RP,service=bench > "$W/op.out" 2>&1 &
dpid=$!
pids="$pids $dpid"
"$D" --session-dir="$W/base" --system-wide --events=TIMER:$period --rotate=60s \
	--ext-feature=callgraph > "$W/base.out" 2>&1 &
bpid=$!
pids="$pids $bpid"
perf record -q -a -F "$RATE" -g -o "$W/perf.data" -- sleep "$SECS" > "$W/perf.out" 2>&1 &
ppid=$!
sleep 15
c0=$(cpu_ticks $dpid)
h0=$(helpers_ticks $dpid)
b0=$(cpu_ticks $bpid)
p0=$(cpu_ticks $ppid)
t0=$(date +%s.%N)
# one pull in the middle of the run, as a scraper would
sleep $((SECS / 2 - 15))
curl -s -o "$W/pull.pb.gz" "http://127.0.0.1:$PP/debug/pprof/profile?seconds=10"
p1=$(cpu_ticks $ppid)
wait $ppid
c1=$(cpu_ticks $dpid)
h1=$(helpers_ticks $dpid)
b1=$(cpu_ticks $bpid)
t1=$(date +%s.%N)
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$dpid/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$dpid/status")
brss=$(awk '/^VmRSS/ { print $2 }' "/proc/$bpid/status")
pss=$(awk '/^Pss:/ { print $2 }' "/proc/$dpid/smaps_rollup")
hrss=$(helpers_sum $dpid VmRSS)
hpss=0
for _h in $(helpers $dpid); do hpss=$((hpss + $(awk '/^Pss:/ { print $2 }' /proc/$_h/smaps_rollup))); done
nh=$(helpers $dpid | wc -l)
status=$("$B/tools/opcontrol" --session-dir="$W/op" --status)
kill -TERM $dpid $bpid
wait $dpid $bpid
pushed=$(echo "$status" | sed -n '/^-- plugin push --/,/^-- plugin /p' | sed -n 's/^bytes: //p')
sent=$(echo "$status" | sed -n '/^-- plugin push --/,/^-- plugin /p' | sed -n 's/^sent: //p')
recv_bytes=$(cat "$W"/recv/*.body 2>/dev/null | wc -c)
perf_bytes=$(stat -c %s "$W/perf.data")
pull_bytes=$(stat -c %s "$W/pull.pb.gz" 2>/dev/null || echo 0)

echo "workload: 2 x hot (both CPUs busy), system-wide cpu-clock at $RATE Hz per CPU, call graphs, rotation 60 s, $SECS s"
awk -v c0="$c0" -v c1="$c1" -v h0="$h0" -v h1="$h1" -v b0="$b0" -v b1="$b1" -v p0="$p0" -v p1="$p1" -v t0="$t0" \
	-v t1="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { d = hz * (t1 - t0)
	printf "CPU in steady state (%.0f s), %% of one CPU: oprofiled with pprof+push %.3f, without %.3f (the plugins: %.3f), perf record %.3f\n",
		t1 - t0, 100 * (c1 - c0) / d, 100 * (b1 - b0) / d, 100 * ((c1 - c0) - (b1 - b0)) / d, 100 * (p1 - p0) / d
	printf "CPU of the plugins\047 helper processes: %.3f (daemon + helpers %.3f)\n", 100 * (h1 - h0) / d, 100 * ((c1 - c0) + (h1 - h0)) / d }'
echo "RSS: oprofiled with pprof+push ${rss} KiB (peak ${hwm} KiB, PSS ${pss} KiB), without ${brss} KiB"
echo "RSS: its $nh helper processes ${hrss} KiB (PSS ${hpss} KiB); daemon + helpers ${rss} + ${hrss} = $((rss + hrss)) KiB (PSS $((pss + hpss)) KiB)"
echo "pull: one 10 s profile: $pull_bytes bytes"
awk -v b="$pushed" -v n="$sent" -v r="$recv_bytes" -v p="$perf_bytes" -v s="$SECS" 'BEGIN {
	printf "push: %d profiles, %d bytes sent (%d received) in %d s -> %.1f KiB per host-hour (linear extrapolation)\n",
		n, b, r, s, b * 3600 / s / 1024
	printf "perf record -a -F same -g: perf.data %d bytes in %d s -> %.1f MiB per host-hour\n",
		p, s, p * 3600 / s / 1048576
	if (b > 0) printf "perf.data / pushed: %.0fx\n", p / b }'
rm -rf "$W"
