#!/bin/sh
# tools_golden.sh - golden tests of opannotate and opgprof on a fixture
# session built with the real odb writer (tests/data/report/mkfixture, as in
# report_golden.sh) against fx_c compiled here with fixed flags; the sample
# counts are fixed (fx_hot 600 + 150 at fx_hot+4, fx_warm 200, fx_cold 50).
# - opannotate --assembly: the symbol totals and the per-instruction counts
#   are compared; sampled instructions are named @sym+0xoff@ (offsets chosen
#   by the fixture), their text and the unsampled instructions (the
#   compiler's choice) are left out.
# - opannotate --source: the file total, the sampled lines and the symbol
#   totals; which source line an address belongs to is the compiler's
#   choice, so the full golden is compared only with the gcc major version
#   it was made with (GOLDEN_GCC), otherwise the symbol totals only.
# - opgprof: `gprof -b -p` of its gmon.out; the flat profile is exact.
# OP_UPDATE_GOLDEN=1 rewrites the golden files (review the diff!).
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
F=$OP_SRCDIR/tests/data/report
G=$F/golden
ANNOTATE=$OP_BUILDDIR/tools/opannotate/opannotate
OPGPROF=$OP_BUILDDIR/tools/opgprof
MKFIXTURE=$OP_BUILDDIR/tests/data/report/mkfixture
W=$OP_BUILDDIR/tests/tools_golden.tmp
B=$W/bin
S=$W/session
GOLDEN_GCC=12
rm -rf "$W"
mkdir -p "$B"
fail=0
npass=0
T=$(printf '\t')

for f in "$ANNOTATE" "$OPGPROF" "$MKFIXTURE"; do
	[ -e "$f" ] || { echo "tools_golden: missing $f (make check builds it)"; exit 1; }
done
CC=${CC:-cc}
$CC -O2 -g -fno-inline -o "$B/fx_c" "$F/fx_c.c" || { echo "tools_golden: compiling fx_c failed"; exit 1; }
cat >"$W/script" <<EOF
dir${T}current
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_hot${T}600
s${T}sym:fx_hot+4${T}150
s${T}sym:fx_warm${T}200
s${T}sym:fx_cold${T}50
EOF
"$MKFIXTURE" "$S" <"$W/script" || { echo "tools_golden: mkfixture failed"; exit 1; }
SRC=$(readlink -f "$F/fx_c.c")

normalize() {
	sed -e "s|$B|@B@|g" -e "s|$S|@S@|g" -e "s|\"[^\"]*/tests/data/report/fx_c.c\"|\"@F@/fx_c.c\"|g" \
		-e "s|file format .*|file format @fmt@|"
}

# opannotate --assembly: the header, symbol lines as <sym> with their totals,
# sampled instructions as @sym+0xoff@ with their counts, nothing else
asm_filter() {
	awk 'function hex(s,   i, n) { n = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n }
	/^[0-9a-f]+ <[^>]*>:/ { base = hex($1); sub(/^[0-9a-f]+ /, ""); sym = $1; print; gsub(/[<>:]/, "", sym); next }
	/^ *[0-9]+ +[0-9.]+ : +[0-9a-f]+:/ {
		a = $0; sub(/^ *[0-9]+ +[0-9.]+ : +/, "", a); sub(/:.*/, "", a)
		c = $0; sub(/ : .*/, "", c)
		printf "%s : @%s+0x%x@\n", c, sym, hex(a) - base; next }
	/^ *: +[0-9a-f]+:/ { next }
	{ print }'
}

# opannotate --source: the comment blocks, the sampled lines and the symbol totals
src_filter() {
	awk '/^\/\* *$/ { inc = 1 } inc { print; if (/\*\/ *$/) inc = 0; next }
	/^ *[0-9]+ +[0-9.]+ :/ { print; next }'
}
totals_of() { sed -n 's|.*/\* \([a-z_]* total: .*\*/\).*|\1|p'; }

