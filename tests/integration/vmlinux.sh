#!/bin/sh
# vmlinux.sh - opreport and opannotate --vmlinux=FILE on a live kernel-heavy
# profile (dd's syscalls, root). The machine has no vmlinux: a stand-in is
# built from the session's own kallsyms snapshot (an ELF whose .text spans
# the sampled kernel functions, each symbol at its kallsyms address with the
# size up to the next kallsyms symbol, nop-filled). Checks: opreport -l
# names the same kernel symbols with the same counts with and without it;
# opannotate -a disassembles them and the per-instruction counts add up to
# the symbol totals; a stand-in linked 0x1e00000 lower with its _text
# (a KASLR kernel's image: the running one was moved by that slide) gives
# the same rows, addresses and annotations; a stand-in with the symbols
# moved (without _text, or not by its _text's slide) is refused with a
# warning and the kallsyms names; a non-ELF and an ELF without kernel text
# are refused with an error naming the option.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
A=$OP_BUILDDIR/tools/opannotate/opannotate
W=$OP_BUILDDIR/tests/vmlinux.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
if [ ! -x "$D" ] || [ ! -x "$R" ] || [ ! -x "$A" ]; then
	echo "vmlinux: SKIP: $D, $R or $A is not built"
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "vmlinux: SKIP: kernel samples and a readable kallsyms snapshot need root"
	exit 77
fi
for t in as ld; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "vmlinux: SKIP: no $t (binutils) to build the stand-in vmlinux"
		exit 77
	fi
done
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# "count name" of the kernel symbols of opreport -l output $1, sorted by name
rows() { awk 'NR > 3 && NF >= 4 { print $2, $NF }' "$1" | sort -k2; }
# "NAME total: N" of an annotation
note_of() { sed -n "s|.*/\\* $2 total: *\\([0-9]*\\) .*|\\1|p" "$1" | head -1; }
line_counts() { sed -n 's/^ *\([0-9][0-9]*\)  *[0-9.][0-9.]* :.*/\1/p' "$1"; }
sum() { awk '{ s += $1 } END { print s + 0 }'; }
block() { # the lines of symbol $2's block in $1
	awk -v s="<$2>:" '/^[0-9a-f]+ <.*>:/ { on = ($2 == s) ; next } /^ *: *$/ { on = 0 } on' "$1"
}

# --- the profile: dd copies byte by byte, nearly all in the kernel
DD=$(readlink -f "$(command -v dd)")
if ! "$D" --session-dir="$W/s" --events=TIMER:250000 -- "$DD" if=/dev/zero of=/dev/null bs=1 \
	count=1500000 >"$W/s.log" 2>&1; then
	echo "vmlinux: oprofiled failed:"; cat "$W/s.log"; exit 1
fi
KS=$W/s/samples/current/stats/kallsyms
"$R" --session-dir="$W/s" -l -w image:vmlinux >"$W/ref.txt" 2>"$W/ref.err"
if [ ! -s "$KS" ] || ! grep -q '^ffff' "$W/ref.txt"; then
	echo "vmlinux: FAIL: no kernel samples or no kallsyms snapshot"; cat "$W/ref.txt" "$W/ref.err"
	exit 1
fi

