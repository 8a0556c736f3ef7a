#!/bin/sh
# report_hostile.sh - opreport on sessions a hostile user wrote (issue 14,
# hole 7): newlines, terminal escapes, C1 bytes and invalid UTF-8 in image,
# symbol and source file names come out escaped (one record per line, no
# byte a terminal acts on; XML stays well formed); a decoded "." or ".."
# component is never opened (its samples go to "(unknown)"); nothing below
# samples/ is reached through a symbolic link, and FIFOs, symlinks and
# over-deep directories are named as skipped; a perf map that is a symlink
# or a FIFO is refused with a warning, without hanging.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
OPREPORT=$OP_BUILDDIR/tools/opreport/opreport
MKFIXTURE=$OP_BUILDDIR/tests/data/report/mkfixture
W=$OP_BUILDDIR/tests/report_hostile.tmp
rm -rf "$W"
mkdir -p "$W/maps"
fail=0
npass=0
T=$(printf '\t')
ESC=$(printf '\033')
OPREPORT_PERF_MAP_DIR=$W/maps
export OPREPORT_PERF_MAP_DIR

for f in "$OPREPORT" "$MKFIXTURE"; do
	[ -e "$f" ] || { echo "report_hostile: missing $f (make check builds it)"; exit 1; }
done
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# clean FILE: only printable ASCII, tabs and newlines (the names here are ASCII
# plus hostile bytes, so anything else is a hostile byte printed raw)
clean() {
	n=$(LC_ALL=C tr -d '\n\t -~' <"$1" | wc -c)
	[ "$n" -eq 0 ]
}

# ---- names: newlines, escapes, C1, invalid UTF-8 ----------------------------
# a binary whose path, symbol and source file hold escapes: the -g line info
# and the symbol come from its debug info
SRC="$W/src/fx${ESC}[2J.c"
mkdir -p "$W/src" "$W/bin"
printf 'int fx_hot(int n);\nint fx_hot(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * 7; return s; }\nint main(void) { return fx_hot(3) == 42; }\n' >"$SRC"
EVIL_BIN="$W/bin/a
99999 99.9999 sshd${ESC}[2J${ESC}]0;owned$(printf '\007')"
${CC:-cc} -O0 -g -o "$EVIL_BIN" "$SRC" ||
	{ echo "report_hostile: compiling the fixture failed"; exit 1; }
