#!/bin/sh
# report_golden.sh - opreport golden tests: builds fixture sessions with the
# real odb writer (tests/data/report/mkfixture) against fixture binaries
# compiled here with fixed flags (keys = symbol file offsets read with <elf.h>),
# runs opreport in every output mode and compares stdout with
# tests/data/report/golden/*.txt. Build paths and addresses that depend on
# the compiler are replaced by @B@ and @sym+off@ placeholders first.
# OP_UPDATE_GOLDEN=1 rewrites the golden files (review the diff!).
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
F=$OP_SRCDIR/tests/data/report
G=$F/golden
OPREPORT=$OP_BUILDDIR/tools/opreport/opreport
MKFIXTURE=$OP_BUILDDIR/tests/data/report/mkfixture
W=$OP_BUILDDIR/tests/report_golden.tmp
B=$W/bin
rm -rf "$W"
mkdir -p "$B"
fail=0
npass=0
T=$(printf '\t')

for f in "$OPREPORT" "$MKFIXTURE"; do
	[ -e "$f" ] || { echo "report_golden: missing $f (make check builds it)"; exit 1; }
done
# The fixture binaries are compiled here with fixed flags, so that the
# configure-time CFLAGS (sanitizers, -O0, ...) do not move their symbols.
CC=${CC:-cc}
CXX=${CXX:-c++}
fx="-O2 -g -fno-inline"
$CC $fx -o "$B/fx_c" "$F/fx_c.c" &&
	$CC $fx -fno-pie -no-pie -o "$B/fx_nopie" "$F/fx_c.c" &&
	$CC $fx -Wl,--export-dynamic -o "$B/fx_dyn" "$F/fx_c.c" &&
	$CXX $fx -o "$B/fx_cxx" "$F/fx_cxx.cpp" &&
	$CC $fx -fPIC -shared -o "$B/libfx.so" "$F/fx_lib.c" &&
	strip -o "$B/fx_stripped" "$B/fx_dyn" &&
	objcopy --only-keep-debug "$B/fx_c" "$B/fx_dbg.debug" &&
	strip -o "$B/fx_dbg" "$B/fx_c" &&
	objcopy --add-gnu-debuglink="$B/fx_dbg.debug" "$B/fx_dbg" ||
	{ echo "report_golden: compiling the fixtures failed"; exit 1; }

