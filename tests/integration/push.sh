#!/bin/sh
# push.sh - the push plugin against a loopback receiver (push_receiver.py):
# Pyroscope at each rotation with X-Scope-OrgID and a bearer token, Parca
# every interval with basic auth; push_check.py checks request lines,
# headers and labels against the stores' documentation and decodes every
# profile with the upstream pprof and protoc. The credentials never show
# in the log; a bad auth file, credentials in the URL and bad labels are
# refused with a message. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push push
net_pprof || exit 1

TOKEN=tok-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
PASS=pw-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
umask 077
printf '# test credentials\norg_id = tenant-7\nbearer_token = %s\n' "$TOKEN" > auth1
printf 'basic_user=alice\nbasic_password = %s\n' "$PASS" > auth2

# 1. refusals, each with a message naming what is wrong
refused() { # $1 = expected message, rest: oprofiled args
	_m=$1
	shift
	"$OPD" --session-dir="$W/sr" "$@" -- /bin/true > r.out 2> r.err
	_rc=$?
	if [ $_rc -eq 0 ] || ! grep -q "$_m" r.err "$W/sr/samples/oprofiled.log" 2>/dev/null; then
		echo "FAIL: $* was not refused with \"$_m\" (rc $_rc)"; cat r.err; fail=1
	fi
	[ -f "$W/sr/samples/oprofiled.log" ] && cat "$W/sr/samples/oprofiled.log" >> r.err
	rm -rf "$W/sr"
}
refused "no url" --ext-feature=push:protocol=parca
refused "carries credentials" --ext-feature=push:url=http://bob:secret@127.0.0.1:1
# neither the plugin's message nor the core's line about the option repeats it
grep -q secret r.err &&
	{ echo "FAIL: the password in the URL shows on stderr:"; grep secret r.err; fail=1; }
# the URL through liburiparser (test_push_url has the whole table): the daemon's messages
refused "http://127.0.0.1:65536\" is not a URL: expected a port 1..65535" \
	--ext-feature=push:url=http://127.0.0.1:65536
refused "expected an http:// or https:// URL" --ext-feature=push:url=ftp://127.0.0.1:1
refused "expected no query" "--ext-feature=push:url=http://127.0.0.1:1/?q"
refused "expected HOST\[:PORT\] after" --ext-feature=push:url=http://127.0.0.1:abc
refused "expected pyroscope or parca" --ext-feature=push:url=http://127.0.0.1:1,protocol=x
refused "label name" "--ext-feature=push:url=http://127.0.0.1:1,labels=9x=1"
refused "label value" "--ext-feature=push:url=http://127.0.0.1:1,labels=a=b{c"
refused "expected a time" --ext-feature=push:url=http://127.0.0.1:1,interval=soon
cp auth1 auth_open && chmod 644 auth_open
refused "readable by group or others" --ext-feature=push:url=http://127.0.0.1:1,auth_file=$W/auth_open
printf 'password=x\n' > auth_bad
refused "auth_bad:1: unknown key" --ext-feature=push:url=http://127.0.0.1:1,auth_file=$W/auth_bad
# the same keys in the config file, named by their path when wrong
printf 'plugins = { push = { url = "http://127.0.0.1:1"; protocol = "x"; }; };\n' > bad.conf
"$OPD" --config="$W/bad.conf" --session-dir="$W/sc" --check-config > cc.out 2>&1
[ $? -ne 0 ] && grep -q "config plugins.push.protocol.*expected pyroscope or parca" cc.out ||
	{ echo "FAIL: a bad plugins.push.protocol was not refused by path"; cat cc.out; fail=1; }
printf 'plugins = { push = { url = "http://[::1]:0/"; }; };\n' > bad.conf
"$OPD" --config="$W/bad.conf" --session-dir="$W/sc" --check-config > cc.out 2>&1
[ $? -ne 0 ] && grep -q 'config plugins.push.url.*"http://\[::1\]:0/" is not a URL: expected a port 1..65535' cc.out ||
	{ echo "FAIL: a bad plugins.push.url was not refused by path"; cat cc.out; fail=1; }
