#!/bin/sh
# compare_builds.sh - before and after a change that must not change
# behaviour, file formats or speed, two build directories side by side.
# Run by hand as root (system-wide recording); see tests/bench/README.md.
#   compare_builds.sh OLD_BUILDDIR NEW_BUILDDIR [RUNS=5]
# Both build directories need `make check TESTS=` (the workloads, replay_loop,
# bare_sampler). Two parts (COMPARE_PARTS="correctness speed" picks):
#   correctness: the OLD daemon records small perf streams (--record) of a
#       few workloads (launched programs, a dlopen'd library, two threads,
#       call graphs, system-wide process churn); each stream is replayed
#       through both daemons with several --separate lists, and every file
#       of the two sessions (abi, sample files, stats/, callgraph/) must be
#       byte-identical, as must the counters of oprofiled.log and the output
#       of both opreports on the same session. Any difference fails.
#   speed: bench_sample_path.sh pipeline (the same recorded streams replayed
#       by both daemons: ns per sample of the pipeline) and overhead (a
#       fixed-work program under each oprofiled at 1, 4 and 10 kHz) of the
#       two builds interleaved, RUNS rounds (old first in odd rounds, new
#       first in even ones); a table of the medians over the rounds and
#       new/old; a ratio above COMPARE_MAX_RATIO (default 1.02) fails.
# Environment: COMPARE_COPIES (pipeline replay length, default 50),
# COMPARE_MILLIONS (overhead work, default 3000), PIPELINE_STREAMS
# (default "images churn"), COMPARE_KEEP=DIR (keep the work files in DIR).
# Exit status: 0 same, 1 a difference or a slowdown, 2 usage or a missing build.
# SPDX-License-Identifier: MIT
set -u
usage() { sed -n '2,/^# SPDX/{/^# SPDX/!s/^# \{0,1\}//p}' "$0"; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
OLD=$(cd "$1" 2> /dev/null && pwd) || { echo "compare_builds: OLD_BUILDDIR $1 is not a directory"; exit 2; }
NEW=$(cd "$2" 2> /dev/null && pwd) || { echo "compare_builds: NEW_BUILDDIR $2 is not a directory"; exit 2; }
RUNS=${3:-5}
case $RUNS in '' | *[!0-9]* | 0) echo "compare_builds: RUNS '$RUNS' is not a positive number"; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
MAX=${COMPARE_MAX_RATIO:-1.02}
COPIES=${COMPARE_COPIES:-50}
MILLIONS=${COMPARE_MILLIONS:-3000}
PARTS=${COMPARE_PARTS:-correctness speed}
EV=TIMER:250000

if [ -n "${COMPARE_KEEP:-}" ]; then
	T=$COMPARE_KEEP
	mkdir -p "$T" || exit 2
else
	T=$(mktemp -d "${TMPDIR:-/tmp}/compare-builds.XXXXXX") || exit 2
	trap 'rm -rf "$T"' EXIT
fi

# the programs each part needs, in both builds
need="core/oprofiled tests/integration/sp_dump"
case " $PARTS " in *" correctness "*)
	need="$need tests/integration/hot tests/integration/sp_threads tests/integration/sp_dlopen_pie
	      tests/integration/sp_churn tests/integration/sp_fixed tests/integration/cg_tree" ;;
esac
case " $PARTS " in *" speed "*)
	need="$need tests/bench/replay_loop tests/bench/bare_sampler tests/integration/sp_fixed
	      tests/integration/sp_churn" ;;
esac
for b in "$OLD" "$NEW"; do
	for p in $need; do
		[ -x "$b/$p" ] || { echo "compare_builds: $b/$p is missing: make -j2 check TESTS= in $b first"; exit 2; }
	done
