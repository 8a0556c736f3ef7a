#!/bin/sh
# pprof_metrics.sh - GET /metrics of the pprof plugin and quiet plugin dumps
# (issue 20), against a live system-wide daemon with the pprof and push
# plugins (push every 2 s to a loopback receiver):
#   - /metrics is text/plain; version=0.0.4, parsed by Prometheus' own
#     parser (python3-prometheus-client's text_string_to_metric_families);
#     oprofiled_samples_total is a counter that grows between two scrapes of
#     the live daemon; the push plugin's counters and this process' RSS are
#     there; unknown paths are 404; an oversized request is refused; the
#     connection bound holds (max_connections=2: a third client is turned
#     away while two idle ones are open, served once they are gone);
#   - pulls and push intervals write no statistics block to the log (the
#     log grows by a bounded number of lines over 6 pulls and 3 pushes),
#     while opcontrol --dump still writes one;
#   - a daemon holding more than 1024 descriptors (its sample files) still
#     serves (libmicrohttpd's select() refused such connections).
# Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init pprof_metrics pprof push
net_need_system_wide
# Debian's python3 holds Debian's python3-prometheus-client (another python3 may be first in PATH)
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
if ! $PY -c 'import prometheus_client.parser' 2> /dev/null; then
	echo "FAIL: python3-prometheus-client is needed to parse /metrics (tools/install-deps.sh)"
	exit 1
fi
net_recv_start "$W/recv" || { echo "FAIL: the receiver did not start"; exit 1; }
RP=$(cat "$W/recv.port")
PORT=$(net_free_port)

# both CPUs busy: cpu-clock ticks only on a busy CPU, the counter must move
"$HOT" 60000 > /dev/null 2>&1 &
net_pids="$net_pids $!"
"$HOT" 60000 > /dev/null 2>&1 &
net_pids="$net_pids $!"
"$OPD" --session-dir="$W/s" --system-wide --events=TIMER:1000000 \
	--ext-feature=pprof:listen=127.0.0.1:$PORT,max_connections=2 \
	--ext-feature=push:url=http://127.0.0.1:$RP,interval=2s > out 2> err &
dpid=$!
net_pids="$dpid $net_pids"
LOG=$W/s/samples/oprofiled.log
if ! net_wait 20 grep -q "serving http://127.0.0.1:$PORT" "$LOG"; then
	no_perf err
	echo "FAIL: the pprof plugin did not start serving"; cat err; cat "$LOG"
	exit 1
fi
U=http://127.0.0.1:$PORT

# 1. two scrapes 2.5 s apart (more than the 1 s the plugin reuses an answer)
scrape() { # FILE
	timeout 10 curl -s -D "$1.hdr" -o "$1" -w '%{http_code}' "$U/metrics"
}
code1=$(scrape m1.txt)
sleep 2.5
code2=$(scrape m2.txt)
[ "$code1" = 200 ] && [ "$code2" = 200 ] || { echo "FAIL: /metrics: HTTP $code1, $code2"; fail=1; }
grep -qi '^content-type: text/plain; version=0.0.4' m1.txt.hdr ||
	{ echo "FAIL: /metrics content type:"; cat m1.txt.hdr; fail=1; }
$PY - m1.txt m2.txt << 'EOF' || fail=1
import sys
from prometheus_client.parser import text_string_to_metric_families

def load(path):
    fams = list(text_string_to_metric_families(open(path).read()))
    samples = {s.name: (f.type, s.value) for f in fams for s in f.samples}
    return fams, samples

ok = True
f1, a = load(sys.argv[1])
f2, b = load(sys.argv[2])
def need(cond, msg):
    global ok
    if not cond:
        print("FAIL: /metrics: " + msg)
        ok = False
for name in ("oprofiled_samples_total", "oprofiled_lost_samples_total",
             "oprofiled_kernel_dropped_samples_total", "oprofiled_rotations_total",
             "process_cpu_seconds_total"):
    need(name in a and a[name][0] == "counter", "%s is not a counter: %s" % (name, a.get(name)))
for name in ("process_resident_memory_bytes", "oprofiled_open_sample_files",
             "oprofiled_session_samples", "process_open_fds", "oprofiled_malloc_in_use_bytes",
             "oprofiled_malloc_mmap_bytes", "oprofiled_malloc_free_bytes"):
    need(name in a and a[name][0] == "gauge", "%s is not a gauge: %s" % (name, a.get(name)))
for name in ("oprofiled_plugin_push_sent", "oprofiled_plugin_push_failed",
             "oprofiled_plugin_push_dropped", "oprofiled_plugin_pprof_metrics"):
    need(name in a, "%s is missing" % name)
if ok:
    s1, s2 = a["oprofiled_samples_total"][1], b["oprofiled_samples_total"][1]
    print("note: oprofiled_samples_total %d -> %d, RSS %d KiB, %d families" %
          (s1, s2, a["process_resident_memory_bytes"][1] / 1024, len(f1)))
    need(s2 > s1 > 0, "oprofiled_samples_total did not grow: %d -> %d" % (s1, s2))
    need(b["oprofiled_plugin_pprof_metrics"][1] >= a["oprofiled_plugin_pprof_metrics"][1],
         "the plugin's own scrape counter went back")
    rss = a["process_resident_memory_bytes"][1]
    need(1 << 20 < rss < 1 << 30, "RSS %d bytes is not a daemon's" % rss)
sys.exit(0 if ok else 1)
EOF

