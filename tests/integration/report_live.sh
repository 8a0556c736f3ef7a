#!/bin/sh
# report_live.sh - opreport on real profiles: runs programs under
# `core/oprofiled --session-dir=D -- prog` (cpu-clock, timer plugin) and
# checks what opreport makes of the sample files: the 3:1 demo at 75 %/25 %
# (+-2 points), demangled C++ names, dynamic symbols of a stripped PIE, a
# dlopen'd library's samples attributed to it, and a program at a path with
# spaces and braces reported under its real path.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
B=$OP_BUILDDIR/tests/data/report
W=$OP_BUILDDIR/tests/report_live.tmp
# what the build makes is never a reason to skip: a missing program is a failure
for x in "$D" "$R" "$OP_BUILDDIR/tools/op-demo" "$B/fx_cxx" "$B/fx_dyn" "$B/fx_dlopen" "$B/.libs/libfx.so"; do
	case $x in *.so) t=-f ;; *) t=-x ;; esac
	if [ ! $t "$x" ]; then
		echo "report_live: FAIL: $x is not built (make check builds it)"
		exit 1
	fi
done
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "report_live: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

profile() { # $1 = session dir, rest = command
	s=$1; shift
	if ! "$D" --session-dir="$s" -- "$@" >"$s.log" 2>&1; then
		echo "report_live: oprofiled failed for $*:"; cat "$s.log"; return 1
	fi
}

# percentage of symbol $2 in report $1 (first match)
pct_of() { awk -v s="$2" '$NF == s { print $2; exit }' "$1"; }
within() { # $1 value, $2 target, $3 tolerance
	awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { exit !(v != "" && v >= t - d && v <= t + d) }'
}

# 1. the bundled demo, 3:1
# (3 s of CPU time at 4 kHz: ~12000 samples, so a share's standard error is
# ~0.4 point; kernel and libc samples of the process are checked to stay small)
if profile "$W/demo" "$OP_BUILDDIR/tools/op-demo" 3000; then
	"$R" --session-dir="$W/demo" -l "$OP_BUILDDIR/tools/op-demo" >"$W/demo.txt" 2>"$W/demo.err"
	# -x: percentages of the program's own image (no libc/kernel noise of a loaded machine)
	"$R" --session-dir="$W/demo" -l -x "$OP_BUILDDIR/tools/op-demo" >"$W/demo_x.txt" 2>&1
	hot=$(pct_of "$W/demo_x.txt" op_demo_hot)
	cold=$(pct_of "$W/demo_x.txt" op_demo_cold)
	if within "$hot" 75 2 && within "$cold" 25 2; then ok
	else bad "op-demo: op_demo_hot $hot % / op_demo_cold $cold % of the image, expected 75/25 +-2"; cat "$W/demo_x.txt"; fi
	ahot=$(pct_of "$W/demo.txt" op_demo_hot)
	acold=$(pct_of "$W/demo.txt" op_demo_cold)
	awk -v h="${ahot:-0}" -v c="${acold:-0}" 'BEGIN { exit !(h + c >= 95) }' && ok ||
		{ bad "op-demo: the two functions hold only $ahot + $acold % of all the samples"; cat "$W/demo.txt"; }
	echo "op-demo: of the image op_demo_hot $hot %, op_demo_cold $cold %; of everything $ahot %, $acold %"
	grep -q "^Profiling through timer interrupt" "$W/demo.txt" && ok || bad "no timer header"
else
	bad "profiling op-demo"
fi

# 2. C++: demangled names
if profile "$W/cxx" "$B/fx_cxx" 1000; then
	"$R" --session-dir="$W/cxx" -l image:fx_cxx >"$W/cxx.txt" 2>&1
	grep -q "fx::Worker::spin(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, int)" "$W/cxx.txt" &&
		grep -q "fx::Box<int>::get(int) const" "$W/cxx.txt" && ok || { bad "C++ names not demangled"; cat "$W/cxx.txt"; }
	"$R" --session-dir="$W/cxx" -l -D smart image:fx_cxx | grep -q "fx::Worker::spin(std::string const&, int)" && ok ||
		bad "smart demangling"
else
	bad "profiling fx_cxx"
fi

# 3. stripped PIE: names from the dynamic symbol table
strip -o "$W/fx_stripped" "$B/fx_dyn"
if profile "$W/strip" "$W/fx_stripped" 1000; then
	"$R" --session-dir="$W/strip" -l image:fx_stripped >"$W/strip.txt" 2>&1
	hot=$(pct_of "$W/strip.txt" fx_hot)
	warm=$(pct_of "$W/strip.txt" fx_warm)
	if [ -n "$hot" ] && [ -n "$warm" ] && awk -v h="$hot" -v w="$warm" 'BEGIN { exit !(h > 2 * w) }'; then ok
	else bad "stripped PIE: fx_hot/fx_warm not resolved from .dynsym"; cat "$W/strip.txt"; fi
