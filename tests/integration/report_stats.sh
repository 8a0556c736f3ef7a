#!/bin/sh
# report_stats.sh - the lost-sample figures, from the stats/ files to
# opreport's warnings (issue 15, item 5): samples received but not
# attributed are part of total_samples (not added to it); samples, side-band
# records and records of unknown kind the kernel dropped are named apart;
# damaged, empty and hostile stats files are named, never believed; a daemon
# run with --append adds to total_samples; a daemon stopped for 0.6 s with
# 1-page rings at 4 kHz: opreport's figures are the stats files'.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
OPREPORT=$OP_BUILDDIR/tools/opreport/opreport
OPD=$OP_BUILDDIR/core/oprofiled
MKFIXTURE=$OP_BUILDDIR/tests/data/report/mkfixture
PROBE=$OP_BUILDDIR/tests/integration/perf_probe
W=$OP_BUILDDIR/tests/report_stats.tmp
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$OP_BUILDDIR/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$OP_SRCDIR/events}
rm -rf "$W"
mkdir -p "$W"
fail=0 npass=0
T=$(printf '\t')
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
for f in "$OPREPORT" "$OPD" "$MKFIXTURE" "$PROBE"; do
	[ -e "$f" ] || { echo "report_stats: missing $f (make check builds it)"; exit 1; }
done

# one session per case, each with 10 samples of /bin/true and its stats files
S=$W/sess
{
	for d in a b c d e f g h i j; do
		printf 'dir\t%s\nfile\t/bin/true\t/bin/true\tTIMER\t0\t0\tall\tall\tall\ns\t0x10\t10\n' $d
	done
	# (a) 1336 received, 1331 of them not attributed: 1331 of 1336, not of 2667
	printf 'dir\ta\ntext\tstats/total_samples\t1336\\n\ntext\tstats/lost_no_mapping\t1300\\n\n'
	printf 'text\tstats/lost_kernel\t31\\n\n'
	# (b) the kernel dropped records of unknown kind: not "of 26726 samples"
	printf 'dir\tb\ntext\tstats/total_samples\t4675\\n\ntext\tstats/lost_records_by_kernel\t22051\\n\n'
	# samples and side-band records told apart
	printf 'dir\tc\ntext\tstats/total_samples\t1000\\n\ntext\tstats/lost_samples_by_kernel\t5000\\n\n'
	printf 'text\tstats/lost_sideband_by_kernel\t300\\n\ntext\tstats/lost_no_mapping\t20\\n\n'
	# hostile: UINT64_MAX, not a number, an overflow, a sign
	printf 'dir\td\ntext\tstats/total_samples\t944\\n\ntext\tstats/lost_kernel\t18446744073709551615\\n\n'
	printf 'dir\te\ntext\tstats/total_samples\t944\\n\ntext\tstats/lost_no_mapping\tlots\\n\n'
	printf 'dir\tf\ntext\tstats/total_samples\t944\\n\ntext\tstats/lost_records_by_kernel\t99999999999999999999999\\n\n'
	printf 'dir\tg\ntext\tstats/total_samples\t-5\\n\ntext\tstats/lost_no_mapping\t3\\n\n'
	# more received samples lost than received
	printf 'dir\th\ntext\tstats/total_samples\t100\\n\ntext\tstats/lost_no_mapping\t60\\n\ntext\tstats/lost_kernel\t50\\n\n'
	# what a full disk left before: empty files
	printf 'dir\ti\ntext\tstats/total_samples\ntext\tstats/lost_no_mapping\n'
	# a quiet session: nothing lost, nothing said
	printf 'dir\tj\ntext\tstats/total_samples\t1000\\n\n'
} >"$W/script"
"$MKFIXTURE" "$S" <"$W/script" || { echo "report_stats: mkfixture failed"; exit 1; }

rpt() { # session -> $W/NAME.err
	"$OPREPORT" --session-dir="$S" "session:$1" >"$W/$1.out" 2>"$W/$1.err"
}
has() { grep -q -- "$2" "$W/$1.err"; }

rpt a
if has a "1331 of 1336 samples were lost" && ! has a "2667"; then ok
else bad "(a) received but not attributed: expected '1331 of 1336 samples'"; cat "$W/a.err"; fi

rpt b
if has b "22051 records of unknown kind" && ! has b "of 26726" && ! has b "Lost samples detected"; then ok
else bad "(b) LOST records of unknown kind reported as samples"; cat "$W/b.err"; fi

rpt c
if has c "5020 of 6000 samples were lost" && has c "5000 dropped by the kernel" &&
	has c "20 received but not attributed" && has c "300 mmap/comm/fork/exit records"; then ok
else bad "(b) samples and side-band records apart"; cat "$W/c.err"; fi

for d in d e f g; do
	rpt $d
	if has $d "stats/lost_.*damaged\|stats/total_samples.*damaged" && ! has $d "18446744073709551615 of" &&
		! has $d "Lost samples detected" && ! has $d "of unknown kind" && grep -q "true" "$W/$d.out"; then ok
	else bad "hostile stats file ($d): expected a 'damaged' warning naming it, no figures"; cat "$W/$d.err"; fi
