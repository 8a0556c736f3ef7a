#!/bin/sh
# push_proxy.sh - the push plugin through a forward proxy (issue 20, fleet
# networks): a loopback proxy (push_proxy.py) in front of the loopback
# receiver (push_receiver.py). proxy= with proxy_auth_file: every push goes
# through it in absolute form with the file's Basic credentials, every
# body decodes (push_check.py), the password shows in no log, stderr or
# ps. Without proxy=: the daemon's http_proxy (userinfo taken, never
# printed), no_proxy and noproxy=, proxy=none, HTTP_PROXY ignored, https_proxy and
# all_proxy chosen as curl does. A proxy down for a while: failures
# counted, everything spooled, all delivered after. A proxy answering 407:
# the last error says so, counted failed, nothing dropped. An https store
# through the proxy (CONNECT, ca_file), and a 407 for the CONNECT. Bad values
# refused with a message naming the key. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_proxy push
net_pprof || exit 1
# the test sets the proxy environment itself: none of the caller's
unset http_proxy https_proxy HTTPS_PROXY HTTP_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

PASS=ppw-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
ENVPASS=epw-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
umask 077
printf '# the proxy account\nfleet-agent:%s\n' "$PASS" > pauth

# proxy_start NAME [--port N] [--status 407]: a proxy logging to $W/NAME.log, its port in $W/NAME.port
proxy_start() {
	_n=$1
	shift
	rm -f "$W/$_n.port"
	python3 "$S/tests/integration/push_proxy.py" --log "$W/$_n.log" --port-file "$W/$_n.port" "$@" &
	net_pids="$net_pids $!"
	proxy_pid=$!
	net_wait 10 test -s "$W/$_n.port"
}
counter() { net_counter "$1" push "$2"; }
counter_ge() { [ "$(counter "$1" "$2")" -ge "$3" ] 2> /dev/null; }
reqs() { ls "$1"/*.req 2> /dev/null | wc -l; }
reqs_ge() { [ "$(reqs "$1")" -ge "$2" ]; }
lines() { cat "$1" 2> /dev/null | wc -l; }
# the proxy logs a request before it forwards it: wait (bounded) until receiver
# $3 holds (beyond $4 requests) as many as proxy log $1 has lines (beyond $2)
caught_up() { [ $(($(reqs "$3") - $4)) -ge $(($(lines "$1") - $2)) ]; }
started() { grep "pushing to" "$1/samples/oprofiled.log" 2> /dev/null; }
# every line of proxy log $1 an absolute-form POST to the receiver on port $2
absolute_form() {
	python3 - "$1" "$2" << 'EOF'
import json, sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    want = "POST http://127.0.0.1:%s/ingest?name=" % sys.argv[2]
    if not r["line"].startswith(want) or not r["line"].endswith(" HTTP/1.1"):
        print("not absolute form: %r" % r["line"])
        sys.exit(1)
    n += 1
sys.exit(0 if n else 1)
EOF
}
# every line of proxy log $1 carries Proxy-Authorization Basic $2 (user:password)
proxy_auth_is() {
	python3 - "$1" "$2" << 'EOF'
import base64, json, sys
want = "Basic " + base64.b64encode(sys.argv[2].encode()).decode()
rs = [json.loads(l) for l in open(sys.argv[1])]
bad = [r["proxy_auth"] for r in rs if r["proxy_auth"] != want]
if bad or not rs:
    print("Proxy-Authorization: %d requests, %d not the file's credentials" % (len(rs), len(bad)))
    sys.exit(1)
EOF
}

# 1. refusals, each with a message naming the key
refused() { # $1 = expected message, rest: oprofiled args (env: $ENV, assignments)
	_m=$1
	shift
	env ${ENV:-} "$OPD" --session-dir="$W/sr" "$@" -- /bin/true > r.out 2> r.err
	_rc=$?
	if [ $_rc -eq 0 ] || ! grep -q -- "$_m" r.err "$W/sr/samples/oprofiled.log" 2>/dev/null; then
		echo "FAIL: $* was not refused with \"$_m\" (rc $_rc)"; cat r.err; fail=1
	fi
	[ -f "$W/sr/samples/oprofiled.log" ] && cat "$W/sr/samples/oprofiled.log" >> r.err
	rm -rf "$W/sr"
}
U=url=http://127.0.0.1:1
refused 'proxy.*"ftp://x": expected an http, https, socks4, socks4a, socks5 or socks5h:// URL' \
	--ext-feature=push:$U,proxy=ftp://x
refused 'proxy.*"proxy" carries credentials: put "user:password" in a file (proxy_auth_file=PATH)' \
	--ext-feature=push:$U,proxy=http://u:pxsecret@h:1
grep -q pxsecret r.err && { echo "FAIL: the proxy password shows:"; grep pxsecret r.err; fail=1; }
refused 'proxy.*"http://h:1/path": expected no path' --ext-feature=push:$U,proxy=http://h:1/path
refused 'proxy.*"http://h:0" is not a URL: expected a port 1..65535' --ext-feature=push:$U,proxy=http://h:0
refused 'noproxy.*expected host names, domains' "--ext-feature=push:$U,proxy=http://h:1,noproxy=a|b"
refused 'proxy_auth_file.*expected an absolute path' --ext-feature=push:$U,proxy=http://h:1,proxy_auth_file=pauth
refused 'proxy_auth_file .* but no proxy (proxy=none)' --ext-feature=push:$U,proxy=none,proxy_auth_file=$W/pauth
refused 'proxy_auth_file .* but no proxy (none set)' --ext-feature=push:$U,proxy_auth_file=$W/pauth
cp pauth pauth_open && chmod 644 pauth_open
refused "proxy auth file $W/pauth_open is readable by group or others" \
	--ext-feature=push:$U,proxy=http://h:1,proxy_auth_file=$W/pauth_open
printf 'no-colon-here\n' > pauth_bad
refused "pauth_bad:1: expected \"user:password\"" --ext-feature=push:$U,proxy=http://h:1,proxy_auth_file=$W/pauth_bad
printf 'a:b\nc:d\n' > pauth_two
refused "pauth_two:2: a second credentials line" --ext-feature=push:$U,proxy=http://h:1,proxy_auth_file=$W/pauth_two
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	# a root daemon trusts only what root owns (op_trust): another user could write it
	cp pauth pauth_nobody && chown nobody pauth_nobody
	refused "proxy_auth_file: .*pauth_nobody is owned by uid" \
		--ext-feature=push:$U,proxy=http://h:1,proxy_auth_file=$W/pauth_nobody
fi
# a bad proxy in the environment: named, its password not shown
ENV="http_proxy=http://u:$ENVPASS@h:abc"
refused 'environment http_proxy: "http://h:abc" is not a URL' --ext-feature=push:$U
ENV=
grep -q "$ENVPASS" r.err && { echo "FAIL: the environment's proxy password shows"; fail=1; }
# the config file's keys, named by their path
printf 'plugins = { push = { url = "http://127.0.0.1:1"; proxy = "http://h:1/x"; }; };\n' > bad.conf
"$OPD" --config="$W/bad.conf" --session-dir="$W/sc" --check-config > cc.out 2>&1
[ $? -ne 0 ] && grep -q 'config plugins.push.proxy.*expected no path' cc.out ||
	{ echo "FAIL: a bad plugins.push.proxy was not refused by path"; cat cc.out; fail=1; }
printf 'plugins = { push = { url = "http://127.0.0.1:1"; proxy = "socks5h://127.0.0.1:1080"; noproxy = "localhost,10.0.0.0/8"; proxy_auth_file = "%s"; }; };\n' "$W/pauth" > good.conf
"$OPD" --config="$W/good.conf" --session-dir="$W/sc" --check-config > cc.out 2>&1 ||
	{ echo "FAIL: a good plugins.push proxy group was refused"; cat cc.out; fail=1; }

# which proxy: curl's rules, on the start line (the helper starts on demand: nothing is sent)
which_proxy() { # $1 = expected start line text, $2 = push args, rest: env assignments
	_m=$1
	_a=$2
	shift 2
	env "$@" "$OPD" --session-dir="$W/sw" --events=TIMER:1000000 "--ext-feature=push:$_a" \
		-- /bin/true > w.out 2> w.err
	grep -q -- "$_m" "$W/sw/samples/oprofiled.log" 2> /dev/null ||
		{ echo "FAIL: push:$_a with $*: expected \"$_m\""; started "$W/sw"; cat w.err; fail=1; }
	rm -rf "$W/sw"
}
which_proxy ", no proxy, spool" url=http://127.0.0.1:1 HTTP_PROXY=http://127.0.0.1:9
which_proxy "via proxy http://127.0.0.1:9 (from https_proxy)" url=https://127.0.0.1:1 \
	https_proxy=http://127.0.0.1:9 http_proxy=http://127.0.0.1:8
which_proxy "via proxy https://127.0.0.1:7 (from HTTPS_PROXY)" url=https://127.0.0.1:1 \
	HTTPS_PROXY=https://127.0.0.1:7
which_proxy "via proxy socks5h://127.0.0.1:6 (from all_proxy)" url=http://127.0.0.1:1 \
	https_proxy=http://127.0.0.1:9 all_proxy=socks5h://127.0.0.1:6
which_proxy "via proxy http://127.0.0.1:5 (from ALL_PROXY; not for .corp)" url=http://127.0.0.1:1 \
	ALL_PROXY=127.0.0.1:5 NO_PROXY=.corp
which_proxy "via proxy http://127.0.0.1:4 (from proxy=; not for c.d,.e.f)" \
	"url=http://127.0.0.1:1,proxy=http://127.0.0.1:4,noproxy=c.d;.e.f" http_proxy=http://127.0.0.1:9 no_proxy=a.b
which_proxy ", no proxy (proxy=none), spool" url=http://127.0.0.1:1,proxy=none \
	http_proxy=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9

net_recv_start "$W/r" || { echo "FAIL: receiver did not start"; exit 1; }
R=$(cat "$W/r.port")
proxy_start p1 || { echo "FAIL: proxy did not start"; exit 1; }
PP=$(cat "$W/p1.port")

# 2. proxy= and proxy_auth_file: every push through the proxy, with the file's credentials
"$OPD" --session-dir="$W/s1" --events=TIMER:1000000 --rotate=2s \
	"--ext-feature=push:url=http://127.0.0.1:$R/,service=svc-px,proxy=http://127.0.0.1:$PP,proxy_auth_file=$W/pauth" \
	-- "$HOT" 7000 > out1 2> err1 &
dpid=$!
net_wait 20 started "$W/s1" || { no_perf err1; echo "FAIL: the push plugin did not start"; cat err1; fail=1; }
# no process shows the password in its arguments, the daemon's and its helper's included
net_wait 20 counter_ge "$W/s1" sent 1 || { echo "FAIL: nothing sent through the proxy"; fail=1; }
ps -eo args > ps.out
grep -q "$PASS" ps.out && { echo "FAIL: the proxy password is in a process's arguments"; fail=1; }
grep -q "oprofiled-push" ps.out || echo "note: the helper had exited when ps ran"
wait $dpid
rc=$?
no_perf err1
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat err1; fail=1; }
started "$W/s1" | grep -q "via proxy http://127.0.0.1:$PP (from proxy=; proxy_auth_file's credentials)" ||
	{ echo "FAIL: the start line does not name the proxy"; started "$W/s1"; fail=1; }
$CHECK --dir "$W/r" --protocol pyroscope --service svc-px --pprof "$PPROF" --proto "$PROTO" \
	--min 2 > check1 || { echo "FAIL: requests through the proxy"; cat check1; fail=1; }
net_wait 5 caught_up "$W/p1.log" 0 "$W/r" 0
n=$(reqs "$W/r")
[ "$(lines "$W/p1.log")" -eq "$n" ] ||
	{ echo "FAIL: the receiver got $n requests, the proxy saw $(lines "$W/p1.log")"; fail=1; }
absolute_form "$W/p1.log" "$R" || { echo "FAIL: request lines through the proxy"; fail=1; }
proxy_auth_is "$W/p1.log" "fleet-agent:$PASS" || fail=1
grep -rq "$PASS" "$W/s1/samples/oprofiled.log" err1 out1 &&
	{ echo "FAIL: the proxy password shows in the log or on stderr"; fail=1; }
grep -q "^proxy: via proxy http://127.0.0.1:$PP" "$W/s1/samples/oprofiled.log" ||
	{ echo "FAIL: no proxy line in the statistics"; fail=1; }
echo "note: proxy=: $n requests through the proxy"

# 3. the daemon's environment: http_proxy (with userinfo), then no_proxy, then proxy=none
env_run() { # $1 session, $2 more push args, rest: env assignments before the daemon
	_s=$1
	_a=$2
	shift 2
	env "$@" "$OPD" --session-dir="$_s" --events=TIMER:1000000 --rotate=1s \
		"--ext-feature=push:url=http://127.0.0.1:$R,service=svc-env$_a" \
		-- "$HOT" 3500 > "$_s.out" 2> "$_s.err"
	[ $? -eq 0 ] || { echo "FAIL: oprofiled ($*) exited"; cat "$_s.err"; fail=1; }
}
before_r=$(reqs "$W/r")
before_p=$(lines "$W/p1.log")
env_run "$W/s2" "" "http_proxy=http://envuser:$ENVPASS@127.0.0.1:$PP"
net_wait 5 caught_up "$W/p1.log" "$before_p" "$W/r" "$before_r"
d_r=$(($(reqs "$W/r") - before_r))
d_p=$(($(lines "$W/p1.log") - before_p))
[ "$d_r" -ge 1 ] && [ "$d_p" -eq "$d_r" ] ||
	{ echo "FAIL: http_proxy: $d_r pushes arrived, $d_p through the proxy"; fail=1; }
tail -n "$d_p" "$W/p1.log" > p_env.log
proxy_auth_is p_env.log "envuser:$ENVPASS" || fail=1
started "$W/s2" | grep -q "via proxy http://127.0.0.1:$PP (from http_proxy)" ||
	{ echo "FAIL: http_proxy: start line"; started "$W/s2"; fail=1; }
grep -rq "$ENVPASS" "$W/s2/samples/oprofiled.log" "$W/s2.err" "$W/s2.out" &&
	{ echo "FAIL: the environment's proxy password shows in the log"; fail=1; }

for how in no_proxy noproxy proxy_none; do
	before_r=$(reqs "$W/r")
	before_p=$(lines "$W/p1.log")
	if [ $how = no_proxy ]; then
		env_run "$W/s3$how" "" "http_proxy=http://127.0.0.1:$PP" no_proxy=127.0.0.1
		want="via proxy http://127.0.0.1:$PP (from http_proxy; not for 127.0.0.1)"
	elif [ $how = noproxy ]; then
		# the key's list (';' on the command line), the environment's not read
		env_run "$W/s3$how" ",proxy=http://127.0.0.1:$PP,noproxy=example.com;127.0.0.1" \
			no_proxy=example.org
		want="via proxy http://127.0.0.1:$PP (from proxy=; not for example.com,127.0.0.1)"
	else
		# proxy=none: the environment is not read
		env_run "$W/s3$how" ",proxy=none" "http_proxy=http://127.0.0.1:$PP"
		want="no proxy (proxy=none)"
	fi
	d_r=$(($(reqs "$W/r") - before_r))
	d_p=$(($(lines "$W/p1.log") - before_p))
	[ "$d_r" -ge 1 ] && [ "$d_p" -eq 0 ] ||
		{ echo "FAIL: $how: $d_r pushes arrived, $d_p through the proxy (expected direct)"; fail=1; }
	started "$W/s3$how" | grep -q -- "$want" ||
		{ echo "FAIL: $how: expected \"$want\""; started "$W/s3$how"; fail=1; }
done

# 4. the proxy down for a while, then up on the same port: nothing lost
PD=$(net_free_port)
net_recv_start "$W/r4" || { echo "FAIL: receiver did not start"; exit 1; }
R4=$(cat "$W/r4.port")
net_push_start "$W/s4" "url=http://127.0.0.1:$R4,interval=1s,timeout=2,service=svc-down,proxy=http://127.0.0.1:$PD"
net_wait 30 counter_ge "$W/s4" failed 2 || { echo "FAIL: no failures counted with the proxy down"; fail=1; }
net_wait 10 counter_ge "$W/s4" spooled 2 || { echo "FAIL: nothing spooled with the proxy down"; fail=1; }
c_failed=$(counter "$W/s4" failed)
c_spooled=$(counter "$W/s4" spooled)
echo "note: proxy down: failed $c_failed spooled $c_spooled sent $(counter "$W/s4" sent)"
[ "$(counter "$W/s4" sent)" = 0 ] && [ "$(reqs "$W/r4")" -eq 0 ] ||
	{ echo "FAIL: pushes went around the proxy while it was down"; fail=1; }
net_status "$W/s4" push | grep -q "last error: http://127.0.0.1:$R4 via proxy http://127.0.0.1:$PD: " ||
	{ echo "FAIL: the last error does not name the proxy"; net_status "$W/s4" push; fail=1; }
proxy_start p4 --port "$PD" || { echo "FAIL: proxy did not start"; exit 1; }
net_wait 40 reqs_ge "$W/r4" "$c_spooled" ||
	{ echo "FAIL: the spooled profiles did not arrive through the proxy"; fail=1; }
kill -TERM $dpid
wait $dpid
net_wait 5 caught_up "$W/p4.log" 0 "$W/r4" 0
c_prof=$(sed -n 's/^profiles: //p' "$W/s4/samples/oprofiled.log" | tail -1)
c_sent=$(sed -n 's/^sent: //p' "$W/s4/samples/oprofiled.log" | tail -1)
c_dropped=$(sed -n 's/^dropped: //p' "$W/s4/samples/oprofiled.log" | tail -1)
c_spooled=$(sed -n 's/^spooled: //p' "$W/s4/samples/oprofiled.log" | tail -1)
left=$(ls "$W/s4/push-spool" | wc -l)
echo "note: proxy up: profiles $c_prof sent $c_sent dropped $c_dropped spooled $c_spooled, at the stop $left"
# every profile made was sent or waits in the spool (the statistics come
# before the stop spools what the last push left out: that one is added).
# The receiver may hold one more than sent: a push under way at the stop
# reached it, its answer did not reach the daemon, so it stays spooled
# (sent again at the next start: never lost)
r4=$(reqs "$W/r4")
[ "$c_dropped" = 0 ] && [ $((c_sent + c_spooled)) -eq "$c_prof" ] &&
	[ "$r4" -ge "$c_sent" ] && [ "$r4" -le $((c_sent + 1)) ] &&
	[ "$left" -ge "$c_spooled" ] && grep -q "stopping: $left profiles wait in the spool" "$W/s4/samples/oprofiled.log" ||
	{ echo "FAIL: profiles $c_prof, sent $c_sent + spooled $c_spooled ($left at the stop), received $(reqs "$W/r4")"; fail=1; }
[ "$(lines "$W/p4.log")" -eq "$(reqs "$W/r4")" ] ||
	{ echo "FAIL: not every delivered profile went through the proxy"; fail=1; }
$CHECK --dir "$W/r4" --protocol pyroscope --service svc-down --pprof "$PPROF" --proto "$PROTO" \
	--min "$c_spooled" --contiguous > check4 || { echo "FAIL: delivered profiles"; cat check4; fail=1; }

# 5. a proxy answering 407: said in the last error, counted failed, nothing dropped
proxy_start p5 --status 407 || { echo "FAIL: proxy did not start"; exit 1; }
P5=$(cat "$W/p5.port")
net_push_start "$W/s5" "url=http://127.0.0.1:$R4,interval=1s,timeout=2,service=svc-407,proxy=http://127.0.0.1:$P5"
net_wait 30 counter_ge "$W/s5" failed 2 || { echo "FAIL: no failure counted for the 407"; fail=1; }
net_status "$W/s5" push > st5
grep -q "last error: http://127.0.0.1:$R4: HTTP status 407 from proxy http://127.0.0.1:$P5: proxy authentication required" st5 ||
	{ echo "FAIL: the last error does not say 407 from the proxy"; cat st5; fail=1; }
[ "$(sed -n 's/^dropped: //p' st5)" = 0 ] && [ "$(sed -n 's/^sent: //p' st5)" = 0 ] &&
	[ "$(sed -n 's/^spooled: //p' st5)" -ge 1 ] ||
	{ echo "FAIL: a 407 dropped or sent something"; cat st5; fail=1; }
[ "$(lines "$W/p5.log")" -ge 2 ] || { echo "FAIL: the 407 proxy saw $(lines "$W/p5.log") requests"; fail=1; }
kill -TERM $dpid
wait $dpid
# an https store through the same proxy: CONNECT, then the 407 for the CONNECT
if command -v openssl > /dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 > openssl.out 2>&1 ||
		{ echo "FAIL: openssl could not make a certificate"; cat openssl.out; fail=1; }
	net_recv_start "$W/r6" --tls "$W/cert.pem" "$W/key.pem" ||
		{ echo "FAIL: the TLS receiver did not start"; exit 1; }
	R6=$(cat "$W/r6.port")
	before_p=$(lines "$W/p1.log")
	"$OPD" --session-dir="$W/s6" --events=TIMER:1000000 \
		"--ext-feature=push:url=https://127.0.0.1:$R6,protocol=parca,interval=2s,service=svc-tls,ca_file=$W/cert.pem,proxy=http://127.0.0.1:$PP,proxy_auth_file=$W/pauth" \
		-- "$HOT" 5000 > out6 2> err6 ||
		{ echo "FAIL: oprofiled (https through the proxy) exited"; cat err6; fail=1; }
	$CHECK --dir "$W/r6" --protocol parca --service svc-tls --pprof "$PPROF" --proto "$PROTO" \
		--min 1 > check6 || { echo "FAIL: https through the proxy"; cat check6; fail=1; }
	tail -n +$((before_p + 1)) "$W/p1.log" > p_tls.log
	grep -q "\"CONNECT 127.0.0.1:$R6 HTTP/1.1\"" p_tls.log && proxy_auth_is p_tls.log "fleet-agent:$PASS" ||
		{ echo "FAIL: no CONNECT with the credentials through the proxy"; cat p_tls.log; fail=1; }
	echo "note: https through the proxy: $(head -1 check6), $(lines p_tls.log) CONNECTs"
	# an https proxy, verified against the same ca_file as the store (an http store behind it)
	proxy_start p8 --tls "$W/cert.pem" "$W/key.pem" || { echo "FAIL: the https proxy did not start"; exit 1; }
	P8=$(cat "$W/p8.port")
	before_r=$(reqs "$W/r")
	"$OPD" --session-dir="$W/s8" --events=TIMER:1000000 --rotate=1s \
		"--ext-feature=push:url=http://127.0.0.1:$R,service=svc-hp,ca_file=$W/cert.pem,proxy=https://127.0.0.1:$P8" \
		-- "$HOT" 3500 > out8 2> err8 ||
		{ echo "FAIL: oprofiled (through an https proxy) exited"; cat err8; fail=1; }
	net_wait 5 caught_up "$W/p8.log" 0 "$W/r" "$before_r"
	d_r=$(($(reqs "$W/r") - before_r))
	[ "$d_r" -ge 1 ] && [ "$(lines "$W/p8.log")" -eq "$d_r" ] && absolute_form "$W/p8.log" "$R" ||
		{ echo "FAIL: https proxy: $d_r pushes arrived, $(lines "$W/p8.log") through the proxy"; fail=1; }
	# without ca_file the proxy's certificate is not trusted: nothing goes
	"$OPD" --session-dir="$W/s9" --events=TIMER:1000000 --rotate=1s \
		"--ext-feature=push:url=http://127.0.0.1:$R,service=svc-hp,proxy=https://127.0.0.1:$P8" \
		-- "$HOT" 2500 > out9 2> err9
	n9=$(sed -n 's/^failed: //p' "$W/s9/samples/oprofiled.log" | tail -1)
	[ "$(sed -n 's/^sent: //p' "$W/s9/samples/oprofiled.log" | tail -1)" = 0 ] && [ "${n9:-0}" -ge 1 ] ||
		{ echo "FAIL: an unverified https proxy was used"; grep -A4 "^-- plugin push" "$W/s9/samples/oprofiled.log"; fail=1; }
	echo "note: https proxy: $d_r pushes; unverified: $n9 failed"
	net_push_start "$W/s7" "url=https://127.0.0.1:$R6,interval=1s,timeout=2,ca_file=$W/cert.pem,proxy=http://127.0.0.1:$P5"
	net_wait 30 counter_ge "$W/s7" failed 1 || { echo "FAIL: no failure counted for the CONNECT's 407"; fail=1; }
	net_status "$W/s7" push > st7
	grep -q "last error: https://127.0.0.1:$R6 via proxy http://127.0.0.1:$P5: .*407" st7 &&
		[ "$(sed -n 's/^dropped: //p' st7)" = 0 ] ||
		{ echo "FAIL: the CONNECT's 407 is not the last error, or something was dropped"; cat st7; fail=1; }
	kill -TERM $dpid
	wait $dpid
else
	echo "FAIL: openssl (the CLI) is needed to make the test's certificate (tools/install-deps.sh)"; fail=1
fi

net_finish push_proxy.sh
