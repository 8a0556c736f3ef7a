#!/bin/sh
# opimport.sh - opimport on real sample files: a session recorded live
# (hot, 3:1, cpu-clock at 4 kHz) is rewritten by abi_gen as a big-endian
# 32-bit machine (be32) and a layout where every offset moves (wide) would
# have written it; opimport converts each back, and the converted session
# must hold the very same sample files (byte for byte) and give the same
# opreport. Also: the abi check (native input refused without --force), no
# overwrite without --force, OProfile's one-file form, a truncated and a
# mislabelled foreign file (clear error, no half-written output), the options.
# SPDX-License-Identifier: MIT
set -u
: "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
I=$OP_BUILDDIR/tools/opimport
G=$OP_BUILDDIR/tests/integration/abi_gen
R=$OP_BUILDDIR/tools/opreport/opreport
HOT=$OP_BUILDDIR/tests/integration/hot
W=$OP_BUILDDIR/tests/opimport.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# every sample file of session $1 is byte-identical in session $2, and both have as many
samples_equal() {
	n1=$(cd "$1/samples" && find . -type f -name '*.*.*.*.*.*' | sort)
	n2=$(cd "$2/samples" && find . -type f -name '*.*.*.*.*.*' | sort)
	[ -n "$n1" ] && [ "$n1" = "$n2" ] || { echo "file lists differ"; return 1; }
	echo "$n1" | while IFS= read -r f; do
		cmp -s "$1/samples/$f" "$2/samples/$f" || { echo "differs: $f"; exit 1; }
	done
}

# 1. a native session recorded live
if ! "$D" --session-dir="$W/native" --events=TIMER:250000 -- "$HOT" 1500 >"$W/rec.log" 2>&1; then
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$W/rec.log"; then
		echo "SKIP: the kernel forbids perf_event_open here"
		exit 77
	fi
	echo "FAIL: oprofiled: $(cat "$W/rec.log")"
	exit 1
fi
nfiles=$(find "$W/native/samples/current" -type f -name 'TIMER.*' | wc -l)
[ "$nfiles" -gt 0 ] && ok || bad "the live session has no sample files"
report() { # $1 session -> its opreport -l, and the image summary
	"$R" --session-dir="$1" -l "$HOT" 2>&1
	"$R" --session-dir="$1" 2>&1
}
[ -x "$R" ] && report "$W/native" >"$W/native.rep"

# 2. each foreign layout, converted back
for layout in be32 wide; do
	if ! "$G" $layout "$W/native" "$W/$layout" >"$W/$layout.gen" 2>&1; then
		bad "abi_gen $layout: $(cat "$W/$layout.gen")"; continue
	fi
	f=$(cd "$W/$layout/samples" && find . -type f -name 'TIMER.*' | head -n 1)
	cmp -s "$W/native/samples/$f" "$W/$layout/samples/$f" &&
		bad "$layout: abi_gen left $f in the native layout" || ok
	grep -q "^little_endian 0$" "$W/$layout/abi" && ok || bad "$layout: abi file not big-endian"
	if "$I" -o "$W/$layout.conv" "$W/$layout" >"$W/$layout.out" 2>&1; then ok
	else bad "opimport $layout: $(cat "$W/$layout.out")"; continue; fi
	msg=$(samples_equal "$W/native" "$W/$layout.conv") && ok ||
		bad "$layout: converted sample files differ from the originals: $msg"
	# what is not a sample file is copied; the abi file is this machine's
	cmp -s "$W/native/samples/current/stats/total_samples" \
		"$W/$layout.conv/samples/current/stats/total_samples" && ok ||
		bad "$layout: stats/total_samples not copied"
	cmp -s "$W/native/abi" "$W/$layout.conv/abi" && ok || bad "$layout: output abi is not native"
	if [ -x "$R" ]; then
		report "$W/$layout.conv" >"$W/$layout.rep"
		grep -q "work_big" "$W/$layout.rep" && diff "$W/native.rep" "$W/$layout.rep" >/dev/null &&
			ok || { bad "$layout: opreport differs"; diff "$W/native.rep" "$W/$layout.rep" | head; }
	fi
done

# 3. refusals and --force
"$I" -o "$W/be32.conv" "$W/be32" >"$W/again.out" 2>&1 && bad "converted into an existing session" ||
	{ grep -q "holds a session already" "$W/again.out" && ok || bad "existing output: $(cat "$W/again.out")"; }
