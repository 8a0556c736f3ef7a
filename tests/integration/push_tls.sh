#!/bin/sh
# push_tls.sh - the push plugin to an https:// store (issue 20): a loopback
# receiver speaking TLS with a certificate for 127.0.0.1 made by the test
# (openssl), trusted through ca_file=PATH; Parca's JSON every 2 s, each
# body's base64 profile decoded by the upstream pprof and protoc
# (push_check.py). The ca_file is root's, mode 0600: the helper that runs
# libcurl as nobody gets its contents from the daemon. Without ca_file the
# store's certificate is not believed: nothing is received, the failures
# are counted with a certificate error.
# A missing ca_file is refused at start. The first daemon keeps its helper
# resident (helper_idle=0): its start line names the TLS library (hello).
# Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
net_init push_tls push
net_pprof || exit 1
command -v openssl > /dev/null ||
	{ echo "FAIL: openssl (the CLI) is needed to make the test's certificate (tools/install-deps.sh)"; exit 1; }

umask 077
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 > openssl.out 2>&1 ||
	{ echo "FAIL: openssl could not make a certificate"; cat openssl.out; exit 1; }

# 1. a ca_file that is not there is refused at start, with a message
"$OPD" --session-dir="$W/s0" \
	--ext-feature=push:url=https://127.0.0.1:1,ca_file=$W/nonexistent.pem -- /bin/true \
	> out0 2> err0
rc=$?
[ $rc -ne 0 ] && grep -q "ca_file: .*nonexistent.pem" err0 "$W/s0/samples/oprofiled.log" 2>/dev/null ||
	{ echo "FAIL: a missing ca_file was not refused (rc $rc)"; cat err0; fail=1; }

net_recv_start "$W/r" --tls "$W/cert.pem" "$W/key.pem" ||
	{ echo "FAIL: the TLS receiver did not start"; exit 1; }
P=$(cat "$W/r.port")

# 2. trusted through ca_file: every push arrives, over TLS
"$OPD" --session-dir="$W/s1" --events=TIMER:1000000 \
	"--ext-feature=push:url=https://127.0.0.1:$P,protocol=parca,interval=2s,service=svc-tls,ca_file=$W/cert.pem,helper_idle=0" \
	-- "$HOT" 7000 > out1 2> err1
rc=$?
no_perf err1
[ $rc -eq 0 ] || { echo "FAIL: oprofiled exited $rc"; cat err1; fail=1; }
$CHECK --dir "$W/r" --protocol parca --service svc-tls --pprof "$PPROF" --proto "$PROTO" \
	--min 2 > check1 || { echo "FAIL: parca requests over https"; cat check1; fail=1; }
grep -q "^requests" check1 && echo "note: https: $(head -1 check1)"
tls=$(sed -n 's/.*pushing to https.*TLS: \([^)]*\)).*/\1/p' "$W/s1/samples/oprofiled.log")
echo "note: libcurl's TLS library: ${tls:-?}"
[ -n "$tls" ] || { echo "FAIL: the start line does not name the TLS library"; fail=1; }
# the helper that speaks TLS runs as nobody (root daemon) and cannot open
# the 0600 root-owned ca_file itself: the daemon hands it the contents
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	[ "$(stat -c %a:%u cert.pem)" = 600:0 ] ||
		{ echo "FAIL: the test's ca_file is $(stat -c %a:%u cert.pem), not 600 root's"; fail=1; }
	grep -q "pushing to https.*helper oprofiled-push pid [0-9]* as nobody" "$W/s1/samples/oprofiled.log" ||
		{ echo "FAIL: the TLS helper did not run as nobody"; grep "pushing to" "$W/s1/samples/oprofiled.log"; fail=1; }
fi
grep -q "^failed: 0$" "$W/s1/samples/oprofiled.log" ||
	{ echo "FAIL: pushes over https failed:"; grep -A12 -- "-- plugin push --" "$W/s1/samples/oprofiled.log" | tail -13; fail=1; }

# 3. without ca_file the self-made certificate is not believed
n0=$(ls "$W"/r/*.req | wc -l)
"$OPD" --session-dir="$W/s2" --events=TIMER:1000000 \
	"--ext-feature=push:url=https://127.0.0.1:$P,protocol=parca,interval=1s" \
	-- "$HOT" 4000 > out2 2> err2
n1=$(ls "$W"/r/*.req | wc -l)
[ "$n1" = "$n0" ] || { echo "FAIL: an unverified store got $((n1 - n0)) pushes"; fail=1; }
grep -q "^failed: [1-9]" "$W/s2/samples/oprofiled.log" &&
	grep -i "last error: .*certificate" "$W/s2/samples/oprofiled.log" > /dev/null ||
	{ echo "FAIL: no certificate failure counted:"; grep -A12 -- "-- plugin push --" "$W/s2/samples/oprofiled.log" | tail -13; fail=1; }

net_finish push_tls.sh
