#!/bin/sh
# bench_perf.sh - the sample path's own cost (run by hand, not in make check).
# 1. offline: ns of CPU per record through walk/queue/sort/decode/deliver
#    (tests/bench/bench_perf_read, fake rings);
# 2. live: reader CPU per sample for a 1-thread spinner with cpu-clock at
#    RATE Hz: perf_probe --pid (our reader, with and without --record) against
#    `perf record -p` attached to the same spinner in the same run. Each tool
#    attaches for 1 s and for 3 s; the marginal cost (difference of CPU over
#    difference of samples) removes fixed start-up; medians of RUNS.
# Usage: tests/bench/bench_perf.sh [BUILDDIR] [RATE] [RUNS]
# SPDX-License-Identifier: MIT
set -u
B=${1:-${OP_BUILDDIR:-.}}
RATE=${2:-4000}
RUNS=${3:-5}
probe=$B/tests/integration/perf_probe
tmp=$(mktemp -d /tmp/bench_perf.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "== offline read path (CPU ns per record) =="
for a in "1000 1000 2" "5000 400 2" "1000 1000 8"; do
	"$B/tests/bench/bench_perf_read" $a | head -2 | tr '\n' ' '; echo
done

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# CPU (us) of a command and its reaped children; stderr to $ERRF
cpu_of() {
	python3 -c 'import os,sys,subprocess
p=subprocess.Popen(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=open(os.environ["ERRF"],"w"))
_,st,ru=os.wait4(p.pid,0)
print(int((ru.ru_utime+ru.ru_stime)*1e6))' "$@"
}

ours() { # seconds [--record file] -> "cpu_us samples", attached to $spinner
	s=$1; shift
	"$probe" pid --freq "$RATE" --seconds "$s" "$@" "$spinner" >"$tmp/o.out" 2>/dev/null
	echo "$(sed -n 's/^self_cpu_us=//p' "$tmp/o.out") $(sed -n 's/^watch_samples=//p' "$tmp/o.out")"
}

theirs() { # seconds -> "cpu_us samples" of perf record -p (plus a sleep)
	c=$(ERRF="$tmp/perf.err" cpu_of perf record -q -o "$tmp/perf.data" -F "$RATE" \
		-e cpu-clock -p "$spinner" -- sleep "$1")
	echo "$c $(perf script -i "$tmp/perf.data" -F ip 2>/dev/null | wc -l)"
}

marginal() { # "cpu1 s1" "cpu3 s3" -> us per sample
	echo "$1 $2" | awk '{ if ($4 > $2) printf "%.3f\n", ($3-$1)/($4-$2); else print "nan" }'
}

"$probe" spin 100000 &
spinner=$!
trap 'kill $spinner; rm -rf "$tmp"' EXIT
sleep 0.2

echo "== live, cpu-clock at $RATE Hz, marginal CPU per sample (1 s vs 3 s attached), $RUNS runs =="
: >"$tmp/runs"
for i in $(seq "$RUNS"); do
	echo "ours 1 $(ours 1)" >>"$tmp/runs"
	echo "ours 3 $(ours 3)" >>"$tmp/runs"
	rm -f "$tmp/r1.oprec" "$tmp/r3.oprec" # --record makes a new file
	echo "rec 1 $(ours 1 --record "$tmp/r1.oprec")" >>"$tmp/runs"
	echo "rec 3 $(ours 3 --record "$tmp/r3.oprec")" >>"$tmp/runs"
	echo "perf 1 $(theirs 1)" >>"$tmp/runs"; cp "$tmp/perf.data" "$tmp/perf1.data"
	echo "perf 3 $(theirs 3)" >>"$tmp/runs"
done
med() { awk -v t="$1" -v s="$2" -v f="$3" '$1==t && $2==s {print $f}' "$tmp/runs" | median; }
for t in ours rec perf; do
	c1=$(med $t 1 3); c3=$(med $t 3 3); n1=$(med $t 1 4); n3=$(med $t 3 4)
	m=$(echo "$c1 $c3 $n1 $n3" | awk '{ if ($4 > $3) printf "%.3f", ($2-$1)/($4-$3); else printf "nan" }')
	case $t in
	ours) name="our reader (perf_probe --pid)";;
	rec) name="our reader + --record      ";;
	perf) name="perf record -p            ";;
	esac
	echo "$name: 1 s: $c1 us CPU / $n1 samples; 3 s: $c3 us / $n3; marginal $m us/sample"
done
echo "files for 3 s: record $(wc -c <"$tmp/r3.oprec") bytes, perf.data $(wc -c <"$tmp/perf.data") bytes"
