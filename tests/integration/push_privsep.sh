#!/bin/sh
# push_privsep.sh - the push plugin's libcurl runs in its helper program
# oprofiled-push, not in the daemon (issue 20, privilege separation): a
# live daemon pushing every second to a loopback store that hangs, so that
# the helper is in the middle of a request:
#  - the helper runs as nobody (uid, gid, no groups) with NoNewPrivs when
#    the daemon is root, as the daemon's user otherwise, and never in the
#    session directory;
#  - the daemon's maps hold the plugin but no libcurl, GnuTLS, libcrypto,
#    libssh2 or krb5; the helper's hold libcurl (the check can see it);
#  - SIGKILL of the helper mid-request: the plugin restarts it (counted),
#    the profile stays spooled, nothing is dropped, and once the store
#    answers every profile arrives, the intervals contiguous;
#  - SIGTERM while a request hangs (timeout=30): the daemon ends within
#    a few seconds and its helper with it;
#  - SIGKILL of the daemon: its helper dies too;
#  - a daemon run as nobody (root runs the test): its helper runs as the
#    same user and the pushes arrive.
# helper_idle=0 (a resident helper): the start line names its pid and user
# and the test kills it mid-request. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_privsep push
net_pprof || exit 1

if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	want_uid=$(id -u nobody)
	want_gid=$(id -g nobody)
	want_user=nobody
else
	want_uid=$(id -u)
	want_gid=$(id -g)
	want_user="the daemon's user"
fi

# the helper's pid: the daemon's child running oprofiled-push
helper_pid() {
	ps --ppid "$1" -o pid=,args= 2> /dev/null | sed -n 's/^ *\([0-9]*\) oprofiled-push.*/\1/p' | head -1
}
field() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2> /dev/null; }
# check_identity PID: uid, gid, groups, NoNewPrivs, cwd
check_identity() {
	_u=$(field "$1" Uid)
	_g=$(field "$1" Gid)
	_grp=$(field "$1" Groups)
	_nnp=$(field "$1" NoNewPrivs)
	echo "note: helper $1: Uid $_u Gid $_g Groups '$_grp' NoNewPrivs $_nnp cwd $(readlink "/proc/$1/cwd")"
	[ "$_u" = "$want_uid	$want_uid	$want_uid	$want_uid" ] ||
		{ echo "FAIL: helper $1 runs as uid $_u, not $want_uid"; fail=1; }
	[ "$_g" = "$want_gid	$want_gid	$want_gid	$want_gid" ] ||
		{ echo "FAIL: helper $1 runs as gid $_g, not $want_gid"; fail=1; }
	if [ "$want_user" = nobody ] && [ -n "$_grp" ]; then
		echo "FAIL: helper $1 keeps the groups $_grp"; fail=1
	fi
	[ "$_nnp" = 1 ] || { echo "FAIL: helper $1 has NoNewPrivs $_nnp"; fail=1; }
	[ "$(readlink "/proc/$1/cwd")" = / ] || { echo "FAIL: helper $1 works in $(readlink "/proc/$1/cwd")"; fail=1; }
}

# start_daemon SESSION PORT: pushing every second (timeout=30), $dpid
start_daemon() {
	net_push_start "$1" "url=http://127.0.0.1:$2,interval=1s,timeout=30,service=privsep,helper_idle=0"
}