done
has d "$S/samples/d/stats/lost_kernel" && ok || { bad "hostile: the warning names the file"; cat "$W/d.err"; }

rpt h
if has h "damaged" && has h "110" && ! has h "Lost samples detected"; then ok
else bad "lost received samples beyond total_samples: expected 'damaged'"; cat "$W/h.err"; fi

rpt i
if has i "stats/total_samples.*empty" && has i "stats/lost_no_mapping.*empty"; then ok
else bad "empty stats files (full disk): expected warnings"; cat "$W/i.err"; fi

rpt j
if [ ! -s "$W/j.err" ]; then ok; else bad "a session without losses warns"; cat "$W/j.err"; fi

# --- --append adds to total_samples ------------------------------------------
D=$W/append
run_d() { "$OPD" --config= --session-dir="$D" -e TIMER:1000000 "$@" -- "$PROBE" spin 0.3 >>"$W/append.log" 2>&1; }
received() { # samples counted in the last statistics block of the log
	awk -F': ' '/^Nr. samples received:/ { r = $2 } /^Nr. plugin source samples:/ { s = $2 }
		END { print r + s }' "$D/samples/oprofiled.log"
}
if run_d; then
	t1=$(cat "$D/samples/current/stats/total_samples" 2>/dev/null)
	r1=$(received)
	if run_d --append; then
		r2=$(received)
		t2=$(cat "$D/samples/current/stats/total_samples" 2>/dev/null)
		if [ -n "$t1" ] && [ "$t1" = "$r1" ] && [ "${t2:-0}" = $((t1 + r2)) ] && [ "$r2" -gt 0 ]; then ok
		else bad "--append: total_samples $t1 then $t2, expected $t1 + $r2"; fi
	else
		bad "oprofiled --append failed"; tail -5 "$W/append.log"
	fi
else
	bad "oprofiled failed"; tail -5 "$W/append.log"
fi

# --- a stopped daemon: the kernel drops, opreport says what the files say -----
L=$W/lossy
"$OPD" --config= --session-dir="$L" -e TIMER:250000 --ring-pages=1 -- "$PROBE" spin 1.5 \
	>"$W/lossy.log" 2>&1 &
dpid=$!
sleep 0.4
kill -STOP $dpid
sleep 0.6
kill -CONT $dpid
wait $dpid
rc=$?
st=$L/samples/current/stats
ks=$(cat "$st/lost_samples_by_kernel" 2>/dev/null)
tot=$(cat "$st/total_samples" 2>/dev/null)
if [ $rc -eq 0 ] && [ "${ks:-0}" -gt 0 ] && [ ! -e "$st/lost_records_by_kernel" ]; then ok
else bad "stopped daemon: rc $rc, lost_samples_by_kernel '${ks:-}', expected > 0 and no records of unknown kind"
	ls "$st"; tail -5 "$W/lossy.log"; fi
"$OPREPORT" --session-dir="$L" >"$W/lossy.out" 2>"$W/lossy.err"
un=0
for f in lost_kernel lost_no_mapping lost_no_app_for_user_sample lost_invalid_domain lost_samplefile; do
	[ -e "$st/$f" ] && un=$((un + $(cat "$st/$f")))
done
if grep -q "$((ks + un)) of $((tot + ks)) samples were lost" "$W/lossy.err"; then ok
else bad "stopped daemon: expected '$((ks + un)) of $((tot + ks)) samples were lost'"; cat "$W/lossy.err"; fi

# --- losses, then a save: the losses stay with the saved session -------------
# (the daemon copied its lifetime lost count into the last session at stop)
R=$W/rotated
"$OPD" --config= --session-dir="$R" -e TIMER:250000 --ring-pages=1 -- "$PROBE" spin 2.5 \
	>"$W/rot.log" 2>&1 &
dpid=$!
sleep 0.4
kill -STOP $dpid
sleep 0.6
kill -CONT $dpid
sleep 0.3
"$OP_BUILDDIR/tools/opcontrol" --session-dir="$R" --save=lossy >"$W/rot.save" 2>&1 ||
	bad "opcontrol --save=lossy: $(cat "$W/rot.save")"
wait $dpid
saved=$(cat "$R/samples/lossy/stats/lost_samples_by_kernel" 2>/dev/null)
after=0
for f in lost_samples_by_kernel lost_records_by_kernel lost_sideband_by_kernel; do
	[ -e "$R/samples/current/stats/$f" ] && after=$((after + $(cat "$R/samples/current/stats/$f")))
done
if [ "${saved:-0}" -gt 0 ] && [ "$after" -lt "${saved:-0}" ]; then ok
else bad "losses before a save: saved session lost_samples_by_kernel '${saved:-}', the new current $after (the saved losses counted again)"
	ls "$R/samples/lossy/stats" "$R/samples/current/stats"; tail -5 "$W/rot.log"; fi

echo "report_stats: $npass passed, $fail failed"
[ $fail -eq 0 ]