S=$W/session
cat >"$W/script" <<EOF
dir${T}current
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_hot${T}600
s${T}sym:fx_hot+4${T}150
s${T}sym:fx_warm${T}200
s${T}sym:fx_cold${T}50
file${T}$B/fx_c${T}$B/libfx.so${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_lib_work+2${T}100
file${T}$B/fx_c${T}{kern}vmlinux${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}1
s${T}0x1010${T}30
s${T}0x2004${T}5
file${T}$B/fx_c${T}{anon:anon}4242:0x7f0000000000:0x7f0000000fff${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}0${T}0x7f0000000000
s${T}0x10${T}8
file${T}$B/fx_c${T}{anon:anon}4243:0x7f1000000000:0x7f1000ffffff${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}0${T}0x7f1000000000
s${T}0x1010${T}9
s${T}0x2000${T}3
s${T}0x5000${T}1
file${T}$B/fx_c${T}{kern}ext4${T}TIMER${T}0${T}0${T}all${T}all${T}all${T}4${T}1
s${T}0x150${T}4
s${T}0x210${T}2
file${T}$B/fx_cxx${T}$B/fx_cxx${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:_ZN2fx6Worker4spinERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi${T}300
s${T}sym:_ZNK2fx3BoxIiE3getEi${T}20
file${T}$B/fx_stripped${T}$B/fx_stripped${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}dsym:fx_hot+8${T}40
s${T}sec:.plt+0x10${T}10
s${T}sec:.text${T}3
file${T}$B/fx_nopie${T}$B/fx_nopie${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_warm${T}77
file${T}/nonexistent/gone${T}/nonexistent/gone${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}0x1000${T}5
text${T}stats/kallsyms${T}ffffffff81000000 T _text\nffffffff81000000 T startup_64\nffffffff81001000 T do_syscall_64\nffffffff81002000 t page_fault_handler\nffffffff81003000 T _etext\nffffffffc0000100 t ext4_fill_super\t[ext4]\nffffffffc0000200 t ext4_sync_fs\t[ext4]\nffffffffc0001000 t xfs_mount\t[xfs]\n
text${T}stats/modules${T}xfs 16384 0 - Live 0xffffffffc0001000\next4 65536 1 - Live 0xffffffffc0000000\n
dir${T}bycpu
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}all${T}all${T}0
s${T}sym:fx_hot${T}300
s${T}sym:fx_warm${T}100
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}all${T}all${T}1
s${T}sym:fx_hot${T}100
s${T}sym:fx_cold${T}100
dir${T}bythread
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}100${T}100${T}all
s${T}sym:fx_hot${T}50
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}100${T}101${T}all
s${T}sym:fx_warm${T}150
s${T}sym:fx_hot${T}25
dir${T}mixed
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}100${T}100${T}0
s${T}sym:fx_hot${T}60
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}100${T}101${T}1
s${T}sym:fx_warm${T}40
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}100${T}101${T}0
s${T}sym:fx_warm${T}20
dir${T}corrupt
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_hot${T}10
raw${T}{root}/bad/{dep}/{root}/bad/TIMER.0.0.all.all.all${T}this is not a sample file
raw${T}{root}/bad/{dep}/{root}/bad/TIMER.0.0.all.all${T}badly named
dir${T}lost
file${T}$B/fx_c${T}$B/fx_c${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_hot${T}100
text${T}stats/lost_kernel${T}5\n
text${T}stats/total_samples${T}100\n
text${T}stats/throttled/TIMER${T}1\n
dir${T}moved
file${T}/nonexistent/moved/fx_nopie${T}/nonexistent/moved/fx_nopie${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_warm${T}12${T}$B/fx_nopie
s${T}sym:fx_cold${T}4${T}$B/fx_nopie
dir${T}debuglink
file${T}$B/fx_dbg${T}$B/fx_dbg${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_hot${T}30${T}$B/fx_c
s${T}sym:fx_cold+1${T}10${T}$B/fx_c
dir${T}shared
file${T}$B/fx_c${T}$B/libfx.so${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_lib_work${T}30
file${T}$B/fx_nopie${T}$B/libfx.so${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_lib_work${T}10
file${T}$B/fx_cxx${T}$B/libfx.so${T}TIMER${T}0${T}0${T}all${T}all${T}all
s${T}sym:fx_lib_work+1${T}20
dir${T}events
file${T}$B/fx_c${T}$B/fx_c${T}CPU_CLK_UNHALTED${T}100000${T}0${T}all${T}all${T}all${T}69
s${T}sym:fx_hot${T}90
s${T}sym:fx_warm${T}10
file${T}$B/fx_c${T}$B/fx_c${T}RETIRED_MMX_FP_INSTRUCTIONS${T}20000${T}1${T}all${T}all${T}all${T}69
s${T}sym:fx_hot${T}30
s${T}sym:fx_cold${T}70
EOF
"$MKFIXTURE" "$S" <"$W/script" || { echo "report_golden: mkfixture failed"; exit 1; }

# placeholders for addresses the compiler chooses: @image:sym+off@
addr() { # $1 = binary, $2 = symbol, $3 = offset; prints 16-digit hex vma
	v=$(nm "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	[ -n "$v" ] || v=$(nm -D "$1" | awk -v s="$2" '$3 == s { print $1; exit }')
	printf '%016x' $((0x$v + $3))
}
SED=$W/addr.sed
: >"$SED"
for spec in fx_c:fx_hot:0 fx_c:fx_hot:4 fx_c:fx_warm:0 fx_c:fx_cold:0 libfx.so:fx_lib_work:0 \
	libfx.so:fx_lib_work:2 fx_nopie:fx_warm:0; do
	bin=${spec%%:*}; rest=${spec#*:}; sym=${rest%%:*}; off=${rest#*:}
	a=$(addr "$B/$bin" "$sym" "$off")
	short=$(printf '%x' $((0x$a)))
	tag="@$(basename "$bin"):$sym+$off@"
	printf 's/%s/%s/g; s/0x%s\\([^0-9a-f]\\)/0x%s\\1/g\n' "$a" "$tag" "$short" "$tag" >>"$SED"
done

normalize() {
	sed -e "s|$B|@B@|g" -e "s|$S|@S@|g" -f "$SED"
}

check() { # $1 = golden name, rest = opreport arguments
	name=$1; shift
	"$OPREPORT" --session-dir="$S" "$@" >"$W/$name.raw" 2>"$W/$name.err"
	rc=$?
	normalize <"$W/$name.raw" >"$W/$name.out"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL $name: opreport $* exited $rc"; cat "$W/$name.err"; fail=$((fail + 1)); return
	fi
	if [ "${OP_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$W/$name.out" "$G/$name.txt"
	fi
	# -b: a header's padding follows the longest name, whose length depends on
	# where the tree was built ($B); the "align" check below tests the columns
	if diff -u -b "$G/$name.txt" "$W/$name.out"; then
		npass=$((npass + 1))
	else
		echo "FAIL $name: opreport $* differs from golden/$name.txt"; fail=$((fail + 1))
	fi
}

# a JIT map for the anon region of tgid 4243
mkdir -p "$W/maps"
printf '7f1000001000 100 jit_compiled_loop\n7f1000002000 40 Interpreter::dispatch()\n' >"$W/maps/perf-4243.map"
OPREPORT_PERF_MAP_DIR=$W/maps
export OPREPORT_PERF_MAP_DIR

check summary
check symbols -l
check details -d -g image:fx_c
check show_address -l -w image:fx_nopie
check long_names -l -f image:fx_nopie,fx_stripped
check stripped -l image:fx_stripped
check cxx_normal -l image:fx_cxx
check cxx_none -l -D none image:fx_cxx
check cxx_smart -l -D smart image:fx_cxx
check bycpu -l session:bycpu
check bycpu_summary session:bycpu
check bycpu_xml -X -l session:bycpu
check bythread -l session:bythread
check merge_cpu -l --merge=cpu session:mixed
check merge_all -l --merge=all session:mixed
check merge_lib --merge=lib
check merge_lib_syms -l --merge=lib
check threshold -l --threshold=5
check threshold_summary --threshold=10
check sort_symbol -l --sort=symbol image:fx_c
check sort_vma -l --sort=vma image:fx_c
check sort_multi -l --sort=image,symbol
check sort_image_summary --sort=image
check reverse -l -r image:fx_c
check accumulated -l -a image:fx_c
check global -l -% image:fx_nopie
check exclude_syms -l --exclude-symbols=fx_hot,fx_warm image:fx_c
check include_syms -l --include-symbols=fx_cold
check exclude_dep -x
check image_exclude -l image-exclude:libfx.so image:fx_c
check lib_image -l lib-image:libfx.so
check events -l session:events
check debuglink -l -g session:debuglink
check events_summary session:events
check events_xml -X -l session:events
check image_path -l -p /nowhere,$B session:moved
mkdir -p "$W/root/nonexistent/moved" && cp "$B/fx_nopie" "$W/root/nonexistent/moved/"
check root -l -R "$W/root" session:moved
check root_missing -l session:moved
check xml -X -l
check xml_details -X -d image:fx_nopie
check json --json -l
check json_details --json -d image:fx_c

# the XML must be well formed, the JSON valid
if command -v python3 >/dev/null; then
	for x in xml xml_details; do
		python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$W/$x.raw" ||
			{ echo "FAIL $x: not well-formed XML"; fail=$((fail + 1)); }
	done
	for j in json json_details; do
		python3 -c 'import sys, json; d = json.load(open(sys.argv[1])); assert d["version"] == 1' \
			"$W/$j.raw" || { echo "FAIL $j: not valid JSON"; fail=$((fail + 1)); }
	done
fi

# warnings: missing binary named, kernel image resolved, no other noise
grep -q "no symbols for /nonexistent/gone" "$W/symbols.err" ||
	{ echo "FAIL: no warning for the missing binary"; cat "$W/symbols.err"; fail=$((fail + 1)); }

# more than one differing axis: error naming --merge, non-zero exit, nothing on stdout
if "$OPREPORT" --session-dir="$S" -l session:mixed >"$W/mixed.out" 2>"$W/mixed.err"; then
	echo "FAIL mixed: exit 0 for files differing in cpu and tid"; fail=$((fail + 1))
elif ! grep -q -- "--merge=cpu,tid" "$W/mixed.err" || [ -s "$W/mixed.out" ]; then
	echo "FAIL mixed: expected an error suggesting --merge=cpu,tid"; cat "$W/mixed.err"; fail=$((fail + 1))
else
	npass=$((npass + 1))
fi

# a corrupt and a badly named file are skipped with a warning naming each; the rest is reported
if "$OPREPORT" --session-dir="$S" -l session:corrupt >"$W/corrupt.out" 2>"$W/corrupt.err" &&
	grep -q "skipping sample file .*/bad/TIMER.0.0.all.all.all: corrupt" "$W/corrupt.err" &&
	grep -q "skipping sample file .*/bad/TIMER.0.0.all.all: bad sample file name" "$W/corrupt.err" &&
	grep -q "^10 .*fx_hot$" "$W/corrupt.out"; then
	npass=$((npass + 1))
else
	echo "FAIL corrupt: expected warnings for both bad files and a report of fx_hot (10)"
	cat "$W/corrupt.err" "$W/corrupt.out"; fail=$((fail + 1))
fi

# lost samples and throttling warnings
"$OPREPORT" --session-dir="$S" session:lost >/dev/null 2>"$W/lost.err"
if grep -q "Lost samples detected" "$W/lost.err" && grep -q "throttled" "$W/lost.err"; then
	npass=$((npass + 1))
else
	echo "FAIL lost: expected lost-sample and throttling warnings"; cat "$W/lost.err"; fail=$((fail + 1))
fi

# binary modified after profiling: warning
cp "$B/fx_nopie" "$W/fx_mod"
printf 'file\t%s\t%s\tTIMER\t0\t0\tall\tall\tall\ns\tsym:fx_warm\t7\n' "$W/fx_mod" "$W/fx_mod" |
	"$MKFIXTURE" "$W/modsession" || fail=$((fail + 1))
touch -d '2001-01-01' "$W/fx_mod"
"$OPREPORT" --session-dir="$W/modsession" -l >"$W/mod.out" 2>"$W/mod.err"
if grep -q "was modified after it was profiled" "$W/mod.err" && grep -q "fx_warm" "$W/mod.out"; then
	npass=$((npass + 1))
else
	echo "FAIL mtime: expected a modified-binary warning"; cat "$W/mod.err"; fail=$((fail + 1))
fi

# -w/-d columns line up with 16-digit kernel vmas and long anon names: each
# column of every row starts where its header does (detail rows: samples, %)
for args in "-l -w" "-l -d" "-l -w -g"; do
	# shellcheck disable=SC2086
	"$OPREPORT" --session-dir="$S" $args >"$W/align.out" 2>/dev/null
	bad=$(awk '
	/^vma / { h = $0; ns = split("samples|%|linenr info|image name|app name|symbol name", c, "|")
		for (i = 1; i <= ns; i++) { at[i] = index(h, c[i]); if (c[i] == "%") at[i] = index(h, " % ") + 1 }
		next }
	!h { next }
	{ last = /^  [0-9a-f]/ ? 2 : ns
	  for (i = 1; i <= last; i++)
		if (at[i] && (substr($0, at[i] - 1, 1) != " " || substr($0, at[i], 1) == " ")) {
			print NR ": " c[i] " not at column " at[i] ": " $0; exit } }
	END { if (!h) print "no header" }' "$W/align.out")
	if [ -z "$bad" ] && grep -q "^ffffffff81001000 " "$W/align.out" && grep -q "anon (tgid:4243" "$W/align.out"; then
		npass=$((npass + 1))
	else
		echo "FAIL align: opreport $args: $bad"; cat "$W/align.out"; fail=$((fail + 1))
	fi
done

# --record is documented as oprofiled's own format, not the perf record stream
if "$OP_BUILDDIR/core/oprofiled" --help 2>&1 | grep -q "oprofiled's own format for --replay (not perf.data)" &&
	! "$OP_BUILDDIR/core/oprofiled" --help 2>&1 | grep -q "perf record stream"; then
	npass=$((npass + 1))
else
	echo "FAIL record help: --record not described as oprofiled's own format"; fail=$((fail + 1))
fi

# the modified-binary warning gives both times as ISO 8601 dates in UTC
touch -d @1795635000 "$W/fx_mod"
"$OPREPORT" --session-dir="$W/modsession" -l >/dev/null 2>"$W/mod2.err"
if grep -Eq "was modified after it was profiled \(profiled [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z, binary modified 2026-11-25T19:30:00Z\)" "$W/mod2.err"; then
	npass=$((npass + 1))
else
	echo "FAIL mtime dates: expected ISO 8601 UTC dates"; cat "$W/mod2.err"; fail=$((fail + 1))
fi

# an empty session says so; files that the specification excludes say that
mkdir -p "$W/emptysession/samples/current"
"$OPREPORT" --session-dir="$W/emptysession" >"$W/empty.out" 2>"$W/empty.err"
rc=$?
if [ $rc -eq 1 ] && grep -qx "opreport error: session $W/emptysession/samples/current holds no samples (profile something first)" "$W/empty.err"; then
	npass=$((npass + 1))
else
	echo "FAIL empty session: exit $rc"; cat "$W/empty.err"; fail=$((fail + 1))
fi
"$OPREPORT" --session-dir="$S" image:nosuchimage >/dev/null 2>"$W/nomatch.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "no sample files in $S/samples/current match the profile specification" "$W/nomatch.err"; then
	npass=$((npass + 1))
else
	echo "FAIL no match: exit $rc"; cat "$W/nomatch.err"; fail=$((fail + 1))
fi

# errors: no session, no samples, bad specification
for args in "--session-dir=$W/none" "--session-dir=$S session:nosuch" "--session-dir=$S bogus:1" \
	"--session-dir=$S tid:abc" "--session-dir=$S image:nosuchimage" "--session-dir=$S --merge=foo" \
	"--session-dir=$S --sort=foo" "--session-dir=$S --threshold=x"; do
	# shellcheck disable=SC2086
	if "$OPREPORT" $args >"$W/e.out" 2>"$W/e.err"; then
		echo "FAIL error case '$args': exit 0"; fail=$((fail + 1))
	elif ! grep -q "opreport error: " "$W/e.err" || [ -s "$W/e.out" ]; then
		echo "FAIL error case '$args': no 'opreport error:' message"; cat "$W/e.err"; fail=$((fail + 1))
	else
		npass=$((npass + 1))
	fi
done

# -o FILE that cannot be opened: an error naming FILE and errno, exit 1, in every
# output form (fclose(NULL) crashed here before)
for args in "" --json -X -c --callgraph-output=folded; do
	# shellcheck disable=SC2086
	"$OPREPORT" --session-dir="$S" $args -o /nonexistent/dir/x >"$W/o.out" 2>"$W/o.err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "opreport error: -o /nonexistent/dir/x: .*No such file or directory" "$W/o.err" &&
		[ ! -s "$W/o.out" ]; then
		npass=$((npass + 1))
	else
		echo "FAIL -o unwritable ($args): exit $rc"; cat "$W/o.err"; fail=$((fail + 1))
	fi
done

# folded stacks are text only: -X/--json with them is an error, not text
# (-c -X and -c --json: tests/integration/report_diff.sh)
for args in "-X --callgraph-output=folded" "--json --callgraph-output=folded"; do
	# shellcheck disable=SC2086
	if "$OPREPORT" --session-dir="$S" $args >"$W/cgfmt.out" 2>"$W/cgfmt.err"; then
		echo "FAIL '$args': exit 0"; fail=$((fail + 1))
	elif ! grep -q "opreport error: --callgraph-output=folded is a text format" "$W/cgfmt.err" || [ -s "$W/cgfmt.out" ]; then
		echo "FAIL '$args': expected an error saying folded stacks are text only"
		cat "$W/cgfmt.err"; fail=$((fail + 1))
	else
		npass=$((npass + 1))
	fi
done

# a stripped binary without dynamic symbols: one warning naming it, and one row
# per sampled address as IMAGE+0xOFFSET, sorted and cut by --threshold as symbols
strip -o "$B/fx_s" "$B/fx_c"
toff=$(readelf -SW "$B/fx_s" | awk '$2 == ".text" { print $5; exit }')
k1=$(printf '0x%x' $((0x$toff + 16))); k2=$(printf '0x%x' $((0x$toff + 32))); k3=$(printf '0x%x' $((0x$toff + 36)))
printf 'file\t%s\t%s\tTIMER\t0\t0\tall\tall\tall\ns\t%s\t20\ns\t%s\t50\ns\t%s\t1\n' \
	"$B/fx_s" "$B/fx_s" "$k1" "$k2" "$k3" | "$MKFIXTURE" "$W/stripsession" || fail=$((fail + 1))
"$OPREPORT" --session-dir="$W/stripsession" -l >"$W/strip.out" 2>"$W/strip.err"
"$OPREPORT" --session-dir="$W/stripsession" -l --threshold=5 >"$W/strip5.out" 2>/dev/null
nwarn=$(grep -c "no symbols for $B/fx_s: no symbols (stripped?)" "$W/strip.err")
if [ "$nwarn" -eq 1 ] && ! grep -q "(no symbols)" "$W/strip.out" &&
	grep -A3 '^samples' "$W/strip.out" | awk 'NR == 2 && $1 == 50 && $3 == "fx_s+'"$k2"'" { a = 1 }
		NR == 3 && $1 == 20 && $3 == "fx_s+'"$k1"'" { b = 1 }
		NR == 4 && $1 == 1 && $3 == "fx_s+'"$k3"'" { c = 1 } END { exit !(a && b && c) }' &&
	grep -q "fx_s+$k1\$" "$W/strip5.out" && ! grep -q "fx_s+$k3" "$W/strip5.out"; then
	npass=$((npass + 1))
else
	echo "FAIL stripped: expected one 'no symbols (stripped?)' warning and fx_s+0xOFFSET rows"
	cat "$W/strip.err" "$W/strip.out" "$W/strip5.out"; fail=$((fail + 1))
fi

# --version on every tool: the package version of config.h, exit 0
ver=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$OP_BUILDDIR/config.h")
for t in tools/opreport/opreport tools/ophelp tools/opcount tools/opcontrol core/oprofiled; do
	if out=$("$OP_BUILDDIR/$t" --version 2>&1) && [ -n "$ver" ] && printf '%s\n' "$out" | grep -qF " $ver"; then
		npass=$((npass + 1))
	else
		echo "FAIL $t --version: expected version $ver and exit 0, got: $out"; fail=$((fail + 1))
	fi
done

# inverted profile: a library three applications use is opened once
check shared -l session:shared
check shared_merged -l --merge=lib session:shared
check shared_summary session:shared
if command -v strace >/dev/null; then
	strace -f -e trace=openat -o "$W/strace.out" "$OPREPORT" --session-dir="$S" -l session:shared >/dev/null 2>&1
	n=$(grep -c -F "\"$B/libfx.so\", O_RDONLY" "$W/strace.out")
	if [ "$n" -eq 1 ]; then npass=$((npass + 1))
	else echo "FAIL shared: libfx.so opened $n times (expected once)"; fail=$((fail + 1)); fi
fi

# hostile sample files: random byte flips in a real file, truncations, junk
# kallsyms; opreport must answer (exit 0 or 1), never crash
H=$W/hostile
good=$(find "$S/samples/corrupt" -name 'TIMER.0.0.all.all.all' -size +1k | head -1)
crashes=0
for i in $(seq 1 40); do
	rm -rf "$H" && mkdir -p "$H/samples" && cp -r "$S/samples/corrupt" "$H/samples/current"
	f=$(find "$H/samples/current" -name 'TIMER.0.0.all.all.all' -size +1k | head -1)
	size=$(wc -c <"$f")
	case $((i % 4)) in
	0) head -c $((i * 37 % size)) "$good" >"$f" ;;
	*) for j in 1 2 3 4; do
		dd if=/dev/urandom of="$f" bs=1 count=$((1 + i % 8)) seek=$(((i * 7919 + j * 104729) % size)) \
			conv=notrunc 2>/dev/null
	   done ;;
	esac
	mkdir -p "$H/samples/current/stats"
	head -c 3000 /dev/urandom >"$H/samples/current/stats/kallsyms"
	"$OPREPORT" --session-dir="$H" -l -d >/dev/null 2>"$W/hostile.err"
	rc=$?
	if [ "$rc" -gt 1 ]; then
		crashes=$((crashes + 1)); echo "FAIL hostile $i: exit $rc"; cat "$W/hostile.err"
	fi
done
[ "$crashes" -eq 0 ] && npass=$((npass + 1)) || fail=$((fail + 1))

# a sampled path that is a FIFO must not hang opreport
mkfifo "$W/fifo_bin" && printf 'file\t%s\t%s\tTIMER\t0\t0\tall\tall\tall\ns\t0x10\t3\n' "$W/fifo_bin" "$W/fifo_bin" |
	"$MKFIXTURE" "$W/fifosession"
if timeout 20 "$OPREPORT" --session-dir="$W/fifosession" -l >"$W/fifo.out" 2>"$W/fifo.err" &&
	grep -q "not a regular file" "$W/fifo.err" && grep -q "(no symbols)" "$W/fifo.out"; then
	npass=$((npass + 1))
else
	echo "FAIL fifo: opreport hung or did not warn"; cat "$W/fifo.err"; fail=$((fail + 1))
fi

# default session: ./oprofile_data when it is a directory
mkdir -p "$W/cwd" && cp -r "$S" "$W/cwd/oprofile_data"
(cd "$W/cwd" && "$OPREPORT" >"$W/cwd.out" 2>/dev/null)
normalize <"$W/cwd.out" | sed "s|$W/cwd/oprofile_data|@S@|g" | diff -q "$G/summary.txt" - >/dev/null &&
	npass=$((npass + 1)) || { echo "FAIL: ./oprofile_data not used by default"; fail=$((fail + 1)); }

echo "report_golden: $npass passed, $fail failed"
# keep the work directory only when something failed (distclean leaves nothing)
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
