#!/bin/sh
# jit.sh - JIT code end to end, live (issue 18): oprofiled --ext-feature=jit
# with the JIT test programs (tests/integration/jit_progs, cpu-clock at the
# default rate):
#   1. libopagent (jit_opagent): after the program exited and its dump was
#      deleted, opreport -l names jit_big and jit_small 3:1 (+-0.3), -g and
#      opannotate --source show the lines given with op_write_debug_line_info,
#      -d shows addresses inside the image, oparchive carries the image
#      (opreport -l archive: names them with the session moved away);
#   2. perf's jitdump with a mid-run MOVE (jit_dump): one jit_big row with
#      the 3:1 split, and samples at both addresses (the plugin's
#      samples_in_moved_code and the rest);
#   3. a perf map deleted right after the program exits, while the daemon
#      runs on: the names stay;
#   4. hostile: /tmp/perf-PID.map a symbolic link to a root-only file is
#      refused (counted, logged) and never read; nothing lands outside the
#      session;
#   5. rotation: every rotate-* session names the JIT functions;
#   6. call graphs: a stack's JIT frame is the JIT function (folded stacks
#      ending in jit_big:jit_small 3:1, opreport -c blocks), not [anon].
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
N=$OP_BUILDDIR/tools/opannotate/opannotate
A=$OP_BUILDDIR/tools/oparchive
P=$OP_BUILDDIR/tests/integration/jit_progs
W=$OP_BUILDDIR/tests/jit.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
for x in "$R" "$N" "$A"; do
	[ -x "$x" ] || { echo "jit: SKIP: $x is not built (libbfd tools)"; exit 77; }
done
for x in "$D" "$P/jit_opagent" "$P/jit_dump" "$P/jit_perfmap"; do
	[ -x "$x" ] || { echo "jit: $x is missing (make check builds it)"; exit 1; }
done
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "jit: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
case $(uname -m) in
x86_64 | aarch64) ;;
*) echo "jit: SKIP: the JIT programs have no machine-code emitter for $(uname -m)"; exit 77 ;;
esac
rm -rf "$W" && mkdir -p "$W/src" && chmod 0755 "$W"
fail=0 npass=0 links=
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
cleanup() { [ -n "$links" ] && rm -f $links; }
trap cleanup EXIT INT TERM
stat_of() { awk -v k="$2:" '$1 == k { v = $2 } END { print v + 0 }' "$1"; }
# samples of SYMBOL in opreport -l output FILE (the first row naming it)
count() { awk -v s="$2" '$NF == s && $1 ~ /^[0-9]+$/ { print $1; exit }' "$1"; }
rows() { awk -v s="$2" '$NF == s && $1 ~ /^[0-9]+$/' "$1" | wc -l; }
# is $1 / $2 within 3 +- 0.3?
ratio3() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { exit !(b > 0 && a / b >= 2.7 && a / b <= 3.3) }'; }
run() { # SESSION CMD...: profile CMD with the jit plugin
	s=$1
	shift
	if ! "$D" --session-dir="$s" --ext-feature=jit "$@" >"$s.out" 2>&1; then
		bad "oprofiled $*: failed"; cat "$s.out" "$s/samples/oprofiled.log" 2>/dev/null
		return 1
	fi
}
seq 1 40 | sed 's/^/	step(); \/\/ source line /' >"$W/src/jit_source.js"

