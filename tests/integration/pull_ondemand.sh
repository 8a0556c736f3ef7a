#!/bin/sh
# pull_ondemand.sh - the pprof plugin's helper on demand (issue 20,
# helper_idle): against a live system-wide daemon with helper_idle=2s,
# no oprofiled-pull runs before the first connection; a request starts it
# and is served; it exits after ~2 s without a connection (exit 119, idle);
# the next request starts another; a 3 s profile (longer than helper_idle)
# is not cut by the idle exit and decodes with the upstream pprof and
# protoc; requests sent just as the helper goes idle all get their answer
# (the listening socket's backlog keeps them for the next helper); the
# counters helper_spawns, helper_idle_exits and helper_restarts (0: an
# idle exit is no crash). With helper_idle=0 the helper is there from the
# start and stays. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init pull_ondemand pprof
net_pprof || exit 1
net_need_system_wide

# the daemon's child running oprofiled-pull, empty if none
helper_of() {
	ps --ppid "$1" -o pid=,args= 2> /dev/null | sed -n 's/^ *\([0-9]*\) oprofiled-pull.*/\1/p' | head -1
}
no_helper() { [ -z "$(helper_of "$1")" ]; }
has_helper() { [ -n "$(helper_of "$1")" ]; }
start_daemon() { # SESSION PORT IDLE
	"$OPD" --session-dir="$W/$1" --system-wide --events=TIMER:1000000 \
		--ext-feature=pprof:listen=127.0.0.1:$2,helper_idle=$3 > "$1.out" 2> "$1.err" &
	dpid=$!
	net_pids="$net_pids $dpid"
	net_wait 20 grep -q "serving http://127.0.0.1:$2" "$W/$1/samples/oprofiled.log" && return 0
	no_perf "$1.err"
	echo "FAIL: $1: the pprof plugin did not start serving"
	cat "$1.err" "$W/$1/samples/oprofiled.log"
	exit 1
}
get() { # NAME PATH: HTTP status of GET PATH, body in NAME
	timeout 30 curl -s -o "$1" -w '%{http_code}' "$U$2"
}

"$HOT" 30000 > /dev/null 2>&1 &
net_pids="$net_pids $!"

# 1. helper_idle=2s: no helper until a connection comes
P=$(net_free_port)
U=http://127.0.0.1:$P
start_daemon s "$P" 2s
grep -q "helper oprofiled-pull on demand as .*, exits after 2 s idle" "$W/s/samples/oprofiled.log" ||
	{ echo "FAIL: the start line does not say the helper runs on demand"; grep serving "$W/s/samples/oprofiled.log"; fail=1; }
sleep 1
no_helper $dpid || { echo "FAIL: a helper runs before any connection: $(helper_of $dpid)"; fail=1; }
code=$(get index.html /debug/pprof/)
[ "$code" = 200 ] && grep -q 'href="profile' index.html ||
	{ echo "FAIL: the first request: HTTP $code"; fail=1; }
h1=$(helper_of $dpid)
[ -n "$h1" ] || { echo "FAIL: no helper after the first request"; fail=1; }
# it goes after ~2 s without a connection, by itself
t0=$(date +%s.%N)
net_wait 15 no_helper $dpid || { echo "FAIL: the helper $h1 did not exit when idle"; fail=1; }
t1=$(date +%s.%N)
idle=$(python3 -c "print(round($t1 - $t0, 1))")
echo "note: helper $h1 exited after $idle s idle (helper_idle=2s)"
python3 -c "import sys; sys.exit(0 if $idle >= 1.5 else 1)" ||
	{ echo "FAIL: the helper exited after $idle s, before its idle time"; fail=1; }

# 2. the next request starts another helper and is served
code=$(get index2.html /debug/pprof/)
[ "$code" = 200 ] || { echo "FAIL: the request after the idle exit: HTTP $code"; fail=1; }
h2=$(helper_of $dpid)
[ -n "$h2" ] && [ "$h2" != "$h1" ] || { echo "FAIL: no new helper for the second request ($h2)"; fail=1; }

