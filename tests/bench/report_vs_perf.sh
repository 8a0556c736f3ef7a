#!/bin/sh
# report_vs_perf.sh - cross-check: oprofiled and `perf record -e cpu-clock`
# sample the same running workload at the same time (both attached by pid);
# prints opreport's and perf report's top-5 symbols side by side and fails
# when the top symbols' shares differ by more than 3 points.
# Usage: tests/bench/report_vs_perf.sh [BUILD_DIR] [WORKLOAD [ARGS...]]
#        (default workload: tools/op-demo 4000)
# SPDX-License-Identifier: MIT
set -u
build=$(cd "${1:-.}" && pwd)
[ $# -gt 0 ] && shift
W=$build/tests/report_vs_perf.tmp
rm -rf "$W" && mkdir -p "$W"
if [ $# -eq 0 ]; then set -- "$build/tools/op-demo" 4000; fi
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$build/plugins/.libs}
for b in "$build/core/oprofiled" "$build/tools/opreport/opreport" "$1"; do
	[ -x "$b" ] || { echo "report_vs_perf: $b is missing: build first (make; make check builds the fixtures)"; exit 1; }
done
command -v perf >/dev/null || { echo "report_vs_perf: perf is not installed"; exit 1; }

"$@" >/dev/null &
wpid=$!
sleep 0.2
"$build/core/oprofiled" --session-dir="$W/session" --pid="$wpid" >"$W/oprofiled.log" 2>&1 &
opid=$!
perf record -q -e cpu-clock -F 4000 -p "$wpid" -o "$W/perf.data" >"$W/perf.log" 2>&1 &
ppid=$!
wait "$wpid"
# both stop by themselves when the process exits; make sure they do
sleep 1
kill -INT "$opid" "$ppid" 2>/dev/null
wait "$opid" "$ppid" 2>/dev/null

image=$(basename "$1")
"$build/tools/opreport/opreport" --session-dir="$W/session" -l >"$W/opreport.txt" 2>"$W/opreport.err" ||
	{ echo "report_vs_perf: opreport failed:"; cat "$W/opreport.err" "$W/oprofiled.log"; exit 1; }
perf report -i "$W/perf.data" --stdio --sort sym 2>/dev/null >"$W/perf.txt"

# symbol -> percent, top 5 of each
awk 'f && NF >= 4 { printf "%s %s\n", $NF, $2; if (++n == 5) exit } /^samples/ { f = 1 }' \
	"$W/opreport.txt" >"$W/op.top"
awk '/^ *[0-9.]+%/ { p = $1; sub("%", "", p); s = $NF; printf "%s %s\n", s, p; if (++n == 5) exit }' \
	"$W/perf.txt" >"$W/perf.top"

echo "workload: $*"
echo "samples: opreport $(awk '/^samples/{f=1; next} f {s += $1} END {print s}' "$W/opreport.txt"), perf $(perf report -i "$W/perf.data" --stdio 2>/dev/null | awk '/^# Samples:/ {print $3; exit}')"
printf '%-32s %10s   %-32s %10s\n' "opreport symbol" "%" "perf symbol" "%"
paste -d' ' "$W/op.top" "$W/perf.top" | awk '{ printf "%-32s %10s   %-32s %10s\n", $1, $2, $3, $4 }'

# the top symbols must agree within 3 points
rc=0
while read -r sym pct; do
	other=$(awk -v s="$sym" '$1 == s { print $2 }' "$W/perf.top")
	[ -n "$other" ] || continue
	if ! awk -v a="$pct" -v b="$other" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 3) }'; then
		echo "report_vs_perf: $sym: opreport $pct % vs perf $other %: more than 3 points apart"
		rc=1
	fi
done <"$W/op.top"
top_op=$(head -1 "$W/op.top" | cut -d' ' -f1)
top_perf=$(head -1 "$W/perf.top" | cut -d' ' -f1)
[ "$top_op" = "$top_perf" ] || { echo "report_vs_perf: top symbols differ ($top_op vs $top_perf)"; rc=1; }
[ $rc -eq 0 ] && echo "report_vs_perf: agree (top symbol $top_op, shares within 3 points)"
exit $rc
