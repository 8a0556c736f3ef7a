#!/bin/sh
# pprof_pull.sh - the pprof pull plugin against a live system-wide daemon
# profiling tests/integration/hot (work_big does 3x the work of work_small):
# the upstream pprof CLI fetches /debug/pprof/profile?seconds=3 (-raw) and
# the shares of the two functions match 3:1; the index, 404, bad seconds,
# a request body, a client that connects and sends nothing (the others
# are still served), a non-loopback bind refused without allow_remote,
# another local user turned away unless allow_uid names it, and the
# counters in opcontrol --status. Loopback only, every wait bounded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$B/../..}
. "$S/tests/integration/net_util.sh"
. "$S/tests/integration/test_user.sh"
net_init pprof_pull pprof
net_pprof || exit 1
net_need_system_wide

# 1. a non-loopback address without allow_remote is refused at start, with a message
"$OPD" --session-dir="$W/s0" --ext-feature=pprof:listen=0.0.0.0:$(net_free_port) -- /bin/true \
	> out0 2> err0
rc=$?
if [ $rc -eq 0 ] || ! grep -q "not a loopback address.*allow_remote" err0 "$W/s0/samples/oprofiled.log" 2>/dev/null; then
	echo "FAIL: listen=0.0.0.0 without allow_remote was not refused (rc $rc)"; cat err0; fail=1
fi
# the same through the config file, and allowed with allow_remote
printf 'plugins = { pprof = { listen = "0.0.0.0:%s"; }; };\n' "$(net_free_port)" > remote.conf
"$OPD" --config="$W/remote.conf" --session-dir="$W/s0c" --check-config > cc.out 2>&1
[ $? -ne 0 ] && grep -q "not a loopback address" cc.out ||
	{ echo "FAIL: plugins.pprof.listen = 0.0.0.0 was not refused"; cat cc.out; fail=1; }
printf 'plugins = { pprof = { listen = "0.0.0.0:%s"; allow_remote = true; }; };\n' "$(net_free_port)" > remote.conf
"$OPD" --config="$W/remote.conf" --session-dir="$W/s0c" --check-config > cc.out 2>&1 ||
	{ echo "FAIL: allow_remote = true did not allow 0.0.0.0"; cat cc.out; fail=1; }
"$OPD" --session-dir="$W/s0b" --ext-feature=pprof:listen=127.0.0.1:99999 -- /bin/true \
	> out0b 2> err0b
[ $? -ne 0 ] && grep -q "not a listen address" err0b "$W/s0b/samples/oprofiled.log" 2>/dev/null ||
	{ echo "FAIL: port 99999 was not refused"; cat err0b; fail=1; }

# 2. live: hot on one CPU, the daemon system-wide at 4 kHz serving pull
PORT=$(net_free_port)
"$HOT" 30000 > /dev/null 2>&1 &
hpid=$!
"$OPD" --session-dir="$W/s" --system-wide --events=TIMER:250000 \
	--ext-feature=pprof:listen=127.0.0.1:$PORT,max_seconds=10 > out 2> err &
dpid=$!
cleanup() {
	kill $hpid 2>/dev/null
	kill -TERM $dpid 2>/dev/null
	wait $dpid 2>/dev/null
	wait $hpid 2>/dev/null
}
if ! net_wait 20 grep -q "serving http://127.0.0.1:$PORT" "$W/s/samples/oprofiled.log"; then
	no_perf err
	echo "FAIL: the pprof plugin did not start serving"; cat err; cat "$W/s/samples/oprofiled.log"
	cleanup
	exit 1
fi
U=http://127.0.0.1:$PORT

# a client that connects and never sends a request must not hold the others up
python3 -c 'import socket,time; s=socket.create_connection(("127.0.0.1",'$PORT')); time.sleep(8)' &
stuck=$!

# the index, an unknown path, bad seconds, a body
code=$(timeout 10 curl -s -o index.html -w '%{http_code}' "$U/debug/pprof/")
[ "$code" = 200 ] && grep -q 'href="profile' index.html ||
	{ echo "FAIL: index: HTTP $code"; cat index.html; fail=1; }
code=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' "$U/debug/pprof/heap")
[ "$code" = 404 ] || { echo "FAIL: unknown path: HTTP $code, expected 404"; fail=1; }
for s in 0 11 abc -1; do
	code=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' "$U/debug/pprof/profile?seconds=$s")
	[ "$code" = 400 ] || { echo "FAIL: seconds=$s: HTTP $code, expected 400"; fail=1; }
done
code=$(timeout 10 curl -s -o /dev/null -w '%{http_code}' --data 'x=1' "$U/debug/pprof/profile")
[ "$code" = 405 ] || { echo "FAIL: POST: HTTP $code, expected 405"; fail=1; }
# the symbol service pprof calls for addresses it cannot name locally: it names none
code=$(timeout 10 curl -s -o sym.txt -w '%{http_code}' --data '0x1000+0x2000' "$U/debug/pprof/symbol")
[ "$code" = 200 ] && [ ! -s sym.txt ] || { echo "FAIL: symbol POST: HTTP $code"; cat sym.txt; fail=1; }
code=$(timeout 10 curl -s -o sym.txt -w '%{http_code}' "$U/debug/pprof/symbol")
[ "$code" = 200 ] && grep -q "^num_symbols: 0$" sym.txt || { echo "FAIL: symbol GET: HTTP $code"; fail=1; }

