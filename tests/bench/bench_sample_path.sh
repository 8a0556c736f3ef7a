#!/bin/sh
# bench_sample_path.sh - the sample path beside perf record, in the same run.
# Run by hand from the build directory (root, or perf_event_paranoid <= 0 for
# the system-wide parts); see tests/bench/README.md.
#   bench_sample_path.sh overhead [RUNS=11] [MILLIONS=3000]
#       a fixed-work program alone, under tests/bench/bare_sampler (the
#       kernel's floor: same cpu-clock records, rings nobody reads), under
#       oprofiled and under perf record -e cpu-clock with the same period,
#       at 1, 4 and 10 kHz, runs interleaved (each round's workload on one
#       CPU, the CPUs in turn; OVERHEAD_PIN=none: unpinned); medians of the program's own
#       work-loop time (the sampling cost) and of the end-to-end time (with
#       start-up and shutdown), slowdowns vs alone, ours vs floor and perf
#   bench_sample_path.sh daemon_cost [SECONDS=8]
#       system-wide at 10 kHz with both CPUs busy: daemon CPU seconds per
#       million samples and lost samples, oprofiled beside perf record -a;
#       daemon RSS (steady state) and bytes on disk per million samples
#   bench_sample_path.sh pipeline [RUNS=5] [COPIES=50]
#       two recorded system-wide streams - a realistic mix of real programs
#       and libraries (images_workload.sh) and process churn (the stress
#       case); PIPELINE_STREAMS="images churn" picks - each made COPIES
#       times longer (replay_loop) and replayed through sync + trans +
#       sfile from the page cache: samples/s of the pipeline alone (long
#       replay minus one-copy replay, so the fixed start-up cost drops out;
#       and the daemon's own replay_cpu_ns) and of the whole run, perf
#       report's cost per sample on the same workload, the stage split of
#       tests/bench/bench_sync (CALLGRIND=1: also the instruction count of
#       one replay; CALLGRIND_KEEP=PREFIX keeps its profile and recording);
#       PIPELINE_STREAM_DIR=DIR keeps each recorded stream as DIR/NAME.data
#       and replays one found there instead of recording anew (two builds
#       measured on the same streams); PIPELINE_EXTRAS=no leaves out perf
#       report and bench_sync
#   bench_sample_path.sh churn [N=2000]
#       tests/integration/churn.sh's workload: share of user samples
#       attributed to an image, oprofiled and perf report
#   bench_sample_path.sh all
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
FIXED=$B/tests/integration/sp_fixed
CHURN=$B/tests/integration/sp_churn
DUMP=$B/tests/integration/sp_dump
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-sp.XXXXXX")
trap 'rm -rf "$T"' EXIT
for p in "$OPD" "$FIXED" "$CHURN" "$DUMP"; do
	[ -x "$p" ] || { echo "missing $p: make check (or make $p) first"; exit 2; }
done
command -v perf > /dev/null || { echo "perf is not installed"; exit 2; }

ns() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# utime + stime of a live process, in seconds
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
stat_of() { sed -n '/-- OProfile-ng Statistics --/,$p' "$1" | grep -F "$2" | tail -1 | sed 's/.*: //'; }

