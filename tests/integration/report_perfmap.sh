#!/bin/sh
# report_perfmap.sh - whose /tmp/perf-PID.map opreport believes (issue 14,
# hole 7): as perf, only a map owned by root or by the user running
# opreport; a root-owned map also must not be group/other-writable. Root's
# opreport ignores a map a user owns, with one warning naming it, and uses a
# root-owned one; a user's opreport uses the user's own map and a
# root-owned one. Root only (the test user owns files).
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
. "$OP_SRCDIR/tests/integration/test_user.sh"
op_test_user
OPREPORT=$OP_BUILDDIR/tools/opreport/opreport
MKFIXTURE=$OP_BUILDDIR/tests/data/report/mkfixture
W=$OP_BUILDDIR/tests/report_perfmap.tmp
rm -rf "$W"
mkdir -p "$W/maps"
chmod 0755 "$W" "$W/maps"
fail=0
npass=0
T=$(printf '\t')
OPREPORT_PERF_MAP_DIR=$W/maps
export OPREPORT_PERF_MAP_DIR
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

for f in "$OPREPORT" "$MKFIXTURE"; do
	[ -e "$f" ] || { echo "report_perfmap: missing $f (make check builds it)"; exit 1; }
done
# the test user must reach the build tree to run opreport on the session
if ! op_as_user test -x "$OPREPORT" || ! op_as_user test -r "$W/maps"; then
	echo "SKIP: $OP_USER cannot reach $OP_BUILDDIR"; exit 77
fi

# one anon region per map: tgid 5001..5004
: >"$W/script"
printf 'dir\tcurrent\n' >>"$W/script"
for t in 5001 5002 5003 5004; do
	hi=$((t - 5000))
	printf 'file\t/opt/jit\t{anon:anon}%s:0x7f%s000000000:0x7f%s000000fff\tTIMER\t0\t0\tall\tall\tall\t4\t0\t0x7f%s000000000\ns\t0x10\t%s\n' \
		"$t" "$hi" "$hi" "$hi" "$hi" >>"$W/script"
	printf '7f%s000000000 100 jit_fn_%s\n' "$hi" "$t" >"$W/maps/perf-$t.map"
	chmod 0644 "$W/maps/perf-$t.map"
done
"$MKFIXTURE" "$W/s" <"$W/script" || { echo "report_perfmap: mkfixture failed"; exit 1; }
chmod -R a+rX "$W/s"
chown "$OP_UID:$OP_GID" "$W/maps/perf-5001.map"      # the user's
chown 65534:65534 "$W/maps/perf-5002.map"            # somebody else's
chmod 0666 "$W/maps/perf-5003.map"                   # root's, world-writable
                                                     # 5004: root's, 0644

# root's opreport: only 5004
"$OPREPORT" --session-dir="$W/s" -l >"$W/root.out" 2>"$W/root.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q jit_fn_5004 "$W/root.out" &&
	! grep -q -e jit_fn_5001 -e jit_fn_5002 -e jit_fn_5003 "$W/root.out" &&
	[ "$(grep -c "perf-5001.map: owned by uid $OP_UID" "$W/root.err")" -eq 1 ] &&
	[ "$(grep -c 'perf-5002.map: owned by uid 65534' "$W/root.err")" -eq 1 ] &&
	[ "$(grep -c 'perf-5003.map: .*writable' "$W/root.err")" -eq 1 ]; then
	ok
else
	bad "root: expected the root-owned map only, one warning per refused map (rc $rc)"
	cat "$W/root.out" "$W/root.err"
fi

# the user's opreport: their own map and root's 0644 one
op_as_user "$OPREPORT" --session-dir="$W/s" -l >"$W/user.out" 2>"$W/user.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q jit_fn_5001 "$W/user.out" && grep -q jit_fn_5004 "$W/user.out" &&
	! grep -q -e jit_fn_5002 -e jit_fn_5003 "$W/user.out" &&
	grep -q 'perf-5002.map: owned by uid 65534' "$W/user.err"; then
	ok
else
	bad "user: expected the user's and root's maps (rc $rc)"; cat "$W/user.out" "$W/user.err"
fi

echo "report_perfmap: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
