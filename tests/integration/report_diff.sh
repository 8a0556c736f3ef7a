#!/bin/sh
# report_diff.sh - differential opreport on real profiles: diff_work runs
# twice under `core/oprofiled` (cpu-clock, 4 kHz), diff_one:diff_two 3:1,
# then 1:3:3 with diff_extra; the first session is set aside as
# samples/runA (what a rotation does) so that
# `opreport -l { session:runA } { session:current }` compares them, in
# text, -X (xmllint) and --json (python3): shares and diff % within
# sampling error, +++ / --- rows, a copy of the binary at another path
# matching by name; bad brace inputs; and `opreport -c -X` / `-c --json` on
# a call-graph session (callers and callees present, valid XML / JSON).
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
P=$OP_BUILDDIR/tests/integration/diff_work
CG=$OP_BUILDDIR/tests/integration/cg_tree
W=$OP_BUILDDIR/tests/report_diff.tmp
if [ ! -x "$D" ]; then
	echo "report_diff: SKIP: the daemon binary $D is missing (core/oprofiled not built)"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "report_diff: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
for t in python3 xmllint; do
	command -v "$t" >/dev/null 2>&1 || { echo "report_diff: $t missing: run tools/install-deps.sh"; exit 1; }
done
rm -rf "$W" && mkdir -p "$W/bin2"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
within() { # $1 value, $2 target, $3 tolerance
	awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { exit !(v != "" && v >= t - d && v <= t + d) }'
}
profile() { # $1 = session dir, rest = command
	s=$1; shift
	if ! "$D" --session-dir="$s" --events=TIMER:250000 -- "$@" >"$W/prof.log" 2>&1; then
		echo "report_diff: oprofiled failed for $*:"; cat "$W/prof.log"; exit 1
	fi
}

# run A: 3:1; run B: a copy of the binary at another path, 1:3 plus diff_extra
# as long as diff_two (1:3:3). 1.5 s of CPU each: ~6000 samples, so a share's
# standard error is under 0.6 point.
profile "$W/s" "$P" 1500 3 1
mv "$W/s/samples/current" "$W/s/samples/runA" || exit 1
cp "$P" "$W/bin2/diff_work"
profile "$W/s" "$W/bin2/diff_work" 1500 1 3 extra

# text: -x keeps the shares those of the program's own image
"$R" --session-dir="$W/s" -l -x { session:runA "$P" } { session:current "$W/bin2/diff_work" } \
	>"$W/d.txt" 2>"$W/d.err" || { bad "opreport -l { A } { B } failed"; cat "$W/d.err"; }
row() { awk -v s="$1" '$NF == s { print $1, $2, $3; exit }' "$W/d.txt"; }
set -- $(row diff_one); one_n=${1:-} one_p=${2:-} one_d=${3:-}
set -- $(row diff_two); two_p=${2:-} two_d=${3:-}
set -- $(row diff_extra); extra_p=${2:-} extra_d=${3:-}
echo "diff_one $one_p % ($one_d), diff_two $two_p % ($two_d), diff_extra $extra_p % ($extra_d)"
grep -q '^samples  %        diff %    symbol name$' "$W/d.txt" && ok || { bad "no 'diff %' header"; cat "$W/d.txt"; }
# B shares 1/7, 3/7, 3/7; diff % from A's 75 / 25: -80.95, +71.43
within "$one_p" 14.29 2 && within "$two_p" 42.86 2 && within "$extra_p" 42.86 2 && ok ||
	{ bad "second-profile shares $one_p / $two_p / $extra_p, expected 14.3 / 42.9 / 42.9 +-2"; cat "$W/d.txt"; }
case $one_d in -*) within "${one_d#-}" 80.95 4 && ok || bad "diff_one diff % $one_d, expected -81 +-4" ;;
*) bad "diff_one diff % $one_d is not negative" ;; esac
case $two_d in +*) within "${two_d#+}" 71.43 12 && ok || bad "diff_two diff % $two_d, expected +71 +-12" ;;
*) bad "diff_two diff % $two_d is not positive" ;; esac
[ "$extra_d" = "+++" ] && ok || bad "diff_extra (second run only): diff % '$extra_d', expected +++"
# sorted by the second profile's samples
awk 'NR > 2 && $1 ~ /^[0-9]+$/ { if (p != "" && $1 > p) bad = 1; p = $1 } END { exit bad }' "$W/d.txt" && ok ||
	{ bad "rows not sorted by the second profile's samples"; cat "$W/d.txt"; }
[ "$one_n" -gt 0 ] 2>/dev/null && ok || bad "diff_one samples '$one_n'"

# the other way round: diff_extra is gone (---), the first profile's samples shown
"$R" --session-dir="$W/s" -l -x { session:current } { session:runA } diff_work >"$W/r.txt" 2>&1
awk '$NF == "diff_extra" { exit !($2 == "---" && $3 == "---" && $1 > 0) } END { if (NR == 0) exit 1 }' "$W/r.txt" &&
	grep -q ' diff_extra$' "$W/r.txt" && ok || { bad "reversed: diff_extra not '--- ---' with its samples"; cat "$W/r.txt"; }