# --- the stand-in: a .S of the sampled functions at their kallsyms addresses
# $1 = output, $2 = how far every symbol is moved (0: the right kernel),
# $3 = KASLR slide (hex, optional): link it that much lower, with a _text
standin() {
	case $(uname -m) in x86_64 | i?86) fill=nop ;; *) fill=0 ;; esac
	# the kernel's text symbols (and pseudo-modules': same key space), by address
	awk '$2 ~ /^[tTwW]$/ && (NF == 3 || $4 ~ /^\[(bpf|__builtin__)/) { print $1 }' "$KS" |
		sort -u >"$W/kaddr"
	etext=$(awk '$3 == "_etext" { print $1; exit }' "$KS")
	# sampled symbols of the kernel's own text: "vma name" by address
	awk 'NR > 3 && $1 ~ /^ffff/ { print $1, $NF }' "$W/ref.txt" |
		awk -v e="$etext" 'length($1) == length(e) && $1 < e' | sort >"$W/sampled"
	awk -v shift="$2" -v fill="$fill" '
	# the low 32 bits (kernel text shares its high ones): exact in an awk double
	function lo(s,  i, v) { v = 0; s = tolower(substr(s, length(s) - 7))
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	FNR == NR { ka[++nk] = $1; next }
	{ sa[++ns] = $1; sn[ns] = $2 }
	END {
		k = 1
		for (i = 1; i <= ns; i++) {
			while (k <= nk && ka[k] <= sa[i]) k++
			if (k > nk) continue
			if (base == "") { base = sa[i]; bv = lo(base) }
			if (substr(sa[i], 1, length(sa[i]) - 8) != substr(base, 1, length(base) - 8))
				continue
			off = lo(sa[i]) - bv; size = lo(ka[k]) - lo(sa[i])
			if (size <= shift || off < last) continue
			printf "\t.org 0x%x\n", off + shift
			printf "\t.globl \"%s\"\n\t.type \"%s\", @function\n\"%s\":\n", sn[i], sn[i], sn[i]
			# x86: one-byte nops, instructions with a line for as -g
			if (fill == "nop")
				printf "\t.rept %d\n\tnop\n\t.endr\n", size - shift
			else
				printf "\t.fill %d, 1, 0\n", size - shift
			printf "\t.size \"%s\", %d\n", sn[i], size - shift
			last = off + size
		}
		print base > "/dev/stderr"
	}' "$W/kaddr" "$W/sampled" >"$1.S" 2>"$1.base"
	{ printf '\t.section .text, "ax", @progbits\n'; cat "$1.S"; } >"$1.s"
	at=$(cat "$1.base") defsym=
	if [ -n "${3:-}" ]; then
		ktext=$(awk '$3 == "_text" { t = $1 } $3 == "_stext" { s = $1 }
			END { print t != "" ? t : s }' "$KS")
		at=$(hexsub "$at" "$3") && ktext=$(hexsub "$ktext" "$3") || return 1
		defsym=--defsym=_text=0x$ktext
	fi
	as -g -o "$1.o" "$1.s" && ld -e 0 -Ttext=0x"$at" $defsym -o "$1" "$1.o"
}
# $1 - $2, 16 hex digits each at most: in two 32-bit halves, exact in awk
hexsub() {
	awk -v a="$1" -v b="$2" 'function h(s,  i, v) { v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	BEGIN { a = sprintf("%16s", a); b = sprintf("%16s", b); gsub(/ /, "0", a); gsub(/ /, "0", b)
		lo = h(substr(a, 9)) - h(substr(b, 9)); hi = h(substr(a, 1, 8)) - h(substr(b, 1, 8))
		if (lo < 0) { lo += 4294967296; hi-- }
		if (hi < 0) exit 1
		printf "%08x%08x\n", hi, lo }'
}
if ! standin "$W/vmlinux" 0 >"$W/build.log" 2>&1; then
	echo "vmlinux: FAIL: building the stand-in"; cat "$W/build.log"; exit 1
fi
nsyms=$(grep -c '^"' "$W/vmlinux.s")
echo "stand-in vmlinux: $nsyms sampled kernel functions, .text at 0x$(cat "$W/vmlinux.base")"

# --- 1. opreport -l: the same symbols, the same counts
"$R" --session-dir="$W/s" -l -w --vmlinux="$W/vmlinux" image:vmlinux >"$W/vm.txt" 2>"$W/vm.err"
rows "$W/ref.txt" >"$W/ref.rows"
rows "$W/vm.txt" >"$W/vm.rows"
[ "$nsyms" -gt 0 ] && [ -s "$W/vm.rows" ] && cmp -s "$W/ref.rows" "$W/vm.rows" && ok ||
	{ bad "opreport -l --vmlinux differs from the kallsyms report"; diff "$W/ref.rows" "$W/vm.rows"; }
[ ! -s "$W/vm.err" ] && ok || { bad "opreport --vmlinux warned"; cat "$W/vm.err"; }
# the addresses (-w) are the same too
awk 'NR > 3 && NF >= 4 { print $1, $NF }' "$W/ref.txt" | sort >"$W/ref.vma"
awk 'NR > 3 && NF >= 4 { print $1, $NF }' "$W/vm.txt" | sort >"$W/vm.vma"
cmp -s "$W/ref.vma" "$W/vm.vma" && ok || { bad "opreport -w --vmlinux addresses differ"; diff "$W/ref.vma" "$W/vm.vma"; }

