#!/bin/sh
# bench_annotate.sh - opannotate --source and --assembly on a big session of
# real programs (gcc compiling the report library's sources, and opreport
# -d reading a session: a -g build, so that --source has files), recorded by
# oprofiled at 10 kHz; beside `perf annotate --stdio` on the same workload
# recorded by perf at 10 kHz: wall time and peak RSS (/usr/bin/time -v).
# Then the in-process disassembly against an objdump child per symbol (what
# OProfile 1.x ran): the time of `objdump -d --start-address --stop-address`
# over the symbols opannotate -a printed.
# Usage: tests/bench/bench_annotate.sh [BUILD_DIR] [SECONDS of workload, default 100:
#        ~1 M samples at 10 kHz]
# Not part of make check.
# SPDX-License-Identifier: MIT
set -u
build=$(cd "${1:-.}" && pwd)
secs=${2:-100}
src=$(cd "$(dirname "$0")/../.." && pwd)
W=$build/tests/bench_annotate.tmp
A=$build/tools/opannotate/opannotate
R=$build/tools/opreport/opreport
D=$build/core/oprofiled
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$build/plugins/.libs}
for b in "$A" "$R" "$D" /usr/bin/time; do
	[ -x "$b" ] || { echo "bench_annotate: $b is missing"; exit 1; }
done
command -v perf >/dev/null || { echo "bench_annotate: perf is not installed"; exit 1; }
rm -rf "$W" && mkdir -p "$W"

# a small session for opreport to read in the workload
"$D" --session-dir="$W/fixture" -- "$build/tools/op-demo" 300 >/dev/null 2>&1
cat >"$W/work.sh" <<EOW
#!/bin/sh
end=\$((\$(date +%s) + $secs))
while [ \$(date +%s) -lt \$end ]; do
	for f in $src/tools/opreport/opreport_output.c $src/tools/opreport/opreport_session.c; do
		gcc -O2 -I$build -I$src/lib -I$src/sdk -I$src/tools/opreport -c "\$f" -o /dev/null
	done
	$R --session-dir=$W/fixture -l -d >/dev/null 2>&1
	$R --session-dir=$W/fixture -X -d >/dev/null 2>&1
done
EOW
chmod +x "$W/work.sh"

measure() { # $1 = label, rest = command; prints "label wall_s peak_rss_MiB"
	label=$1; shift
	/usr/bin/time -v "$@" >"$W/$label.out" 2>"$W/$label.time"
	rc=$?
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$W/$label.time")
	rss=$(awk -F': ' '/Maximum resident/ { printf "%.1f", $2 / 1024 }' "$W/$label.time")
	printf '%-34s %9s s %9s MiB  (exit %d, %d lines)\n' "$label" "$wall" "$rss" "$rc" "$(wc -l <"$W/$label.out")"
}

echo "recording $secs s of the workload with oprofiled (TIMER:100000, 10 kHz) ..."
"$D" --session-dir="$W/s" --events=TIMER:100000 -- "$W/work.sh" >"$W/oprofiled.log" 2>&1
echo "recording $secs s of the workload with perf record -e cpu-clock -F 10000 ..."
perf record -q -e cpu-clock -F 10000 -o "$W/perf.data" -- "$W/work.sh" >"$W/perf.log" 2>&1
nop=$("$R" --session-dir="$W/s" 2>/dev/null | awk '/^ *[0-9]+ +[0-9.]+ /{ s += $1 } END { print s + 0 }')
nperf=$(perf report -i "$W/perf.data" --stdio 2>/dev/null | awk '/^# Samples:/ { print $3; exit }')
echo "samples: oprofiled $nop, perf $nperf"
echo
printf '%-34s %11s %13s\n' "" "wall" "peak RSS"
measure "opannotate --source" "$A" --session-dir="$W/s" --source
measure "opannotate --assembly" "$A" --session-dir="$W/s" --assembly
measure "opannotate --assembly --source" "$A" --session-dir="$W/s" --assembly --source
measure "perf annotate --stdio" perf annotate -i "$W/perf.data" --stdio
measure "opreport -l (reference)" "$R" --session-dir="$W/s" -l

# objdump child per symbol over what opannotate -a disassembled
awk '/^ *:[^ ].*:     file format / { sub(/^ *:/, ""); sub(/:     file format.*/, ""); img = $0; next }
     /^[0-9a-f]+ <.*>:/ { if (s != "") print img "\t" s "\t" e; s = $1; e = "" ; next }
     /^ *[0-9]* *[0-9.]* *: *[0-9a-f]+:\t/ { a = $0; sub(/^[^:]*: */, "", a); sub(/:.*/, "", a); e = a }
     END { if (s != "") print img "\t" s "\t" e }' "$W/opannotate --assembly.out" |
	awk -F'\t' '$1 ~ /^\// && $3 != ""' >"$W/ranges"
nsym=$(wc -l <"$W/ranges")
start=$(date +%s.%N)
while IFS="$(printf '\t')" read -r img s e; do
	objdump -d --no-show-raw-insn --start-address=0x$s --stop-address=$(printf '0x%x' $((0x$e + 16))) "$img" >/dev/null 2>&1
done <"$W/ranges"
end=$(date +%s.%N)
echo
echo "in-process disassembly: opannotate --assembly above ($nsym ELF symbols disassembled)"
echo "objdump child per symbol (OProfile 1.x): $nsym objdump runs, $(echo "$end - $start" | bc) s"
echo "work directory: $W"
