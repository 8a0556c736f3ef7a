#!/bin/sh
# push_ondemand.sh - the push plugin's helper on demand (issue 20,
# helper_idle): a live daemon pushing to a loopback receiver every 3 s with
# helper_idle=1s runs no oprofiled-push at start, starts one for each push,
# which goes ~1 s after it (retired: an idle exit, no restart), and the
# next push starts another; every body arrives and decodes (push_check.py:
# upstream pprof and protoc). With the receiver down the profiles stay in
# the spool and the helper is started once per attempt at most (no spawn
# per tick of the sender); when the receiver is back the spool empties
# into it. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_ondemand push
net_pprof || exit 1

# the daemon's child running oprofiled-push, empty if none
helper_of() {
	ps --ppid "$1" -o pid=,args= 2> /dev/null | sed -n 's/^ *\([0-9]*\) oprofiled-push.*/\1/p' | head -1
}
reqs() { ls "$1"/*.req 2> /dev/null | wc -l; }
c() { net_counter "$W/s" push "$1"; }

# 1. pushes every 3 s, the helper for each push only
net_recv_start "$W/r1" || { echo "FAIL: receiver did not start"; exit 1; }
P=$(cat "$W/r1.port")
net_push_start "$W/s" "url=http://127.0.0.1:$P,interval=3s,service=ondemand,helper_idle=1s"
grep -q "helper oprofiled-push on demand as .*, exits after 1 s idle" "$W/s/samples/oprofiled.log" ||
	{ echo "FAIL: the start line does not say the helper runs on demand"; grep "pushing to" "$W/s/samples/oprofiled.log"; fail=1; }
[ -z "$(helper_of $dpid)" ] || { echo "FAIL: a helper runs at start, before anything is due"; fail=1; }
# watch 11 s (3 pushes or more): the helpers seen, and the gaps without one
seen=
gaps=0
prev=
for i in $(seq 1 110); do
	h=$(helper_of $dpid)
	if [ -n "$h" ]; then
		case " $seen " in *" $h "*) ;; *) seen="$seen $h" ;; esac
	elif [ -n "$prev" ]; then
		gaps=$((gaps + 1))
	fi
	prev=$h
	sleep 0.1
done
n=$(echo $seen | wc -w)
echo "note: helpers seen in 11 s:$seen ($gaps exits seen), $(reqs "$W/r1") pushes received"
[ "$n" -ge 2 ] && [ "$gaps" -ge 1 ] ||
	{ echo "FAIL: expected a helper per push and none between ($n helpers, $gaps exits)"; fail=1; }
[ "$(reqs "$W/r1")" -ge 2 ] || { echo "FAIL: $(reqs "$W/r1") pushes received"; fail=1; }
sp=$(c helper_spawns)
ie=$(c helper_idle_exits)
[ "${sp:-0}" -ge 2 ] && [ "${ie:-0}" -ge 1 ] && [ "$(c helper_restarts)" = 0 ] && [ "$(c helper_lost)" = 0 ] ||
	{ echo "FAIL: counters"; net_status "$W/s" push; fail=1; }

# 2. the receiver down (the receiver is every pid but the daemon): entries
# spooled, a helper per attempt at most
for p in $net_pids; do
	[ "$p" = "$dpid" ] && continue
	kill "$p" 2> /dev/null
	wait "$p" 2> /dev/null
done
net_pids=$dpid
sleep 1
sp0=$(c helper_spawns)
f0=$(c failed)
s0=$(c sent)
sleep 10
sp1=$(c helper_spawns)
f1=$(c failed)
spooled=$(c spooled)
echo "note: receiver down 10 s: $((f1 - f0)) failed attempts, $((sp1 - sp0)) helper spawns, $spooled spooled"
[ "${spooled:-0}" -ge 2 ] || { echo "FAIL: $spooled profiles spooled while the store was down"; fail=1; }
[ $((f1 - f0)) -ge 1 ] || { echo "FAIL: no attempt while the store was down"; fail=1; }
[ $((sp1 - sp0)) -le $((f1 - f0 + 1)) ] ||
	{ echo "FAIL: $((sp1 - sp0)) spawns for $((f1 - f0)) attempts: the helper spins"; fail=1; }
[ "$(c dropped)" = 0 ] || { echo "FAIL: profiles dropped"; fail=1; }

# 3. back on the same port: the spool empties into it (backoff <= 16 s by now)
net_recv_start "$W/r2" --port "$P" || { echo "FAIL: receiver did not restart"; exit 1; }
empty() { [ "$(c spooled)" = 0 ] && [ "$(c sent)" -ge $((s0 + spooled)) ]; }
net_wait 40 empty || { echo "FAIL: the spool did not empty into the store"; net_status "$W/s" push; fail=1; }
echo "note: after the store came back: $(reqs "$W/r2") pushes received, $(c sent) sent in all"
# a helper per push, not one per tick: spawns <= attempts
att=$(($(c sent) + $(c failed)))
[ "$(c helper_spawns)" -le "$att" ] ||
	{ echo "FAIL: $(c helper_spawns) spawns for $att attempts"; fail=1; }
[ "$(c helper_restarts)" = 0 ] || { echo "FAIL: helper_restarts $(c helper_restarts): an idle exit counted as a crash"; fail=1; }
net_status "$W/s" push | grep -q "on demand (helper_idle 1 s): [0-9]* spawns, [0-9]* idle exits" ||
	{ echo "FAIL: the status line"; net_status "$W/s" push; fail=1; }
kill -TERM $dpid
wait $dpid
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat "$W/s.err"; fail=1; }

# every body received, before and after the outage, decodes
for r in r1 r2; do
	$CHECK --dir "$W/$r" --protocol pyroscope --service ondemand --pprof "$PPROF" --proto "$PROTO" \
		--min 2 > "check.$r" || { echo "FAIL: $r: the pushes"; cat "check.$r"; fail=1; }
done

# 4. a bad helper_idle is refused, named by its config path
printf 'plugins = { push = { url = "http://127.0.0.1:1"; helper_idle = "soon"; }; };\n' > bad.conf
"$OPD" --config="$W/bad.conf" --session-dir="$W/sc" --check-config > cc.out 2>&1
[ $? -ne 0 ] && grep -q 'config plugins.push.helper_idle.*"soon": expected a time' cc.out ||
	{ echo "FAIL: plugins.push.helper_idle = soon was not refused"; cat cc.out; fail=1; }

net_finish push_ondemand.sh
