#!/bin/sh
# callgraph.sh - call graphs end to end: profiles tests/integration/cg_tree
# (main -> mid -> leaf_b 3x / leaf_c 1x, frame pointers) live under
# `oprofiled --ext-feature=callgraph` (cpu-clock via the timer plugin) and
# checks opreport -c (mid calls leaf_b:leaf_c about 3:1, main calls mid),
# folded stacks (main;mid;leaf_b : main;mid;leaf_c about 3:1), cross-binary
# arc files into libc, truncation at depth=2 (counted, marked), the SVG
# flame graph (leaf widths 3:1; PNG when rsvg-convert exists), the flat
# opreport -l of the same session, damaged stack tables, the config group,
# stacks readable after a kill -9, and one stack table per --rotate session.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
P=$OP_BUILDDIR/tests/integration/cg_tree
W=$OP_BUILDDIR/tests/callgraph.tmp
# what the build makes is never a reason to skip: a missing program is a failure
for x in "$D" "$R" "$P"; do
	if [ ! -x "$x" ]; then
		echo "callgraph: FAIL: $x is not built (make check builds it)"
		exit 1
	fi
done
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "callgraph: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# is $1 / $2 within 3 +- 15 %?
ratio3() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(b > 0 && a / b >= 2.55 && a / b <= 3.45) }'; }

# 1. a live profile with call graphs
if ! "$D" --session-dir="$W/s" --ext-feature=callgraph:depth=32 -- "$P" 2500 >"$W/s.out" 2>&1; then
	echo "callgraph: oprofiled failed:"; cat "$W/s.out" "$W/s/samples/oprofiled.log"; exit 1
fi
log=$W/s/samples/oprofiled.log
stat_of() { awk -v k="$2:" '$1 == k { print $2; exit }' "$1"; }
chains=$(stat_of "$log" samples_with_chain)
[ "${chains:-0}" -gt 1000 ] && ok || { bad "only ${chains:-0} samples with chains"; cat "$log"; }
# cg_tree's own stacks are 5-6 frames deep: none of them may be cut at depth 32.
# A chain the kernel walked through a garbage frame pointer (code built without
# them: ld.so, libc's start-up and exit) can be longer than 32 and is counted
# as truncated, rightly; such chains are rare (none in most runs; one seen in a
# loaded CI run), so the bound is 0.1 % of the chains, and the workload's
# stacks are checked to be whole below (folded output, section 3).
trunc=$(stat_of "$log" chains_truncated)
awk -v t="${trunc:-x}" -v c="${chains:-0}" 'BEGIN { exit !(t ~ /^[0-9]+$/ && t * 1000 <= c) }' && ok ||
	bad "${trunc:-no} chains truncated at depth 32 of ${chains:-0}"

# 2. opreport -c: the block of mid
"$R" --session-dir="$W/s" -c >"$W/c.txt" 2>"$W/c.err" || bad "opreport -c failed: $(cat "$W/c.err")"
# block of SYMBOL: the lines between the rules around the unindented line naming it
block() {
	awk -v s="$2" '
		/^-----/ { if (found) exit; n = 0; next }
		{ line[n++] = $0; if ($0 !~ /^ / && $NF == s && $(NF-1) == "cg_tree") found = 1 }
		END { if (found) for (i = 0; i < n; i++) print line[i] }' "$1"
}
block "$W/c.txt" mid >"$W/mid.txt"
callee() { awk -v s="$2" 'BEGIN { seen = 0 } $0 !~ /^ / { seen = 1; next } seen && $NF == s { print $1; exit }' "$1"; }
caller() { awk -v s="$2" '$0 !~ /^ / { exit } $NF == s { print $1; exit }' "$1"; }
b=$(callee "$W/mid.txt" leaf_b) c=$(callee "$W/mid.txt" leaf_c) m=$(caller "$W/mid.txt" main)
if [ -n "$b" ] && [ -n "$c" ] && ratio3 "$b" "$c"; then ok
else bad "opreport -c: mid -> leaf_b ${b:-none} / leaf_c ${c:-none}, expected 3:1 +-15 %"; cat "$W/c.txt"; fi
[ "${m:-0}" -gt 0 ] && ok || { bad "opreport -c: main is not mid's caller"; cat "$W/mid.txt"; }
# mid has no self samples but is on nearly every stack: inclusive > 90 %
awk '$0 !~ /^ / && $NF == "mid" { exit !($4 > 90) }' "$W/mid.txt" && ok ||
	{ bad "opreport -c: mid's inclusive share is not > 90 %"; cat "$W/mid.txt"; }

# 3. folded stacks
"$R" --session-dir="$W/s" --callgraph-output=folded >"$W/folded.txt" 2>"$W/folded.err" ||
	bad "opreport --callgraph-output=folded failed"
