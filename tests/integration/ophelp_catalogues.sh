#!/bin/sh
# ophelp_catalogues.sh - the built ophelp lists every event of every shipped
# catalogue (--cpu-type=X), with the right count, the IBS ext: events of
# x86-64/family10, skylake's cmask unit masks, a default event that
# --check-events accepts, and a clear failure for an unknown event.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
EV=${OPROFILE_EVENTS_DIR:-$S/events}
export OPROFILE_EVENTS_DIR=$EV
OPHELP=$B/tools/ophelp
W=$B/tests/integration/ophelp_catalogues.work
rm -rf "$W"
mkdir -p "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=1; }

for t in x86-64/generic x86-64/family10 x86-64/family15h x86-64/family17h x86-64/family19h \
	i386/arch_perfmon i386/skylake; do
	out=$W/$(echo "$t" | tr / _).txt
	if ! "$OPHELP" --cpu-type="$t" >"$out" 2>"$out.err"; then
		bad "ophelp --cpu-type=$t exited non-zero: $(cat "$out.err")"
		continue
	fi
	grep -q "available events for CPU type \"$t\"" "$out" || bad "$t: no header line"
	n=0
	for name in $(sed -n 's/^event:.* name:\([A-Za-z0-9_]*\) :.*/\1/p' "$EV/$t/events"); do
		n=$((n + 1))
		grep -q "^$name: (" "$out" || bad "$t: event $name of $EV/$t/events is not listed"
	done
	listed=$(grep -c '^[A-Z0-9_]*: (' "$out")
	[ "$n" -ge 7 ] || bad "$t: only $n events in the catalogue"
	[ "$listed" -eq "$n" ] || bad "$t: ophelp lists $listed events, the catalogue has $n"
	def=$("$OPHELP" --cpu-type="$t" -d 2>&1) || bad "$t: ophelp -d failed: $def"
	case $def in CPU_CLK_UNHALTED:*) ;; *) bad "$t: default event '$def'" ;; esac
	"$OPHELP" --cpu-type="$t" --check-events=CPU_CLK_UNHALTED:100000 >/dev/null 2>&1 ||
		bad "$t: --check-events=CPU_CLK_UNHALTED:100000 refused"
	if "$OPHELP" --cpu-type="$t" --check-events=NO_SUCH_EVENT:100000 >"$W/unk" 2>&1; then
		bad "$t: an unknown event was accepted"
	fi
	grep -q NO_SUCH_EVENT "$W/unk" || bad "$t: the unknown-event message does not name it: $(cat "$W/unk")"
	echo "$t: $listed events listed"
done

# family10: the IBS derived events, tagged ext: instead of counters
f10=$W/x86-64_family10.txt
fetch=$(grep -c '^IBS_FETCH_[A-Z0-9_]*: (ext: ibs_fetch)' "$f10")
op=$(grep -c '^IBS_OP_[A-Z0-9_]*: (ext: ibs_op)' "$f10")
[ "$fetch" -eq 13 ] || bad "family10: $fetch IBS fetch events listed, expected 13"
[ "$op" -ge 40 ] || bad "family10: $op IBS op events listed, expected at least 40"
grep -A6 '^IBS_OP_ALL: (ext: ibs_op)' "$f10" | grep -q 'Unit masks (default 0x1)' ||
	bad "family10: IBS_OP_ALL without its ibs_op unit mask"
"$OPHELP" --cpu-type=x86-64/family10 --check-events=IBS_OP_ALL:100000:0x2 >"$W/ibs" 2>&1 ||
	bad "family10: IBS_OP_ALL:100000:0x2 refused: $(cat "$W/ibs")"
grep -q 'ibs_op' "$W/ibs" || bad "family10: --check-events does not say IBS_OP_ALL is an ibs_op event"
grep -q '^IBS_.*(ext:' "$W/x86-64_family15h.txt" && bad "family15h lists IBS ext events (only family10 has them)"

# skylake: unit masks with modifiers and the extended AMD selects are listed
grep -A4 '^CYCLE_ACTIVITY: (' "$W/i386_skylake.txt" | grep -q 'CYCLES_L2_MISS' ||
	bad "skylake: CYCLE_ACTIVITY's CYCLES_L2_MISS unit mask not listed"
grep -q '^TAGGED_IBS_OPS: (' "$W/x86-64_family19h.txt" || bad "family19h: TAGGED_IBS_OPS (0x1cf) not listed"

[ $fail -eq 0 ] && rm -rf "$W"
exit $fail
