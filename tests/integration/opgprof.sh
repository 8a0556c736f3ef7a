#!/bin/sh
# opgprof.sh - opgprof end to end, checked with GNU gprof: the 3:1 workload
# (tests/integration/hot) profiled, opgprof's gmon.out read by `gprof -b -p`
# names work_big and work_small at about 3:1; a call-graph session of
# tests/integration/cg_tree (main -> mid -> leaf_b 3x / leaf_c 1x) gives
# gprof's call graph the arcs mid -> leaf_b and mid -> leaf_c at about 3:1
# and main -> mid; archive: gives the same gmon.out; -t; bad input.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
G=$OP_BUILDDIR/tools/opgprof
A=$OP_BUILDDIR/tools/oparchive
H=$OP_BUILDDIR/tests/integration/hot
C=$OP_BUILDDIR/tests/integration/cg_tree
W=$OP_BUILDDIR/tests/opgprof.tmp
for x in "$D" "$G" "$A" "$H" "$C"; do
	if [ ! -x "$x" ]; then
		echo "opgprof: SKIP: $x is not built"
		exit 77
	fi
done
if ! command -v gprof >/dev/null 2>&1; then
	echo "opgprof: SKIP: GNU gprof (binutils) is not installed"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "opgprof: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W/bin"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# is $1 / $2 within 3 +- 15 %?
ratio3() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(b > 0 && a / b >= 2.55 && a / b <= 3.45) }'; }
# self samples of function $2 in gprof's flat profile $1
self_of() { awk -v s="$2" '$NF == s && $3 ~ /^[0-9.]+$/ { print $3; exit }' "$1"; }

# 1. flat profile: 3:1
cp "$H" "$W/bin/hot" && cp "$C" "$W/bin/cg_tree"
if ! "$D" --session-dir="$W/s" -- "$W/bin/hot" 1500 >"$W/d.log" 2>&1; then
	echo "opgprof: oprofiled failed:"; cat "$W/d.log"; exit 1
fi
(cd "$W" && "$G" --session-dir="$W/s" "$W/bin/hot") >"$W/g.out" 2>&1 && ok || bad "opgprof failed: $(cat "$W/g.out")"
[ "$(head -c 4 "$W/gmon.out" 2>/dev/null)" = gmon ] && ok || bad "no gmon.out written in the working directory"
gprof -b -p "$W/bin/hot" "$W/gmon.out" >"$W/p.txt" 2>"$W/p.err"
big=$(self_of "$W/p.txt" work_big) small=$(self_of "$W/p.txt" work_small)
if [ -n "$big" ] && [ -n "$small" ] && ratio3 "$big" "$small"; then ok
else bad "gprof -p: work_big ${big:-none} / work_small ${small:-none}, expected 3:1 +-15 %"; cat "$W/p.txt" "$W/p.err"; fi
echo "opgprof: gprof flat profile: work_big $big, work_small $small samples"
# -t 30: work_small (~25 %) is left out, work_big stays
"$G" --session-dir="$W/s" -t 30 -o "$W/t.gmon" "$W/bin/hot" >/dev/null 2>&1 || bad "opgprof -t 30 failed"
gprof -b -p "$W/bin/hot" "$W/t.gmon" >"$W/t.txt" 2>&1
[ -n "$(self_of "$W/t.txt" work_big)" ] && [ -z "$(self_of "$W/t.txt" work_small)" ] && ok ||
	{ bad "-t 30 does not leave out work_small only"; cat "$W/t.txt"; }

# 2. call graph: arcs
if ! "$D" --session-dir="$W/c" --ext-feature=callgraph:depth=32 -- "$W/bin/cg_tree" 1500 >"$W/c.log" 2>&1; then
	echo "opgprof: oprofiled --ext-feature=callgraph failed:"; cat "$W/c.log"; exit 1
fi
"$G" --session-dir="$W/c" -o "$W/c.gmon" cg_tree >"$W/c.out" 2>&1 && ok || bad "opgprof (call graph) failed: $(cat "$W/c.out")"
gprof -b -q "$W/bin/cg_tree" "$W/c.gmon" >"$W/q.txt" 2>"$W/q.err"
# the block of mid: its callee lines (after the "[N] ... mid [N]" line), "called" as a/b
callee_calls() {
	awk -v s="$2" '/^-----/ { inb = 0; next }
		/^\[[0-9]+\]/ { inb = ($NF ~ /^\[/ && $(NF-1) == "mid"); next }
		inb && $(NF-1) == s { split($(NF-2), c, "/"); print c[1]; exit }' "$1"
}
b=$(callee_calls "$W/q.txt" leaf_b) c=$(callee_calls "$W/q.txt" leaf_c)
if [ -n "$b" ] && [ -n "$c" ] && ratio3 "$b" "$c"; then ok
else bad "gprof -q: mid -> leaf_b ${b:-none} / mid -> leaf_c ${c:-none}, expected 3:1 +-15 %"; cat "$W/q.txt" "$W/q.err"; fi
awk '/^\[[0-9]+\]/ && $(NF-1) == "main" { m = 1; next } /^-----/ { m = 0 } m && $(NF-1) == "mid" { f = 1 } END { exit !f }' "$W/q.txt" &&
	ok || { bad "gprof -q: no arc main -> mid"; cat "$W/q.txt"; }
echo "opgprof: gprof call graph: mid -> leaf_b $b, mid -> leaf_c $c arcs"

# 3. archive: the same gmon.out from the archive alone
"$A" --session-dir="$W/c" -o "$W/arc" "$W/bin/cg_tree" >"$W/a.out" 2>&1 || bad "oparchive failed: $(cat "$W/a.out")"
mv "$W/bin" "$W/bin.away"
"$G" --session-dir="$W/c" -o "$W/a.gmon" archive:"$W/arc" "$W/bin/cg_tree" >"$W/ga.out" 2>&1 || bad "opgprof archive: failed: $(cat "$W/ga.out")"
cmp -s "$W/c.gmon" "$W/a.gmon" && ok || bad "opgprof archive: writes another gmon.out"
mv "$W/bin.away" "$W/bin"

# 4. bad input
"$G" --session-dir="$W/s" >"$W/b1" 2>&1 && bad "no image accepted" || ok
grep -q 'no binary' "$W/b1" && ok || bad "no image: $(cat "$W/b1")"
"$G" --session-dir="$W/s" -t 200 hot >"$W/b2" 2>&1 && bad "-t 200 accepted" || ok
grep -q -- '--threshold=200' "$W/b2" && ok || bad "-t 200: $(cat "$W/b2")"
"$G" --session-dir="$W/s" -o "$W/g.tmp" nosuchimage >"$W/b3" 2>&1 && bad "an image without samples accepted" || ok
grep -q 'match the profile specification' "$W/b3" && ok || bad "no samples: $(cat "$W/b3")"
"$G" --session-dir="$W/s" -o "$W/nodir/gmon.out" hot >"$W/b4" 2>&1 && bad "an unwritable -o accepted" || ok
grep -q "$W/nodir/gmon.out" "$W/b4" && ok || bad "unwritable -o: $(cat "$W/b4")"
"$G" --session-dir="$W/s" -o "$W/g2.tmp" 'hot*' '*' >"$W/b5" 2>&1 && bad "several binaries accepted" || ok
"$G" --version | grep -q '^opgprof ' && ok || bad "--version"
"$G" -? | grep -q '^usage: opgprof' && ok || bad "-?"
"$G" -h | grep -q -- '--output-filename' && ok || bad "-h"

echo "opgprof: $npass passed, $fail failed"
[ "$fail" = 0 ]
