#!/bin/sh
# opannotate.sh - opannotate on live profiles of annot_work (built -O2 -g):
# --source per-line counts add up to opreport -l's symbol counts, the
# marked hot line has the most samples, the inlined annot_mix is named at
# its call with the samples of its body; --assembly per-instruction counts
# add up too and the in-process disassembly reads as objdump's; a stripped
# copy with a .gnu_debuglink debug file annotates the same; --output-dir
# writes the tree; --search-dirs/--base-dirs, --include-file/--exclude-file,
# -t, -i, -e; kernel symbols from the kallsyms snapshot (root: dd's
# syscalls) with per-address counts and no source; bad input errors.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
A=$OP_BUILDDIR/tools/opannotate/opannotate
WORK=$OP_BUILDDIR/tests/integration/annot_work
SRC=$(readlink -f "$OP_SRCDIR/tests/integration/annot_work.c")
W=$OP_BUILDDIR/tests/opannotate.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
if [ ! -x "$D" ] || [ ! -x "$A" ]; then
	echo "opannotate: SKIP: $D or $A is not built"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "opannotate: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

profile() { # $1 = session dir, rest = command
	s=$1; shift
	if ! "$D" --session-dir="$s" --events=TIMER:250000 -- "$@" >"$s.log" 2>&1; then
		echo "opannotate: oprofiled failed for $*:"; cat "$s.log"; return 1
	fi
}
# samples of symbol $2 in opreport -l output $1
count_of() { awk -v s="$2" '$NF == s { print $1; exit }' "$1"; }
# "NAME total: N" of an annotation
note_of() { sed -n "s|.*/\\* $2 total: *\\([0-9]*\\) .*|\\1|p" "$1" | head -1; }
# the count column of the lines of $1 (annotated source or assembly) that have one
line_counts() { sed -n 's/^ *\([0-9][0-9]*\)  *[0-9.][0-9.]* :.*/\1/p' "$1"; }
sum() { awk '{ s += $1 } END { print s + 0 }'; }
# line number of the source line holding marker $1
src_line() { grep -n "$1" "$SRC" | head -1 | cut -d: -f1; }
# the count of source line $2 in annotated file $1 (the source text follows " :")
count_at_line() { # annotated output $1, line text marker $2
	grep -F "$2" "$1" | grep -v '^ *: *x = annot_mix' | head -1 |
		sed -n 's/^ *\([0-9][0-9]*\)  *[0-9.][0-9.]* :.*/\1/p'
}

# --- 1. the annotated source of a live profile
if ! profile "$W/s1" "$WORK" 2000; then
	bad "profiling annot_work"
	echo "opannotate: $npass passed, $fail failed"; exit 1
fi
"$R" --session-dir="$W/s1" -l image:"$WORK" >"$W/rep.txt" 2>&1
hot=$(count_of "$W/rep.txt" annot_hot)
inl=$(count_of "$W/rep.txt" annot_inl)
img_total=$(awk '$3 == "annot_work" || (NF == 3 && $0 !~ /^(CPU|Profiling|samples)/) { s += $1 } END { print s + 0 }' "$W/rep.txt")
echo "opreport: annot_hot $hot, annot_inl $inl, samples in annot_work $img_total"
[ -n "$hot" ] && [ -n "$inl" ] && [ "$hot" -gt 100 ] || { bad "opreport has too few samples"; cat "$W/rep.txt"; }
"$A" --session-dir="$W/s1" -s image:"$WORK" >"$W/src.txt" 2>"$W/src.err" && ok ||
	{ bad "opannotate -s failed"; cat "$W/src.err"; }