# 1. libopagent: names, split, lines, addresses, archive - with the dump gone
mkdir -p "$W/dumps" && chmod 0755 "$W/dumps"
if OPROFILE_JITDUMP_DIR=$W/dumps run "$W/s1" -- "$P/jit_opagent" -s "$W/src/jit_source.js" 2500; then
	pid=$(sed -n 's/^jit_opagent pid=\([0-9]*\) .*/\1/p' "$W/s1.out")
	[ -f "$W/dumps/$pid.dump" ] && ok || bad "libopagent wrote no $W/dumps/$pid.dump"
	rm -rf "$W/dumps"
	img=$W/s1/jit/$pid.0.jo
	[ -f "$img" ] && ok || { bad "no image $img"; ls -R "$W/s1"; }
	"$R" --session-dir="$W/s1" -l >"$W/l1.txt" 2>"$W/l1.err" || bad "opreport -l: $(cat "$W/l1.err")"
	b=$(count "$W/l1.txt" jit_big) sm=$(count "$W/l1.txt" jit_small)
	ratio3 "$b" "$sm" && ok || { bad "opreport -l: jit_big ${b:-none} / jit_small ${sm:-none}, expected 3:1 +-0.3"; cat "$W/l1.txt"; }
	grep -q "$pid.0.jo" "$W/l1.txt" && ok || bad "opreport -l does not name the image $pid.0.jo"
	grep -q 'modified after' "$W/l1.err" && bad "opreport warns the image was modified after profiling" || ok
	"$R" --session-dir="$W/s1" -l -g >"$W/g1.txt" 2>&1
	grep -Eq 'jit_source\.js:1[0-3] .* jit_big$' "$W/g1.txt" && grep -Eq 'jit_source\.js:2[0-3] .* jit_small$' "$W/g1.txt" &&
		ok || { bad "opreport -l -g: no jit_source.js:10-13 / 20-23 lines"; cat "$W/g1.txt"; }
	"$N" --session-dir="$W/s1" --source >"$W/a1.txt" 2>&1
	# the annotated source: counts on jit_big's lines (10..13) and jit_small's (20..23)
	hot_lines() { awk -v lo="$1" -v hi="$2" '/^ *[0-9]+ +[0-9.]+ :/ && /source line/ {
		n = $NF + 0; if (n >= lo && n <= hi) s += $1 } END { print s + 0 }' "$W/a1.txt"; }
	ab=$(hot_lines 10 13) as=$(hot_lines 20 23)
	grep -q "Total samples for file : \"$W/src/jit_source.js\"" "$W/a1.txt" && ratio3 "$ab" "$as" && ok ||
		{ bad "opannotate --source: lines 10-13 $ab, 20-23 $as, expected 3:1 on $W/src/jit_source.js"; head -80 "$W/a1.txt"; }
	"$R" --session-dir="$W/s1" -d >"$W/d1.txt" 2>&1
	# jit_big's per-address rows: inside the image's .text, summing to its count
	dsum=$(awk '/ jit_big$/ { on = 1; next } /^[0-9a-f]/ { on = 0 } on && /^  / { s += $2 } END { print s + 0 }' "$W/d1.txt")
	[ "$dsum" = "$b" ] && ok || { bad "opreport -d: jit_big's addresses sum to $dsum, not $b"; head -20 "$W/d1.txt"; }
	"$A" --session-dir="$W/s1" -o "$W/arc" >"$W/arc.out" 2>&1 || bad "oparchive: $(cat "$W/arc.out")"
	[ -f "$W/arc$img" ] && ok || bad "oparchive did not copy the image $img"
	mv "$W/s1" "$W/s1.away"
	"$R" -l archive:"$W/arc" >"$W/arc.txt" 2>&1
	ratio3 "$(count "$W/arc.txt" jit_big)" "$(count "$W/arc.txt" jit_small)" && ok ||
		{ bad "opreport -l archive: without the session"; cat "$W/arc.txt"; }
	mv "$W/s1.away" "$W/s1"
fi

# 2. perf's jitdump, jit_big moved halfway: one symbol, both addresses
mkdir -p "$W/d2" && chmod 0755 "$W/d2"
if run "$W/s2" -- "$P/jit_dump" "$W/d2" 2500; then
	log=$W/s2/samples/oprofiled.log
	"$R" --session-dir="$W/s2" -l >"$W/l2.txt" 2>&1
	b=$(count "$W/l2.txt" jit_big) sm=$(count "$W/l2.txt" jit_small)
	[ "$(rows "$W/l2.txt" jit_big)" = 1 ] && ok || { bad "jit_big is not one row"; cat "$W/l2.txt"; }
	ratio3 "$b" "$sm" && ok || { bad "jitdump: jit_big ${b:-none} / jit_small ${sm:-none}, expected 3:1 +-0.3"; cat "$W/l2.txt"; }
	moved=$(stat_of "$log" samples_in_moved_code) all=$(stat_of "$log" samples_resolved)
	[ "$(stat_of "$log" code_moves)" -ge 1 ] && [ "$moved" -gt 0 ] && [ "$((all - moved))" -gt "$sm" ] && ok ||
		bad "samples at the moved address $moved of $all resolved (jit_small $sm): not both addresses"
	"$R" --session-dir="$W/s2" -d >"$W/d2.txt" 2>&1
	dsum=$(awk '/ jit_big$/ { on = 1; next } /^[0-9a-f]/ { on = 0 } on && /^  / { s += $2 } END { print s + 0 }' "$W/d2.txt")
	[ "$dsum" = "$b" ] && ok || { bad "opreport -d: jit_big's addresses sum to $dsum, not $b"; head -20 "$W/d2.txt"; }
fi

# 3. a perf map deleted right after the exit, the daemon still running
cat >"$W/pm.sh" <<EOS
"$P/jit_perfmap" 2500 >"$W/pm.out" || exit 1
rm -f /tmp/perf-\$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$W/pm.out").map
sleep 1
EOS
if run "$W/s3" -- sh "$W/pm.sh"; then
	pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$W/pm.out")
	[ -n "$pid" ] && [ ! -e "/tmp/perf-$pid.map" ] && ok || bad "the perf map of pid ${pid:-?} was not deleted"
	"$R" --session-dir="$W/s3" -l >"$W/l3.txt" 2>&1
	ratio3 "$(count "$W/l3.txt" jit_big)" "$(count "$W/l3.txt" jit_small)" && ok ||
		{ bad "perf map deleted after exit: names lost"; cat "$W/pm.out" "$W/l3.txt"; }
