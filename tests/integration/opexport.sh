#!/bin/sh
# opexport.sh - opexport checked by the real consumers on live sessions
# (cpu-clock, 4 kHz): upstream pprof built from Debian's Go sources reads
# every file (-raw), its -top per-function samples equal opreport -l's row
# for row, -top -cum of a call-graph session equals opreport -c's inclusive
# counts, a stripped binary exported --no-symbols is symbolized by pprof from
# PPROF_BINARY_PATH/<build-id>/ to the same names, -diff_base of two rotated
# sessions with different splits shows the shift; protoc --decode with the
# upstream profile.proto decodes every pprof file, whose mappings carry the
# executable PT_LOAD and the build ID readelf reports; labels from --separate
# and --label; a corrupt sample file is a warning and the rest is exported;
# folded output is opreport's byte for byte; the speedscope file validates
# against the schema shipped in the npm package speedscope; archive: of
# oparchive's layout exports what the session in place did.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
X=$OP_BUILDDIR/tools/opexport
HOT=$OP_BUILDDIR/tests/integration/hot
DW=$OP_BUILDDIR/tests/integration/diff_work
CG=$OP_BUILDDIR/tests/integration/cg_tree
PROTO=$OP_SRCDIR/lib/profile/profile.proto
W=$OP_BUILDDIR/tests/opexport.tmp
PPROF=$OP_BUILDDIR/tests/pprof
if [ ! -x "$D" ] || [ ! -x "$X" ]; then
	echo "opexport: SKIP: $D or $X is not built (configure found no libbfd, protobuf-c, zlib or libdeflate)"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "opexport: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
for t in python3 protoc readelf strip nm; do
	command -v "$t" >/dev/null 2>&1 || { echo "opexport: $t missing: run tools/install-deps.sh"; exit 1; }
done
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# upstream pprof, built offline from golang-github-google-pprof-dev (~5 s, kept in the build tree)
if [ ! -x "$PPROF" ]; then
	if ! command -v go >/dev/null 2>&1 || [ ! -d /usr/share/gocode/src/github.com/google/pprof ]; then
		echo "opexport: SKIP: no Go toolchain or pprof sources (Debian golang-go and"
		echo "golang-github-google-pprof-dev, which tools/install-deps.sh installs)"
		exit 77
	fi
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$OP_BUILDDIR/tests/gocache HOME=$W \
		go build -o "$PPROF" github.com/google/pprof >"$W/go.log" 2>&1 ||
		{ echo "opexport: building pprof failed:"; cat "$W/go.log"; exit 1; }
fi
pp() { HOME=$W "$PPROF" "$@"; }