compare() { # $1 = golden name, $2 = produced file
	if [ "${OP_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$2" "$G/$1.txt"
	fi
	if diff -u "$G/$1.txt" "$2"; then
		npass=$((npass + 1))
	else
		echo "FAIL $1: differs from golden/$1.txt"; fail=$((fail + 1))
	fi
}

run() { # $1 = name, rest = command; stdout in $W/$1.raw
	name=$1; shift
	if ! "$@" >"$W/$name.raw" 2>"$W/$name.err"; then
		echo "FAIL $name: $* failed"; cat "$W/$name.err"; fail=$((fail + 1)); return 1
	fi
}

if run annotate_asm "$ANNOTATE" --session-dir="$S" --assembly; then
	normalize <"$W/annotate_asm.raw" | asm_filter >"$W/annotate_asm.out"
	compare annotate_asm "$W/annotate_asm.out"
fi
if run annotate_asm_hot "$ANNOTATE" --session-dir="$S" --assembly --include-symbols=fx_hot; then
	normalize <"$W/annotate_asm_hot.raw" | asm_filter >"$W/annotate_asm_hot.out"
	compare annotate_asm_hot "$W/annotate_asm_hot.out"
fi

gccmaj=$($CC -dumpversion 2>/dev/null | cut -d. -f1)
isgcc=$($CC --version 2>/dev/null | head -1 | grep -c -i -e gcc -e '(Debian')
if run annotate_src "$ANNOTATE" --session-dir="$S" --source; then
	normalize <"$W/annotate_src.raw" | src_filter >"$W/annotate_src.out"
	if [ "$isgcc" = 1 ] && [ "$gccmaj" = "$GOLDEN_GCC" ]; then
		compare annotate_src "$W/annotate_src.out"
	else
		# another compiler may give an address another line: the symbol totals only
		echo "tools_golden: $CC is not gcc $GOLDEN_GCC: --source compared by symbol totals only"
		totals_of <"$G/annotate_src.txt" >"$W/src_totals.want"
		totals_of <"$W/annotate_src.out" >"$W/src_totals.got"
		if [ -s "$W/src_totals.want" ] && diff -u "$W/src_totals.want" "$W/src_totals.got"; then
			npass=$((npass + 1))
		else
			echo "FAIL annotate_src: symbol totals differ from golden/annotate_src.txt"; fail=$((fail + 1))
		fi
	fi
	# the sampled lines are those of the source file (whatever the compiler)
	if grep -q "^ *750 75.0000 :.*fx_hot total: *750 75.0000" "$W/annotate_src.out" &&
		grep -q "Total samples for file : \"@F@/fx_c.c\"" "$W/annotate_src.out"; then
		npass=$((npass + 1))
	else
		echo "FAIL annotate_src: no line of $SRC holding fx_hot's 750 samples"; fail=$((fail + 1))
	fi
fi

if command -v gprof >/dev/null 2>&1; then
	if run opgprof "$OPGPROF" --session-dir="$S" -o "$W/gmon.out" "$B/fx_c"; then
		gprof -b -p "$B/fx_c" "$W/gmon.out" >"$W/gprof_flat.out" 2>"$W/gprof.err" ||
			{ echo "FAIL gprof -b -p failed"; cat "$W/gprof.err"; fail=$((fail + 1)); }
		compare opgprof_flat "$W/gprof_flat.out"
	fi
	# -t 10: fx_cold (5 %) is left out of the histogram
	if run opgprof_t "$OPGPROF" --session-dir="$S" -t 10 -o "$W/gmon_t.out" "$B/fx_c"; then
		gprof -b -p "$B/fx_c" "$W/gmon_t.out" >"$W/gprof_flat_t10.out" 2>"$W/gprof.err"
		compare opgprof_flat_t10 "$W/gprof_flat_t10.out"
	fi
else
	echo "tools_golden: GNU gprof (binutils) is not installed: opgprof not checked"
fi

echo "tools_golden: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