# 3. a profile longer than helper_idle: the request in flight keeps the helper;
# meanwhile the daemon sleeps on the helper's socket, not on the listening one
# (no busy loop: well under a second of CPU in these 3 s, sampling included)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
k0=$(ticks $dpid)
get prof.pb.gz "/debug/pprof/profile?seconds=3" > prof.code &
cpid=$!
sleep 2.6
hp=$(helper_of $dpid)
[ -n "$hp" ] || { echo "FAIL: the helper exited while a 3 s profile was in flight"; fail=1; }
wait $cpid
k1=$(ticks $dpid)
hz=$(getconf CLK_TCK)
echo "note: the daemon's CPU during the 3 s profile: $((k1 - k0)) ticks of 1/$hz s"
[ $((k1 - k0)) -lt "$hz" ] || { echo "FAIL: the daemon spun during the profile"; fail=1; }
code=$(cat prof.code)
[ "$code" = 200 ] || { echo "FAIL: the 3 s profile: HTTP $code"; fail=1; }
if [ "$code" = 200 ]; then
	timeout 60 "$PPROF" -raw prof.pb.gz > raw.txt 2> raw.err && grep -q "^Samples:" raw.txt ||
		{ echo "FAIL: pprof -raw cannot read the profile"; cat raw.err; fail=1; }
	grep -q "^samples/count cpu/nanoseconds" raw.txt ||
		{ echo "FAIL: the profile's sample types"; head -5 raw.txt; fail=1; }
	gzip -dc prof.pb.gz | protoc --decode=perftools.profiles.Profile -I"$(dirname $PROTO)" "$PROTO" \
		> decoded.txt 2> protoc.err || { echo "FAIL: protoc cannot decode it"; cat protoc.err; fail=1; }
fi

# 4. requests sent as the helper goes idle (2 s after the last connection,
# give or take): none is refused or lost; the daemon starts the next helper
# for what waits in the backlog
net_wait 15 no_helper $dpid || { echo "FAIL: the helper did not exit after the profile"; fail=1; }
for d in 1.95 2.0 2.05 2.1 2.15 2.2; do
	code=$(get race.html /debug/pprof/)
	[ "$code" = 200 ] || { echo "FAIL: a request just before the idle exit: HTTP $code"; fail=1; }
	sleep "$d"
	code=$(get race.html /debug/pprof/)
	[ "$code" = 200 ] || { echo "FAIL: a request $d s after the last one: HTTP $code"; fail=1; }
done

# 5. counted: spawns, idle exits, and no restart (an idle exit is no crash)
net_wait 15 no_helper $dpid
spawns=$(net_counter "$W/s" pprof helper_spawns)
idles=$(net_counter "$W/s" pprof helper_idle_exits)
restarts=$(net_counter "$W/s" pprof helper_restarts)
echo "note: helper_spawns $spawns, helper_idle_exits $idles, helper_restarts $restarts"
[ "${spawns:-0}" -ge 3 ] && [ "${idles:-0}" -ge 3 ] && [ "$restarts" = 0 ] ||
	{ echo "FAIL: counters: spawns $spawns (>= 3), idle exits $idles (>= 3), restarts $restarts (0)"; net_status "$W/s" pprof; fail=1; }
# every spawn but a running one ended idle: none was a crash
[ "$idles" -ge $((spawns - 1)) ] 2> /dev/null ||
	{ echo "FAIL: $spawns spawns but $idles idle exits"; fail=1; }
net_status "$W/s" pprof | grep -q "last exit: exit 119 (idle); on demand (helper_idle 2 s): $spawns spawns" ||
	{ echo "FAIL: the status line"; net_status "$W/s" pprof; fail=1; }
if grep -q "restarting in\|helper oprofiled-pull restarted" "$W/s/samples/oprofiled.log"; then
	echo "FAIL: an idle exit was logged as a crash or a restart"; grep helper "$W/s/samples/oprofiled.log"; fail=1
fi
kill -TERM $dpid
wait $dpid
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; fail=1; }

# 6. helper_idle=0: resident from the start, still there after more than 2 s
P0=$(net_free_port)
start_daemon s0 "$P0" 0
net_wait 10 has_helper $dpid || { echo "FAIL: helper_idle=0: no helper at start"; fail=1; }
r1=$(helper_of $dpid)
sleep 3
r2=$(helper_of $dpid)
[ -n "$r1" ] && [ "$r1" = "$r2" ] || { echo "FAIL: helper_idle=0: helper $r1 then '$r2'"; fail=1; }
U=http://127.0.0.1:$P0
code=$(get index0.html /debug/pprof/)
[ "$code" = 200 ] || { echo "FAIL: helper_idle=0: HTTP $code"; fail=1; }
sleep 3
[ "$(helper_of $dpid)" = "$r1" ] || { echo "FAIL: helper_idle=0: the helper did not stay"; fail=1; }
[ "$(net_counter "$W/s0" pprof helper_idle_exits)" = 0 ] ||
	{ echo "FAIL: helper_idle=0: idle exits counted"; fail=1; }
kill -TERM $dpid
wait $dpid

# 7. a bad helper_idle is refused at start, naming the key
"$OPD" --session-dir="$W/sb" --ext-feature=pprof:listen=127.0.0.1:$(net_free_port),helper_idle=soon \
	-- /bin/true > bad.out 2> bad.err
rc=$?
[ $rc -ne 0 ] && grep -q 'helper_idle.*"soon": expected a time' bad.err "$W/sb/samples/oprofiled.log" 2> /dev/null ||
	{ echo "FAIL: helper_idle=soon was not refused (rc $rc)"; cat bad.err; fail=1; }

net_finish pull_ondemand.sh
