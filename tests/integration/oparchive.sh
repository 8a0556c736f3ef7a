#!/bin/sh
# oparchive.sh - oparchive and archive: end to end: profiles the 3:1 workload
# (tests/integration/hot) copied into a temp dir, archives the session,
# moves the binaries away and checks that `opreport -l archive:DIR` gives the
# rows of the original report; copies keep modes and mtimes; a stripped
# binary whose debug file is found by build-id is archived with it and
# reported from the archive by its symbols; a symbolic link planted in the
# archive is not followed (by opreport nor by oparchive); bad input.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
A=$OP_BUILDDIR/tools/oparchive
H=$OP_BUILDDIR/tests/integration/hot
W=$OP_BUILDDIR/tests/oparchive.tmp
for x in "$D" "$R" "$A" "$H"; do
	if [ ! -x "$x" ]; then
		echo "oparchive: SKIP: $x is not built"
		exit 77
	fi
done
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "oparchive: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W/bin"
fail=0 npass=0 dbgfile=
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
cleanup() { [ -n "$dbgfile" ] && rm -f "$dbgfile"; }
trap cleanup EXIT INT TERM
rows() { awk '/^samples/ { on = 1; next } on && NF >= 4 { print $1, $(NF-1), $NF }' "$1"; }

# 1. a session of the workload, archived; the report from the archive alone
cp "$H" "$W/bin/hot" && chmod 0751 "$W/bin/hot" && touch -d '2020-01-02 03:04:05' "$W/bin/hot"
if ! "$D" --session-dir="$W/s" -- "$W/bin/hot" 1000 >"$W/d.log" 2>&1; then
	echo "oparchive: oprofiled failed:"; cat "$W/d.log"; exit 1
fi
"$R" --session-dir="$W/s" -l "$W/bin/hot" >"$W/orig.txt" 2>"$W/orig.err"
grep -q ' work_big$' "$W/orig.txt" && ok || { bad "the original report has no work_big"; cat "$W/orig.txt" "$W/orig.err"; }
"$A" --session-dir="$W/s" -o "$W/arc" "$W/bin/hot" >"$W/a.out" 2>&1 && ok || { bad "oparchive failed: $(cat "$W/a.out")"; }
[ -f "$W/arc$W/bin/hot" ] && ok || bad "the binary is not at DIR/<its path>"
[ -f "$W/arc$W/s/abi" ] && [ -d "$W/arc$W/s/samples/current/stats" ] && ok ||
	bad "the session's abi and stats/ are not at DIR/<session path>"
nsamples() { find "$1" -type f ! -path '*/stats/*' ! -path '*/callgraph/*' | wc -l; }
n_orig=$(nsamples "$W/s/samples/current") n_arc=$(nsamples "$W/arc$W/s/samples/current")
[ "$n_orig" -gt 0 ] && [ "$n_orig" = "$n_arc" ] && ok || bad "$n_arc of $n_orig sample files archived"
[ "$(stat -c %a "$W/arc$W/bin/hot")" = 751 ] && ok || bad "mode $(stat -c %a "$W/arc$W/bin/hot"), expected 751"
[ "$(stat -c %Y "$W/arc$W/bin/hot")" = "$(stat -c %Y "$W/bin/hot")" ] && ok || bad "the copy's mtime differs"
"$A" --session-dir="$W/s" -l "$W/bin/hot" >"$W/list.txt" 2>&1
grep -qx "$W/bin/hot" "$W/list.txt" && ok || { bad "-l does not list the binary"; cat "$W/list.txt"; }
mv "$W/bin" "$W/bin.away" && mv "$W/s" "$W/s.away"
"$R" -l archive:"$W/arc" "$W/bin/hot" >"$W/arc.txt" 2>"$W/arc.err" || bad "opreport archive: failed: $(cat "$W/arc.err")"
rows "$W/orig.txt" >"$W/orig.rows"; rows "$W/arc.txt" >"$W/arc.rows"
if [ -s "$W/orig.rows" ] && cmp -s "$W/orig.rows" "$W/arc.rows"; then ok
else bad "opreport -l archive: differs from the original report"; diff "$W/orig.rows" "$W/arc.rows" | head; fi
grep -q 'modified after' "$W/arc.err" && bad "archive: warns that the binary was modified" || ok
# --session-dir is the original path, found below the archive
(cd / && "$R" -l --session-dir="$W/s" archive:"$W/arc" "$W/bin/hot") >"$W/arc2.txt" 2>&1
rows "$W/arc2.txt" | cmp -s - "$W/orig.rows" && ok || bad "archive: with --session-dir differs"
mv "$W/bin.away" "$W/bin" && mv "$W/s.away" "$W/s"