"$I" -f -o "$W/be32.conv" "$W/be32" >"$W/force.out" 2>&1 && ok || bad "--force: $(cat "$W/force.out")"
msg=$(samples_equal "$W/native" "$W/be32.conv") && ok || bad "after --force: $msg"
"$I" -o "$W/nat.conv" "$W/native" >"$W/nat.out" 2>&1 && bad "a native session converted without --force" ||
	{ grep -q "no conversion needed" "$W/nat.out" && ok || bad "native input: $(cat "$W/nat.out")"; }
"$I" -f -o "$W/nat.conv" "$W/native" >"$W/natf.out" 2>&1 && samples_equal "$W/native" "$W/nat.conv" >/dev/null &&
	ok || bad "native input with --force: $(cat "$W/natf.out")"

# 4. OProfile's form: one file, -a required
one=$(cd "$W/be32/samples" && find . -type f -name 'TIMER.*' | head -n 1)
"$I" -o "$W/one" "$W/be32/samples/$one" >"$W/one.out" 2>&1 && bad "one file without --abi" ||
	{ grep -q -- "--abi" "$W/one.out" && ok || bad "one file without --abi: $(cat "$W/one.out")"; }
"$I" -a "$W/be32/abi" -o "$W/one" "$W/be32/samples/$one" >"$W/one.out" 2>&1 &&
	cmp -s "$W/one" "$W/native/samples/$one" && ok || bad "one file: $(cat "$W/one.out")"
"$I" -a "$W/be32/abi" -o "$W/one" "$W/be32/samples/$one" >"$W/one2.out" 2>&1 && bad "one file overwritten" ||
	{ grep -q "exists" "$W/one2.out" && ok || bad "one file again: $(cat "$W/one2.out")"; }

# 5. hostile input: a truncated file and a file of the other layout; the rest converts
cp -r "$W/be32" "$W/broken"
victim=$(cd "$W/broken/samples" && find . -type f -name 'TIMER.*' | head -n 1)
size=$(stat -c %s "$W/broken/samples/$victim")
truncate -s $((size - 3)) "$W/broken/samples/$victim"
wrong=$(cd "$W/broken/samples" && find . -type f -name 'TIMER.*' | sed -n 2p)
[ -n "$wrong" ] && cp "$W/wide/samples/$wrong" "$W/broken/samples/$wrong"
"$I" -o "$W/broken.conv" "$W/broken" >"$W/broken.out" 2>&1 && bad "hostile session converted with rc 0" || ok
grep -F -q "$(basename "$victim")" "$W/broken.out" && grep -q "bytes" "$W/broken.out" && ok ||
	bad "truncated file: message does not name it: $(cat "$W/broken.out")"
[ ! -e "$W/broken.conv/samples/$victim" ] && ok || bad "truncated file: output written"
if [ -n "$wrong" ]; then
	[ ! -e "$W/broken.conv/samples/$wrong" ] && ok || bad "wrong layout: output written"
fi
find "$W/broken.conv" -name '*opimport-tmp*' | grep -q . && bad "temporary files left" || ok
rest=$(find "$W/broken.conv/samples" -type f -name 'TIMER.*' | wc -l)
exp=$((nfiles - 1)); [ -n "$wrong" ] && exp=$((nfiles - 2))
[ "$rest" -eq "$exp" ] && ok || bad "hostile session: $rest files converted, expected $exp"

# a bad abi file: clear error naming the file and line
printf 'sizeof_u32 4\nsizeof_u64 x8\n' >"$W/bad.abi"
"$I" -a "$W/bad.abi" -o "$W/x" "$W/be32/samples/$one" >"$W/badabi.out" 2>&1 && bad "bad abi accepted" ||
	{ grep -q "bad.abi:2:" "$W/badabi.out" && ok || bad "bad abi: $(cat "$W/badabi.out")"; }

# 6. options
"$I" --help | grep -q "^usage: opimport" && ok || bad "--help"
"$I" -? | grep -q "^usage: opimport" && ok || bad "-?"
"$I" --usage | grep -q "^usage: opimport" && ok || bad "--usage"
"$I" --version | grep -q "^opimport " && ok || bad "--version"
"$I" -v | grep -q "^opimport " && ok || bad "-v"
"$I" --bogus "$W/be32" >/dev/null 2>&1 && bad "unknown option accepted" || ok
"$I" "$W/be32" >"$W/noout.out" 2>&1 && bad "no --output accepted" ||
	{ grep -q -- "--output" "$W/noout.out" && ok || bad "no --output: $(cat "$W/noout.out")"; }
"$I" -V -f -o "$W/verbose.conv" "$W/be32" >"$W/verbose.out" 2>&1 &&
	grep -q "^input abi .*big endian, header 64 bytes" "$W/verbose.out" &&
	grep -q "^converted samples/" "$W/verbose.out" && ok || bad "-V: $(head -5 "$W/verbose.out")"

echo "opimport: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