# the file block: its lines add up to its total and to opreport's symbols
ftot=$(sed -n '/Total samples for file : ".*annot_work.c"/,/\*\//s/^ \* *\([0-9][0-9]*\) .*/\1/p' "$W/src.txt" | head -1)
lsum=$(line_counts "$W/src.txt" | sum)
echo "opannotate -s: file total $ftot, sum of the lines $lsum"
[ -n "$ftot" ] && [ "$ftot" = "$lsum" ] && ok || bad "the lines add up to $lsum, the file total is $ftot"
[ "$lsum" = "$img_total" ] && ok || bad "the lines add up to $lsum, opreport -l has $img_total samples in annot_work"
[ "$(note_of "$W/src.txt" annot_hot)" = "$hot" ] && ok || bad "annot_hot total $(note_of "$W/src.txt" annot_hot), opreport $hot"
[ "$(note_of "$W/src.txt" annot_inl)" = "$inl" ] && ok || bad "annot_inl total $(note_of "$W/src.txt" annot_inl), opreport $inl"
# the hot line has the most samples
hl=$(count_at_line "$W/src.txt" "/* ANNOT_HOT_LINE */")
max=$(line_counts "$W/src.txt" | sort -n | tail -1)
[ -n "$hl" ] && [ "$hl" = "$max" ] && ok || bad "the hot line has $hl samples, the most on a line is $max"
# the source text is the file's, line for line, after the header
nsrc=$(wc -l <"$SRC")
awk '/^ +[0-9]*( +[0-9.]+)? +:/' "$W/src.txt" | sed 's/^[^:]*://' | sed 's| /\* [a-z_]* \(.inlined. \)\?total: .*\*/$||' |
	head -n "$nsrc" | cmp -s - "$SRC" && ok || bad "the annotated text is not the source file's"
# the inlined function: named at its call, with the samples of its body
itot=$(grep -F ANNOT_MIX_CALL "$W/src.txt" | sed -n 's|.*/\* annot_mix (inlined) total: *\([0-9]*\) .*|\1|p')
b1=$(src_line 'unsigned long annot_mix(')
body=$(awk -v b="$b1" 'NR > 0' "$W/src.txt" | awk '/^ +[0-9]*( +[0-9.]+)? +:/' | sed -n "$((b1 + 1)),$((b1 + 4))p" |
	sed -n 's/^ *\([0-9][0-9]*\)  *[0-9.][0-9.]* :.*/\1/p' | sum)
echo "annot_mix inlined: $itot at its call, $body on its body lines"
[ -n "$itot" ] && [ "$itot" -gt 0 ] && [ "$itot" = "$body" ] && ok ||
	{ bad "inlined annot_mix: call note '$itot', body lines $body"; grep -n "annot_mix\|ANNOT_MIX" "$W/src.txt"; }

# --- 2. assembly: per-instruction counts add up, the code reads as objdump's
"$A" --session-dir="$W/s1" -a image:"$WORK" >"$W/asm.txt" 2>"$W/asm.err" && ok ||
	{ bad "opannotate -a failed"; cat "$W/asm.err"; }
block() { # the lines of symbol $2's block in $1
	awk -v s="<$2>:" '/^[0-9a-f]+ <.*>:/ { on = ($2 == s) ; next } /^ *: *$/ { on = 0 } on' "$1"
}
for sym in annot_hot annot_inl; do
	block "$W/asm.txt" $sym >"$W/blk_$sym"
	isum=$(line_counts "$W/blk_$sym" | sum)
	want=$(count_of "$W/rep.txt" $sym)
	[ "$isum" = "$want" ] && [ "$(note_of "$W/asm.txt" $sym)" = "$want" ] && ok ||
		{ bad "-a $sym: instructions add up to $isum, opreport $want"; cat "$W/blk_$sym"; }
	if command -v objdump >/dev/null; then
		# the same instructions as objdump (addresses and text), in process; objdump
		# names the data symbol of a RIP-relative operand ("# 4028 <annot_sink>"),
		# opannotate names code symbols only
		sed 's/^[^:]*: *//; s/\(# [0-9a-f]*\) <[^>]*>$/\1/; s/[[:space:]]*$//' "$W/blk_$sym" >"$W/ours_$sym"
		objdump -d --no-show-raw-insn "$WORK" | awk -v s="<$sym>:" '$2 == s { on = 1; next } /^$/ { on = 0 } on' |
			sed 's/^ *//; s/\(# [0-9a-f]*\) <[^>]*>$/\1/; s/[[:space:]]*$//' >"$W/objdump_$sym"
		[ -s "$W/objdump_$sym" ] && diff "$W/objdump_$sym" "$W/ours_$sym" >"$W/diff_$sym" && ok ||
			{ bad "-a $sym: not objdump's disassembly"; head -20 "$W/diff_$sym"; }
	fi
done
"$A" --session-dir="$W/s1" -a -s image:"$WORK" >"$W/asmsrc.txt" 2>&1 &&
	grep -q "annot_mix(): inlined into annot_inl at .*annot_work.c:$(src_line "/\* ANNOT_MIX_CALL \*/")" "$W/asmsrc.txt" &&
	grep -F -q "ANNOT_HOT_LINE" "$W/asmsrc.txt" && ok || bad "-a -s: no interleaved source or inlined function"