# 2. a symbolic link in the archive is not followed
mv "$W/arc$W/bin/hot" "$W/arc.hot" && ln -s "$W/bin/hot" "$W/arc$W/bin/hot"
"$R" -l archive:"$W/arc" "$W/bin/hot" >"$W/link.txt" 2>"$W/link.err"
grep -q 'symbolic link' "$W/link.err" && ok || { bad "opreport archive: did not refuse the link"; cat "$W/link.err"; }
grep -q ' work_big$' "$W/link.txt" && bad "opreport archive: read the binary through a link" || ok
rm "$W/arc$W/bin/hot" && mv "$W/arc.hot" "$W/arc$W/bin/hot"
# oparchive does not write through a link in the archive
mkdir -p "$W/arc3" "$W/outside" && ln -s "$W/outside" "$W/arc3/$(echo "$W" | cut -d/ -f2)"
"$A" --session-dir="$W/s" -o "$W/arc3" "$W/bin/hot" >"$W/a3.out" 2>&1 && bad "oparchive wrote through a link" || ok
grep -q 'symbolic link' "$W/a3.out" && ok || { bad "oparchive does not name the link"; cat "$W/a3.out"; }
[ -z "$(ls -A "$W/outside")" ] && ok || bad "oparchive wrote outside the archive: $(ls -A "$W/outside")"

# 3. a stripped binary whose debug file is found by build-id
bid=$(readelf -n "$H" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ "$(id -u)" = 0 ] && [ -n "$bid" ] && command -v objcopy >/dev/null; then
	dir=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)
	dbgfile=$dir/$(echo "$bid" | cut -c3-).debug
	if [ -e "$dbgfile" ]; then
		echo "oparchive: $dbgfile exists already: the build-id part is not run"; dbgfile=
	else
		mkdir -p "$W/sb" "$dir"
		objcopy --only-keep-debug "$H" "$dbgfile" && cp "$H" "$W/sb/hot_s" && strip --strip-all "$W/sb/hot_s"
		"$D" --session-dir="$W/t" -- "$W/sb/hot_s" 600 >"$W/t.log" 2>&1 || { cat "$W/t.log"; bad "profiling the stripped binary"; }
		"$R" --session-dir="$W/t" -l -x "$W/sb/hot_s" >"$W/t.txt" 2>&1
		grep -q ' work_big$' "$W/t.txt" && ok || { bad "the stripped binary's debug file is not used"; cat "$W/t.txt"; }
		"$A" --session-dir="$W/t" -o "$W/arcs" "$W/sb/hot_s" >"$W/as.out" 2>&1 || bad "oparchive (stripped) failed: $(cat "$W/as.out")"
		[ -f "$W/arcs$dbgfile" ] && cmp -s "$W/arcs$dbgfile" "$dbgfile" && ok || bad "the build-id debug file is not archived"
		rm -f "$dbgfile"; dbgfile=
		rm -rf "$W/sb"
		"$R" -l -x archive:"$W/arcs" "$W/sb/hot_s" >"$W/ts.txt" 2>&1
		grep -q ' work_big$' "$W/ts.txt" && ok || { bad "archive: does not use the archived debug file"; cat "$W/ts.txt"; }
	fi
else
	echo "oparchive: not root, no build-id or no objcopy: the build-id debug-file part is not run"
fi

# 4. bad input
"$A" --session-dir="$W/s" >"$W/b1" 2>&1 && bad "no -o accepted" || ok
grep -q 'give -o DIR' "$W/b1" && ok || bad "no -o: $(cat "$W/b1")"
"$A" --session-dir="$W/s" -o / >"$W/b2" 2>&1 && bad "-o / accepted" || ok
grep -q 'root directory' "$W/b2" && ok || bad "-o /: $(cat "$W/b2")"
"$A" --session-dir="$W/nosuch" -o "$W/x" >"$W/b3" 2>&1 && bad "a missing session accepted" || ok
grep -q "$W/nosuch" "$W/b3" && ok || bad "missing session: $(cat "$W/b3")"
"$R" -l archive:"$W/nosuch" >"$W/b4" 2>&1 && bad "archive: of a missing directory accepted" || ok
grep -q "archive:$W/nosuch" "$W/b4" && ok || bad "missing archive: $(cat "$W/b4")"
"$R" -l archive:"$W/arc" archive:"$W/arc3" >"$W/b5" 2>&1 && bad "two archive: accepted" || ok
"$R" -l -R / archive:"$W/arc" >"$W/b6" 2>&1 && bad "--root with archive: accepted" || ok
grep -q -- '--root' "$W/b6" && ok || bad "--root with archive: $(cat "$W/b6")"
"$R" -l archive:"$W/outside" >"$W/b7" 2>&1 && bad "an archive without a session accepted" || ok
grep -q 'holds no session' "$W/b7" && ok || bad "empty archive: $(cat "$W/b7")"
"$A" --version | grep -q '^oparchive ' && ok || bad "--version"
"$A" -? | grep -q '^usage: oparchive' && ok || bad "-?"
"$A" -h | grep -q -- '--output-directory' && ok || bad "-h"
"$A" --bogus >/dev/null 2>&1 && bad "an unknown option accepted" || ok

echo "oparchive: $npass passed, $fail failed"
[ "$fail" = 0 ]
