#!/bin/sh
# ibs_replay.sh - an IBS session without IBS hardware: ibs_gen writes a
# --replay stream with raw ibs_fetch/ibs_op records (one meeting and one
# missing record per derivation rule, plus a RIP-invalid, an unmapped and a
# truncated one) for a real binary; oprofiled replays it through decode ->
# sync -> the ibs plugin's source callback -> its escape codes in trans ->
# sample files. ibs_gen check asserts the exact count at every rule's two
# offsets in every IBS_* file, headers, stats and the memory-access log;
# opreport must show the IBS events as columns.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-.}
PLUG=${OP_PLUGIN_DIR:-$B/plugins/.libs}
: "${OPROFILE_EVENTS_DIR:=${OP_SRCDIR:-.}/events}"
export OPROFILE_EVENTS_DIR
GEN=$B/tests/integration/ibs_gen
W=$B/tests/ibs_replay.$$
fail() { echo "FAIL: $*"; exit 1; }

BIN=
for b in /usr/bin/true /bin/true; do
	[ -f "$b" ] && BIN=$(readlink -f "$b") && break
done
[ -n "$BIN" ] && [ -f "$BIN" ] || fail "no true(1) binary to attribute the samples to"
rm -rf "$W"
mkdir -p "$W" || fail "cannot create $W"

# a fake sysfs with both IBS PMUs (dynamic type numbers, cnt_ctl / rand_en formats)
for p in ibs_fetch:10:rand_en ibs_op:11:cnt_ctl; do
	n=${p%%:*}; r=${p#*:}; t=${r%%:*}; f=${r#*:}
	d=$W/sys/bus/event_source/devices/$n
	mkdir -p "$d/format" && echo "$t" > "$d/type" && echo "config:19" > "$d/format/$f" ||
		fail "cannot write the fake sysfs"
done

"$GEN" write "$W/ibs.replay" "$BIN" || fail "ibs_gen write"
ARGS=$("$GEN" args) || fail "ibs_gen args"
set -- $("$GEN" totals)
NFETCH=$1 NOP=$2 NMEM=$3
[ "$NFETCH" -gt 0 ] && [ "$NOP" -gt 0 ] || fail "ibs_gen totals: '$NFETCH $NOP'"

run() { # session family
	"$B/core/oprofiled" --plugin-dir="$PLUG" --session-dir="$1" --replay="$W/ibs.replay" \
		"--ext-feature=ibs:$ARGS|sysfs=$W/sys,family=$2" > "$W/out.txt" 2>&1
	rc=$?
	[ $rc -eq 0 ] || { cat "$W/out.txt"; cat "$1/samples/oprofiled.log" 2>/dev/null; \
		fail "oprofiled --replay (family $2) exited $rc"; }
}

# --- family 15h: every rule, exact counts ---
run "$W/s15" 0x15
"$GEN" check "$W/s15" || { sed -n '/-- plugin ibs --/,/^--/p' "$W/s15/samples/oprofiled.log"; \
	fail "derived events of the replayed session"; }
grep -q 'ibs: IBS ready (family 0x15): 13 fetch event(s) every 100000, 47 op event(s)' \
	"$W/s15/samples/oprofiled.log" || fail "no 'IBS ready' line in the log"

# opreport: IBS events are columns, with the sample totals of the replayed records
"$B/tools/opreport/opreport" --session-dir="$W/s15" event:IBS_FETCH_ALL,IBS_OP_ALL > "$W/report.txt" 2>&1 ||
	{ cat "$W/report.txt"; fail "opreport exited non-zero"; }
cat "$W/report.txt"
grep -q '^IBS_FETCH_ALL:.*|IBS_OP_ALL:' "$W/report.txt" || fail "opreport: no IBS columns"
row=$(grep " $(basename "$BIN")\$" "$W/report.txt") || fail "opreport: no row for $BIN"
set -- $row
[ "$1" = "$NFETCH" ] && [ "$3" = "$NOP" ] ||
	fail "opreport row '$row': expected $NFETCH fetch and $NOP op samples"
# a latency event adds its latency: a column like any other
"$B/tools/opreport/opreport" --session-dir="$W/s15" event:IBS_FETCH_LATENCY > "$W/lat.txt" 2>&1 ||
	fail "opreport event:IBS_FETCH_LATENCY"
grep -q "^ *$((0x123)) .* $(basename "$BIN")\$" "$W/lat.txt" ||
	{ cat "$W/lat.txt"; fail "IBS_FETCH_LATENCY: expected 291 (0x123) cycles"; }

# --- family 10h: RipInvalid does not exist there (forced to 0): the record counts ---
run "$W/s10" 0x10
"$B/tools/opreport/opreport" --session-dir="$W/s10" event:IBS_OP_ALL > "$W/report10.txt" 2>&1 ||
	fail "opreport (family 10h)"
set -- $(grep " $(basename "$BIN")\$" "$W/report10.txt")
[ "${1:-}" = "$((NOP + 1))" ] || { cat "$W/report10.txt"; \
	fail "family 10h: IBS_OP_ALL ${1:-none}, expected $((NOP + 1)) (RIP-invalid record kept)"; }
grep -q '^rip_invalid: 0$' "$W/s10/samples/oprofiled.log" || fail "family 10h: rip_invalid not 0"

echo "ibs_replay: $NFETCH fetch + $NOP op records, $NMEM memory accesses logged, IBS columns in opreport"
rm -rf "$W"
exit 0