overhead() {
	runs=${1:-11} m=${2:-3000}
	bare=$B/tests/bench/bare_sampler
	[ -x "$bare" ] || { echo "missing $bare: make tests/bench/bare_sampler first"; return 2; }
	# the daemon itself, not libtool's wrapper script (a shell and two seds per start)
	opd=$OPD opd_lib=${LD_LIBRARY_PATH:-}
	if [ -x "$B/core/.libs/oprofiled" ] && [ -d "$B/lib/.libs" ]; then
		opd=$B/core/.libs/oprofiled opd_lib=$B/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	fi
	ncpu=$(nproc)
	echo "== overhead: sp_fixed $m (fixed work), $runs interleaved runs per cell, medians in ms"
	[ "${OVERHEAD_PIN:-turns}" = none ] || echo "   the workload runs on CPU (round mod $ncpu) in every cell of a round (OVERHEAD_PIN=none: unpinned)"
	echo "   floor = tests/bench/bare_sampler: the same cpu-clock records on every CPU, rings nobody reads"
	for hz in 1000 4000 10000; do
		period=$((1000000000 / hz))
		for k in a f o p; do : > "$T/w$k.$hz"; : > "$T/c$k.$hz"; : > "$T/e$k.$hz"; done
		i=0
		while [ $i -lt "$runs" ]; do
			# the workload on one CPU per round, in turn: the CPUs of a VM
			# differ (interrupts, neighbours), and which one a command lands
			# on depends on what else runs as it starts (OVERHEAD_PIN=none:
			# leave it to the scheduler)
			pin=
			[ "${OVERHEAD_PIN:-turns}" = none ] || pin="taskset -c $((i % ncpu))"
			for k in a f o p; do
				rm -rf "$T/s" "$T/perf.data" "$T/ns"
				t0=$(ns)
				case $k in
				a) SP_FIXED_TIME="$T/ns" $pin "$FIXED" "$m" ;;
				f) SP_FIXED_TIME="$T/ns" "$bare" -c $period -- $pin "$FIXED" "$m" 2> "$T/bare.err" ;;
				o) SP_FIXED_TIME="$T/ns" LD_LIBRARY_PATH=$opd_lib "$opd" --session-dir="$T/s" \
					--events=TIMER:$period -- $pin "$FIXED" "$m" 2> /dev/null ;;
				p) SP_FIXED_TIME="$T/ns" perf record -q -e cpu-clock -c $period -o "$T/perf.data" \
					-- $pin "$FIXED" "$m" 2> /dev/null ;;
				esac
				t1=$(ns)
				echo $(((t1 - t0) / 1000)) >> "$T/e$k.$hz"
				awk '{ print $1 / 1000 }' "$T/ns" >> "$T/w$k.$hz"
				awk '{ print $2 / 1000 }' "$T/ns" >> "$T/c$k.$hz"
				if [ $k = f ] && ! grep -q ' 0 lost' "$T/bare.err"; then
					echo "warning: the floor lost samples: $(cat "$T/bare.err")"
				fi
				if [ $k = o ] && [ "$hz" = 10000 ]; then
					l=$(stat_of "$T/s/samples/oprofiled.log" "records lost by the kernel")
					[ "${l:-0}" = 0 ] || echo "warning: oprofiled lost $l records at $hz Hz"
				fi
			done
			i=$((i + 1))
		done
	done
	# slowdowns: median over the rounds of each run against the alone run
	# of the same round (cancels the VM's slow drifts); times: medians
	for what in w c e; do
		case $what in
		w) echo "-- (a) the workload's own wall time (its work loop, SP_FIXED_TIME): the sampling cost" ;;
		c) echo "-- (a') the workload's own CPU time (its work loop): sampling cost charged to it, without preemption" ;;
		e) echo "-- (b) end to end (fork to exit): adds start-up and shutdown" ;;
		esac
		printf "%-7s %9s %9s %9s %9s %8s %8s %8s %11s %10s\n" rate alone floor oprofiled perf \
			floor% ours% perf% ours-floor ours/perf
		for hz in 1000 4000 10000; do
			paste "$T/${what}a.$hz" "$T/${what}f.$hz" "$T/${what}o.$hz" "$T/${what}p.$hz" > "$T/rows"
			for col in 1 2 3 4; do
				awk -v c=$col '{ print $c }' "$T/rows" | median
			done > "$T/med"
			for col in 2 3 4; do
				awk -v c=$col '{ print 100 * ($c - $1) / $1 }' "$T/rows" | median
			done > "$T/pct"
			awk '{ print 100 * ($3 - $2) / $1 }' "$T/rows" | median >> "$T/pct"
			awk -v hz=$hz 'NR == FNR { m[FNR] = $1; next } { q[FNR] = $1 } END {
				printf "%-7s %9.1f %9.1f %9.1f %9.1f %+7.2f%% %+7.2f%% %+7.2f%% %+10.2f%% %10s\n",
				       hz "Hz", m[1] / 1000, m[2] / 1000, m[3] / 1000, m[4] / 1000, q[1], q[2], q[3],
				       q[4], (q[3] > 0) ? sprintf("%.2f", q[2] / q[3]) : "-" }' "$T/med" "$T/pct"
		done
		paired "$what"
	done
	# one line per figure for scripts (compare_builds.sh): medians in ms
	for hz in 1000 4000 10000; do
		for what in w:wall e:end-to-end; do
			for k in a:alone o:oprofiled; do
				v=$(awk '{ print $1 / 1000 }' "$T/${what%%:*}${k%%:*}.$hz" | median)
				echo "RESULT overhead ${hz}Hz ${what#*:} ${k#*:} $v"
			done
		done
	done
}

