#!/bin/sh
# perf_layer.sh - the sample path against the live kernel (cpu-clock, 1 kHz):
# launch mode on a spinning child, --pid attach to a 2-thread spinner,
# a short system-wide run that must see an already-running spinner through
# start-up synthesis, and --record/--replay giving the same records.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-.}
probe="$B/tests/integration/perf_probe"
work="$B/tests/integration/perf_layer.work"
rm -rf "$work" && mkdir -p "$work" || exit 1
fails=0
spinners=""

cleanup() { for p in $spinners; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT

val() { sed -n "s/^$1[=:] *//p" "$2" | head -1; }

check() { # file key op value label
	v=$(val "$2" "$1")
	if [ -z "$v" ]; then
		echo "FAIL: $5: $2 missing in $1"; fails=$((fails + 1)); return
	fi
	if [ "$v" "$3" "$4" ]; then
		echo "ok: $5 ($2=$v $3 $4)"
	else
		echo "FAIL: $5: expected $2 $3 $4, found $v"; fails=$((fails + 1))
	fi
}

run() { # out -- probe args
	out=$1; shift
	"$probe" "$@" >"$out" 2>"$out.err"
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "SKIP: the kernel refuses perf_event_open:"; cat "$out.err"; exit 77
	fi
	if [ $rc -ne 0 ]; then
		echo "FAIL: perf_probe $* exited $rc"; cat "$out.err"; fails=$((fails + 1))
	fi
}

# 1. launch mode: 1 s of CPU at 1 kHz, recorded
L=$work/launch.out
run "$L" launch --freq 1000 --record "$work/launch.oprec" -- "$probe" spin 1.0
check "$L" watch_samples -ge 700 "launch: samples for ~1 s of CPU at 1 kHz"
check "$L" watch_samples -le 1300 "launch: no more samples than the CPU time allows"
check "$L" binary_mmap_before_first_sample -eq 1 "launch: MMAP2 of the binary before its first sample"
check "$L" unmapped_user_samples -eq 0 "launch: every user sample lies in a mapping seen before it"
check "$L" comm_exec -ge 1 "launch: COMM with exec flag"
check "$L" exit_seen -ge 1 "launch: EXIT of the command"
check "$L" lost_in_records -eq 0 "launch: no LOST records"
check "$L" lost_kernel -eq 0 "launch: kernel lost count (PERF_FORMAT_LOST) is 0"
check "$L" bad_records -eq 0 "launch: no malformed records"
check "$L" out_of_order -eq 0 "launch: delivered in time order"
check "$L" child_status -eq 0 "launch: exit status of the command reported"

# 1a. a sample hook asking for call chains and a plugin event source
C=$work/cg.out
run "$C" launch --freq 1000 --callchain --source -- "$probe" spin 0.5
check "$C" callchain_samples -gt 200 "hook: core samples carry call chains"
check "$C" callchain_bad -eq 0 "hook: every chain starts with a context marker"
check "$C" other_source_samples -gt 100 "source: samples of the plugin's event (source 1)"
check "$C" core_counter_bad -eq 0 "source: core samples say counter 0"
check "$C" unknown_ids -eq 0 "source: every sample's id maps to an event"
check "$C" bad_records -eq 0 "hook: call-chain samples decode"

# 1b. a stalled reader with 1-page rings: the kernel drops, we count
O=$work/lost.out
run "$O" launch --freq 4000 --pages 1 --stall-ms 600 -- "$probe" spin 1.0
check "$O" lost_in_records -gt 0 "lost: LOST records delivered and summed"
check "$O" lost_records -gt 0 "lost: LOST records counted"
check "$O" lost_kernel -ge "$(val lost_in_records "$O")" "lost: PERF_FORMAT_LOST total >= sum of LOST records"
check "$O" bad_records -eq 0 "lost: no malformed records under overflow"
# the sampling event's own PERF_FORMAT_LOST count: dropped samples, told apart
# from dropped side-band records (a dummy event of their own), all accounted
check "$O" lost_exact_samples -gt 0 "lost: the kernel's exact count of dropped samples delivered"
check "$O" lost_kernel -eq $(($(val lost_exact_samples "$O") + $(val lost_exact_sideband "$O"))) \
	"lost: every lost record is a sample or a side-band record (none of unknown kind)"
# 1 s of CPU at 4 kHz: received + lost samples cannot be much more than 4000
check "$O" samples -le $((4600 - $(val lost_exact_samples "$O"))) \
	"lost: samples received + samples lost fit 1 s of CPU at 4 kHz"

# 1c. side-band records lost: a shell runs 300 short commands (fork, exec,
# mmap, exit records) beside the spinner while the reader stalls; recorded,
# the replay gives the same exact counts
SB=$work/lostsb.out
run "$SB" launch --freq 4000 --pages 1 --stall-ms 600 --record "$work/lostsb.oprec" -- \
	/bin/sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done & exec "$0" spin 1.0' "$probe"
check "$SB" lost_exact_sideband -gt 0 "lost: dropped mmap/comm/fork/exit records counted apart"
check "$SB" lost_exact_samples -gt 0 "lost: dropped samples counted apart"
check "$SB" lost_kernel -eq $(($(val lost_exact_samples "$SB") + $(val lost_exact_sideband "$SB"))) \
	"lost: samples + side-band records = the kernel's total"
SBR=$work/lostsb_replay.out
run "$SBR" replay "$work/lostsb.oprec"
check "$SBR" lost_exact_samples -eq "$(val lost_exact_samples "$SB")" "lost replay: same dropped samples"
check "$SBR" lost_exact_sideband -eq "$(val lost_exact_sideband "$SB")" "lost replay: same dropped side-band records"
check "$SBR" lost_in_records -eq "$(val lost_in_records "$SB")" "lost replay: same LOST records"

# 2. replay of that recording: same records, same order
R=$work/replay.out
run "$R" replay "$work/launch.oprec" --watch "$(val watch_pid "$L")"
check "$R" records -eq "$(val records "$L")" "replay: same number of records"
if [ "$(val hash "$R")" = "$(val hash "$L")" ] && [ -n "$(val hash "$L")" ]; then
	echo "ok: replay: same record sequence hash ($(val hash "$L"))"
else
	echo "FAIL: replay hash $(val hash "$R") != live $(val hash "$L")"; fails=$((fails + 1))
fi
check "$R" watch_samples -eq "$(val watch_samples "$L")" "replay: same samples of the command"
# a truncated copy is refused with an offset, not a crash
size=$(wc -c <"$work/launch.oprec")
head -c $((size / 2)) "$work/launch.oprec" >"$work/cut.oprec"
"$probe" replay "$work/cut.oprec" >"$work/cut.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "offset" "$work/cut.out"; then
	echo "ok: truncated record file refused: $(grep offset "$work/cut.out" | head -1)"
else
	echo "FAIL: truncated record file: rc=$rc"; cat "$work/cut.out"; fails=$((fails + 1))
fi

# 3. --pid on an already running 4-thread spinner
"$probe" spin 4 4 &
sp=$!; spinners="$spinners $sp"
sleep 0.3
P=$work/pid.out
run "$P" pid --freq 1000 --seconds 1 "$sp"
check "$P" watch_samples -ge 100 "pid: samples of the attached process"
check "$P" watch_tids -ge 4 "pid: all 4 pre-existing threads sampled (per-thread open)"
check "$P" synth_binary_mmaps -ge 1 "pid: synthesized MMAP of its binary"
check "$P" unmapped_user_samples -eq 0 "pid: user samples resolved by synthesized maps"
check "$P" lost_kernel -eq 0 "pid: no loss"
kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null

# 3b. --pid ends by itself when the attached process exits
"$probe" spin 0.6 &
sp=$!; spinners="$spinners $sp"
sleep 0.2
E=$work/pidexit.out
t0=$(date +%s)
run "$E" pid --freq 1000 --seconds 20 "$sp"
t1=$(date +%s)
if [ "$(val ended_by "$E")" = targets ] && [ $((t1 - t0)) -lt 10 ]; then
	echo "ok: pid: stopped when the process exited ($((t1 - t0)) s)"
else
	echo "FAIL: pid: ended_by=$(val ended_by "$E") after $((t1 - t0)) s"; fails=$((fails + 1))
fi
check "$E" exit_seen -ge 1 "pid: EXIT of the attached process delivered before stopping"
wait "$sp" 2>/dev/null

# 4. system-wide, 1 kHz, short, with a spinner started before
if [ "$(id -u)" = 0 ]; then
	"$probe" spin 4 &
	sp=$!; spinners="$spinners $sp"
	sleep 0.3
	S=$work/system.out
	run "$S" system --freq 1000 --seconds 1 --watch "$sp" --record "$work/system.oprec"
	check "$S" watch_samples -ge 100 "system: samples of the running spinner"
	check "$S" synth_binary_mmaps -ge 1 "system: synthesized MMAP of the spinner's binary"
	check "$S" unmapped_user_samples -eq 0 "system: spinner samples resolved by synthesized maps"
	check "$S" synth_procs -ge 5 "system: /proc walked"
	check "$S" out_of_order -eq 0 "system: merged in time order across CPUs"
	check "$S" bad_records -eq 0 "system: no malformed records"
	check "$S" lost_kernel -eq 0 "system: no loss at 1 kHz"
	check "$S" introduced_after_sample -eq 0 "system: no task introduced (COMM/FORK/MMAP) after one of its samples"
	kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
	# the recording holds the synthesized records too: replay gives the same stream
	SR=$work/system_replay.out
	run "$SR" replay "$work/system.oprec" --watch "$sp"
	if [ -n "$(val hash "$S")" ] && [ "$(val hash "$SR")" = "$(val hash "$S")" ] &&
	   [ "$(val records "$SR")" = "$(val records "$S")" ]; then
		echo "ok: system replay: same $(val records "$S") records, same sequence hash"
	else
		echo "FAIL: system replay: $(val records "$SR") records hash $(val hash "$SR"), live $(val records "$S") hash $(val hash "$S")"
		fails=$((fails + 1))
	fi
	check "$SR" synth_binary_mmaps -ge 1 "system replay: synthesized MMAP replayed"

	# 4b. fork+exec churn on both CPUs while sampling system-wide
	X=$work/churn.out
	( sleep 0.3; "$probe" churn 30; "$probe" churn 30 ) &
	ch=$!; spinners="$spinners $ch"
	( sleep 0.35; "$probe" churn 30 ) &
	ch2=$!; spinners="$spinners $ch2"
	run "$X" system --freq 1000 --seconds 2.5
	wait "$ch" "$ch2" 2>/dev/null
	check "$X" exec_total -ge 60 "churn: COMM exec of the short-lived children seen"
	check "$X" introduced_after_sample -eq 0 "churn: no child's FORK/COMM delivered after one of its samples"
	check "$X" out_of_order -eq 0 "churn: merged in time order"
	check "$X" bad_records -eq 0 "churn: no malformed records"
else
	echo "note: system-wide part needs root; not run"
fi

echo "perf_layer: $fails failure(s)"
[ $fails -eq 0 ]