EB='\n99999 99.9999 sshd\x1b[2J\x1b]0;owned\x07'
cat >"$W/names.script" <<EOF
dir${T}current
file${T}$W/bin/a${EB}${T}$W/bin/a${EB}${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_hot${T}50
file${T}$W/bin/a${EB}${T}/opt/lib\xc2\x9b2Jc\xff\xfe.so\r99999 99.9999 sshd${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}0x10${T}20
file${T}$W/bin/a${EB}${T}{anon:jit\x1b[31m}4244:0x7f2000000000:0x7f2000000fff${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}0${T}0x7f2000000000
s${T}0x10${T}7
file${T}$W/bin/a${EB}${T}{kern}mod\x1b[2J${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}1
s${T}0x150${T}3
text${T}stats/kallsyms${T}ffffffff81000000 T _text\nffffffffc0000100 t evil\x1b]0;t\x07fn\t[mod\x1b[2J]\n
text${T}stats/modules${T}mod\x1b[2J 16384 0 - Live 0xffffffffc0000000\n
EOF
"$MKFIXTURE" "$W/names" <"$W/names.script" || { echo "report_hostile: mkfixture failed"; exit 1; }
printf '7f2000000000 100 jit%s]0;title\007fn\r99999 99.9999 sshd\n' "$ESC" >"$W/maps/perf-4244.map"

names_check() { # $1 = tag, rest = opreport arguments
	tag=$1; shift
	"$OPREPORT" --session-dir="$W/names" "$@" >"$W/$tag.out" 2>"$W/$tag.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		bad "names $tag: opreport $* exited $rc"; cat "$W/$tag.err"; return
	fi
	if ! clean "$W/$tag.out"; then
		bad "names $tag: raw control, C1 or invalid UTF-8 bytes on stdout"; od -c "$W/$tag.out" | head -20
	elif ! clean "$W/$tag.err"; then
		bad "names $tag: raw control, C1 or invalid UTF-8 bytes on stderr"; od -c "$W/$tag.err" | head -20
	elif grep -q '^[ 	]*[0-9]* *[0-9.]* *sshd' "$W/$tag.out"; then
		bad "names $tag: a forged 'sshd' line"; cat "$W/$tag.out"
	else
		ok
	fi
}
names_check summary
names_check summary_long -f
names_check symbols -l
names_check details -d -g
names_check long -l -g -f
names_check callgraph -c
names_check sorted -l --sort=image,symbol
# the escapes are the C ones: the forged line is inside its record
if grep -q -F 'a\n99999 99.9999 sshd\x1b[2J\x1b]0;owned\x07' "$W/summary.out" &&
	grep -q -F 'lib\xc2\x9b2Jc\xff\xfe.so\r99999 99.9999 sshd' "$W/summary_long.out" &&
	grep -q -F 'jit\x1b]0;title\x07fn\r99999 99.9999 sshd' "$W/symbols.out" &&
	grep -q -F 'evil\x1b]0;t\x07fn' "$W/symbols.out" &&
	grep -q -F 'fx\x1b[2J.c:' "$W/details.out" &&
	grep -q -F 'fx_hot' "$W/symbols.out"; then
	ok
else
	bad "names: expected the names with C escapes"; cat "$W/summary.out" "$W/symbols.out" "$W/details.out"
fi
# XML stays well formed, JSON valid, whatever bytes the names hold
if command -v python3 >/dev/null; then
	"$OPREPORT" --session-dir="$W/names" -X -d -g >"$W/names.xml" 2>/dev/null
	"$OPREPORT" --session-dir="$W/names" --json -d -g >"$W/names.json" 2>/dev/null
	if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$W/names.xml" &&
		python3 -c 'import sys, json; json.load(open(sys.argv[1], encoding="utf-8"))' "$W/names.json"; then
		ok
	else
		bad "names: XML or JSON not well formed"
	fi
	# one escaper with ophelp's rules: newline and CR as character references
	# (a parser gives them back), ESC as U+FFFD
	if grep -q -F 'a&#10;99999 99.9999 sshd&#xfffd;[2J' "$W/names.xml" &&
		grep -q -F 'fn&#13;99999 99.9999 sshd' "$W/names.xml" &&
		python3 -c 'import sys, xml.dom.minidom
x = xml.dom.minidom.parse(sys.argv[1]).toxml()
assert "a\n99999 99.9999 sshd\ufffd[2J" in x' "$W/names.xml"; then
		ok
	else
		bad "names: XML escapes are not op_xml_put rules (&#10; &#13; &#xfffd;)"; grep -a -o '.\{30\}99999 99.9999 sshd.\{20\}' "$W/names.xml"
	fi
fi

# ---- "." and ".." components: counted under (unknown), never opened --------
mkdir -p "$W/sub"
cp "$EVIL_BIN" "$W/secret"
cat >"$W/dots.script" <<EOF
dir${T}current
file${T}$W/sub/../secret${T}$W/sub/../secret${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}0x10${T}4
file${T}$W/bin/ok${T}$W/sub/./../secret${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}0x20${T}2
EOF
"$MKFIXTURE" "$W/dots" <"$W/dots.script" || { echo "report_hostile: mkfixture failed"; exit 1; }
dots() {
	"$OPREPORT" --session-dir="$W/dots" "$@" >"$W/dots.out" 2>"$W/dots.err"
}
if dots --merge=lib && grep -q '^ *6 100.000 (unknown)$' "$W/dots.out" && ! grep -q secret "$W/dots.out" &&
	grep -q 'sample file .*%2E\./secret.*TIMER.*"\." or "\.\."' "$W/dots.err"; then
	ok
else
	bad "dots: expected 6 samples under (unknown) and a warning naming the sample file"
	cat "$W/dots.out" "$W/dots.err"
fi
if command -v strace >/dev/null; then
	strace -f -e trace=%file -o "$W/dots.strace" "$OPREPORT" --session-dir="$W/dots" -l -g \
		-R / -p "$W" >/dev/null 2>&1
	if grep -F -e '/../secret' -e '/./' -e "\"$W/secret\"" "$W/dots.strace"; then
		bad "dots: opreport touched the decoded .. path"
	else
		ok
	fi
fi

# ---- symbolic links, FIFOs and deep directories below samples/ ----------------
cat >"$W/fake.script" <<EOF
dir${T}fake
file${T}/opt/fake${T}/opt/fake${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}0x10${T}11
EOF
"$MKFIXTURE" "$W/other" <"$W/fake.script" || { echo "report_hostile: mkfixture failed"; exit 1; }
# samples/current itself a symlink to a directory of fake sample files
mkdir -p "$W/linked/samples"
ln -s "$W/other/samples/fake" "$W/linked/samples/current"
"$OPREPORT" --session-dir="$W/linked" >"$W/linked.out" 2>"$W/linked.err"
rc=$?
if [ "$rc" -eq 1 ] && ! grep -q fake "$W/linked.out" &&
	grep -q "samples/current: .*symbolic link" "$W/linked.err"; then
	ok
else
	bad "linked: samples/current -> elsewhere was walked (rc $rc)"; cat "$W/linked.out" "$W/linked.err"
fi
# a symlink, a FIFO and a too deep directory inside a real current
cat >"$W/tree.script" <<EOF
dir${T}current
file${T}/opt/real${T}/opt/real${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}0x10${T}5
file${T}/opt/real${T}{kern}no-vmlinux${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}1
s${T}0x100${T}1
EOF
"$MKFIXTURE" "$W/tree" <"$W/tree.script" || { echo "report_hostile: mkfixture failed"; exit 1; }
C=$W/tree/samples/current
ln -s "$W/other/samples/fake/{root}" "$C/{root}x"
mkdir -p "$C/{root}/opt/pipe/{dep}/{root}/opt/pipe"
mkfifo "$C/{root}/opt/pipe/{dep}/{root}/opt/pipe/TIMER.0.0.all.all.all"
deep=$C/{root}/deep
i=0
while [ $i -lt 300 ]; do deep=$deep/d; i=$((i + 1)); done
mkdir -p "$deep"
# stats: a symlinked kallsyms and a FIFO counter must not be read
mkdir -p "$C/stats"
printf 'ffffffff81000000 T _text\nffffffff81000100 T leaked_symbol\n' >"$W/kallsyms.real"
ln -s "$W/kallsyms.real" "$C/stats/kallsyms"
mkfifo "$C/stats/lost_kernel"
timeout 20 "$OPREPORT" --session-dir="$W/tree" -l >"$W/tree.out" 2>"$W/tree.err"
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^5 .*real' "$W/tree.out" && ! grep -q -e fake -e leaked "$W/tree.out" &&
	grep -q "current/{root}x: .*symbolic link" "$W/tree.err" &&
	grep -q "pipe/TIMER.0.0.all.all.all: .*FIFO" "$W/tree.err" &&
	grep -q "deep/d/d/.*: .*deeper than" "$W/tree.err" &&
	grep -q "stats/kallsyms: .*symbolic link" "$W/tree.err" &&
	grep -q "stats/lost_kernel: .*FIFO" "$W/tree.err"; then
	ok
else
	bad "tree: expected the real samples only and a warning for each of the symlink, FIFO, deep dir, symlinked kallsyms and FIFO counter (rc $rc)"
	cat "$W/tree.out" "$W/tree.err"
fi

# ---- perf maps: a symlink or a FIFO is refused (without hanging) -------------
cat >"$W/jit.script" <<EOF
dir${T}current
file${T}/opt/jit${T}{anon:anon}4301:0x7f3000000000:0x7f3000000fff${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}0${T}0x7f3000000000
s${T}0x10${T}3
file${T}/opt/jit${T}{anon:anon}4302:0x7f4000000000:0x7f4000000fff${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}0${T}0x7f4000000000
s${T}0x10${T}2
file${T}/opt/jit${T}{anon:anon}4302:0x7f5000000000:0x7f5000000fff${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}0${T}0x7f5000000000
s${T}0x10${T}1
EOF
"$MKFIXTURE" "$W/jit" <"$W/jit.script" || { echo "report_hostile: mkfixture failed"; exit 1; }
printf '7f3000000000 100 linked_jit_fn\n' >"$W/jit.map"
ln -s "$W/jit.map" "$W/maps/perf-4301.map"
mkfifo "$W/maps/perf-4302.map"
timeout 20 "$OPREPORT" --session-dir="$W/jit" -l >"$W/jit.out" 2>"$W/jit.err"
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q linked_jit_fn "$W/jit.out" &&
	[ "$(grep -c 'perf-4301.map: .*symbolic link' "$W/jit.err")" -eq 1 ] &&
	[ "$(grep -c 'perf-4302.map: .*FIFO' "$W/jit.err")" -eq 1 ]; then
	ok
else
	bad "jit: expected each bad perf map refused with one warning (rc $rc)"; cat "$W/jit.out" "$W/jit.err"
fi

echo "report_hostile: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