# ours minus perf and ours minus the floor, per round (each against the
# same round's alone run): median, a distribution-free 95 % confidence
# interval of that median (order statistics of the sign test) and the
# rounds in which ours cost no more
paired() {
	for hz in 1000 4000 10000; do
		for other in p:perf f:floor; do
			paste "$T/${1}a.$hz" "$T/${1}o.$hz" "$T/${1}${other%%:*}.$hz" |
				awk '{ print 100 * ($2 - $3) / $1 }' | sort -n |
				awk -v hz=$hz -v who="${other#*:}" '{ d[NR] = $1; le += ($1 <= 0) } END {
					n = NR; k = 0
					# largest k with P(Binomial(n, 1/2) < k) <= 2.5 %
					for (j = 1; j <= n / 2; j++) {
						c = 0; b = 1
						for (i = 0; i < j; i++) { c += b; b = b * (n - i) / (i + 1) }
						if (c / 2 ^ n <= 0.025) k = j
					}
					med = (n % 2) ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2
					if (k)
						ci = sprintf("[%+.2f%%, %+.2f%%]", d[k], d[n - k + 1])
					else
						ci = "(too few rounds)"
					printf "   ours - %-5s at %-6s median %+6.2f%%  95%% CI %s  ours <= %s in %d of %d rounds\n",
					       who, hz "Hz:", med, ci, who, le, n }'
		done
	done
}

daemon_cost() {
	secs=${1:-8}
	echo "== daemon cost: system-wide cpu-clock 10 kHz, both CPUs busy (2 x sp_fixed), $secs s each"
	for tool in oprofiled perf; do
		rm -rf "$T/s" "$T/perf.data"
		"$FIXED" 100000 & w1=$!
		"$FIXED" 100000 & w2=$!
		if [ $tool = oprofiled ]; then
			"$OPD" --session-dir="$T/s" --system-wide --events=TIMER:100000 2> "$T/err" &
		else
			perf record -q -a -e cpu-clock -c 100000 -o "$T/perf.data" 2> "$T/err" &
		fi
		pid=$!
		sleep $((secs / 2))
		rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
		sleep $((secs - secs / 2))
		cpu=$(cpu_of $pid)
		if [ $tool = oprofiled ]; then kill -TERM $pid; else kill -INT $pid; fi
		wait $pid
		kill $w1 $w2; wait $w1 $w2 2> /dev/null
		if [ $tool = oprofiled ]; then
			n=$(stat_of "$T/s/samples/oprofiled.log" "Nr. samples received:")
			lost=$(stat_of "$T/s/samples/oprofiled.log" "records lost by the kernel")
			disk=$(du -sb "$T/s/samples/current" | cut -f1)
		else
			perf report -i "$T/perf.data" --stats > "$T/stats" 2> /dev/null
			n=$(awk '/SAMPLE events:/ { print $3; exit }' "$T/stats")
			lost=$(awk '/LOST_SAMPLES events:|LOST events:/ { s += $3 } END { print s + 0 }' "$T/stats")
			disk=$(stat -c %s "$T/perf.data")
		fi
		awk -v t=$tool -v n="${n:-0}" -v c="$cpu" -v l="${lost:-0}" -v r="$rss" -v d="$disk" 'BEGIN {
			printf "%-9s samples %8d  CPU %6.2f s = %6.3f s per million samples  lost %d  RSS %.1f MiB  disk %.2f MB = %.2f MB per million samples\n",
			       t, n, c, n ? c * 1e6 / n : 0, l, r / 1024, d / 1e6, n ? d / n : 0 }'
	done
}