[ "$(line_counts "$W/asmsrc.txt" | sum)" = "$(line_counts "$W/asm.txt" | sum)" ] && ok || bad "-a -s counts differ from -a"
# -t, -i, -e
"$A" --session-dir="$W/s1" -a -t 50 image:"$WORK" >"$W/t.txt" 2>&1
grep -q "<annot_hot>:" "$W/t.txt" && ! grep -q "<annot_inl>:" "$W/t.txt" && ok || bad "-t 50 kept annot_inl or lost annot_hot"
"$A" --session-dir="$W/s1" -a -i annot_inl image:"$WORK" >"$W/i.txt" 2>&1
grep -q "<annot_inl>:" "$W/i.txt" && ! grep -q "<annot_hot>:" "$W/i.txt" && ok || bad "-i annot_inl"
"$A" --session-dir="$W/s1" -s -e annot_hot image:"$WORK" >"$W/e.txt" 2>&1
! grep -q "annot_hot total" "$W/e.txt" && grep -q "annot_inl total" "$W/e.txt" && ok || bad "-e annot_hot"

# --- 3. --output-dir, --search-dirs/--base-dirs, --include-file/--exclude-file
"$A" --session-dir="$W/s1" -s --output-dir="$W/out" image:"$WORK" >"$W/od.txt" 2>&1
of="$W/out$SRC"
if [ -f "$of" ]; then
	grep -F "/* ANNOT_HOT_LINE */" "$of" | grep -q "^ *$hl " && grep -q "Command line: opannotate" "$of" && ok ||
		bad "--output-dir: $of lacks the counts or the header"
	# the annotated file keeps the source's lines at their line numbers
	n=$(src_line "/\* ANNOT_HOT_LINE \*/")
	sed -n "${n}p" "$of" | grep -q ANNOT_HOT_LINE && ok || bad "--output-dir: the hot line moved"
else
	bad "--output-dir did not write $of"; find "$W/out" | head
fi
mkdir -p "$W/moved"
sed 's|ANNOT_HOT_LINE|ANNOT_HOT_LINE RELOCATED|' "$SRC" >"$W/moved/annot_work.c"
"$A" --session-dir="$W/s1" -s --base-dirs="$(dirname "$SRC")" --search-dirs="$W/moved" image:"$WORK" >"$W/sd.txt" 2>&1
grep -q "RELOCATED" "$W/sd.txt" && ok || bad "--search-dirs/--base-dirs did not find the moved source"
"$A" --session-dir="$W/s1" -s --exclude-file='annot_*.c' image:"$WORK" >"$W/xf.txt" 2>&1
! grep -q "Total samples for file" "$W/xf.txt" && ok || bad "--exclude-file kept annot_work.c"
"$A" --session-dir="$W/s1" -s --include-file=annot_work.c image:"$WORK" >"$W/if.txt" 2>&1
grep -q "Total samples for file.*annot_work.c" "$W/if.txt" && ok || bad "--include-file lost annot_work.c"

# --- 4. a stripped binary with its debug file (.gnu_debuglink, next to it)
mkdir -p "$W/strip"
objcopy --only-keep-debug "$WORK" "$W/strip/annot_s.debug" &&
	strip --strip-all -o "$W/strip/annot_s" "$WORK" &&
	(cd "$W/strip" && objcopy --add-gnu-debuglink=annot_s.debug annot_s)
if [ -x "$W/strip/annot_s" ] && profile "$W/s2" "$W/strip/annot_s" 1000; then
	"$A" --session-dir="$W/s2" -s image:"$W/strip/annot_s" >"$W/strip.txt" 2>"$W/strip.err"
	h2=$(count_at_line "$W/strip.txt" "/* ANNOT_HOT_LINE */")
	m2=$(line_counts "$W/strip.txt" | sort -n | tail -1)
	[ -n "$h2" ] && [ "$h2" = "$m2" ] && grep -q "annot_hot total" "$W/strip.txt" && ok ||
		{ bad "stripped + debug file: hot line $h2, max $m2"; cat "$W/strip.err"; head -30 "$W/strip.txt"; }
	"$A" --session-dir="$W/s2" -a image:"$W/strip/annot_s" >"$W/strip_a.txt" 2>&1 &&
		grep -q "<annot_hot>:" "$W/strip_a.txt" && ok || bad "stripped + debug file: -a has no annot_hot"
