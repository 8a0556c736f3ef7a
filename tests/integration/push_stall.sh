#!/bin/sh
# push_stall.sh - a store that accepts the connection and never answers
# does not stall sampling: one live system-wide daemon (cpu-clock at 1 kHz
# on every CPU, both kept busy by two spinning shells: a steady stream
# whatever else the machine runs) pushes every second, first to a store that answers, then to one
# that hangs on the same port; the samples per second of the two windows
# agree within 15 %, the daemon answers opcontrol meanwhile, the kernel
# loses nothing and the plugin counts the timeouts. Loopback only, every
# wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_stall push
net_need_system_wide

net_recv_start "$W/r" || { echo "FAIL: receiver did not start"; exit 1; }
rpid=${net_pids##* }
P=$(cat "$W/r.port")
"$OPD" --session-dir="$W/s" --system-wide --events=TIMER:1000000 \
	"--ext-feature=push:url=http://127.0.0.1:$P,interval=1s,timeout=3,service=stall" \
	> out 2> err &
dpid=$!
net_pids="$net_pids $dpid"
if ! net_wait 20 grep -q "pushing to" "$W/s/samples/oprofiled.log"; then
	no_perf err
	echo "FAIL: the push plugin did not start"; cat err; exit 1
fi

# cpu-clock does not tick on an idle CPU: keep both CPUs busy during the
# two windows so that the stream is 1 kHz per CPU whatever else runs
# (make check runs other tests beside this one)
for _i in 1 2; do
	sh -c 'while :; do :; done' &
	net_pids="$net_pids $!"
	spin="${spin:-} $!"
done
sleep 2
r_ok=$(net_rate "$W/s" 5)
sent_ok=$(net_counter "$W/s" push sent)
# the same port now accepts and never answers
kill $rpid
wait $rpid 2>/dev/null
python3 "$S/tests/integration/push_receiver.py" --dir "$W/h" --port-file "$W/h.port" --port "$P" --hang &
net_pids="$net_pids $!"
net_wait 10 test -s "$W/h.port" || { echo "FAIL: hanging receiver did not start"; exit 1; }
sleep 1
r_hang=$(net_rate "$W/s" 8)
failed=$(net_counter "$W/s" push failed)
echo "note: samples/s with the store answering $r_ok, hanging $r_hang; sent before $sent_ok, failed while hanging $failed"
kill $spin 2>/dev/null
ok=$(python3 -c "a,b=$r_ok,$r_hang; print(1 if a > 100 and abs(a-b) <= 0.15*a else 0)")
[ "$ok" = 1 ] || { echo "FAIL: the sample rate changed while the store hung"; fail=1; }
[ "${sent_ok:-0}" -ge 1 ] || { echo "FAIL: nothing was sent before the store hung"; fail=1; }
[ "${failed:-0}" -ge 1 ] || { echo "FAIL: no timeout counted"; net_status "$W/s" push; fail=1; }
[ -s "$W/h/hung" ] || { echo "FAIL: the plugin never reached the hanging store"; fail=1; }
net_status "$W/s" push | grep -q "last error: .*\(timed out\|Timeout\)" ||
	{ echo "FAIL: the last error does not say timed out"; net_status "$W/s" push; fail=1; }
kill -TERM $dpid
wait $dpid
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc after SIGTERM with the store hanging"; fail=1; }
lost=$(cat "$W/s/samples/current/stats/lost_samples_by_kernel" 2>/dev/null || echo 0)
[ "$lost" = 0 ] || { echo "FAIL: the kernel lost $lost samples"; fail=1; }

net_finish push_stall.sh