# 1. a store that hangs: every request stays under way (timeout=30)
net_recv_start "$W/h" --hang || { echo "FAIL: hanging receiver did not start"; exit 1; }
hang_pid=${net_pids##* }
P=$(cat "$W/h.port")
start_daemon "$W/s" "$P"
grep "pushing to" "$W/s/samples/oprofiled.log" | sed 's/^/note: /'
h1=$(sed -n 's/.*helper oprofiled-push pid \([0-9]*\) as .*/\1/p' "$W/s/samples/oprofiled.log")
[ -n "$h1" ] && [ "$h1" = "$(helper_pid $dpid)" ] ||
	{ echo "FAIL: the start line names helper pid '$h1', the daemon's child is '$(helper_pid $dpid)'"; exit 1; }
grep -q "helper oprofiled-push pid $h1 as $want_user" "$W/s/samples/oprofiled.log" ||
	{ echo "FAIL: the start line does not say the helper runs as $want_user"; fail=1; }
check_identity "$h1"

# 2. the libraries: libcurl and its TLS stack in the helper only
grep -q "/push\.so" "/proc/$dpid/maps" || { echo "FAIL: the daemon does not map push.so"; fail=1; }
bad=$(grep -E -o "[^/ ]*(libcurl|gnutls|libcrypto|libssl|libssh2|krb5|libnghttp2)[^/ ]*$" "/proc/$dpid/maps" | sort -u | tr '\n' ' ')
[ -z "$bad" ] || { echo "FAIL: the daemon maps $bad"; fail=1; }
grep -q "libcurl" "/proc/$h1/maps" || { echo "FAIL: the helper does not map libcurl"; fail=1; }
echo "note: daemon VmRSS $(field $dpid VmRSS), helper VmRSS $(field $h1 VmRSS)"

# 3. SIGKILL of the helper in the middle of a request
net_wait 10 test -s "$W/h/hung" || { echo "FAIL: no request reached the hanging store"; exit 1; }
sleep 0.5
kill -KILL "$h1"
lost_ge() { [ "$(net_counter "$W/s" push helper_lost)" -ge 1 ] 2> /dev/null; }
restart_ge() { [ "$(net_counter "$W/s" push helper_restarts)" -ge 1 ] 2> /dev/null; }
net_wait 10 lost_ge || { echo "FAIL: the lost helper was not counted"; net_status "$W/s" push; fail=1; }
net_wait 15 restart_ge || { echo "FAIL: the helper was not restarted"; net_status "$W/s" push; fail=1; }
h2=$(helper_pid $dpid)
[ -n "$h2" ] && [ "$h2" != "$h1" ] || { echo "FAIL: no new helper ($h2)"; fail=1; }
[ -n "$h2" ] && check_identity "$h2"
grep -q "helper oprofiled-push: .*signal 9" "$W/s/samples/oprofiled.log" ||
	{ echo "FAIL: the log does not say the helper was killed"; grep helper "$W/s/samples/oprofiled.log"; fail=1; }
net_status "$W/s" push | grep -q "last exit: signal 9" ||
	{ echo "FAIL: the status does not show the helper's last exit"; net_status "$W/s" push; fail=1; }
spooled=$(net_counter "$W/s" push spooled)
[ "${spooled:-0}" -ge 1 ] && [ "$(net_counter "$W/s" push dropped)" = 0 ] ||
	{ echo "FAIL: after the kill: spooled $spooled"; net_status "$W/s" push; fail=1; }

# 4. the store answers again: everything spooled arrives, nothing lost
kill "$hang_pid"
wait "$hang_pid" 2> /dev/null
net_recv_start "$W/r" --port "$P" || { echo "FAIL: receiver did not start"; exit 1; }
reqs_ge() { [ "$(ls "$1"/*.req 2> /dev/null | wc -l)" -ge "$2" ]; }
net_wait 40 reqs_ge "$W/r" $((spooled + 2)) ||
	{ echo "FAIL: the spooled profiles did not arrive"; net_status "$W/s" push; fail=1; }
kill -TERM $dpid
wait $dpid
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat "$W/s.err"; fail=1; }
c_sent=$(sed -n 's/^sent: //p' "$W/s/samples/oprofiled.log" | tail -1)
c_dropped=$(sed -n 's/^dropped: //p' "$W/s/samples/oprofiled.log" | tail -1)
c_lost=$(sed -n 's/^helper_lost: //p' "$W/s/samples/oprofiled.log" | tail -1)
echo "note: sent $c_sent, dropped $c_dropped, helpers lost $c_lost, spooled at the kill $spooled"
[ "$c_dropped" = 0 ] || { echo "FAIL: $c_dropped profiles dropped"; fail=1; }
$CHECK --dir "$W/r" --protocol pyroscope --service privsep --pprof "$PPROF" --proto "$PROTO" \
	--min $((spooled + 2)) --contiguous > check1 || { echo "FAIL: delivered profiles"; cat check1; fail=1; }