fi

# 4. hostile: the process's perf map is a link to a root-only file
printf '0 7fffffffffff SECRET_FN\n' >"$W/secret" && chmod 0600 "$W/secret"
before=$(stat -c '%Y %s' "$W/secret")
mkdir -p "$W/elsewhere"
cat >"$W/h.sh" <<EOS
ln -s "$W/secret" /tmp/perf-\$\$.map && echo "/tmp/perf-\$\$.map" >"$W/h.link"
exec "$P/jit_perfmap" -d "$W/elsewhere" 1500
EOS
if run "$W/s4" -- sh "$W/h.sh"; then
	links=$(cat "$W/h.link" 2>/dev/null)
	log=$W/s4/samples/oprofiled.log
	# nothing outside the session: what the run wrote is below s4/ (and the script's own files)
	out=$(find "$W" -newer "$W/h.sh" -type f ! -path "$W/s4/*" ! -path "$W/s4.out" \
		! -path "$W/h.link" ! -path "$W/elsewhere/*" -print)
	[ -z "$out" ] && ok || bad "files written outside the session: $out"
	[ "$(stat_of "$log" files_refused)" -ge 1 ] && grep -q "perf map $links refused" "$log" && ok ||
		{ bad "the linked perf map was not refused and logged"; grep jit "$log"; }
	"$R" --session-dir="$W/s4" -l >"$W/l4.txt" 2>&1
	grep -q SECRET_FN "$W/l4.txt" && bad "the root-only file was read through the link" || ok
	for i in "$W"/s4/jit/*.jo; do
		[ -f "$i" ] && nm "$i" 2>/dev/null | grep -q SECRET_FN && bad "$i names SECRET_FN"
	done
	[ "$(stat -c '%Y %s' "$W/secret")" = "$before" ] && ok || bad "the link's target was changed"
	rm -f $links
	links=
fi

# 5. rotation: each rotated session still names the JIT functions
mkdir -p "$W/d5" && chmod 0755 "$W/d5"
if OPROFILE_JITDUMP_DIR=$W/d5 run "$W/s5" --rotate=1s -- "$P/jit_opagent" 3500; then
	n=0 good=0
	for r in $(ls "$W/s5/samples" | grep '^rotate-'); do
		n=$((n + 1))
		"$R" --session-dir="$W/s5" -l "session:$r" >"$W/l5.txt" 2>&1
		[ "$(count "$W/l5.txt" jit_big)" -gt 0 ] 2>/dev/null && good=$((good + 1))
	done
	[ "$n" -ge 1 ] && [ "$good" = "$n" ] && ok || bad "$good of $n rotated sessions name jit_big"
fi

# 6. call graphs: a stack's frame in JIT code is the JIT function (the
# plugin's image), as the flat profile names it - not [anon], and not a
# sample without a stack in opreport -c
mkdir -p "$W/d6" && chmod 0755 "$W/d6"
if OPROFILE_JITDUMP_DIR=$W/d6 run "$W/s6" --ext-feature=callgraph -- "$P/jit_opagent" 2500; then
	"$R" --session-dir="$W/s6" --callgraph-output=folded >"$W/f6.txt" 2>"$W/f6.err"
	# samples of the stacks whose leaf is FRAME
	leaf() { awk -v f="$1" '{ n = split($1, a, ";") } a[n] == f { s += $NF } END { print s + 0 }' "$W/f6.txt"; }
	fb=$(leaf jit_big) fs=$(leaf jit_small) fa=$(leaf '[anon]')
	ratio3 "$fb" "$fs" && ok || { bad "folded: stacks ending in jit_big $fb / jit_small $fs, expected 3:1 +-0.3"; head "$W/f6.txt"; }
	# the anon frames left: the few samples before the agent wrote the function
	[ "$fa" -le $(((fb + fs) / 100)) ] && ok || bad "folded: $fa stacks end in [anon] (jit_big $fb)"
	"$R" --session-dir="$W/s6" -c >"$W/c6.txt" 2>"$W/c6.err"
	awk '$NF == "jit_big" && $1 ~ /^[0-9]+$/ { f = 1 } END { exit !f }' "$W/c6.txt" && ok ||
		{ bad "opreport -c has no jit_big block"; head -20 "$W/c6.txt"; }
	grep -q 'have no stack' "$W/c6.txt" "$W/c6.err" && bad "opreport -c: $(grep -h 'have no stack' "$W/c6.txt" "$W/c6.err" | head -1)" || ok
fi

echo "jit: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