sum_of() { awk -v pat="$2" 'index($1, pat) { n += $NF } END { print n + 0 }' "$1"; }
fb=$(sum_of "$W/folded.txt" "main;mid;leaf_b") fc=$(sum_of "$W/folded.txt" "main;mid;leaf_c")
if ratio3 "$fb" "$fc"; then ok
else bad "folded: main;mid;leaf_b $fb / main;mid;leaf_c $fc, expected 3:1 +-15 %"; head -20 "$W/folded.txt"; fi
# no stack of the workload's own functions (frame pointers all the way) was cut
if grep -E '\[truncated\].*;(mid|leaf_b|leaf_c) [0-9]+$' "$W/folded.txt" >"$W/trunc.txt"; then
	bad "depth 32 cut the workload's own stacks:"; head -5 "$W/trunc.txt"
else ok; fi
[ "${trunc:-0}" -gt 0 ] && { echo "callgraph: note: $trunc chains deeper than 32 (counted):"; grep -F '[truncated]' "$W/folded.txt" | head -3; }
# every line is "frames count"
awk 'NF < 2 || $NF !~ /^[0-9]+$/ { exit 1 }' "$W/folded.txt" && ok || bad "malformed folded line"

# 4. cross-binary arcs: cg_tree calls into libc
cgdir=$(find "$W/s/samples/current" -path '*cg_tree/{cg}/*libc.so*' -type f | head -1)
[ -n "$cgdir" ] && ok || { bad "no {cg} arc file from cg_tree into libc"; find "$W/s/samples/current" -name '*TIMER*'; }
grep -q '^  .*libc\.so\.6 ' "$W/mid.txt" "$W/c.txt" && ok || bad "opreport -c shows no libc callee or caller"

# 5. flat report of the same session: unchanged by the call-graph files
"$R" --session-dir="$W/s" -l image:"$P" >"$W/l.txt" 2>"$W/l.err"
pb=$(awk '$NF == "leaf_b" { print $2; exit }' "$W/l.txt") pc=$(awk '$NF == "leaf_c" { print $2; exit }' "$W/l.txt")
if [ -n "$pb" ] && [ -n "$pc" ] && ratio3 "$pb" "$pc"; then ok
else bad "opreport -l: leaf_b ${pb:-?} % / leaf_c ${pc:-?} %"; cat "$W/l.txt" "$W/l.err"; fi
grep -q 'skipping' "$W/l.err" && bad "opreport -l skipped files: $(cat "$W/l.err")" || ok

# 6. the flame graph
if "$R" --session-dir="$W/s" --flamegraph="$W/fg.svg" >"$W/fg.out" 2>&1 && grep -q '^<svg' "$W/fg.svg"; then
	ok
	# width of the widest box titled NAME (a sample taken before a prologue set up
	# the frame pointer loses one caller and gives a second, thin box)
	width_of() { awk -v s="><title>$2 (" 'index($0, s) { sub(/.*width="/, ""); sub(/".*/, "");
		if ($0 + 0 > w) w = $0 + 0 } END { if (w) print w }' "$1"; }
	wb=$(width_of "$W/fg.svg" leaf_b) wc=$(width_of "$W/fg.svg" leaf_c)
	if [ -n "$wb" ] && [ -n "$wc" ] && ratio3 "$wb" "$wc"; then ok
	else bad "flame graph: leaf_b width ${wb:-none}, leaf_c ${wc:-none}"; fi
	if command -v rsvg-convert >/dev/null 2>&1; then
		rsvg-convert -o "$W/fg.png" "$W/fg.svg" && [ -s "$W/fg.png" ] && ok || bad "rsvg-convert cannot render the SVG"
	fi
else
	bad "opreport --flamegraph failed: $(cat "$W/fg.out")"
fi

# 7. depth 2: chains cut, counted and marked
if "$D" --session-dir="$W/t" --ext-feature=callgraph:depth=2 -- "$P" 800 >"$W/t.out" 2>&1; then
	tr=$(stat_of "$W/t/samples/oprofiled.log" chains_truncated)
	ch=$(stat_of "$W/t/samples/oprofiled.log" samples_with_chain)
	# leaf, mid, main, libc's caller of main: every user chain is deeper than 2
	awk -v t="${tr:-0}" -v c="${ch:-0}" 'BEGIN { exit !(c > 100 && t >= 0.9 * c) }' && ok ||
		bad "depth=2: $tr of $ch chains counted as truncated"
	"$R" --session-dir="$W/t" --callgraph-output=folded >"$W/t.folded" 2>/dev/null
	grep -q '^cg_tree;\[truncated\];mid;leaf_b ' "$W/t.folded" && ok || { bad "depth=2: no cg_tree;[truncated];mid;leaf_b stack"; head "$W/t.folded"; }
	# the process, [truncated], 2 frames
	awk -F';' 'NF > 4 { exit 1 }' "$W/t.folded" && ok || bad "depth=2: a stack has more than 2 frames"
	"$R" --session-dir="$W/t" -c 2>/dev/null | grep -q 'cut at the depth limit' && ok || bad "opreport -c does not mention truncated stacks"
else
	bad "oprofiled depth=2 failed: $(cat "$W/t.out")"
fi

