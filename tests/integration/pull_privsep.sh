#!/bin/sh
# pull_privsep.sh - the pprof plugin's privilege separation (issue 20): its
# HTTP server runs in the helper oprofiled-pull, started by the daemon
# through plugins/common/np_child. Against live daemons (cpu-clock):
# 1. root daemon: the helper runs as nobody (uid/gid/groups from
#    /proc/PID/status), NoNewPrivs 1, no capabilities, only fds 0-2
#    (/dev/null), 3 and 4 (sockets) and what it opened itself (no file);
#    the daemon maps no libmicrohttpd/GnuTLS/libcurl/libcrypto, the helper
#    does; pulls work;
# 2. the helper SIGKILLed: restarted, pulls work again, counted;
# 3. the daemon SIGKILLed: the helper dies with it;
# 4. a group-writable OP_HELPER_DIR, one another user owns and an unknown
#    user= are refused at start with a message;
# 5. a hostile helper (tests/integration/pull_hostile) sending 6 kinds of
#    malformed messages, then a flood of log lines: the daemon kills and
#    restarts it each time with growing backoff, logs why, rate-limits the
#    flood, and samples at the same rate with the flood as with no helper;
# 6. an unprivileged daemon (nobody, in a directory it owns) serves pulls.
# helper_idle=0 (a resident helper) throughout: what is checked here is the
# helper from start to stop and its restarts after a crash; on-demand
# helpers are pull_ondemand.sh's. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init pull_privsep pprof
net_need_system_wide
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs root (a root daemon drops its helper to nobody)"
	exit 77
fi
id -u nobody > /dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
command -v setpriv > /dev/null || { echo "SKIP: setpriv (util-linux) missing"; exit 77; }
NOBODY=$(id -u nobody)
NOGROUP=$(id -g nobody)
HOSTILE=$B/tests/integration/pull_hostile

# helper_of PID: the daemon's child process whose argv[0] is oprofiled-pull, empty if none
helper_of() {
	for _c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		if [ "$(tr '\0' '\n' < /proc/$_c/cmdline 2>/dev/null | head -1)" = oprofiled-pull ]; then
			echo "$_c"
			return
		fi
	done
}
# the value of field $2 of /proc/$1/status
status_field() {
	sed -n "s/^$2:[[:space:]]*//p" /proc/"$1"/status 2>/dev/null
}
start_daemon() { # SESSION PORT [args...]
	_s=$1
	_p=$2
	shift 2
	"$OPD" --session-dir="$W/$_s" --system-wide --events=TIMER:1000000 \
		--ext-feature=pprof:listen=127.0.0.1:$_p,helper_idle=0 "$@" > "$_s.out" 2> "$_s.err" &
	dpid=$!
	net_pids="$net_pids $dpid"
	net_wait 20 grep -q "serving http://127.0.0.1:$_p" "$W/$_s/samples/oprofiled.log" || {
		no_perf "$_s.err"
		echo "FAIL: $_s: the pprof plugin did not start serving"
		cat "$_s.err" "$W/$_s/samples/oprofiled.log"
		exit 1
	}
}

# 1. the helper's process
P=$(net_free_port)
start_daemon s "$P"
hp=$(helper_of $dpid)
[ -n "$hp" ] || { echo "FAIL: no helper process under the daemon"; exit 1; }
echo "note: daemon $dpid, helper $hp ($(cat /proc/$hp/comm))"
set -- $(status_field $hp Uid)
[ "$*" = "$NOBODY $NOBODY $NOBODY $NOBODY" ] ||
	{ echo "FAIL: the helper's uids are $*, not nobody's ($NOBODY)"; fail=1; }
set -- $(status_field $hp Gid)
[ "$*" = "$NOGROUP $NOGROUP $NOGROUP $NOGROUP" ] ||
	{ echo "FAIL: the helper's gids are $*, not $NOGROUP"; fail=1; }
[ -z "$(status_field $hp Groups)" ] ||
	{ echo "FAIL: the helper has groups $(status_field $hp Groups)"; fail=1; }
[ "$(status_field $hp NoNewPrivs)" = 1 ] || { echo "FAIL: the helper's NoNewPrivs is not 1"; fail=1; }
[ "$(status_field $hp CapEff)" = 0000000000000000 ] ||
	{ echo "FAIL: the helper has capabilities $(status_field $hp CapEff)"; fail=1; }
[ "$(readlink /proc/$hp/cwd)" = / ] || { echo "FAIL: the helper's cwd is $(readlink /proc/$hp/cwd)"; fail=1; }
[ ! -s /proc/$hp/environ ] || { echo "FAIL: the helper has an environment"; tr '\0' '\n' < /proc/$hp/environ; fail=1; }
ls -l /proc/$hp/fd > fds.txt
for f in 0 1 2; do
	[ "$(readlink /proc/$hp/fd/$f)" = /dev/null ] || { echo "FAIL: the helper's fd $f is not /dev/null"; fail=1; }
done
for f in 3 4; do
	readlink /proc/$hp/fd/$f | grep -q '^socket:' || { echo "FAIL: the helper's fd $f is not a socket"; fail=1; }