printf 'plugins = { push = { url = "http://127.0.0.1:1"; protocol = "parca"; interval = "30s"; spool_files = 5; }; };\n' > good.conf
"$OPD" --config="$W/good.conf" --session-dir="$W/sc" --check-config > cc.out 2>&1 ||
	{ echo "FAIL: a good plugins.push group was refused"; cat cc.out; fail=1; }
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	cp auth1 auth_nobody && chown nobody auth_nobody
	refused "auth_nobody is owned by uid" --ext-feature=push:url=http://127.0.0.1:1,auth_file=$W/auth_nobody
fi

# 2. Pyroscope at each rotation (every 2 s), org id and bearer token
net_recv_start "$W/r1" || { echo "FAIL: receiver did not start"; exit 1; }
P1=$(cat "$W/r1.port")
"$OPD" --session-dir="$W/s1" --events=TIMER:1000000 --rotate=2s \
	"--ext-feature=push:url=http://127.0.0.1:$P1/,protocol=pyroscope,service=svc-a,labels=env=test;team=perf,auth_file=$W/auth1" \
	-- "$HOT" 7000 > out1 2> err1
rc=$?
no_perf err1
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat err1; fail=1; }
# the last rotation's push may still be on its way when the command ended: none is lost
# in the spool, but only those sent are checked here
$CHECK --dir "$W/r1" --protocol pyroscope --service svc-a --label env=test --label team=perf \
	--org-id tenant-7 --bearer "$TOKEN" --pprof "$PPROF" --proto "$PROTO" --min 2 \
	--build-id "$(readelf -n "$HOT" | sed -n 's/.*Build ID: //p')" > check1 ||
	{ echo "FAIL: pyroscope requests"; cat check1; fail=1; }
grep -q "^requests" check1 && echo "note: pyroscope: $(head -1 check1)"
if grep -rq "$TOKEN" "$W/s1/samples/oprofiled.log" err1 out1; then
	echo "FAIL: the bearer token shows in the log"; fail=1
fi
grep -q "^sent: [1-9]" "$W/s1/samples/oprofiled.log" ||
	{ echo "FAIL: no sent counter in the log's statistics"; fail=1; }
# what came after the last rotation waits in the spool; the next start sends it
left=$(ls "$W/s1/push-spool" | wc -l)
grep -q "stopping: $left profiles wait in the spool" "$W/s1/samples/oprofiled.log" && [ "$left" -ge 1 ] ||
	{ echo "FAIL: $left profiles left in the spool at the stop"; fail=1; }
before=$(ls "$W"/r1/*.req | wc -l)
"$OPD" --session-dir="$W/s1" --events=TIMER:1000000 --append \
	"--ext-feature=push:url=http://127.0.0.1:$P1/,protocol=pyroscope,service=svc-a,labels=env=test;team=perf,auth_file=$W/auth1" \
	-- sleep 3 > out1b 2> err1b
after=$(ls "$W"/r1/*.req | wc -l)
[ $((after - before)) -ge "$left" ] ||
	{ echo "FAIL: the next start sent $((after - before)) of the $left spooled profiles"; fail=1; }

# 3. Parca every 2 s, basic auth
net_recv_start "$W/r2" || { echo "FAIL: receiver did not start"; exit 1; }
P2=$(cat "$W/r2.port")
"$OPD" --session-dir="$W/s2" --events=TIMER:1000000 \
	"--ext-feature=push:url=http://127.0.0.1:$P2,protocol=parca,interval=2s,service=svc-b,labels=dc=x1,auth_file=$W/auth2" \
	-- "$HOT" 7000 > out2 2> err2
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat err2; fail=1; }
$CHECK --dir "$W/r2" --protocol parca --service svc-b --label dc=x1 --basic "alice:$PASS" \
	--pprof "$PPROF" --proto "$PROTO" --min 2 > check2 ||
	{ echo "FAIL: parca requests"; cat check2; fail=1; }
grep -q "^requests" check2 && echo "note: parca: $(head -1 check2)"
if grep -rq "$PASS" "$W/s2/samples/oprofiled.log" err2 out2; then
	echo "FAIL: the basic password shows in the log"; fail=1
fi

net_finish push.sh