# 7b. the plugins.callgraph config group, under the --ext-feature arguments
printf 'plugins = ( { name = "callgraph"; args = ""; depth = 3; max_mb = 64; max_stacks = 1024; } );\n' >"$W/cg.conf"
if "$D" --config="$W/cg.conf" --session-dir="$W/cf" -- "$P" 300 >"$W/cf.out" 2>&1; then
	grep -q 'chains up to 3 frames, stack table up to 64 MiB' "$W/cf/samples/oprofiled.log" && ok ||
		bad "config plugins.callgraph.depth/max_mb not applied: $(grep callgraph: "$W/cf/samples/oprofiled.log")"
	# the fixed table's size of old configs: accepted, said to be ignored
	grep -q 'plugins.callgraph.max_stacks is ignored' "$W/cf/samples/oprofiled.log" && ok ||
		bad "config plugins.callgraph.max_stacks: no warning that it is ignored"
else
	bad "oprofiled with plugins.callgraph config failed: $(cat "$W/cf.out")"
fi
if "$D" --config="$W/cg.conf" --ext-feature=callgraph:depth=7 --session-dir="$W/cg" -- "$P" 300 >"$W/cg.out" 2>&1; then
	grep -q 'chains up to 7 frames' "$W/cg/samples/oprofiled.log" && ok || bad "--ext-feature=callgraph:depth=7 did not win over the config"
else
	bad "oprofiled with config + --ext-feature failed: $(cat "$W/cg.out")"
fi

# 8. a damaged stack table: warnings, never a crash
tab=$W/s/samples/current/callgraph/stacks
size=$(stat -c %s "$tab")
for how in trunc0 trunc10 trunc4096 trunchalf ffheader ffstacks ffimages; do
	rm -rf "$W/h" && cp -r "$W/s" "$W/h"
	t=$W/h/samples/current/callgraph/stacks
	case $how in
	trunc0) : >"$t" ;;
	trunc10) truncate -s 10 "$t" ;;
	trunc4096) truncate -s 4096 "$t" ;;
	trunchalf) truncate -s $((size / 2)) "$t" ;;
	# counts and sizes all ones, then every stack slot and image entry junk
	ffheader) head -c 56 /dev/zero | tr '\0' '\377' | dd of="$t" bs=1 seek=16 conv=notrunc 2>/dev/null ;;
	ffstacks) head -c 300000 /dev/zero | tr '\0' '\377' | dd of="$t" bs=4096 seek=66 conv=notrunc 2>/dev/null ;;
	ffimages) head -c 65536 /dev/zero | tr '\0' '\201' | dd of="$t" bs=4096 seek=1 conv=notrunc 2>/dev/null ;;
	esac
	"$R" --session-dir="$W/h" --callgraph-output=folded >"$W/h.out" 2>"$W/h.err"
	rc1=$?
	"$R" --session-dir="$W/h" -c --flamegraph="$W/h.svg" >"$W/h.out" 2>>"$W/h.err"
	rc2=$?
	if [ $rc1 -lt 128 ] && [ $rc2 -lt 128 ]; then ok; else bad "damaged stack table ($how): opreport died ($rc1, $rc2)"; fi
done

# 9. a killed daemon leaves a readable stack table
"$D" --session-dir="$W/k" --ext-feature=callgraph -- "$P" 4000 >"$W/k.out" 2>&1 &
dpid=$!
sleep 2
# the workload the daemon launched: end it too, by its pid
kids=$(cat /proc/"$dpid"/task/*/children 2>/dev/null)
kill -9 "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
for k in $kids; do kill -9 "$k" 2>/dev/null; done
"$R" --session-dir="$W/k" --callgraph-output=folded >"$W/k.folded" 2>"$W/k.err"
kb=$(sum_of "$W/k.folded" "main;mid;leaf_b")
[ "$kb" -gt 0 ] && ok || { bad "no stacks readable after kill -9: $(cat "$W/k.err")"; }

# 10. rotation (--rotate): each saved session holds its own stack table, and
# its stacks count the same samples as its flat files
if "$D" --session-dir="$W/r" --rotate=1s --ext-feature=callgraph -- "$P" 3500 >"$W/r.out" 2>&1; then
	nrot=0
	for d in "$W"/r/samples/rotate-* "$W/r/samples/current"; do
		n=$(basename "$d")
		flat=$("$R" --session-dir="$W/r" "session:$n" 2>/dev/null | awk '/cg_tree$/ { print $1; exit }')
		st=$("$R" --session-dir="$W/r" --callgraph-output=folded "session:$n" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
		[ -d "$d" ] && case $n in rotate-*) nrot=$((nrot + 1)) ;; esac
		awk -v f="${flat:-0}" -v s="$st" 'BEGIN { exit !(f > 0 && s >= 0.98 * f && s <= 1.02 * f) }' && ok ||
			bad "rotation: session $n has $st samples in stacks, ${flat:-0} in its flat files"
	done
	[ "$nrot" -ge 2 ] && ok || bad "rotation: only $nrot rotate-* sessions"
else
	bad "oprofiled --rotate=1s failed: $(cat "$W/r.out")"
fi

echo "callgraph: $npass passed, $fail failed"
[ "$fail" = 0 ]