done
# opreport moved from tools/ to tools/opreport/
report_of() {
	for r in "$1/tools/opreport/opreport" "$1/tools/opreport"; do
		[ -f "$r" ] && [ -x "$r" ] && { echo "$r"; return 0; }
	done
	echo "compare_builds: no opreport in $1/tools: make -j2 check TESTS= in $1 first" >&2
	return 1
}
OLDREPORT=$(report_of "$OLD") && NEWREPORT=$(report_of "$NEW") || exit 2
SPHOT=$OLD/tests/integration/.libs/libsphot.so
case " $PARTS " in *" correctness "*)
	[ -f "$SPHOT" ] || { echo "compare_builds: $SPHOT is missing: make -j2 check TESTS= in $OLD first"; exit 2; }
esac

# opd BUILD ARGS...: that build's daemon with its own plugins, no config file
opd() {
	b=$1; shift
	OP_PLUGIN_DIR=$b/plugins/.libs "$b/core/oprofiled" --config= "$@"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# the counters of oprofiled.log's last statistics block, without CPU times, rates, memory
log_counters() {
	sed -n '/-- OProfile-ng Statistics --/,$p' "$1" |
		awk '/-- OProfile-ng Statistics --/ { n = 0; delete l; next } { l[n++] = $0 }
		     END { for (i = 0; i < n; i++) print l[i] }' |
		grep -v -e '_cpu_ns:' -e ' s of CPU' -e 'samples/s' -e 'RSS' -e 'elapsed'
}

correctness() {
	echo "== correctness: streams recorded by $OLD/core/oprofiled, replayed through both daemons"
	C=$T/correctness
	rm -rf "$C" && mkdir -p "$C"
	I=$OLD/tests/integration
	nbad=0 nfiles=0 nsess=0
	# NAME | record options | replay options (each separation list follows) | command
	cat > "$C/streams" << EOF
hot||--separate=none --separate=lib,kernel --separate=thread,cpu --separate=all|-- $I/hot 800
threads||--separate=none --separate=thread --separate=cpu|-- $I/sp_threads 300
dlopen||--separate=none --separate=lib --separate=all|-- $I/sp_dlopen_pie $SPHOT 400
callgraph|--ext-feature=callgraph:depth=32|--separate=none --separate=lib|-- $I/cg_tree 600
churn||--separate=none --separate=lib,kernel --separate=all|--system-wide
EOF
	while IFS='|' read -r name ropt seps cmd; do
		rm -rf "$C/live"
		# shellcheck disable=SC2086 # word splitting of the option lists is wanted
		if [ "$name" = churn ]; then
			# not through opd(): $! must be the daemon (libtool's wrapper execs it)
			OP_PLUGIN_DIR=$OLD/plugins/.libs "$OLD/core/oprofiled" --config= --session-dir="$C/live" \
				--events=$EV $ropt --record="$C/$name.data" $cmd > "$C/$name.rec.out" 2>&1 &
			pid=$!
			sleep 1
			"$I/sp_churn" 300 1000 > /dev/null
			"$I/sp_fixed" 300
			kill -TERM $pid
			wait $pid
		else
			opd "$OLD" --session-dir="$C/live" --events=$EV $ropt --record="$C/$name.data" \
				$cmd > "$C/$name.rec.out" 2>&1
		fi
		rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$C/$name.data" ]; then
			echo "FAIL: recording $name with the old daemon (exit $rc):"; cat "$C/$name.rec.out"
			nbad=$((nbad + 1))
			continue
		fi
		for sep in $seps; do
			tag=$name.${sep#--separate=}
			for side in old new; do
				[ $side = old ] && b=$OLD || b=$NEW
				s=$C/$side.$tag
				# shellcheck disable=SC2086
				opd "$b" --session-dir="$s" --events=$EV $ropt $sep --replay="$C/$name.data" \
					> "$s.out" 2>&1 || { echo "FAIL: $side daemon: replay of $name $sep exited $?:"; cat "$s.out"; nbad=$((nbad + 1)); }
			done
			o=$C/old.$tag n=$C/new.$tag
			(cd "$o" && find abi samples/current ! -type d | LC_ALL=C sort) > "$C/files.old"
			(cd "$n" && find abi samples/current ! -type d | LC_ALL=C sort) > "$C/files.new"
			nsess=$((nsess + 1))
			if ! grep -q '/TIMER\.' "$C/files.old"; then
				echo "FAIL: $name $sep: the replay wrote no sample file"; nbad=$((nbad + 1))
			fi
			if ! cmp -s "$C/files.old" "$C/files.new"; then
				echo "FAIL: $name $sep: the two daemons wrote different files (< old, > new):"
				diff "$C/files.old" "$C/files.new" | grep '^[<>]' | head -20
				nbad=$((nbad + 1))
			fi
			while read -r f; do
				[ -e "$n/$f" ] || continue
				nfiles=$((nfiles + 1))
				cmp -s "$o/$f" "$n/$f" || { echo "FAIL: $name $sep: $f differs"; nbad=$((nbad + 1)); }
			done < "$C/files.old"
			log_counters "$o/samples/oprofiled.log" > "$C/counters.old"
			log_counters "$n/samples/oprofiled.log" > "$C/counters.new"
			if [ ! -s "$C/counters.old" ]; then
				echo "FAIL: $name $sep: no statistics in the old daemon's oprofiled.log"; nbad=$((nbad + 1))
			elif ! cmp -s "$C/counters.old" "$C/counters.new"; then
				echo "FAIL: $name $sep: oprofiled.log counters differ (< old, > new):"
				diff "$C/counters.old" "$C/counters.new" | grep '^[<>]'
				nbad=$((nbad + 1))
			fi
		done
		# both opreports on the same session (the old daemon's, no separation)
		o=$C/old.$name.none
		for args in "-l" "-d"; do
			[ "$name" = callgraph ] && [ "$args" = -d ] && args=-c
			# shellcheck disable=SC2086
			"$OLDREPORT" --session-dir="$o" $args > "$C/report.old" 2>&1
			r1=$?
			# shellcheck disable=SC2086
			"$NEWREPORT" --session-dir="$o" $args > "$C/report.new" 2>&1
			r2=$?
			if [ $r1 -ne 0 ] || [ $r1 -ne $r2 ] || ! cmp -s "$C/report.old" "$C/report.new"; then
				echo "FAIL: $name: opreport $args: old (exit $r1) and new (exit $r2) differ (< old, > new):"
				diff "$C/report.old" "$C/report.new" | head -20
				nbad=$((nbad + 1))
			fi
		done
	done < "$C/streams"
	echo "correctness: $nsess replayed sessions, $nfiles files compared, $nbad differences"
	[ $nbad -eq 0 ]
}

# bench BUILD MODE ARGS...: bench_sample_path.sh (this tree's) on BUILD
bench() {
	b=$1; shift
	OP_BUILDDIR=$b OP_PLUGIN_DIR=$b/plugins/.libs sh "$HERE/bench_sample_path.sh" "$@"
}

speed() {
	S=$T/speed
	rm -rf "$S" && mkdir -p "$S/streams"
	echo "== speed: bench_sample_path.sh pipeline and overhead, old and new interleaved, $RUNS rounds"
	echo "   (logs: $S/*.log; the machine must be quiet: another build or test run swamps 2 %)"
	# the pipeline streams, recorded once by the old daemon; every round of
	# both builds replays these same files
	if ! PIPELINE_STREAM_DIR=$S/streams PIPELINE_EXTRAS=no bench "$OLD" pipeline 1 "$COPIES" > "$S/record.log" 2>&1; then
		echo "FAIL: recording the pipeline streams:"; cat "$S/record.log"; return 1
	fi
	r=1
	while [ $r -le "$RUNS" ]; do
		[ $((r % 2)) -eq 1 ] && order="old new" || order="new old"
		for side in $order; do
			[ $side = old ] && b=$OLD || b=$NEW
			PIPELINE_STREAM_DIR=$S/streams PIPELINE_EXTRAS=no bench "$b" pipeline 1 "$COPIES" \
				> "$S/pipeline.$side.$r.log" 2>&1
			bench "$b" overhead 1 "$MILLIONS" > "$S/overhead.$side.$r.log" 2>&1
			# one value per line: "METRIC VALUE", lower is better
			{
				awk '/^RESULT pipeline / { sub(":", "", $3); if ($4 > 0) printf "pipeline_%s_ns/sample %.3f\n", $3, 1000 / $4 }' \
					"$S/pipeline.$side.$r.log"
				# the times, and the slowdown under oprofiled against the
				# workload alone in the same run (machine drift cancels)
				awk '/^RESULT overhead / { printf "overhead_%s_%s_%s_ms %s\n", $3, $4, $5, $6
							   v[$3 "_" $4 "_" $5] = $6 }
				     END { for (k in v) if (k ~ /_oprofiled$/) {
						a = k; sub(/_oprofiled$/, "_alone", a)
						if (v[a] > 0) { sub(/_oprofiled$/, "", k); printf "overhead_%s_oprofiled/alone %s\n", k, v[k "_oprofiled"] / v[a] }
				     } }' "$S/overhead.$side.$r.log" | sort -V
			} >> "$S/values.$side"
		done
		echo "   round $r of $RUNS done"
		r=$((r + 1))
	done
	for side in old new; do
		if ! grep -q '^pipeline_' "$S/values.$side" || ! grep -q '^overhead_' "$S/values.$side"; then
			echo "FAIL: no results from the $side build:"
			tail -20 "$S/pipeline.$side.1.log" "$S/overhead.$side.1.log"
			return 1
		fi
	done
	echo "   gated: pipeline ns/sample (the daemon's own replay CPU time) and the workload's slowdown"
	echo "   under oprofiled (oprofiled/alone, same run); the times in ms are for reading, and the"
	echo "   workload alone old against new shows the machine's own drift between the runs"
	printf "%-44s %12s %12s %9s\n" "median of $RUNS rounds (lower is better)" old new new/old
	nslow=0
	for m in $(awk '{ print $1 }' "$S/values.old" | awk '!seen[$0]++'); do
		o=$(awk -v m="$m" '$1 == m { print $2 }' "$S/values.old" | median)
		n=$(awk -v m="$m" '$1 == m { print $2 }' "$S/values.new" | median)
		# the workload alone measures the machine, not the builds: the
		# noise to expect from the others; it is never a failure
		case $m in
		*_alone_ms) gate=noise ;;
		*_ms) gate=info ;;
		*) gate=yes ;;
		esac
		line=$(awk -v m="$m" -v o="$o" -v n="${n:-0}" -v max="$MAX" -v gate=$gate 'BEGIN {
			r = (o > 0) ? n / o : 0
			if (gate == "noise")
				v = (r > max || r < 1 / max) ? "(the machine drifted: noisy)" : "(machine drift)"
			else if (gate == "info")
				v = ""
			else
				v = (r > max) ? sprintf("SLOWER (> %s)", max) : ""
			printf "%-44s %12.4f %12.4f %9.4f  %s\n", m, o, n, r, v }')
		echo "$line"
		case $line in *SLOWER*) nslow=$((nslow + 1)) ;; esac
	done
	if [ $nslow -gt 0 ]; then
		echo "speed: FAIL: $nslow figure(s) more than $MAX times the old build's"
		return 1
	fi
	echo "speed: no figure more than $MAX times the old build's"
}

rc=0
for part in $PARTS; do
	case $part in
	correctness) correctness || rc=1 ;;
	speed) speed || rc=1 ;;
	*) echo "compare_builds: unknown part '$part' in COMPARE_PARTS (correctness, speed)"; exit 2 ;;
	esac
done
[ $rc -eq 0 ] && echo "compare_builds: PASS" || echo "compare_builds: FAIL"
exit $rc