# --- 2. opannotate -a: the stand-in's code, per-instruction counts add up
# $1 = stand-in, $2 = tag for the files
check_asm() {
	"$A" --session-dir="$W/s" -a --vmlinux="$1" image:vmlinux >"$W/$2.txt" 2>"$W/$2.err"
	if ! grep -q '^ *:vmlinux: *file format elf' "$W/$2.txt"; then
		bad "opannotate -a --vmlinux=$1: no disassembled kernel image"
		head -20 "$W/$2.txt"; cat "$W/$2.err"; return
	fi
	ok
	n=0
	for ks in $(awk 'NR > 3 && NF >= 4 { print $NF }' "$W/ref.txt" | head -5); do
		grep -q "^\"$ks\":" "$W/vmlinux.s" || continue
		want=$(awk -v s="$ks" '$NF == s { print $2; exit }' "$W/ref.txt")
		# the block starts at the kernel's (running) address of the symbol
		kva=$(awk -v s="$ks" '$NF == s { print $1; exit }' "$W/ref.txt")
		block "$W/$2.txt" "$ks" >"$W/blk"
		isum=$(line_counts "$W/blk" | sum)
		# instructions, not bare addresses: "ADDR:<tab>nop"
		if [ "$isum" = "$want" ] && [ "$(note_of "$W/$2.txt" "$ks")" = "$want" ] &&
			grep -q "$(printf ':\t')" "$W/blk" && ! grep -q '(no code)' "$W/blk" &&
			grep -q "^0*${kva#"${kva%%[!0]*}"} <$ks>:" "$W/$2.txt"; then
			ok; n=$((n + 1))
		else
			bad "-a --vmlinux=$1 $ks (at $kva): instructions add up to $isum, opreport $want"
			grep "<$ks>:" "$W/$2.txt"; head -20 "$W/blk"
		fi
	done
	echo "opannotate -a --vmlinux=$1: $n kernel symbols disassembled, counts add up"
	[ "$n" -gt 0 ] && ok || bad "opannotate -a --vmlinux=$1: no kernel symbol checked"
}
check_asm "$W/vmlinux" a

# --- 3. opannotate -s: the stand-in's DWARF lines (as -g) name its .s source
if grep -q nop "$W/vmlinux.s"; then
	"$A" --session-dir="$W/s" -s --vmlinux="$W/vmlinux" image:vmlinux >"$W/src.txt" 2>"$W/src.err"
	# the samples of the functions in the stand-in, by opreport
	want=$(grep '^"' "$W/vmlinux.s" | tr -d '":' | while read -r f; do
		awk -v s="$f" '$NF == s { print $2; exit }' "$W/ref.txt"; done | sum)
	ftot=$(sed -n '/Total samples for file : ".*vmlinux.s"/,/\*\//s/^ \* *\([0-9][0-9]*\) .*/\1/p' "$W/src.txt" | head -1)
	lsum=$(line_counts "$W/src.txt" | sum)
	echo "opannotate -s --vmlinux: vmlinux.s total $ftot, lines $lsum, opreport $want"
	[ "$want" -gt 0 ] && [ "$ftot" = "$want" ] && [ "$lsum" = "$want" ] && ok ||
		{ bad "-s --vmlinux: file total $ftot, lines $lsum, opreport $want"; head -30 "$W/src.txt"; cat "$W/src.err"; }
	ks=$(awk 'NR > 3 && NF >= 4 { print $NF; exit }' "$W/ref.txt")
	[ "$(note_of "$W/src.txt" "$ks")" = "$(awk -v s="$ks" '$NF == s { print $2; exit }' "$W/ref.txt")" ] &&
		ok || bad "-s --vmlinux: $ks total $(note_of "$W/src.txt" "$ks")"
else
	echo "vmlinux: --source part not run (the stand-in has no instructions on $(uname -m))"
fi

# --- 4. a KASLR kernel: its image linked 0x1e00000 below where it ran
if standin "$W/kaslr" 0 1e00000 >"$W/build3.log" 2>&1; then
	"$R" --session-dir="$W/s" -l -w --vmlinux="$W/kaslr" image:vmlinux >"$W/kl.txt" 2>"$W/kl.err"
	rows "$W/kl.txt" >"$W/kl.rows"
	[ -s "$W/kl.rows" ] && cmp -s "$W/ref.rows" "$W/kl.rows" && ok ||
		{ bad "KASLR vmlinux: rows differ from the kallsyms report"; diff "$W/ref.rows" "$W/kl.rows"; cat "$W/kl.err"; }
	[ ! -s "$W/kl.err" ] && ok || { bad "opreport --vmlinux (KASLR) warned"; cat "$W/kl.err"; }
	# relocated: the running kernel's addresses, not the link ones
	awk 'NR > 3 && NF >= 4 { print $1, $NF }' "$W/kl.txt" | sort >"$W/kl.vma"
	cmp -s "$W/ref.vma" "$W/kl.vma" && ok || { bad "KASLR vmlinux: addresses differ"; diff "$W/ref.vma" "$W/kl.vma"; }
	check_asm "$W/kaslr" kla