# 2. unknown paths, an oversized request
for p in /metricsx /metrics/x /; do
	code=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' "$U$p")
	[ "$code" = 404 ] || { echo "FAIL: GET $p: HTTP $code, expected 404"; fail=1; }
done
big=$(head -c 20000 /dev/zero | tr '\0' x)
code=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$U/metrics")
[ "$code" = 431 ] || { echo "FAIL: a request with a 20 KB header: HTTP $code, expected 431"; fail=1; }

# 3. the connection bound: two idle clients hold both slots, a third is turned away
$PY -c 'import socket,time
a=socket.create_connection(("127.0.0.1",'$PORT')); b=socket.create_connection(("127.0.0.1",'$PORT'))
time.sleep(4)' &
idle=$!
sleep 1
# turned away or left in the listen backlog: not served within 2 s either way
code=$(timeout 10 curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$U/metrics")
case $code in
2*) echo "FAIL: a third connection was served while max_connections=2 were open"; fail=1 ;;
esac
wait $idle
# libmicrohttpd frees a closed connection's slot on its next round: soon, not at once
net_wait 10 sh -c "[ \"\$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' '$U/metrics')\" = 200 ]" ||
	{ echo "FAIL: /metrics was not served again once the idle clients left"; fail=1; }

# 4. quiet dumps: 6 pulls and the 2 s pushes meanwhile add no statistics block
blocks() { grep -c -- "-- OProfile-ng Statistics --" "$LOG"; }
sent0=$(net_counter "$W/s" push sent)
b0=$(blocks)
l0=$(wc -l < "$LOG")
for i in 1 2 3 4 5 6; do
	code=$(timeout 20 curl -s -o pull.$i.pb.gz -w '%{http_code}' "$U/debug/pprof/profile?seconds=1")
	[ "$code" = 200 ] || { echo "FAIL: pull $i: HTTP $code"; fail=1; }
done
b1=$(blocks)
l1=$(wc -l < "$LOG")
sent1=$(net_counter "$W/s" push sent)
echo "note: 6 pulls, pushes sent ${sent0:-?} -> ${sent1:-?}: log $l0 -> $l1 lines, statistics blocks $b0 -> $b1"
[ "${sent1:-0}" -ge $((${sent0:-0} + 2)) ] ||
	{ echo "FAIL: the push plugin did not push every 2 s meanwhile (sent ${sent0:-?} -> ${sent1:-?})"; fail=1; }
[ "$b1" = "$b0" ] || { echo "FAIL: pulls/pushes wrote statistics blocks to the log ($b0 -> $b1)"; fail=1; }
[ $((l1 - l0)) -le 12 ] || { echo "FAIL: the log grew by $((l1 - l0)) lines over 6 pulls:"; tail -n $((l1 - l0)) "$LOG" | head -40; fail=1; }
# opcontrol --dump still writes its block
timeout 10 "$B/tools/opcontrol" --session-dir="$W/s" --dump > dump.out 2>&1 ||
	{ echo "FAIL: opcontrol --dump"; cat dump.out; fail=1; }
b2=$(blocks)
[ "$b2" -eq $((b1 + 1)) ] || { echo "FAIL: opcontrol --dump wrote no statistics block ($b1 -> $b2)"; fail=1; }

kill -TERM $dpid
wait $dpid
# (the final statistics count the scrapes: checked below, once the log is complete)

# 5. a daemon holding more than FD_SETSIZE (1024) descriptors - one per
# open sample file, up to max_open_files (2048) - still serves: 700
# processes that spin a few ms and then stay alive, each its own sample files
# (--separate=thread; the files of a process are closed when it exits)
P5=$(net_free_port)
"$OPD" --session-dir="$W/s5" --events=TIMER:100000 --separate=thread,lib,kernel \
	--ext-feature=pprof:listen=127.0.0.1:$P5 \
	-- sh -c "i=0; while [ \$i -lt 700 ]; do
		sh -c 'j=0; while [ \$j -lt 3000 ]; do j=\$((j + 1)); done; sleep 60' &
		i=\$((i + 1)); done; wait" \
	> out5 2> err5 &
d5=$!
net_pids="$d5 $net_pids"
fds() { ls "/proc/$d5/fd" 2> /dev/null | wc -l; }
if net_wait 90 sh -c "[ \$(ls /proc/$d5/fd | wc -l) -gt 1100 ]"; then
	n=$(fds)
	bad5=0
	for i in 1 2 3 4 5; do
		c1=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P5/debug/pprof/")
		c2=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P5/metrics")
		[ "$c1$c2" = 200200 ] || bad5=$((bad5 + 1))
	done
	echo "note: with $n descriptors open, $((5 - bad5)) of 5 index+metrics pairs served"
	[ $bad5 = 0 ] || { echo "FAIL: a daemon with $n descriptors turned pulls away"; grep FD_SETSIZE "$W/s5/samples/oprofiled.log" | head -3; fail=1; }
else
	echo "FAIL: the daemon never held more than 1100 descriptors (it has $(fds)): nothing was checked"
	fail=1
fi
kill -TERM $d5
wait $d5
pkill -f "j -lt 3000" 2> /dev/null # the workload's shells (their sleeps end by themselves)

grep -q "pprof.*metrics: [1-9]" "$LOG" || grep -A20 -- "-- plugin pprof --" "$LOG" | grep -q "^metrics: [1-9]" ||
	{ echo "FAIL: the final statistics do not count the scrapes"; fail=1; }
[ $fail = 0 ] && echo "PASS: pprof_metrics"
exit $fail
