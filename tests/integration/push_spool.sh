#!/bin/sh
# push_spool.sh - the push plugin's spool: with the store down, every
# profile waits on disk (sent 0, failed and spooled counted in opcontrol
# --status); once the store is up they all arrive, oldest first, joining
# up with no gap, after retries. With a spool of 3 files, the oldest are
# dropped and counted, the newest delivered. Loopback only, waits bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_spool push
net_pprof || exit 1

# $1 session, $2 port, $3 extra push args; the daemon's pid in $dpid
start_daemon() {
	net_push_start "$1" "url=http://127.0.0.1:$2,interval=1s,timeout=2,service=spool$3"
}
counter() { net_counter "$1" push "$2"; }
counter_ge() { [ "$(counter "$1" "$2")" -ge "$3" ] 2> /dev/null; }
reqs_ge() { [ "$(ls "$1"/*.req 2> /dev/null | wc -l)" -ge "$2" ]; }

# 1. store down for 6 s: everything spooled, nothing sent
P=$(net_free_port)
start_daemon "$W/s" "$P" ""
sleep 6
c_sent=$(counter "$W/s" sent)
c_failed=$(counter "$W/s" failed)
c_spooled=$(counter "$W/s" spooled)
c_dropped=$(counter "$W/s" dropped)
echo "note: store down: sent $c_sent failed $c_failed spooled $c_spooled dropped $c_dropped"
[ "$c_sent" = 0 ] && [ "${c_failed:-0}" -ge 1 ] && [ "${c_spooled:-0}" -ge 3 ] && [ "$c_dropped" = 0 ] ||
	{ echo "FAIL: with the store down"; net_status "$W/s" push; fail=1; }
n=$(ls "$W/s/push-spool" | wc -l)
[ "$n" -ge "${c_spooled:-0}" ] || { echo "FAIL: $n files in the spool, $c_spooled counted"; fail=1; }
net_status "$W/s" push | grep -q "last error: .*127.0.0.1:$P" ||
	{ echo "FAIL: no last error naming the store"; net_status "$W/s" push; fail=1; }

# 2. the store comes up on the same port: the spool empties into it
net_recv_start "$W/r" --port "$P" || { echo "FAIL: receiver did not start"; exit 1; }
net_wait 40 reqs_ge "$W/r" "$c_spooled" ||
	{ echo "FAIL: the spooled profiles did not arrive"; fail=1; }
kill -TERM $dpid
wait $dpid
c_sent=$(sed -n 's/^sent: //p' "$W/s/samples/oprofiled.log" | tail -1)
c_retried=$(sed -n 's/^retried: //p' "$W/s/samples/oprofiled.log" | tail -1)
c_dropped=$(sed -n 's/^dropped: //p' "$W/s/samples/oprofiled.log" | tail -1)
echo "note: store up: sent $c_sent retried $c_retried dropped $c_dropped"
[ "${c_retried:-0}" -ge 1 ] && [ "$c_dropped" = 0 ] ||
	{ echo "FAIL: retried $c_retried, dropped $c_dropped"; fail=1; }
$CHECK --dir "$W/r" --protocol pyroscope --service spool --pprof "$PPROF" --proto "$PROTO" \
	--min "$c_spooled" --contiguous > check1 || { echo "FAIL: delivered profiles"; cat check1; fail=1; }

# 3. a spool of 3 files with the store down: the oldest go, counted
P2=$(net_free_port)
start_daemon "$W/s2" "$P2" ",spool_files=3"
t0=$(date +%s)
net_wait 30 counter_ge "$W/s2" profiles 7 ||
	{ echo "FAIL: fewer than 7 profiles in 30 s"; fail=1; }
c_prof=$(counter "$W/s2" profiles)
c_spooled=$(counter "$W/s2" spooled)
c_dropped=$(counter "$W/s2" dropped)
echo "note: spool of 3: profiles $c_prof spooled $c_spooled dropped $c_dropped"
[ "$c_spooled" = 3 ] && [ "$c_dropped" -ge $((c_prof - 3)) ] && [ "$c_dropped" -ge 4 ] ||
	{ echo "FAIL: over the bound"; net_status "$W/s2" push; fail=1; }
[ "$(ls "$W/s2/push-spool" | wc -l)" -le 3 ] || { echo "FAIL: more than 3 spool files"; fail=1; }
net_recv_start "$W/r2" --port "$P2" || { echo "FAIL: receiver did not start"; exit 1; }
net_wait 30 reqs_ge "$W/r2" 3 ||
	{ echo "FAIL: the spooled profiles did not arrive"; fail=1; }
# the first delivered is not the first made: the oldest were dropped
first=$(python3 -c "import json,urllib.parse as u; print(u.parse_qs(u.urlsplit(json.load(open('$W/r2/0001.req'))['path']).query)['from'][0])")
[ "$first" -ge $((t0 + 3)) ] || { echo "FAIL: the first delivered profile starts at $first, the daemon at $t0"; fail=1; }
$CHECK --dir "$W/r2" --protocol pyroscope --service spool --pprof "$PPROF" --proto "$PROTO" \
	--min 3 > check2 || { echo "FAIL: delivered profiles"; cat check2; fail=1; }

net_finish push_spool.sh