# the two workloads of the pipeline: a realistic mix of real programs and
# libraries (tests/bench/images_workload.sh, two copies: both CPUs busy),
# and process churn (1500 fork+exec of 1 ms children) beside two busy CPUs
wl_images() {
	sh "$T/iw/workload.sh" 8 & w1=$!
	sh "$T/iw/workload.sh" 8
	wait $w1
}
wl_churn() {
	"$CHURN" 1500 1000 > /dev/null
	"$FIXED" 1500 & w1=$!
	"$FIXED" 1500
	wait $w1
}

# pipeline_stream NAME RUNS COPIES: record workload wl_NAME system-wide at
# 4 kHz, replay it COPIES times over, compare with perf report
pipeline_stream() {
	name=$1 runs=$2 copies=$3 kept=${PIPELINE_STREAM_DIR:+$PIPELINE_STREAM_DIR/$1.data}
	rm -rf "$T/s" "$T/rec.data" "$T/long.data"
	if [ -n "$kept" ] && [ -s "$kept" ]; then
		# a stream recorded before: its replay makes the same session
		cp "$kept" "$T/rec.data" || return 1
		"$OPD" --session-dir="$T/s" --events=TIMER:250000 --replay="$T/rec.data" 2> /dev/null
	else
		"$OPD" --session-dir="$T/s" --system-wide --events=TIMER:250000 --record="$T/rec.data" 2> /dev/null &
		pid=$!
		sleep 1
		wl_$name
		kill -TERM $pid; wait $pid
		if [ -n "$kept" ]; then
			cp "$T/rec.data" "$kept" || return 1
		fi
	fi
	n=$(stat_of "$T/s/samples/oprofiled.log" "Nr. samples received:")
	"$DUMP" "$T/s/samples/current" > "$T/dump"
	files=$(awk '$1 == "TOTAL" { print $2 }' "$T/dump")
	keys=$(awk '$1 != "TOTAL" { s += $2 } END { print s }' "$T/dump")
	# distinct images: the last {root}/{kern}/{anon:...} part of each file's path
	images=$(awk '$1 != "TOTAL" { p = $3; sub(/\/[^\/]*$/, "", p); i = split(p, c, "/{dep}/"); print c[i] }' "$T/dump" |
		sed 's/^{anon:\([^}]*\)}.*/{anon:\1}/' | sort -u | wc -l)
	mmaps=$(stat_of "$T/s/samples/oprofiled.log" "Nr. mmap records:")
	echo "-- $name stream: $(stat -c %s "$T/rec.data") bytes, $n samples, $files sample files," \
		"$images distinct images, $keys distinct (file, offset) keys, ${mmaps:-?} mmap records"
	# a long stream: the recording $copies times (tests/bench/replay_loop)
	"$loop" "$T/rec.data" "$T/long.data" "$copies" || return 1
	cat "$T/rec.data" "$T/long.data" > /dev/null # page cache
	# the replay of one copy holds the fixed cost (start-up: plugins, kallsyms
	# snapshot; shutdown: msync, close) plus one copy; the long one the same
	# fixed cost plus $copies copies: the difference is the pipeline alone
	rm -rf "$T/r"
	"$OPD" --session-dir="$T/r" --events=TIMER:250000 --replay="$T/rec.data" 2> /dev/null # creates the files
	: > "$T/c1"; : > "$T/cn"; : > "$T/ci"
	i=0
	while [ $i -lt "$runs" ]; do
		for f in rec long; do
			/usr/bin/time -f "%U %S" -o "$T/time" "$OPD" --session-dir="$T/r" --append \
				--events=TIMER:250000 --replay="$T/$f.data" 2> /dev/null
			[ $f = rec ] && o=$T/c1 || o=$T/cn
			awk '{ print $1 + $2 }' "$T/time" >> "$o"
		done
		# the daemon's own figure: thread CPU time of the replay loop alone
		awk '/^replay_cpu_ns:/ { v = $2 } END { print v / 1e9 }' "$T/r/samples/oprofiled.log" >> "$T/ci"
		i=$((i + 1))
	done
	c1=$(median < "$T/c1") cn=$(median < "$T/cn") ci=$(median < "$T/ci")
	awk -v n="$n" -v k="$copies" -v c1="$c1" -v cn="$cn" 'BEGIN {
		printf "replay of 1 copy (%d samples): CPU %.3f s (median of the runs); of %d copies (%d samples): CPU %.3f s\n", n, c1, k, n * k, cn
		printf "whole run, %d copies: %.2f M samples/s CPU\n", k, (cn > 0 ? n * k / cn / 1e6 : 0)
		d = cn - c1
		printf "pipeline alone ((%d - 1) copies / (CPU(long) - CPU(1 copy))): %.2f M samples/s = %.0f ns/sample\n",
		       k, (d > 0 ? n * (k - 1) / d / 1e6 : 0), (n > 0 ? d * 1e9 / (n * (k - 1)) : 0) }'
	awk -v n="$n" -v k="$copies" -v ci="$ci" -v name="$name" 'BEGIN {
		printf "pipeline, the daemon'"'"'s own count (replay_cpu_ns in oprofiled.log, median): %.3f s for %d samples = %.2f M samples/s = %.0f ns/sample\n",
		       ci, n * k, (ci > 0 ? n * k / ci / 1e6 : 0), (n > 0 ? ci * 1e9 / (n * k) : 0)
		printf "RESULT pipeline %s: %.2f M samples/s\n", name, (ci > 0 ? n * k / ci / 1e6 : 0) }'
	[ "${PIPELINE_EXTRAS:-yes}" = no ] && return 0
	# perf on the same workload: perf report's aggregation by image (dso) per sample
	perf record -q -a -e cpu-clock -c 250000 -o "$T/perf.data" 2> /dev/null &
	pid=$!
	sleep 1
	wl_$name
	kill -INT $pid; wait $pid
	pn=$(perf report -i "$T/perf.data" --stdio --sort dso 2> /dev/null | awk '/^# Samples:/ { print $3 }')
	case $pn in *K) pn=$(echo "${pn%K}" | awk '{ print $1 * 1000 }') ;; *M) pn=$(echo "${pn%M}" | awk '{ print $1 * 1000000 }') ;; esac
	: > "$T/pr"
	i=0
	while [ $i -lt "$runs" ]; do
		/usr/bin/time -f "%U %S" -o "$T/time" perf report -i "$T/perf.data" --stdio --sort dso > /dev/null 2>&1
		awk '{ print $1 + $2 }' "$T/time" >> "$T/pr"
		i=$((i + 1))
	done
	pr=$(median < "$T/pr")
	awk -v n="$n" -v k="$copies" -v c1="$c1" -v cn="$cn" -v pn="$pn" -v pr="$pr" 'BEGIN {
		d = cn - c1; ours = (n > 0 ? d * 1e9 / (n * (k - 1)) : 0)
		printf "perf report --sort dso of the same workload (%d samples): CPU %.3f s = %.0f ns/sample (start-up included); ours/perf: %.3f\n",
		       pn, pr, (pn > 0 ? pr * 1e9 / pn : 0), (pn > 0 && pr > 0 ? ours / (pr * 1e9 / pn) : 0) }'
	if command -v valgrind > /dev/null && [ -n "${CALLGRIND:-}" ]; then
		"$B/libtool" --mode=execute valgrind --tool=callgrind --callgrind-out-file="$T/cg.$name" "$OPD" \
			--session-dir="$T/r" --append --events=TIMER:250000 --replay="$T/rec.data" 2> "$T/cg.err" > /dev/null
		echo "callgrind, a --append replay of 1 copy: $(grep refs "$T/cg.err" | sed 's/.*refs: *//') instructions"
		[ -n "${CALLGRIND_KEEP:-}" ] && cp "$T/cg.$name" "$CALLGRIND_KEEP.$name" && cp "$T/rec.data" "$CALLGRIND_KEEP.$name.data"
	fi
}