done
# anything else it opened itself (libmicrohttpd's wake-up pipe, epoll): never a file of the daemon
for f in /proc/$hp/fd/*; do
	n=${f##*/}
	[ "$n" -le 4 ] && continue
	t=$(readlink "$f")
	case $t in
	/*) echo "FAIL: the helper holds a file: fd $n -> $t"; fail=1 ;;
	esac
done
# the mapped files' paths (not a sample file named after a helper's library)
if awk '{ print $6 }' /proc/$dpid/maps | sort -u |
	grep -E '/lib(microhttpd|gnutls|curl[^/]*|crypto|ssl|nettle)\.so[^/]*$' > dmaps.txt; then
	echo "FAIL: the daemon maps network/TLS libraries:"; cat dmaps.txt; fail=1
fi
grep -q libmicrohttpd /proc/$hp/maps || { echo "FAIL: the helper does not map libmicrohttpd"; fail=1; }
readelf -d "$OP_PLUGIN_DIR/pprof.so" | grep -q 'NEEDED.*microhttpd' &&
	{ echo "FAIL: pprof.so links libmicrohttpd"; fail=1; }
U=http://127.0.0.1:$P
pull() { # NAME: a 1 s profile, HTTP 200 and gzip
	code=$(timeout 20 curl -s -o "$1.pb.gz" -w '%{http_code}' "$U/debug/pprof/profile?seconds=1")
	[ "$code" = 200 ] && gzip -t "$1.pb.gz" || { echo "FAIL: $1: HTTP $code"; fail=1; }
}
pull first

# 2. the helper killed: restarted, counted, pulls work again
kill -KILL "$hp"
new_helper() {
	_h=$(helper_of $dpid)
	[ -n "$_h" ] && [ "$_h" != "$hp" ]
}
net_wait 10 new_helper ||
	{ echo "FAIL: the helper was not restarted"; fail=1; }
net_wait 10 grep -q "helper oprofiled-pull restarted" "$W/s/samples/oprofiled.log" ||
	{ echo "FAIL: no restart logged"; fail=1; }
grep -q "helper oprofiled-pull (pid $hp) ended: signal 9 (Killed) - restarting in 250 ms" "$W/s/samples/oprofiled.log" ||
	{ echo "FAIL: the helper's death was not logged"; grep helper "$W/s/samples/oprofiled.log"; fail=1; }
hp2=$(helper_of $dpid)
pull second
[ "$(net_counter "$W/s" pprof helper_restarts)" = 1 ] ||
	{ echo "FAIL: helper_restarts is not 1"; net_status "$W/s" pprof; fail=1; }
net_status "$W/s" pprof | grep -q "helper oprofiled-pull pid $hp2, 1 restarts, last exit: signal 9" ||
	{ echo "FAIL: the status does not name the helper"; net_status "$W/s" pprof; fail=1; }

# 3. the daemon SIGKILLed: the helper goes with it (its death signal)
kill -KILL $dpid
wait $dpid 2>/dev/null
gone() { [ ! -d /proc/$1 ] || [ "$(status_field $1 State | cut -c1)" = Z ]; }
net_wait 5 gone "$hp2" || { echo "FAIL: the helper $hp2 outlived the daemon"; fail=1; }

# 4. refused at start: a helper directory its group may write or another user owns, an unknown user
mkdir -m 0775 gw && cp "$OP_HELPER_DIR/oprofiled-pull" gw/ && chmod 0775 gw
P4=$(net_free_port)
OP_HELPER_DIR=$W/gw timeout 20 "$OPD" --session-dir="$W/s4" --events=TIMER:1000000 \
	--ext-feature=pprof:listen=127.0.0.1:$P4 -- sleep 5 > out4 2> err4
rc=$?
[ $rc -ne 0 ] && grep -q "helper program $W/gw/oprofiled-pull: directory $W/gw is writable by group or others" err4 ||
	{ echo "FAIL: a group-writable helper directory was not refused (rc $rc)"; cat err4; fail=1; }
# a helper directory another user owns (mode 0755)
mkdir -m 0755 ow && cp "$OP_HELPER_DIR/oprofiled-pull" ow/ && chown "$NOBODY" ow
OP_HELPER_DIR=$W/ow timeout 20 "$OPD" --session-dir="$W/s6" --events=TIMER:1000000 \
	--ext-feature=pprof:listen=127.0.0.1:$P4 -- sleep 5 > out6 2> err6
rc=$?
[ $rc -ne 0 ] && grep -q "directory $W/ow is owned by uid $NOBODY" err6 ||
	{ echo "FAIL: a helper directory owned by nobody was not refused (rc $rc)"; cat err6; fail=1; }
timeout 20 "$OPD" --session-dir="$W/s5" --events=TIMER:1000000 \
	--ext-feature=pprof:listen=127.0.0.1:$P4,user=no-such-user-np -- sleep 5 > out5 2> err5
rc=$?
[ $rc -ne 0 ] && grep -q "user=no-such-user-np: no such user" err5 ||
	{ echo "FAIL: an unknown user= was not refused (rc $rc)"; cat err5; fail=1; }

# 5. a hostile helper
mkdir -m 0755 hd && cp "$HOSTILE" hd/oprofiled-pull
P5=$(net_free_port)
cnt=/dev/shm/op_pull_hostile.$P5
rm -f "$cnt"
printf '\0\0\0\0' > "$cnt" && chown "$NOBODY" "$cnt"
# cpu-clock does not tick on an idle CPU: both CPUs busy, so that the
# stream is 1 kHz per CPU whatever else runs
for _i in 1 2; do
	sh -c 'while :; do :; done' &
	net_pids="$net_pids $!"
	spin="${spin:-} $!"
done
OP_HELPER_DIR=$W/hd start_daemon h "$P5"
hlog=$W/h/samples/oprofiled.log
# six malformed messages, six kills; after the sixth the helper waits 8 s
net_wait 20 grep -q "restarting in 8000 ms" "$hlog" ||
	{ echo "FAIL: the sixth hostile helper was not killed"; grep helper "$hlog"; fail=1; }
r_none=$(net_rate "$W/h" 4)
net_wait 15 grep -q "flooding now" "$hlog" || { echo "FAIL: the flood did not start"; fail=1; }
sleep 1
r_flood=$(net_rate "$W/h" 6)
echo "note: samples/s with no helper $r_none, with a helper flooding the daemon $r_flood"
ok=$(python3 -c "a,b=${r_none:-0},${r_flood:-0}; print(1 if a > 100 and abs(a-b) <= 0.15*a else 0)")
[ "$ok" = 1 ] || { echo "FAIL: the sample rate changed while the helper flooded"; fail=1; }
kill $spin 2>/dev/null
for why in "a message of 34 bytes whose header says 100 payload bytes" \
	"a message of unknown type 30583" \
	"a message of 20480 bytes, more than the bound (16408)" \
	"a descriptor with a message of type 258" \
	"1 descriptors where the header announces 0" \
	"a profile request of 1000000000 seconds"; do
	grep -q "killed: it sent $why" "$hlog" || { echo "FAIL: not logged: killed: it sent $why"; fail=1; }
done
for ms in 250 500 1000 2000 4000 8000; do
	grep -q "restarting in $ms ms" "$hlog" || { echo "FAIL: no backoff of $ms ms"; fail=1; }
done
[ "$(net_counter "$W/h" pprof helper_bad_messages)" = 6 ] ||
	{ echo "FAIL: helper_bad_messages is not 6"; net_status "$W/h" pprof; fail=1; }
[ "$(net_counter "$W/h" pprof helper_restarts)" -ge 6 ] ||
	{ echo "FAIL: helper_restarts is not >= 6"; fail=1; }
[ "$(net_counter "$W/h" pprof helper_log_dropped)" -gt 1000 ] ||
	{ echo "FAIL: the flood was not rate-limited"; net_status "$W/h" pprof; fail=1; }
nflood=$(grep -c "helper oprofiled-pull: flood$" "$hlog")
[ "$nflood" -le 60 ] || { echo "FAIL: $nflood flood lines reached the log"; fail=1; }
kill -TERM $dpid
wait $dpid
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc after the hostile helper"; fail=1; }
lost=$(cat "$W/h/samples/current/stats/lost_samples_by_kernel" 2>/dev/null || echo 0)
[ "$lost" = 0 ] || { echo "FAIL: the kernel lost $lost samples"; fail=1; }
rm -f "$cnt"

# 6. an unprivileged daemon: nobody, profiling its own program in its own directory
mkdir -m 0755 u && chown "$NOBODY:$NOGROUP" u
P6=$(net_free_port)
setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups -- env OP_PLUGIN_DIR="$OP_PLUGIN_DIR" \
	OP_HELPER_DIR="$OP_HELPER_DIR" "$OPD" --session-dir="$W/u/s" --events=TIMER:1000000 \
	--ext-feature=pprof:listen=127.0.0.1:$P6,helper_idle=0 -- "$HOT" 20000 > u.out 2> u.err &
upid=$!
net_pids="$net_pids $upid"
if net_wait 20 grep -q "serving http://127.0.0.1:$P6.*as the daemon's user" "$W/u/s/samples/oprofiled.log"; then
	up=$(helper_of $upid)
	set -- $(status_field "$up" Uid)
	[ "${1:-}" = "$NOBODY" ] || { echo "FAIL: the unprivileged daemon's helper runs as uid ${1:-?}"; fail=1; }
	[ "$(status_field "$up" NoNewPrivs)" = 1 ] || { echo "FAIL: NoNewPrivs is not 1 (unprivileged)"; fail=1; }
	U=http://127.0.0.1:$P6
	pull unprivileged
else
	no_perf u.err
	echo "FAIL: the unprivileged daemon did not serve"; cat u.err "$W/u/s/samples/oprofiled.log"; fail=1
fi
kill -TERM $upid 2>/dev/null
wait $upid 2>/dev/null

net_finish pull_privsep.sh
