#!/bin/sh
# bench_opcount.sh - (1) cost per read of libopcount's read paths (fast vs
# syscall, 10^5 reads while counting); (2) opcount vs perf stat on the same
# workloads, same events: a markdown table with the relative difference.
# Run by hand from a build dir: sh tests/bench/bench_opcount.sh [runs]
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPC=$B/tools/opcount
W=$B/tests/bench/count_workloads
R=$B/tests/bench/bench_opcount_read
runs=${1:-3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for f in "$OPC" "$W" "$R"; do
	[ -x "$f" ] || { echo "missing $f: make tools/opcount tests/bench/count_workloads tests/bench/bench_opcount_read"; exit 1; }
done
command -v perf >/dev/null || { echo "perf not installed"; exit 1; }

echo "## read cost (10^5 reads of a live page-fault counter)"
"$R" 100000 || echo "bench_opcount_read FAILED"
echo

EV=task-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults
echo "## opcount vs perf stat (median of $runs runs each, same workload, -e $EV)"
echo
echo "| workload | event | perf stat | opcount | diff % | perf stat run spread % | opcount run spread % |"
echo "|---|---|---:|---:|---:|---:|---:|"
for wl in "touch 100000" "fork 4 25000" "pingpong 20000" "spin 500" "threads 4 10000"; do
	: >"$T/p"; : >"$T/o"
	i=0
	while [ $i -lt "$runs" ]; do
		# shellcheck disable=SC2086
		perf stat -x, -e "$EV" -o "$T/p.$i" -- "$W" $wl >/dev/null 2>&1
		# perf -x, lines: value,unit,event,run,pct,...  (task-clock in msec)
		awk -F, '!/^#/ && NF > 3 { v = $1; if ($3 == "task-clock") v = int($1 * 1e6 + 0.5); print $3, v }' \
			"$T/p.$i" >>"$T/p"
		# shellcheck disable=SC2086
		"$OPC" -e "$EV" --csv -o "$T/o.$i" -- "$W" $wl >/dev/null 2>&1
		awk -F, '$1 == "total" { print $5, $6 }' "$T/o.$i" >>"$T/o"
		i=$((i + 1))
	done
	for e in $(echo "$EV" | tr , ' '); do
		p=$(awk -v e="$e" '$1 == e { print $2 }' "$T/p" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		o=$(awk -v e="$e" '$1 == e { print $2 }' "$T/o" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		d=$(awk -v p="$p" -v o="$o" 'BEGIN { if (p == 0 && o == 0) print "0.00"; else if (p == 0) print "n/a"; else printf "%+.2f", 100 * (o - p) / p }')
		ps=$(awk -v e="$e" '$1 == e { print $2 }' "$T/p" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (hi == 0) print "0.0"; else printf "%.1f", 100 * (hi - lo) / hi }')
		os=$(awk -v e="$e" '$1 == e { print $2 }' "$T/o" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (hi == 0) print "0.0"; else printf "%.1f", 100 * (hi - lo) / hi }')
		echo "| $wl | $e | $p | $o | $d | $ps | $os |"
	done
done