else
	bad "building the KASLR stand-in"; cat "$W/build3.log"
fi

# --- 5. a vmlinux of another kernel (symbols moved): warning, kallsyms names
if standin "$W/moved" 3 >"$W/build2.log" 2>&1; then
	"$R" --session-dir="$W/s" -l -w --vmlinux="$W/moved" image:vmlinux >"$W/mv.txt" 2>"$W/mv.err"
	grep -q "opreport warning: --vmlinux=$W/moved does not match the profiled kernel: .* is at 0x[0-9a-f]* in $W/moved but at 0x[0-9a-f]* in the session's kallsyms snapshot; .*kallsyms snapshot instead" "$W/mv.err" &&
		ok || { bad "moved vmlinux: no warning"; cat "$W/mv.err"; }
	rows "$W/mv.txt" >"$W/mv.rows"
	cmp -s "$W/ref.rows" "$W/mv.rows" && ok || { bad "moved vmlinux: not the kallsyms names"; diff "$W/ref.rows" "$W/mv.rows"; }
	"$A" --session-dir="$W/s" -a --vmlinux="$W/moved" image:vmlinux >"$W/mva.txt" 2>"$W/mva.err"
	grep -q "does not match the profiled kernel" "$W/mva.err" &&
		grep -q "^ *:vmlinux: *no code (kernel image" "$W/mva.txt" && ok ||
		{ bad "moved vmlinux: opannotate"; cat "$W/mva.err"; head "$W/mva.txt"; }
else
	bad "building the moved stand-in"; cat "$W/build2.log"
fi
# its _text says 0x1e00000 lower, its functions are 0x1e00000 - 3 lower: not one slide
if standin "$W/kmoved" 3 1e00000 >"$W/build4.log" 2>&1; then
	"$R" --session-dir="$W/s" -l -w --vmlinux="$W/kmoved" image:vmlinux >"$W/km.txt" 2>"$W/km.err"
	grep -q "opreport warning: --vmlinux=$W/kmoved does not match the profiled kernel: .* is at 0x[0-9a-f]* in $W/kmoved but at 0x[0-9a-f]* in the session's kallsyms snapshot (its addresses moved by 0x1e00000, the KASLR slide of _text); .*kallsyms snapshot instead" "$W/km.err" &&
		ok || { bad "unevenly moved KASLR vmlinux: no warning"; cat "$W/km.err"; }
	rows "$W/km.txt" >"$W/km.rows"
	cmp -s "$W/ref.rows" "$W/km.rows" && ok || { bad "unevenly moved KASLR vmlinux: not the kallsyms names"; diff "$W/ref.rows" "$W/km.rows"; }
else
	bad "building the unevenly moved KASLR stand-in"; cat "$W/build4.log"
fi

# --- 6. bad files: an error naming the option, exit 1
expect_err() { # $1 = what the message must hold, rest = arguments
	msg=$1; shift
	for t in "$R" "$A"; do
		"$t" --session-dir="$W/s" "$@" >"$W/e.out" 2>"$W/e.err"
		rc=$?
		[ $rc = 1 ] && grep -q "error: --vmlinux: .*$msg" "$W/e.err" && ok ||
			{ bad "$(basename "$t") $*: exit $rc, expected \"$msg\""; cat "$W/e.err"; }
	done
}
printf 'not an object file\n' >"$W/text"
expect_err "$W/text: file format not recognized" --vmlinux="$W/text"
expect_err "$W/none: No such file or directory" --vmlinux="$W/none"
expect_err "$W: not a regular file" --vmlinux="$W"
# an ELF whose .text is at a user address: not a kernel image
ld -e 0 -o "$W/user" "$W/vmlinux.o" 2>/dev/null
expect_err "$W/user: .text is at 0x[0-9a-f]*, not at a kernel address" --vmlinux="$W/user"

echo "vmlinux: $npass passed, $fail failed"
[ "$fail" = 0 ]
