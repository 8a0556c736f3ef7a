#!/bin/sh
# debuginfod.sh - symbols of a stripped binary by its build ID, on a live
# profile of hot.c (work_big 3x work_small) whose binary is stripped after
# linking: (a) the unstripped copy at /usr/lib/debug/.build-id/xx/rest.debug
# (root; removed by a trap): opreport -l and opgprof name the functions,
# opannotate --source shows the lines; (b) a real debuginfod server
# (debuginfod -F on a port chosen here, killed by a trap, the client's
# cache in the test's directory) serving the unstripped copy: the same
# names and counts; (c) the binary rebuilt (another build ID): one warning
# naming it and "(no symbols)", or the profiled build's debug file (an
# objcopy --only-keep-debug one in /usr/lib/debug, or from debuginfod)
# placed by the recorded segment: the same
# counts again; oparchive archives that debug file; (d) a port nothing
# listens on and a server that accepts and never answers: a warning after
# DEBUGINFOD_TIMEOUT, never a hang (bounded by timeout).
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
A=$OP_BUILDDIR/tools/opannotate/opannotate
OA=$OP_BUILDDIR/tools/oparchive
G=$OP_BUILDDIR/tools/opgprof
W=$OP_BUILDDIR/tests/debuginfod.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "debuginfod: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
grep -q '^#define HAVE_DEBUGINFOD 1' "$OP_BUILDDIR/config.h" && have_client=1 || have_client=0
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
srv_pid= sleeper_pid= made_file= made_dirs=
cleanup() {
	[ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null
	[ -n "$sleeper_pid" ] && kill "$sleeper_pid" 2>/dev/null
	[ -n "$made_file" ] && rm -f "$made_file"
	for d in $made_dirs; do rmdir "$d" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

P=$W/hot
CC=${CC:-cc}
if ! $CC -O2 -g -Wl,--build-id=sha1 -o "$W/hot.full" "$OP_SRCDIR/tests/integration/hot.c" ||
	! strip -o "$P" "$W/hot.full"; then
	echo "debuginfod: cannot build the workload"; exit 1
fi
ID=$(LC_ALL=C readelf -n "$P" | sed -n 's/.*Build ID: *//p' | head -1)
[ "$ID" = "$(LC_ALL=C readelf -n "$W/hot.full" | sed -n 's/.*Build ID: *//p' | head -1)" ] && [ -n "$ID" ] ||
	{ echo "debuginfod: strip changed the build ID"; exit 1; }
DBG=/usr/lib/debug/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-).debug

if ! "$D" --session-dir="$W/s" --events=TIMER:250000 -- "$P" 1500 >"$W/s.out" 2>&1; then
	echo "debuginfod: oprofiled failed: $(cat "$W/s.out")"; exit 1
fi
rep() { # $1 = output name, rest = environment assignments; opreport -l of the workload
	out=$1; shift
	env "$@" timeout 60 "$R" --session-dir="$W/s" -l image:"$P" >"$W/$out.txt" 2>"$W/$out.err"
}
count_of() { awk -v s="$2" '$NF == s { print $1; exit }' "$W/$1.txt"; }
# work_big and work_small named, 3:1 (+- 15 %); their counts as "big small"
named() { # $1 = output name
	b=$(count_of "$1" work_big) s=$(count_of "$1" work_small)
	[ -n "$b" ] && [ -n "$s" ] && awk -v b="$b" -v s="$s" 'BEGIN { exit !(s > 0 && b / s > 2.55 && b / s < 3.45) }'
}

# the stripped binary alone: per-address rows, no names
rep stripped
! grep -q ' work_big$' "$W/stripped.txt" && grep -q 'hot+0x' "$W/stripped.txt" && ok ||
	bad "the stripped binary alone was named: $(cat "$W/stripped.txt")"

# --- (a) /usr/lib/debug/.build-id (root)
if [ "$(id -u)" = 0 ]; then
	for d in /usr/lib/debug /usr/lib/debug/.build-id "$(dirname "$DBG")"; do
		[ -d "$d" ] || { mkdir "$d" && made_dirs="$d $made_dirs"; }
	done
	if [ -e "$DBG" ]; then
		bad "$DBG exists already: not touched"
	else
		made_file=$DBG
		cp "$W/hot.full" "$DBG"
		rep a
		named a && ok || bad "(a) .build-id: $(cat "$W/a.txt" "$W/a.err")"
		ref="$(count_of a work_big) $(count_of a work_small)"
		timeout 60 "$A" --session-dir="$W/s" --source image:"$P" >"$W/a.ann" 2>"$W/a.ann.err"
		grep -q 'SPIN(sink_big, n);.*work_big total' "$W/a.ann" &&
			grep -q "^ *$(count_of a work_big) .*SPIN(sink_big" "$W/a.ann" && ok ||
			bad "(a) opannotate --source: $(cat "$W/a.ann" "$W/a.ann.err")"
		(cd "$W" && timeout 60 "$G" --session-dir="$W/s" "$P" >"$W/gp.out" 2>&1) &&
			gprof -b -p "$W/hot.full" "$W/gmon.out" 2>/dev/null | grep -q ' work_big$' && ok ||
			bad "(a) opgprof: $(cat "$W/gp.out")"
		# (c) rebuilt: the profiled build's debug file stands for it, here one made by
		# objcopy --only-keep-debug (its code sections NOBITS: placed by the recorded segment)
		cp "$P" "$W/hot.orig"
		$CC -O1 -g -Wl,--build-id=sha1 -o "$P" "$OP_SRCDIR/tests/integration/hot.c"
		objcopy --only-keep-debug "$W/hot.full" "$DBG"
		rep c_local
		n=$(grep -c "the binary $P is not the one profiled" "$W/c_local.err")
		[ "$n" = 1 ] && ok || bad "(c) rebuilt: $n warnings naming it: $(cat "$W/c_local.err")"
		[ "$(count_of c_local work_big) $(count_of c_local work_small)" = "$ref" ] && ok ||
			bad "(c) rebuilt, debug file by build ID: $(cat "$W/c_local.txt") (expected $ref)"
		cp "$W/hot.orig" "$P"
		rm -f "$DBG"
	fi
else
	echo "debuginfod: (a) skipped: writing /usr/lib/debug needs root"
fi

# --- (c) rebuilt, no debug file anywhere: warned once, not used
cp "$P" "$W/hot.orig"
$CC -O1 -g -Wl,--build-id=sha1 -o "$P" "$OP_SRCDIR/tests/integration/hot.c"
NEWID=$(LC_ALL=C readelf -n "$P" | sed -n 's/.*Build ID: *//p' | head -1)
[ "$NEWID" != "$ID" ] || bad "the rebuilt binary has the same build ID"
rep c
n=$(grep -c "the binary $P is not the one profiled: build ID $NEWID, the profiled binary's was $ID" "$W/c.err")
# one warning names the binary (others, e.g. a throttled event under load, may come)
[ "$n" = 1 ] && [ "$(grep -c -F "$P" "$W/c.err")" = 1 ] && ok || bad "(c) rebuilt: warnings: $(cat "$W/c.err")"
! grep -q 'work_big\|work_small' "$W/c.txt" && grep -q ' hot  *(no symbols)$' "$W/c.txt" && ok ||
	bad "(c) the rebuilt binary's symbols were used: $(cat "$W/c.txt")"
cp "$W/hot.orig" "$P"

# --- (b) a real debuginfod server on 127.0.0.1
if [ "$have_client" = 0 ]; then
	echo "debuginfod: (b) skipped: the tools were built without libdebuginfod (configure said so)"
elif ! command -v debuginfod >/dev/null; then
	bad "(b) no debuginfod server (apt-get install debuginfod; tools/install-deps.sh does)"
else
	freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
	mkdir -p "$W/srv" && cp "$W/hot.full" "$W/srv/"
	port=$(freeport)
	debuginfod -F -p "$port" -d "$W/srv.sqlite" -t 0 -g 0 "$W/srv" >"$W/srv.log" 2>&1 &
	srv_pid=$!
	URL=http://127.0.0.1:$port
	i=0
	while [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/buildid/$ID/debuginfo")" != 200 ] && [ $i -lt 150 ]; do
		sleep 0.2; i=$((i + 1))
	done
	[ $i -lt 150 ] || bad "(b) debuginfod did not serve $ID within 30 s: $(tail -5 "$W/srv.log")"
	rep b DEBUGINFOD_URLS="$URL" DEBUGINFOD_CACHE_PATH="$W/cache"
	named b && ok || bad "(b) debuginfod: $(cat "$W/b.txt" "$W/b.err")"
	[ -n "$(find "$W/cache" -name debuginfo -size +1k 2>/dev/null)" ] && ok ||
		bad "(b) nothing in the client's cache $W/cache"
	ref=${ref:-"$(count_of b work_big) $(count_of b work_small)"}
	[ "$(count_of b work_big) $(count_of b work_small)" = "$ref" ] && ok ||
		bad "(b) counts $(count_of b work_big) $(count_of b work_small), expected $ref"
	DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$W/cache timeout 60 "$A" --session-dir="$W/s" \
		--source image:"$P" >"$W/b.ann" 2>"$W/b.ann.err"
	grep -q 'SPIN(sink_small, n);.*work_small total' "$W/b.ann" && ok ||
		bad "(b) opannotate --source: $(cat "$W/b.ann" "$W/b.ann.err")"
	# (c) rebuilt: the profiled build's debug file from the server stands for it
	$CC -O1 -g -Wl,--build-id=sha1 -o "$P" "$OP_SRCDIR/tests/integration/hot.c"
	rep c_srv DEBUGINFOD_URLS="$URL" DEBUGINFOD_CACHE_PATH="$W/cache2"
	grep -q "the binary $P is not the one profiled" "$W/c_srv.err" &&
		[ "$(count_of c_srv work_big) $(count_of c_srv work_small)" = "$ref" ] && ok ||
		bad "(c) rebuilt, debug file from debuginfod: $(cat "$W/c_srv.txt" "$W/c_srv.err")"
	# oparchive keeps that debug file where archive: looks; the archive reports alone
	DEBUGINFOD_URLS=$URL DEBUGINFOD_CACHE_PATH=$W/cache2 timeout 60 "$OA" --session-dir="$W/s" \
		-o "$W/arch" image:"$P" >"$W/oa.out" 2>&1
	AD=$W/arch/usr/lib/debug/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-).debug
	cmp -s "$AD" "$W/hot.full" && ok || bad "(c) oparchive did not archive the debug file at $AD: $(cat "$W/oa.out")"
	cp "$W/hot.orig" "$P"
	timeout 60 "$R" --session-dir="$W/s" -l archive:"$W/arch" image:"$P" >"$W/arch.txt" 2>&1
	[ "$(awk '$NF == "work_big" { print $1; exit }' "$W/arch.txt")" = "${ref%% *}" ] && ok ||
		bad "(c) opreport archive: without the server: $(cat "$W/arch.txt")"
	kill "$srv_pid" 2>/dev/null
	wait "$srv_pid" 2>/dev/null
	srv_pid=

	# --- (d) nothing listening, and a server that never answers: warnings, no hang
	dead=$(freeport)
	rep dead DEBUGINFOD_URLS="http://127.0.0.1:$dead" DEBUGINFOD_CACHE_PATH="$W/cache3"
	rc=$?
	[ $rc = 0 ] && [ "$(grep -c 'debuginfod: no answer for build ID' "$W/dead.err")" = 1 ] && ok ||
		bad "(d) unreachable server (rc $rc): $(cat "$W/dead.err")"
	grep -q 'hot+0x' "$W/dead.txt" && ok || bad "(d) unreachable server: no report: $(cat "$W/dead.txt")"
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
time.sleep(120)' >"$W/mute.port" &
	sleeper_pid=$!
	i=0
	while [ ! -s "$W/mute.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	rep mute DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$W/mute.port")" DEBUGINFOD_TIMEOUT=2 \
		DEBUGINFOD_CACHE_PATH="$W/cache4"
	rc=$?
	[ $rc = 0 ] && grep -q 'debuginfod: no answer for build ID.*DEBUGINFOD_TIMEOUT' "$W/mute.err" && ok ||
		bad "(d) mute server (rc $rc, 124 = hung): $(cat "$W/mute.err")"
	kill "$sleeper_pid" 2>/dev/null
	sleeper_pid=
fi

echo "debuginfod: $npass passed, $fail failed"
# kept for a look when something failed; distcheck wants a clean build tree
[ "$fail" = 0 ] && rm -rf "$W"
[ "$fail" = 0 ]