ps -p "$h2" > /dev/null 2>&1 && { echo "FAIL: helper $h2 outlived its daemon"; fail=1; }

# 5. SIGTERM while a request hangs (timeout=30): a prompt end, helper included
net_recv_start "$W/h2" --hang || { echo "FAIL: hanging receiver did not start"; exit 1; }
P2=$(cat "$W/h2.port")
start_daemon "$W/s2" "$P2"
net_wait 10 test -s "$W/h2/hung" || { echo "FAIL: no request reached the hanging store"; exit 1; }
h3=$(helper_pid $dpid)
t0=$(date +%s%N)
kill -TERM $dpid
wait $dpid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "note: SIGTERM with a request under way: the daemon ended in $ms ms (rc $rc)"
[ $rc -eq 0 ] && [ $ms -lt 5000 ] || { echo "FAIL: the stop took $ms ms (rc $rc)"; fail=1; }
ps -p "$h3" > /dev/null 2>&1 && { echo "FAIL: helper $h3 outlived its daemon"; fail=1; }
grep -q "stopping: [1-9][0-9]* profiles wait in the spool" "$W/s2/samples/oprofiled.log" ||
	{ echo "FAIL: the profile under way was not kept in the spool"; fail=1; }

# 6. SIGKILL of the daemon: the helper follows (PR_SET_PDEATHSIG)
start_daemon "$W/s3" "$P2"
h4=$(helper_pid $dpid)
work=$(ps --ppid $dpid -o pid=,args= | sed -n 's/^ *\([0-9]*\) .*network.*/\1/p')
kill -KILL $dpid
wait $dpid 2> /dev/null
[ -n "$work" ] && kill $work 2> /dev/null
gone() { ! ps -p "$1" > /dev/null 2>&1; }
[ -n "$h4" ] && net_wait 5 gone "$h4" || { echo "FAIL: helper '$h4' outlived its SIGKILLed daemon"; fail=1; }

# 7. an unprivileged daemon (a user profiling their own program): its
# helper runs as that user, and the pushes arrive
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1 && command -v setpriv > /dev/null; then
	net_recv_start "$W/r7" || { echo "FAIL: receiver did not start"; exit 1; }
	P7=$(cat "$W/r7.port")
	mkdir "$W/nb" && chown nobody "$W/nb"
	setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups "$OPD" \
		--session-dir="$W/nb/s" --events=TIMER:1000000 \
		"--ext-feature=push:url=http://127.0.0.1:$P7,interval=1s,service=privsep,helper_idle=0" \
		-- "$HOT" 4000 > out7 2> err7
	rc=$?
	no_perf err7
	grep -q "helper oprofiled-push pid [0-9]* as the daemon's user" "$W/nb/s/samples/oprofiled.log" ||
		{ echo "FAIL: the unprivileged daemon's helper"; cat err7; fail=1; }
	n7=$(ls "$W"/r7/*.req 2> /dev/null | wc -l)
	echo "note: unprivileged daemon (nobody): rc $rc, $n7 pushes received"
	[ $rc -eq 0 ] && [ "$n7" -ge 1 ] || { echo "FAIL: the unprivileged daemon pushed $n7 (rc $rc)"; cat err7; fail=1; }
else
	echo "note: not root (or no nobody/setpriv): the unprivileged case is the whole test"
fi

net_finish push_privsep.sh