pipeline() {
	runs=${1:-5} copies=${2:-50}
	loop=$B/tests/bench/replay_loop
	[ -x "$loop" ] || { echo "missing $loop: make tests/bench/replay_loop first"; return 2; }
	sh "$(dirname "$0")/images_workload.sh" "$T/iw" > /dev/null || return 1
	echo "== pipeline: system-wide 4 kHz streams replayed through decode + merge + sync + trans + sfile ($copies copies, $runs runs)"
	echo "   images: $(wc -l < "$T/iw/progs") real programs and their libraries, 2 copies (tests/bench/images_workload.sh), 8 s"
	echo "   churn:  1500 fork+exec of 1 ms children, then both CPUs busy (the stress case)"
	for wl in ${PIPELINE_STREAMS:-images churn}; do
		pipeline_stream "$wl" "$runs" "$copies"
	done
	if [ "${PIPELINE_EXTRAS:-yes}" != no ] && [ -x "$B/tests/bench/bench_sync" ]; then
		echo "stage split (synthetic stream, tests/bench/bench_sync):"
		(cd "$T" && "$B/tests/bench/bench_sync" 3000000 | sed 's/^/  /')
	fi
}

churn() {
	n=${1:-2000}
	echo "== churn: $n fork+exec of 1 ms children, system-wide cpu-clock 4 kHz"
	rm -rf "$T/s"
	"$OPD" --session-dir="$T/s" --system-wide --events=TIMER:250000 2> /dev/null &
	pid=$!
	sleep 1
	"$CHURN" "$n" 1000 > /dev/null
	sleep 0.3
	kill -TERM $pid; wait $pid
	L=$T/s/samples/oprofiled.log
	user=$(stat_of "$L" "Nr. user samples:")
	infiles=$("$DUMP" "$T/s/samples/current" | awk '$1 != "TOTAL" && $3 !~ /\{dep\}\/\{kern\}/ { s += $1 } END { print s + 0 }')
	awk -v a="$infiles" -v u="$user" 'BEGIN { printf "oprofiled: %d of %d user samples in an image file = %.3f %%\n", a, u, u ? 100 * a / u : 0 }'
	perf record -q -a -e cpu-clock -c 250000 -o "$T/perf.data" -- "$CHURN" "$n" 1000 > /dev/null 2>&1
	# user samples (ip below the kernel half) and those perf could not map to a DSO
	perf script -i "$T/perf.data" -F ip,dso 2> /dev/null | awk '
		{ ip = $1; if (length(ip) == 16 && substr(ip, 1, 1) ~ /[89a-f]/) next; u++
		  if ($0 ~ /\[unknown\]/) unk++ }
		END { printf "perf:      %d of %d user samples in a known DSO = %.3f %%\n", u - unk, u, u ? 100 * (u - unk) / u : 0 }'
}

case ${1:-all} in
overhead) shift; overhead "$@" ;;
daemon_cost) shift; daemon_cost "$@" ;;
pipeline) shift; pipeline "$@" ;;
churn) shift; churn "$@" ;;
all) overhead; daemon_cost; pipeline; churn ;;
*) sed -n '2,/^# SPDX/{/^# SPDX/!p}' "$0"; exit 2 ;;
esac