else
	bad "profiling the stripped PIE"
fi

# 4. dlopen'd library
if profile "$W/dl" "$B/fx_dlopen" "$B/.libs/libfx.so" 1000; then
	"$R" --session-dir="$W/dl" -l image:fx_dlopen >"$W/dl.txt" 2>&1
	# the image column is there when the rows span several images (as OProfile)
	if awk '$NF == "fx_lib_work" && $2 > 90 && (NF == 3 || $(NF-1) == "libfx.so") { f = 1 } END { exit !f }' "$W/dl.txt"; then ok
	else bad "dlopen'd library: fx_lib_work not attributed to libfx.so"; cat "$W/dl.txt"; fi
	"$R" --session-dir="$W/dl" >"$W/dl_sum.txt" 2>&1
	grep -q "libfx.so" "$W/dl_sum.txt" && ok || bad "libfx.so missing from the image summary"
else
	bad "profiling fx_dlopen"
fi

# 5. a path with spaces and braces
odd="$W/sp ace/{dep}/{root}/op demo"
mkdir -p "$odd" && cp "$OP_BUILDDIR/tools/op-demo" "$odd/op {x} demo"
if profile "$W/odd" "$odd/op {x} demo" 1000; then
	"$R" --session-dir="$W/odd" -l -f "$odd/op {x} demo" >"$W/odd.txt" 2>&1
	if grep -F -q "$odd/op {x} demo" "$W/odd.txt" && grep -q "op_demo_hot" "$W/odd.txt"; then ok
	else bad "odd path not reported under its real name"; cat "$W/odd.txt"; fi
	"$R" --session-dir="$W/odd" >"$W/odd_sum.txt" 2>&1
	grep -F -q "op {x} demo" "$W/odd_sum.txt" && ok || { bad "odd path: summary"; cat "$W/odd_sum.txt"; }
else
	bad "profiling the program at an odd path"
fi

# 6. --separate=cpu,thread: files per CPU and thread; classes and --merge
if "$D" --session-dir="$W/sep" --separate=cpu,thread -- "$OP_BUILDDIR/tools/op-demo" 1500 >"$W/sep.log" 2>&1; then
	ncpu=$(find "$W/sep/samples/current" -path '*op-demo/{dep}/*op-demo/TIMER*' | sed 's/.*\.//' | sort -u | wc -l)
	"$R" --session-dir="$W/sep" -l --merge=all "$OP_BUILDDIR/tools/op-demo" >"$W/sep_all.txt" 2>&1
	hot=$(pct_of "$W/sep_all.txt" op_demo_hot)
	within "$hot" 75 3 && ok || { bad "--merge=all: op_demo_hot $hot %"; cat "$W/sep_all.txt"; }
	"$R" --session-dir="$W/sep" -l --merge=tid,tgid "$OP_BUILDDIR/tools/op-demo" >"$W/sep_cpu.txt" 2>&1
	ncls=$(grep -c "^Samples on CPU" "$W/sep_cpu.txt")
	if [ "$ncpu" -gt 1 ]; then
		[ "$ncls" -eq "$ncpu" ] && ok || { bad "classes by CPU: $ncls columns for $ncpu CPUs"; cat "$W/sep_cpu.txt"; }
	else
		[ "$ncls" -eq 0 ] && ok || bad "one CPU used but $ncls CPU classes"
	fi
	"$R" --session-dir="$W/sep" -l --merge=cpu "$OP_BUILDDIR/tools/op-demo" >"$W/sep_tid.txt" 2>&1 &&
		grep -q "op_demo_hot" "$W/sep_tid.txt" && ok || { bad "--merge=cpu"; cat "$W/sep_tid.txt"; }
else
	bad "profiling with --separate=cpu,thread: $(cat "$W/sep.log")"
fi

# 7. the kernel image is named and resolved through the session's kallsyms snapshot
"$R" --session-dir="$W/demo" -l >"$W/all.txt" 2>"$W/all.err"
if grep -q " vmlinux " "$W/all.txt"; then
	grep " vmlinux " "$W/all.txt" | grep -q -v "(no symbols)" && ok || bad "kernel samples without symbols"
fi
# XML and JSON of a live session are well formed
if command -v python3 >/dev/null; then
	"$R" --session-dir="$W/demo" -X -d >"$W/live.xml" && python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$W/live.xml" && ok ||
		bad "live XML"
	"$R" --session-dir="$W/demo" --json -d >"$W/live.json" && python3 -c 'import sys, json; json.load(open(sys.argv[1]))' "$W/live.json" && ok ||
		bad "live JSON"
fi

echo "report_live: $npass passed, $fail failed"
# keep the work directory only when something failed (distclean leaves nothing)
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