# 3. a 3 s profile takes 3 s (plus a dump and the encoding), not more
t0=$(date +%s.%N)
code=$(timeout 30 curl -s -o curl.pb.gz -w '%{http_code}' "$U/debug/pprof/profile?seconds=3")
t1=$(date +%s.%N)
took=$(python3 -c "print(round($t1 - $t0, 1))")
echo "note: the 3 s profile took $took s"
[ "$code" = 200 ] && python3 -c "import sys; sys.exit(0 if 3 <= $took <= 20 else 1)" ||
	{ echo "FAIL: the 3 s profile: HTTP $code in $took s"; fail=1; }

# the upstream pprof CLI pulls 3 s; it names what it can through
# /debug/pprof/symbol (which names nothing: the fleet symbolizes by build ID)
export PPROF_TMPDIR=$W/pp
mkdir -p "$PPROF_TMPDIR"
timeout 60 "$PPROF" -raw -symbolize=remote "$U/debug/pprof/profile?seconds=3" > raw.txt 2> raw.err
rc=$?
if [ $rc -ne 0 ] || ! grep -q "^Samples:" raw.txt; then
	echo "FAIL: pprof -raw $U/debug/pprof/profile?seconds=3: rc $rc"; cat raw.err; fail=1
else
	grep -q "^PeriodType: cpu nanoseconds" raw.txt ||
		{ echo "FAIL: no cpu/nanoseconds period type"; head -5 raw.txt; fail=1; }
	grep -q "^samples/count cpu/nanoseconds" raw.txt ||
		{ echo "FAIL: sample types are not samples/count cpu/nanoseconds"; fail=1; }
	# the mapping of the workload names the binary by its build ID (the store symbolizes by it)
	id=$(readelf -n "$HOT" | sed -n 's/.*Build ID: //p')
	grep -q "$id" raw.txt || { echo "FAIL: build ID $id of the workload is not in the profile"; fail=1; }
	# the leaf addresses (ELF virtual addresses) in work_big and work_small, by nm -S
	read -r big small total << EOF2
$(python3 "$S/tests/integration/pprof_shares.py" raw.txt "$HOT" work_big work_small)
EOF2
	echo "note: work_big ${big:-0}, work_small ${small:-0} of ${total:-0} samples"
	# within sampling error: 3 standard errors of the ratio of two counts, at
	# least 0.3, and 100 samples of work_small; hot runs on a machine that also
	# builds: its functions need not dominate the system-wide profile
	ok=$(python3 -c "
b, s = ${big:-0}, ${small:-0}
r = b / s if s else 0
err = max(0.3, 3 * r * (1 / b + 1 / s) ** 0.5) if b and s else 0
print(1 if s >= 100 and abs(r - 3) <= err else 0)")
	[ "$ok" = 1 ] || { echo "FAIL: shares are not 3:1"; fail=1; }
	# the daemon's own decoding: protoc reads the body as perftools.profiles.Profile
	gzip -dc curl.pb.gz | protoc --decode=perftools.profiles.Profile -I"$(dirname $PROTO)" "$PROTO" \
		> decoded.txt 2> protoc.err || { echo "FAIL: protoc cannot decode it"; cat protoc.err; fail=1; }
fi
kill $stuck 2>/dev/null
wait $stuck 2>/dev/null

# at most two profiles are built at once: a third request meanwhile is turned away
for i in 1 2 3; do
	(timeout 30 curl -s -o /dev/null -w '%{http_code}\n' "$U/debug/pprof/profile?seconds=2" > conc.$i) &
	eval "cp$i=\$!"
	sleep 0.2
done
wait $cp1 $cp2 $cp3
codes=$(cat conc.1 conc.2 conc.3 | sort | tr '\n' ' ')
[ "$codes" = "200 200 503 " ] || { echo "FAIL: three requests at once: HTTP $codes, expected 200 200 503"; fail=1; }

# 4. a root session is private: another local user is turned away at the
# door unless allow_uid names it
op_test_user
op_as_user curl -s -o /dev/null "$U/debug/pprof/" 2> /dev/null
rc=$?
[ $rc -ne 0 ] || { echo "FAIL: user $OP_USER pulled from a root daemon"; fail=1; }
P2=$(net_free_port)
"$OPD" --session-dir="$W/s2" --events=TIMER:1000000 \
	"--ext-feature=pprof:listen=127.0.0.1:$P2,allow_uid=12345;$OP_UID" -- sleep 20 > out2 2> err2 &
d2=$!
if net_wait 15 grep -q "serving http://127.0.0.1:$P2" "$W/s2/samples/oprofiled.log"; then
	code=$(op_as_user timeout 10 curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P2/debug/pprof/")
	[ "$code" = 200 ] || { echo "FAIL: allow_uid=$OP_UID: HTTP $code"; fail=1; }
else
	echo "FAIL: the second daemon did not serve"; cat err2; fail=1
fi
kill -TERM $d2
wait $d2

# 5. counters in opcontrol --status
net_status "$W/s" pprof > pp.txt
grep -q "^profiles: 4$" pp.txt || { echo "FAIL: status: profiles is not 4"; cat pp.txt; fail=1; }
grep -q "^bad_requests: 5$" pp.txt || { echo "FAIL: status: bad_requests is not 5"; cat pp.txt; fail=1; }
grep -q "^not_found: 1$" pp.txt || { echo "FAIL: status: not_found is not 1"; cat pp.txt; fail=1; }
grep -q "^refused: 1$" pp.txt || { echo "FAIL: status: refused is not 1"; cat pp.txt; fail=1; }
grep -q "^busy: 1$" pp.txt || { echo "FAIL: status: busy is not 1"; cat pp.txt; fail=1; }

cleanup
if [ $fail -eq 0 ]; then
	echo "PASS: pprof_pull.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
