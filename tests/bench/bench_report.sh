#!/bin/sh
# bench_report.sh - opreport cost on a big session beside perf report.
#  1. synthetic session: >= 10 M samples over >= 100 images (real ELF files
#     from /usr/lib and /usr/bin, keys inside their .text), written with the
#     real odb writer (tests/data/report/mkfixture); time and peak RSS of
#     `opreport` (image summary) and `opreport -l`.
#  2. a live multi-process workload run under oprofiled and then under
#     `perf record -e cpu-clock` (both launching it, both at 4 kHz): time and
#     peak RSS of `opreport -l` and `perf report --stdio` on their samples.
# Usage: tests/bench/bench_report.sh [BUILD_DIR] [SECONDS]   (run by hand)
# SPDX-License-Identifier: MIT
set -u
build=$(cd "${1:-.}" && pwd)
secs=${2:-20}
W=$build/tests/bench_report.tmp
rm -rf "$W" && mkdir -p "$W"
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$build/plugins/.libs}
MK=$build/tests/data/report/mkfixture
R=$build/tools/opreport/opreport
for b in "$MK" "$R" "$build/core/oprofiled"; do
	[ -x "$b" ] || { echo "bench_report: $b missing (make && make check builds it)"; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench_report: /usr/bin/time missing (apt-get install time)"; exit 1; }

measure() { # $1 = label, rest = command; prints wall seconds and peak RSS
	label=$1; shift
	/usr/bin/time -f '%e %M' -o "$W/time" "$@" >"$W/out.$label" 2>"$W/err.$label"
	rc=$?
	read -r wall rss <"$W/time"
	printf '%-44s %8s s %9s KiB  rc=%s  (%s lines)\n' "$label" "$wall" "$rss" "$rc" "$(wc -l <"$W/out.$label")"
}

# ---- 1. synthetic session --------------------------------------------------
T=$(printf '\t')
apps=$(ls /usr/bin/* 2>/dev/null | while read -r f; do
	[ -f "$f" ] && [ ! -L "$f" ] && readelf -SW "$f" 2>/dev/null | grep -q ' \.text ' && echo "$f"
done | head -20)
libs=$(ls /usr/lib/x86_64-linux-gnu/*.so* 2>/dev/null | while read -r f; do
	[ -f "$f" ] && [ ! -L "$f" ] && readelf -SW "$f" 2>/dev/null | grep -q ' \.text ' && echo "$f"
done | head -120)
nimg=0
{
	echo "dir${T}current"
	i=0
	for app in $apps; do
		# the app itself plus 6 libraries each
		set -- $(echo "$libs" | awk -v i="$i" 'NR > i * 6 && NR <= (i + 1) * 6')
		for img in "$app" "$@"; do
			text=$(readelf -SW "$img" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") { print $(i + 3), $(i + 4); exit } }')
			off=$((0x${text% *}))
			size=$((0x${text#* }))
			echo "file${T}$app${T}$img${T}TIMER${T}0${T}0${T}all${T}all${T}all"
			awk -v off="$off" -v size="$size" -v seed="$i$img" 'BEGIN {
				srand(length(seed) * 7919 + off % 104729)
				for (k = 0; k < 3000; k++)
					printf "s\t0x%x\t%d\n", off + int(rand() * size), 1 + int(rand() * 50)
			}'
		done
		i=$((i + 1))
	done
} >"$W/script"
nimg=$(grep -c "^file" "$W/script")
nsamples=$(awk -F'\t' '$1 == "s" { s += $3 } END { print s }' "$W/script")
start=$(date +%s.%N)
"$MK" "$W/big" <"$W/script" || { echo "bench_report: mkfixture failed"; exit 1; }
echo "synthetic session: $nimg sample files ($(grep '^file' "$W/script" | cut -f3 | sort -u | wc -l) distinct images), $nsamples samples, written in $(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo '?') s"
echo "--- opreport on the synthetic session"
measure "opreport (image summary)" "$R" --session-dir="$W/big"
measure "opreport -l" "$R" --session-dir="$W/big" -l
measure "opreport -l --merge=lib" "$R" --session-dir="$W/big" -l --merge=lib
measure "opreport --json -l" "$R" --session-dir="$W/big" --json -l

# ---- 2. live workload under oprofiled, then under perf record ---------------
cat >"$W/workload.sh" <<'EOF'
end=$(($(date +%s) + $1))
while [ "$(date +%s)" -lt "$end" ]; do
	head -c 4000000 /dev/urandom | gzip -1 | sha256sum >/dev/null
	seq 1 200000 | sort -r | md5sum >/dev/null
	python3 -c 'import json; json.dumps([list(range(200)) for _ in range(300)])' 2>/dev/null
	perl -e 'my $s = 0; $s += $_ * $_ for 1 .. 300000;' 2>/dev/null
	find /usr/lib -maxdepth 2 -name '*.so*' 2>/dev/null | xz -1 | wc -c >/dev/null
done
EOF
# launch mode for both (follows every forked child), one after the other
"$build/core/oprofiled" --session-dir="$W/live" -- sh "$W/workload.sh" "$secs" >"$W/oprofiled.log" 2>&1
perf record -q -e cpu-clock -F 4000 -o "$W/perf.data" -- sh "$W/workload.sh" "$secs" >"$W/perf.log" 2>&1
echo "--- live workload (${secs} s, several processes), run once under oprofiled and once under perf record, both at 4 kHz"
opsamples=$("$R" --session-dir="$W/live" 2>/dev/null | awk '/^---/ { f = 1; next } f && /^ *[0-9]/ { s += $1 } END { print s + 0 }')
echo "perf.data: $(du -k "$W/perf.data" | cut -f1) KiB, $(perf report -i "$W/perf.data" --stdio 2>/dev/null | awk '/^# Samples:/ {print $3; exit}') samples; oprofiled session: $(du -sk "$W/live/samples" | cut -f1) KiB, $opsamples samples"
measure "opreport -l (live session)" "$R" --session-dir="$W/live" -l
measure "perf report --stdio --sort dso,sym" perf report -i "$W/perf.data" --stdio --sort dso,sym
measure "opreport (image summary, live)" "$R" --session-dir="$W/live"
measure "perf report --stdio --sort dso" perf report -i "$W/perf.data" --stdio --sort dso