profile() { # $1 = session dir, $2 = extra daemon options, rest = command
	s=$1 extra=$2; shift 2
	# shellcheck disable=SC2086
	if ! "$D" --session-dir="$s" --events=TIMER:250000 $extra -- "$@" >"$W/prof.log" 2>&1; then
		if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$W/prof.log"; then
			echo "opexport: SKIP: the kernel forbids perf_event_open here"; exit 77
		fi
		echo "opexport: oprofiled failed for $*:"; cat "$W/prof.log"; exit 1
	fi
}
decodes() { # $1 = pprof file: protoc reads it with upstream's profile.proto
	gzip -dc "$1" | protoc --decode=perftools.profiles.Profile -I"$(dirname "$PROTO")" "$PROTO" \
		>"$1.txt" 2>"$1.perr" && [ -s "$1.txt" ] && ok ||
		{ bad "protoc --decode of $1 failed"; head -5 "$1.perr"; }
	pp -raw "$1" >"$1.raw" 2>"$1.rerr" && grep -q '^Samples:' "$1.raw" && ok ||
		{ bad "pprof -raw $1 failed"; head -5 "$1.rerr"; }
}
# "name count" per function, sorted: opreport -l (summed by name, "(no symbols)" rows left
# out) and pprof -top (unsymbolized locations, which it shows as "[image]", left out)
report_rows() {
	awk 'f && NF >= 4 && $NF != "symbols)" { c[$NF] += $1 } /^samples/ { f = 1 }
		END { for (n in c) print n, c[n] }' "$1" | sort
}
pprof_rows() { # $1 file, $2 column (1 flat, 4 cum), rest pprof options
	f=$1 col=$2; shift 2
	pp -top -sample_index=samples -nodefraction=0 -edgefraction=0 -nodecount=1000000 "$@" "$f" \
		2>"$f.terr" | awk -v c="$col" 'f && $c > 0 { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; print n, $c }
		/flat%/ { f = 1 }' | awk '!($1 ~ /^\[/ && $1 != "[unknown]")' | sort
}

# 1. a hot workload: every function's samples equal opreport -l's
profile "$W/s1" "" "$HOT" 1500
"$X" --session-dir="$W/s1" --format=pprof -o "$W/s1.pb.gz" 2>"$W/x1.err" && ok ||
	{ bad "opexport --format=pprof failed"; cat "$W/x1.err"; }
decodes "$W/s1.pb.gz"
"$R" --session-dir="$W/s1" -l >"$W/r1.txt" 2>/dev/null
report_rows "$W/r1.txt" >"$W/r1.rows"
pprof_rows "$W/s1.pb.gz" 1 >"$W/p1.rows"
if [ -s "$W/r1.rows" ] && cmp -s "$W/r1.rows" "$W/p1.rows" && grep -q '^work_big ' "$W/p1.rows"; then
	ok
else
	bad "pprof -top per-function samples differ from opreport -l's"; diff "$W/r1.rows" "$W/p1.rows" | head -20
fi
echo "hot: $(grep -E '^work_(big|small) ' "$W/p1.rows" | tr '\n' ' ')(pprof -top = opreport -l, $(wc -l <"$W/r1.rows") functions)"
grep -q 'sample_type' "$W/s1.pb.gz.txt" && grep -q '^period: 250000$' "$W/s1.pb.gz.txt" && ok ||
	bad "no sample types or period 250000 in the decoded profile"
grep -q '^PeriodType: cpu nanoseconds' "$W/s1.pb.gz.raw" && grep -q '^samples/count cpu/nanoseconds' "$W/s1.pb.gz.raw" &&
	grep -q '^Duration: [1-9]' "$W/s1.pb.gz.raw" && ok ||
	{ bad "pprof -raw: sample types, period type or duration wrong"; head -8 "$W/s1.pb.gz.raw"; }
# string 0 is "", ids start at 1
python3 - "$W/s1.pb.gz.txt" <<'EOF' && ok || bad "ids or string table wrong"
import re, sys
t = open(sys.argv[1]).read()
assert t.split('string_table: ')[1].startswith('""'), 'string 0 not empty'
for kind in ('mapping', 'location', 'function'):
    ids = [int(x) for x in re.findall(r'^%s \{\n  id: (\d+)' % kind, t, re.M)]
    assert ids == list(range(1, len(ids) + 1)), (kind, ids[:5])
EOF

# 2. mappings: the executable PT_LOAD and the build ID of the binary (readelf's)
bid=$(readelf -n "$HOT" | awk '/Build ID:/ { print $3; exit }')
set -- $(readelf -lW "$HOT" | awk '$1 == "LOAD" && / E / { print $3, $2; exit }')
vaddr=$(printf '%d' "${1:-0}") off=$(printf '%d' "${2:-0}")
python3 - "$W/s1.pb.gz.txt" "$HOT" "$bid" "$vaddr" "$off" <<'EOF' && ok || bad "the mapping of $HOT is not its PT_LOAD + build ID ($bid)"
import re, sys
t, path, bid, vaddr, off = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
t = open(t).read()
strs = [eval(s) for s in re.findall(r'^string_table: (".*")$', t, re.M)]
for m in re.findall(r'^mapping \{\n(.*?)^\}', t, re.M | re.S):
    f = dict(re.findall(r'^  (\w+): (\S+)$', m, re.M))
    if strs[int(f.get('filename', 0))] != path:
        continue
    assert int(f.get('memory_start', 0)) == vaddr, ('start', f, vaddr)
    assert int(f.get('file_offset', 0)) == off, ('offset', f, off)
    assert strs[int(f.get('build_id', 0))] == bid, ('build id', strs[int(f.get('build_id', 0))], bid)
    assert f.get('has_functions') == 'true'
    sys.exit(0)
sys.exit('no mapping of ' + path)
EOF

# 3. --no-symbols: a stripped binary, its unstripped copy under PPROF_BINARY_PATH/<build-id>/
mkdir -p "$W/strip" "$W/bins/$bid"
strip -o "$W/strip/hot" "$HOT" && cp "$HOT" "$W/bins/$bid/hot"
profile "$W/s2" "" "$W/strip/hot" 1500
"$X" --session-dir="$W/s2" --no-symbols -o "$W/s2.pb.gz" 2>"$W/x2.err" && ok ||
	{ bad "opexport --no-symbols failed"; cat "$W/x2.err"; }
decodes "$W/s2.pb.gz"
"$R" --session-dir="$W/s2" -l image:"$W/strip/hot" >"$W/r2.txt" 2>/dev/null
grep -q work_big "$W/r2.txt" && bad "opreport found symbols in the stripped binary: no test" || ok
# -noinlines: code inlined into main counts as main's, as opreport counts it
PPROF_BINARY_PATH=$W/bins pprof_rows "$W/s2.pb.gz" 1 -noinlines >"$W/p2.rows"
"$R" --session-dir="$W/s2" -l >"$W/r2all.txt" 2>/dev/null
# opreport names the stripped binary's samples only by image: its total must be pprof's two functions'
hot_total=$(awk '$3 == "hot" { s += $1 } END { print s + 0 }' "$W/r2all.txt")
# pprof's rows of the functions the unstripped binary defines
nm --defined-only "$HOT" | awk '$2 ~ /^[tTwW]$/ { print $3 }' | sort -u >"$W/hot.syms"
p_total=$(awk 'NR == FNR { s[$1] = 1; next } ($1 in s) { t += $2 } END { print t + 0 }' "$W/hot.syms" "$W/p2.rows")
if grep -q '^work_big ' "$W/p2.rows" && grep -q '^work_small ' "$W/p2.rows" && [ "$hot_total" -gt 0 ] &&
	[ "$hot_total" -eq "$p_total" ]; then
	ok
else
	bad "pprof did not symbolize the stripped binary from PPROF_BINARY_PATH/$bid ($p_total of $hot_total samples named)"
	cat "$W/p2.rows" | head; cat "$W/s2.pb.gz.terr" | head -5
fi
# kernel frames are named from the session's kallsyms snapshot even --no-symbols: opreport's counts
# (summed by name: the kernel has static functions of the same name, one pprof function)
awk '$3 == "vmlinux" && $NF != "symbols)" { c[$NF] += $1 } END { for (n in c) print n, c[n] }' \
	"$W/r2all.txt" | sort >"$W/k2.rows"
pprof_rows "$W/s2.pb.gz" 1 >"$W/p2k.rows"
if [ -s "$W/k2.rows" ] && [ -z "$(join -v1 "$W/k2.rows" "$W/p2k.rows" 2>/dev/null | head -1)" ] &&
	[ "$(join "$W/k2.rows" "$W/p2k.rows" | awk '$2 != $3' | head -1)" = "" ]; then
	ok
else
	bad "--no-symbols: kernel functions not named as opreport -l names them"; head -5 "$W/k2.rows"
fi
# without the copy, the names are not there: the build ID found them
rm -rf "$W/nobins" && mkdir -p "$W/nobins"
PPROF_BINARY_PATH=$W/nobins pprof_rows "$W/s2.pb.gz" 1 >"$W/p2none.rows"
grep -q '^work_big ' "$W/p2none.rows" && bad "pprof named the stripped binary without its copy" || ok

# 4. -diff_base of two rotated sessions: diff_one:diff_two 3:1, then 1:3
profile "$W/s3" "" "$DW" 1500 3 1
mv "$W/s3/samples/current" "$W/s3/samples/runA" || exit 1
profile "$W/s3" "" "$DW" 1500 1 3
"$X" --session-dir="$W/s3" session:runA -o "$W/a.pb.gz" 2>"$W/xa.err" &&
	"$X" --session-dir="$W/s3" session:current -o "$W/b.pb.gz" 2>"$W/xb.err" && ok ||
	{ bad "opexport of the rotated sessions failed"; cat "$W/xa.err" "$W/xb.err"; }
decodes "$W/a.pb.gz"
decodes "$W/b.pb.gz"
pprof_rows "$W/b.pb.gz" 1 -diff_base="$W/a.pb.gz" >"$W/d.rows" 2>/dev/null
pp -top -sample_index=samples -nodefraction=0 -diff_base="$W/a.pb.gz" "$W/b.pb.gz" >"$W/d.txt" 2>&1
one=$(awk '$NF == "diff_one" { print $1 }' "$W/d.txt") two=$(awk '$NF == "diff_two" { print $1 }' "$W/d.txt")
echo "diff_base: diff_one ${one:-?} samples, diff_two ${two:-?} samples (3:1 then 1:3 of ~6000)"
if [ -n "$one" ] && [ -n "$two" ] && [ "$one" -lt -1500 ] && [ "$two" -gt 1500 ]; then
	ok
else
	bad "pprof -diff_base does not show diff_one down and diff_two up"; cat "$W/d.txt"
fi

# 5. a call-graph session: pprof -top -cum inclusive counts equal opreport -c's
profile "$W/s4" "--ext-feature=callgraph" "$CG" 1500
"$X" --session-dir="$W/s4" -o "$W/cg.pb.gz" 2>"$W/x4.err" && ok || { bad "opexport of the call-graph session failed"; cat "$W/x4.err"; }
decodes "$W/cg.pb.gz"
"$R" --session-dir="$W/s4" -c >"$W/r4.txt" 2>/dev/null
# the block's own line: "self % incl. incl.% image symbol" (callers and callees are indented)
# (no symbol: "[image]" there, an unsymbolized location in pprof; both left out)
awk '/^[0-9]/ && NF >= 6 && $3 > 0 && !($NF ~ /^\[/ && $NF != "[unknown]") { print $NF, $3 }' "$W/r4.txt" |
	sort >"$W/r4.rows"
pprof_rows "$W/cg.pb.gz" 4 >"$W/p4.rows"
nstack=$(grep -c 'location_id' "$W/cg.pb.gz.txt")
deep=$(awk '/^sample \{/ { n = 0 } /location_id/ { n++ } /^\}/ && n > 2 { d++ } END { print d + 0 }' "$W/cg.pb.gz.txt")
for f in main mid leaf_b leaf_c; do
	a=$(awk -v f="$f" '$1 == f { print $2 }' "$W/r4.rows") b=$(awk -v f="$f" '$1 == f { print $2 }' "$W/p4.rows")
	[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "inclusive samples of $f: opreport -c ${a:-none}, pprof -cum ${b:-none}"
done
echo "callgraph: main $(awk '$1 == "main" { print $2 }' "$W/p4.rows") inclusive of $(awk '{ s += $2 } END { print s }' "$W/p1.rows" 2>/dev/null) ; $deep samples with stacks deeper than 2 ($nstack location lists)"
[ "$deep" -gt 0 ] && ok || bad "no whole stacks in the call-graph export"
# a name two symbols share (kernel statics) is one pprof function whose inclusive count
# is not the sum of theirs: such names are left out of the whole comparison
awk '{ n[$1]++ } END { for (k in n) if (n[k] > 1) print k }' "$W/r4.rows" >"$W/r4.dups"
awk 'NR == FNR { d[$1] = 1; next } !($1 in d)' "$W/r4.dups" "$W/r4.rows" >"$W/r4.cmp"
awk 'NR == FNR { d[$1] = 1; next } !($1 in d)' "$W/r4.dups" "$W/p4.rows" >"$W/p4.cmp"
cmp -s "$W/r4.cmp" "$W/p4.cmp" && ok || { bad "pprof -cum differs from opreport -c's inclusive counts"; diff "$W/r4.cmp" "$W/p4.cmp" | head; }

# 6. folded: opreport's writer, byte for byte
"$X" --session-dir="$W/s4" --format=folded -o "$W/cg.folded" 2>/dev/null
"$R" --session-dir="$W/s4" --callgraph-output=folded >"$W/cg.rfolded" 2>/dev/null
[ -s "$W/cg.folded" ] && cmp -s "$W/cg.folded" "$W/cg.rfolded" && grep -q 'cg_tree;.*main;mid;leaf_b [0-9]' "$W/cg.folded" && ok ||
	{ bad "opexport --format=folded differs from opreport --callgraph-output=folded"; head -3 "$W/cg.folded"; }

# 7. labels: --separate=thread,cpu gives pid/tid/cpu/comm; --label adds its pair
profile "$W/s5" "--separate=thread,cpu" "$HOT" 300
"$X" --session-dir="$W/s5" --label=host=opx-test --label=service=hot -o "$W/lab.pb.gz" 2>"$W/x5.err" && ok ||
	{ bad "opexport with labels failed"; cat "$W/x5.err"; }
decodes "$W/lab.pb.gz"
pp -tags "$W/lab.pb.gz" >"$W/tags.txt" 2>&1
for k in pid tid cpu comm host service; do
	grep -q "^ *$k: " "$W/tags.txt" && ok || { bad "no label $k in pprof -tags"; cat "$W/tags.txt" | head -20; }
done
grep -q 'opx-test' "$W/tags.txt" && grep -A3 '^ *comm:' "$W/tags.txt" | grep -q ' hot$' && ok || bad "label values wrong"
"$X" --session-dir="$W/s5" --label=novalue -o "$W/bad.pb.gz" 2>"$W/bad.err" && bad "--label=novalue accepted" ||
	{ grep -q -- '--label=novalue: expected KEY=VALUE' "$W/bad.err" && ok || { bad "--label error message"; cat "$W/bad.err"; }; }

# 8. a corrupt sample file: a warning naming it, the rest exported
cp -r "$W/s1" "$W/s6"
victim=$(find "$W/s6/samples/current" -path '*vmlinux*' -name 'TIMER.*' | head -1)
[ -n "$victim" ] || victim=$(find "$W/s6/samples/current" -name 'TIMER.*' ! -path '*hot/{dep}*hot/TIMER*' | head -1)
printf 'garbage' | dd of="$victim" bs=1 seek=80 conv=notrunc 2>/dev/null
printf 'XXXX' | dd of="$victim" bs=1 seek=0 conv=notrunc 2>/dev/null
"$X" --session-dir="$W/s6" -o "$W/c.pb.gz" 2>"$W/x6.err" && ok || { bad "opexport gave up on a corrupt sample file"; cat "$W/x6.err"; }
grep -q "warning: .*$(basename "$victim")" "$W/x6.err" && ok || { bad "no warning naming the corrupt file"; cat "$W/x6.err"; }
decodes "$W/c.pb.gz"
pprof_rows "$W/c.pb.gz" 1 >"$W/p6.rows"
[ "$(grep '^work_big ' "$W/p6.rows")" = "$(grep '^work_big ' "$W/p1.rows")" ] && ok ||
	bad "the rest was not exported whole after the corrupt file"

# 9. speedscope: the schema of the npm package speedscope, and the weights
"$X" --session-dir="$W/s4" --format=speedscope -o "$W/cg.speedscope.json" 2>/dev/null && ok || bad "--format=speedscope failed"
"$X" --session-dir="$W/s1" --format=speedscope -o "$W/s1.speedscope.json" 2>/dev/null && ok || bad "--format=speedscope failed"
NPMDIR=$OP_BUILDDIR/tests/npm
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "opexport: node or npm absent: the speedscope schema check is left out (install nodejs and npm)"
else
	if [ ! -f "$NPMDIR/node_modules/speedscope/dist/release/file-format-schema.json" ] ||
		[ ! -d "$NPMDIR/node_modules/ajv" ]; then
		mkdir -p "$NPMDIR" && (cd "$NPMDIR" && HOME=$W npm install --no-audit --no-fund --silent \
			speedscope@1 ajv@8 >"$W/npm.log" 2>&1) ||
			{ bad "npm install speedscope ajv failed"; tail -5 "$W/npm.log"; }
	fi
	for j in "$W/cg.speedscope.json" "$W/s1.speedscope.json"; do
		NODE_PATH=$NPMDIR/node_modules node "$OP_SRCDIR/tests/integration/speedscope_check.js" \
			"$NPMDIR/node_modules/speedscope/dist/release/file-format-schema.json" "$j" \
			>"$j.check" 2>&1 && ok || { bad "$j does not validate"; cat "$j.check"; }
	done
	# the timer's weights are nanoseconds: work_big's is pprof's samples times the period
	w=$(sed -n 's/^frame work_big self //p' "$W/s1.speedscope.json.check")
	s=$(awk '$1 == "work_big" { print $2 * 250000 }' "$W/p1.rows")
	[ -n "$w" ] && [ "$w" = "$s" ] && ok || bad "speedscope weight of work_big ${w:-none}, expected $s"
fi

# 10. archive: (oparchive's layout), the binary and the session moved away: the same export
OA=$OP_BUILDDIR/tools/oparchive
mkdir -p "$W/abin" && cp "$HOT" "$W/abin/hot"
profile "$W/s7" "" "$W/abin/hot" 300
"$X" --session-dir="$W/s7" -o "$W/s7.pb.gz" 2>/dev/null
pprof_rows "$W/s7.pb.gz" 1 >"$W/p7.rows"
"$OA" --session-dir="$W/s7" -o "$W/arc" "$W/abin/hot" >"$W/oa.log" 2>&1 || { bad "oparchive failed"; cat "$W/oa.log"; }
mv "$W/abin" "$W/abin.away" && mv "$W/s7" "$W/s7.away"
"$X" --session-dir="$W/s7" archive:"$W/arc" -o "$W/arc.pb.gz" 2>"$W/xarc.err" && ok ||
	{ bad "opexport archive: failed"; cat "$W/xarc.err"; }
decodes "$W/arc.pb.gz"
pprof_rows "$W/arc.pb.gz" 1 >"$W/parc.rows"
grep -q '^work_big ' "$W/p7.rows" && cmp -s "$W/p7.rows" "$W/parc.rows" && ok ||
	{ bad "opexport archive: differs from the export of the session in place"; diff "$W/p7.rows" "$W/parc.rows" | head; }

# 11. bad input: options
"$X" --session-dir="$W/s1" --format=svg -o "$W/x" 2>"$W/e.err" && bad "--format=svg accepted" ||
	{ grep -q 'format=svg: expected pprof, folded or speedscope' "$W/e.err" && ok || bad "--format error message"; }
"$X" --session-dir="$W/none" -o "$W/x" 2>"$W/e.err" && bad "a missing session accepted" ||
	{ grep -q 'opexport error: ' "$W/e.err" && ok || bad "missing session message"; }
"$X" --session-dir="$W/s1" --format=folded --label=a=b 2>"$W/e.err" && bad "--label with folded accepted" ||
	{ grep -q -- '--label applies to --format=pprof only' "$W/e.err" && ok || bad "--label/folded message"; }
"$X" --session-dir="$W/s1" --format=folded --no-symbols 2>"$W/e.err" && bad "--no-symbols with folded accepted" ||
	{ grep -q -- '--no-symbols does not apply to --format=folded' "$W/e.err" && ok || bad "--no-symbols/folded message"; }
"$X" --version | grep -q '^opexport ' && ok || bad "--version"
"$X" -? | grep -q 'format=pprof' && ok || bad "-?"

echo "opexport: $npass checks passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
rm -rf "$W"
exit 0