else
	bad "building or profiling the stripped copy"
fi

# --- 5. kernel symbols from the session's kallsyms snapshot (root: kernel samples)
DD=$(readlink -f "$(command -v dd)")
if [ "$(id -u)" = 0 ] && profile "$W/s3" "$DD" if=/dev/zero of=/dev/null bs=512 count=400000; then
	"$A" --session-dir="$W/s3" -a >"$W/k.txt" 2>"$W/k.err"
	if grep -q "^ *:vmlinux: *no code (kernel image" "$W/k.txt"; then
		# a kernel symbol's per-address counts add up to its total
		ks=$(awk '/:vmlinux:/ { on = 1 } on && /^ffffffff[0-9a-f]+ <.*>:/ { print $2; exit }' "$W/k.txt" | tr -d '<>:')
		block "$W/k.txt" "$ks" >"$W/k_blk"
		[ -n "$ks" ] && [ "$(line_counts "$W/k_blk" | sum)" = "$(note_of "$W/k.txt" "$ks")" ] &&
			grep -q '^ *[0-9]* *[0-9.]* :ffffffff[0-9a-f]*:$' "$W/k_blk" && ok ||
			{ bad "kernel symbol $ks: per-address counts"; head -20 "$W/k_blk"; }
		"$R" --session-dir="$W/s3" -l >"$W/k_rep.txt" 2>&1
		[ "$(note_of "$W/k.txt" "$ks")" = "$(count_of "$W/k_rep.txt" "$ks")" ] && ok ||
			bad "kernel symbol $ks: opannotate $(note_of "$W/k.txt" "$ks"), opreport $(count_of "$W/k_rep.txt" "$ks")"
		echo "kernel: hottest kernel symbol $ks, $(note_of "$W/k.txt" "$ks") samples"
	else
		bad "no kernel image in -a output"; head -30 "$W/k.txt"; cat "$W/k.err"
	fi
	# no source for the kernel: -s shows no vmlinux file
	"$A" --session-dir="$W/s3" -s >"$W/ks.txt" 2>&1
	! grep -q "vmlinux" "$W/ks.txt" && ok || bad "-s shows kernel sources"
else
	echo "opannotate: kernel part not run (needs root for kernel samples)"
fi

# --- 6. bad input
cp "$WORK" "$W/gone"
if profile "$W/s4" "$W/gone" 300; then
	rm -f "$W/gone"
	"$A" --session-dir="$W/s4" -s image:"$W/gone" >"$W/gone.txt" 2>"$W/gone.err"
	rc=$?
	[ $rc -ne 0 ] && grep -q "binary $W/gone not found" "$W/gone.err" && grep -q "no debug information" "$W/gone.err" &&
		ok || { bad "missing binary: exit $rc"; cat "$W/gone.err"; }
	"$A" --session-dir="$W/s4" -a image:"$W/gone" >"$W/gone_a.txt" 2>&1 &&
		grep -q "no code (binary not readable" "$W/gone_a.txt" && ok || { bad "missing binary -a"; cat "$W/gone_a.txt"; }
fi
expect_err() { # $1 = what the message must hold, rest = arguments
	want=$1; shift
	if "$A" "$@" >"$W/err.out" 2>"$W/err.txt"; then
		bad "opannotate $* succeeded"
	elif ! grep -q -- "$want" "$W/err.txt"; then
		bad "opannotate $*: message lacks '$want'"; cat "$W/err.txt"
	else
		ok
	fi
}
expect_err "bogus" --session-dir="$W/s1" -s bogus:foo
expect_err "give --source" --session-dir="$W/s1"
expect_err "meaningless with --assembly" --session-dir="$W/s1" -a --output-dir="$W/x"
expect_err "threshold=abc" --session-dir="$W/s1" -s -t abc
expect_err "unknown option --frobnicate" --frobnicate
expect_err "demangle=odd" -s -D odd
expect_err "no session directory" --session-dir="$W/nowhere" -s
expect_err "base-dirs is useless" --session-dir="$W/s1" -s --base-dirs=/tmp
"$A" --version | grep -q "^opannotate " && "$A" --help | grep -q -- "--assembly" &&
	"$A" -? | grep -q "^usage: opannotate" && "$A" --usage | grep -q "^usage" && ok || bad "--version/--help/--usage"

echo "opannotate: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