# -X: well-formed, the second profile's counts, the first's as basecount, diff
"$R" --session-dir="$W/s" -l -x -X { session:runA "$P" } { session:current "$W/bin2/diff_work" } >"$W/d.xml" 2>"$W/d.err"
xmllint --noout "$W/d.xml" && ok || { bad "-X diff output is not well-formed XML"; head -20 "$W/d.xml"; }
python3 - "$W/d.xml" <<'EOF' && ok || bad "-X diff content"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.find("options").get("basesession").endswith("/runA"), "no basesession"
names = {int(s.get("id")): s.get("name") for s in root.iter("symboldata")}
syms = {names[int(s.get("idref"))]: s for s in root.iter("symbol")}
assert syms["diff_extra"].find("diff").text == "+++", "diff_extra not +++"
assert int(syms["diff_extra"].find("basecount").text) == 0
assert float(syms["diff_one"].find("diff").text) < 0 < float(syms["diff_two"].find("diff").text)
assert int(syms["diff_one"].find("basecount").text) > int(syms["diff_one"].find("count").text)
EOF

# --json: valid, status and diff_percent coherent with the counts
"$R" --session-dir="$W/s" -l -x --json { session:runA "$P" } { session:current "$W/bin2/diff_work" } >"$W/d.json" 2>"$W/d.err"
python3 -m json.tool "$W/d.json" >/dev/null && ok || { bad "--json diff output is not JSON"; head -20 "$W/d.json"; }
python3 - "$W/d.json" <<'EOF' && ok || bad "--json diff content"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "oprofile-ng-diff" and d["base_session"].endswith("/runA")
s = {x["name"]: x for x in d["symbols"]}
assert s["diff_extra"]["status"] == "new" and s["diff_extra"]["diff_percent"] == [None]
for n in ("diff_one", "diff_two"):
    x = s[n]
    assert x["status"] == "both"
    pa, pb = x["base_percent"][0], x["percent"][0]
    want = 100 * (pb - pa) / pa
    assert abs(x["diff_percent"][0] - want) < 0.01, (n, x["diff_percent"], want)
    assert abs(pb - 100.0 * x["samples"][0] / d["percent_base"][0]) < 0.001
assert s["diff_one"]["diff_percent"][0] < 0 < s["diff_two"]["diff_percent"][0]
EOF

# image rows without -l: the program's image in both
"$R" --session-dir="$W/s" { session:runA } { session:current } >"$W/i.txt" 2>&1
grep -q '^samples  %        diff %    image name$' "$W/i.txt" && grep -q ' diff_work$' "$W/i.txt" && ok ||
	{ bad "image rows of a differential report"; cat "$W/i.txt"; }

# bad specifications: exit 1, nothing on stdout, the side or word named
badspec() { # $1 = expected message (grep), rest = arguments
	want=$1; shift
	if "$R" --session-dir="$W/s" -l "$@" >"$W/bad.out" 2>"$W/bad.err"; then
		bad "'$*' succeeded"
	elif ! grep -q "$want" "$W/bad.err" || [ -s "$W/bad.out" ]; then
		bad "'$*': expected '$want'"; cat "$W/bad.err"
	else
		ok
	fi
}
badspec "the first profile's '{' has no '}'" { session:runA
badspec "only one profile in braces" { session:runA }
badspec "the second profile { } is empty" { session:runA } { }
badspec "'}' (word 1) has no '{'" } { session:runA }
badspec "a '{' (word 3) inside the first profile's braces" { session:runA { } { session:current }
badspec "a third '{' (word 7)" { session:runA } { session:current } { session:runA }
badspec "the second profile { }: .*no sample files" { session:runA } { session:current image:nothing_here }
badspec "the first profile { }: " { session:no_such_session } { session:current }
badspec "incompatible with -d/--details" -d { session:runA } { session:current }

# -c in -X and --json, on a call-graph session
if "$D" --session-dir="$W/cg" --ext-feature=callgraph:depth=32 -- "$CG" 800 >"$W/cg.log" 2>&1; then
	"$R" --session-dir="$W/cg" -c -X image:cg_tree >"$W/cg.xml" 2>"$W/cg.err"
	xmllint --noout "$W/cg.xml" && ok || { bad "-c -X is not well-formed XML"; head "$W/cg.xml" "$W/cg.err"; }
	python3 - "$W/cg.xml" <<'EOF' && ok || bad "-c -X content"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
names = {int(s.get("id")): s.get("name") for s in root.iter("symboldata")}
top = {names[int(s.get("idref"))]: s for b in root.findall("binary") for s in b.findall("symbol")}
# cg_tree: main -> mid -> leaf_b (x3) / leaf_c (tests/integration/cg_tree.c)
callers = [names[int(s.get("idref"))] for s in top["leaf_b"].find("callers").iter("symbol")]
callees = [names[int(s.get("idref"))] for s in top["mid"].find("callees").iter("symbol")]
assert "mid" in callers, callers
assert "leaf_b" in callees and "leaf_c" in callees, callees
assert int(top["leaf_b"].find("count").text) > 0
assert int(top["mid"].get("inclusive")) >= int(top["leaf_b"].get("inclusive"))
EOF
	"$R" --session-dir="$W/cg" -c --json image:cg_tree >"$W/cg.json" 2>"$W/cg.err"
	python3 - "$W/cg.json" <<'EOF' && ok || { bad "-c --json content"; head -30 "$W/cg.json"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "oprofile-ng-callgraph" and d["whole_stacks"]
s = {x["name"]: x for x in d["symbols"]}
assert "mid" in [c["name"] for c in s["leaf_b"]["callers"]]
assert {"leaf_b", "leaf_c"} <= {c["name"] for c in s["mid"]["callees"]}
assert sum(x["self"] for x in d["symbols"]) == d["self_total"]
assert all(x["inclusive"] >= x["self"] for x in d["symbols"])
EOF
else
	bad "oprofiled --ext-feature=callgraph failed: $(cat "$W/cg.log")"
fi

echo "report_diff: $npass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
rm -rf "$W"
exit 0
