#!/bin/sh
# sfile_stress.sh - the daemon's sample files under churn, system-wide
# (cpu-clock 2 kHz): nothing it records is damaged or lost. At once:
#  - a binary replaced while a process still runs the old one: the old
#    process (started before the daemon, so read from /proc as
#    "... (deleted)") and new processes of the new binary at the same path
#    name the same sample file; its code is wide (sf_wide: 4096
#    functions), so both keep adding keys and growing the file;
#  - process churn (sp_churn: short-lived children, many files) with
#    --max-open-files=32, so sets are evicted and files reopened all the time;
#  - a descriptor budget cut under the running daemon (prlimit), so opens
#    hit EMFILE and must be retried after closing files, never dropped;
#  - dumps through the control socket and readers (opreport, sp_dump) in a
#    loop while it runs.
# Then every sample file must pass full validation (sp_dump: odb_check,
# every chain walked, counts summed), no sample may be lost to a sample
# file, the files must hold exactly what the daemon counted (its last
# statistics block), and every dump must have written stats/. Run once per
# --separate mode in SFSTRESS_SEPARATE (default "none thread,cpu"),
# SFSTRESS_SECONDS each (default 12; longer by hand). Needs root.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
# SFSTRESS_OPROFILED: another build's daemon, to compare by hand
OPD=${SFSTRESS_OPROFILED:-$B/core/oprofiled}
OPC=$B/tools/opcontrol
OPR=$B/tools/opreport/opreport
DUMP=$B/tests/integration/sp_dump
WIDE=$B/tests/integration/sf_wide
CHURN=$B/tests/integration/sp_churn
W=$B/tests/integration/sfile_stress.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
SECS=${SFSTRESS_SECONDS:-12}
MODES=${SFSTRESS_SEPARATE:-none thread,cpu}
rm -rf "$W"
mkdir -p "$W/bin"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
pids=
dpid=
cleanup() {
	[ -n "$dpid" ] && kill -TERM "$dpid" 2> /dev/null
	for p in $pids; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: a system-wide daemon whose descriptor limit is cut needs root"; exit 77
fi
command -v prlimit > /dev/null 2>&1 || { echo "SKIP: no prlimit (util-linux)"; exit 77; }

# a statistic of the daemon's last block
stat_of() { sed -n '/-- OProfile-ng Statistics --/,$p' "$1" | grep -F "$2:" | tail -1 | sed 's/.*: //'; }

run() {
	sep=$1
	tag=$(echo "$sep" | tr , _)
	SD=$W/s_$tag
	C=$SD/samples/current
	pids=
	# the old binary's process, running before the daemon
	cp "$WIDE" "$W/bin/wide" || exit 99
	"$W/bin/wide" $((SECS * 1000 + 4000)) 1 > /dev/null 2>&1 &
	old=$!
	pids="$old"
	sleep 0.2
	# replaced (a new inode at the path, as a package upgrade does)
	cp "$WIDE" "$W/bin/wide.new" && mv -f "$W/bin/wide.new" "$W/bin/wide" || exit 99
	grep -q "$W/bin/wide (deleted)" /proc/$old/maps ||
		{ bad "[$sep] the old process does not map a deleted binary"; return; }
	"$OPD" --system-wide --session-dir="$SD" --events=TIMER:500000 --separate="$sep" \
		--max-open-files=32 --config= > "opd_$tag.out" 2> "opd_$tag.err" &
	dpid=$!
	i=0
	while ! grep -q "profiling started" "$SD/samples/oprofiled.log" 2> /dev/null && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	if ! kill -0 "$dpid" 2> /dev/null; then
		wait "$dpid"
		grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "opd_$tag.err" &&
			{ echo "SKIP: the kernel forbids perf_event_open here"; exit 77; }
		echo "FAIL: the daemon did not start"; cat "opd_$tag.err"; exit 1
	fi
	# the descriptor budget: the rings, the log, the socket and a few files
	# (the daemon's pid from its lock: $dpid may be libtool's wrapper)
	rpid=$(cat "$SD/lock")
	nfd=$(ls /proc/"$rpid"/fd | wc -l)
	prlimit --pid "$rpid" --nofile=$((nfd + 12)):$((nfd + 12)) ||
		{ bad "[$sep] prlimit on the daemon failed"; }
	end=$(($(date +%s) + SECS))
	# new processes of the new binary at the same path, one after another
	(while [ "$(date +%s)" -lt "$end" ]; do "$W/bin/wide" 1500 > /dev/null 2>&1; done) &
	pids="$pids $!"
	# churn: many short-lived processes, many sample files
	(while [ "$(date +%s)" -lt "$end" ]; do "$CHURN" 200 500 > /dev/null 2>&1; done) &
	pids="$pids $!"
	# readers and dumps while it runs
	n=0
	while [ "$(date +%s)" -lt "$end" ]; do
		"$OPC" --session-dir="$SD" --dump > dump.out 2>&1 ||
			{ bad "[$sep] --dump failed"; cat dump.out; }
		"$OPR" --session-dir="$SD" > /dev/null 2>> "report_$tag.err"
		"$DUMP" "$C" > /dev/null 2>&1
		n=$((n + 1))
	done
	for p in $pids; do [ "$p" = "$old" ] || wait "$p"; done
	kill "$old" 2> /dev/null
	wait "$old" 2> /dev/null
	pids=
	"$OPC" --session-dir="$SD" --stop --wait=30 > "stop_$tag.out" 2>&1 ||
		{ bad "[$sep] --stop failed"; cat "stop_$tag.out"; }
	wait "$dpid" 2> /dev/null
	dpid=
	LOG=$SD/samples/oprofiled.log
	"$DUMP" "$C" > "files_$tag" ||
		{ bad "[$sep] damaged sample files:"; grep BAD "files_$tag" | head -5; }
	# the daemon's own counts, from its last statistics block (written at the stop)
	total=$(stat_of "$LOG" "Nr. samples received")
	insf=$(stat_of "$LOG" "Nr. samples lost: sample file open failure")
	lost=$(sed -n '/-- OProfile-ng Statistics --/,$p' "$LOG" | awk -F': ' '
		/^Nr\. samples lost by the kernel/ { next }
		/^Nr\. (user )?samples lost/ || /^Nr\. lost samples/ { v[$1 FS $2] = $NF }
		END { for (k in v) s += v[k]; print s + 0 }')
	files=$(awk '$1 == "TOTAL" { print $3 }' "files_$tag")
	nfiles=$(awk '$1 == "TOTAL" { print $2 }' "files_$tag")
	aliases=$(stat_of "$LOG" "Nr. sample file set keys naming another set's files")
	retries=$(stat_of "$LOG" "Nr. open retries after EMFILE/ENFILE")
	evict=$(stat_of "$LOG" "Nr. sample file sets evicted (LRU)")
	wide=$(awk -v p="{root}$W/bin/wide/" '$1 != "TOTAL" && index($3, p) == 1 { s += $1 } END { print s + 0 }' "files_$tag")
	echo "[$sep] $n dumps and reads; $nfiles files hold $files samples; received $total," \
		"$lost not attributed ($insf to sample files); wide: $wide; aliases $aliases," \
		"EMFILE retries $retries, evictions $evict"
	[ "$total" -gt 2000 ] || bad "[$sep] too few samples: $total"
	[ "$insf" -eq 0 ] || bad "[$sep] $insf samples lost to sample files:
$(grep -i "sample file" "$LOG" | grep -v "^Nr\." | head -5)"
	[ "$files" -eq $((total - lost)) ] ||
		bad "[$sep] the sample files hold $files samples, the daemon counted $total - $lost"
	[ "$wide" -gt 500 ] || bad "[$sep] too few samples of the replaced binary: $wide"
	# the sample files left descriptors to the rest: every dump wrote stats/
	grep -q "cannot write the lost-sample counters" "$LOG" &&
		bad "[$sep] a dump could not write stats/: $(grep -m1 "cannot write the lost" "$LOG")"
	# the point of the exercise: the collisions and the descriptor budget happened
	# (a sample file's open or a dump's stats/ write met EMFILE first: either way
	# the sample files keep fewer open from then on, and say so)
	grep -q "out of file descriptors with [0-9]* sample files open" "$LOG" ||
		bad "[$sep] the descriptor budget was never hit (EMFILE retries $retries)"
	case $sep in
	none) [ "${aliases:-0}" -gt 0 ] ||
		bad "[$sep] the old and new binary never named one file (aliases $aliases)" ;;
	esac
	grep "skipping sample file" "report_$tag.err" | head -3 | sed "s/^/[$sep] reader: /"
	grep -q "skipping sample file" "report_$tag.err" &&
		bad "[$sep] a reader skipped a damaged file while the daemon ran"
}

for sep in $MODES; do
	run "$sep"
done

if [ $fail -eq 0 ]; then
	echo "PASS: sfile_stress.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
