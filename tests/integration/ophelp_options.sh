#!/bin/sh
# ophelp_options.sh - every option of ophelp with OProfile 1.x's letter and
# meaning: -c/--cpu-type, -e/--check-events (arguments and =SPEC, bad specs
# exit 1 naming the event), -i/--ignore-count, --callgraph=DEPTH, -r, -d,
# -u/--unit-mask, -E/--extra-mask, -X/--xml (well-formed, OProfile's schema
# elements, escaping of a hostile catalogue), --get-cpu-frequency, -v, -?,
# --usage, -h; TIMER[:period] in timer mode; bad options and values.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
OPHELP=$OP_BUILDDIR/tools/ophelp
W=$OP_BUILDDIR/tests/ophelp_options.tmp
OPROFILE_EVENTS_DIR=$OP_SRCDIR/events
export OPROFILE_EVENTS_DIR
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
G=x86-64/generic

# expect_fail MESSAGE-REGEX ARGS...: exit status 1 and the message on stderr
expect_fail() {
	re=$1; shift
	if "$OPHELP" "$@" >"$W/o" 2>"$W/e"; then
		bad "ophelp $* succeeded: $(cat "$W/o")"
	elif grep -q -- "$re" "$W/e"; then ok
	else bad "ophelp $*: stderr lacks '$re': $(cat "$W/e")"; fi
}

# -c is the CPU type (OProfile), no longer --check-events
"$OPHELP" -c $G >"$W/c" 2>&1 && grep -q "available events for CPU type \"$G\"" "$W/c" && ok ||
	bad "-c $G: $(head -3 "$W/c")"
"$OPHELP" --cpu-type=$G >"$W/c2" 2>&1 && cmp -s "$W/c" "$W/c2" && ok || bad "-c and --cpu-type differ"
expect_fail 'cpu type "CPU_CLK_UNHALTED:100000"' -c CPU_CLK_UNHALTED:100000
expect_fail 'needs a value' -c

# -e: events as arguments (space-separated, each may be a comma list) or =SPEC
out=$("$OPHELP" -c $G -e CPU_CLK_UNHALTED:100000 RETIRED_UOPS:1000,RETIRED_MMX_FP_INSTRUCTIONS:1000:0x3 2>&1) &&
	[ "$(echo "$out" | wc -l)" = 3 ] && echo "$out" | grep -q "^RETIRED_MMX_FP_INSTRUCTIONS:1000:0x3:1:1 counter" && ok ||
	bad "-e with three specs: $out"
out=$("$OPHELP" -c $G --check-events=CPU_CLK_UNHALTED:100000:0:0:1 2>&1) &&
	echo "$out" | grep -q "^CPU_CLK_UNHALTED:100000:0x0:0:1 counter" && ok || bad "--check-events=SPEC: $out"
out=$("$OPHELP" -c $G -eCPU_CLK_UNHALTED:100000 2>&1) && ok || bad "-eSPEC: $out"
expect_fail 'no event NO_SUCH_EVENT' -c $G -e NO_SUCH_EVENT:100000
expect_fail 'count 10 is below the minimum 50000 for CPU_CLK_UNHALTED' -c $G -e CPU_CLK_UNHALTED:10
expect_fail 'RETIRED_MMX_FP_INSTRUCTIONS' -c $G -e RETIRED_MMX_FP_INSTRUCTIONS:1000:0x80
expect_fail 'CPU_CLK_UNHALTED' -c $G -e CPU_CLK_UNHALTED:100000 CPU_CLK_UNHALTED:100000
expect_fail 'no events given' -c $G -e
expect_fail 'exclude each other' -c $G -e -u CPU_CLK_UNHALTED

# -i: ocount's specs, without a count
out=$("$OPHELP" -c $G -i -e CPU_CLK_UNHALTED RETIRED_MMX_FP_INSTRUCTIONS:0x3:0:1 2>&1) &&
	echo "$out" | grep -q "^RETIRED_MMX_FP_INSTRUCTIONS:[0-9]*:0x3:0:1 counter" && ok || bad "-i -e: $out"
expect_fail 'RETIRED_MMX_FP_INSTRUCTIONS' -c $G -i -e RETIRED_MMX_FP_INSTRUCTIONS:0x80

# --callgraph=DEPTH: 15 times the minimum for counter events; ext: events refused
"$OPHELP" -c $G --callgraph=8 -e CPU_CLK_UNHALTED:750000 >/dev/null 2>&1 && ok || bad "--callgraph at 15x the minimum refused"
expect_fail 'below the minimum 750000 with call graphs' -c $G --callgraph=8 -e CPU_CLK_UNHALTED:100000
expect_fail 'records no call graphs' -c x86-64/family10 --callgraph=8 -e IBS_FETCH_ALL:100000
"$OPHELP" -c x86-64/family10 -e IBS_FETCH_ALL:100000 >/dev/null 2>&1 && ok || bad "IBS_FETCH_ALL refused without --callgraph"
expect_fail 'expected a depth' -c $G --callgraph=-1 -e CPU_CLK_UNHALTED:100000
expect_fail 'expected a depth' -c $G --callgraph=x -e CPU_CLK_UNHALTED:100000
expect_fail 'give it with --check-events' -c $G --callgraph=4

# TIMER[:period]: the timer-mode event, checked; TIMER alone is the default period
out=$("$OPHELP" -c timer -e TIMER 2>&1) && [ "$out" = "TIMER:250000:0x0:1:1 counter 0" ] && ok || bad "-e TIMER: $out"
out=$("$OPHELP" -c timer -e TIMER:1000000 2>&1) && [ "$out" = "TIMER:1000000:0x0:1:1 counter 0" ] && ok || bad "-e TIMER:1000000: $out"
expect_fail 'count 5000 is below the minimum 100000 for TIMER' -c timer -e TIMER:5000
expect_fail 'no event CPU_CLK_UNHALTED' -c timer -e CPU_CLK_UNHALTED:100000
"$OPHELP" -c timer --callgraph=16 -e TIMER >/dev/null 2>&1 && ok || bad "timer: --callgraph -e TIMER refused"

# -r: OProfile's name of the type; -d: NAME:count:um:1:1 with the unit mask in decimal
[ "$("$OPHELP" -c timer -r)" = "CPU with timer interrupt" ] && ok || bad "-c timer -r: $("$OPHELP" -c timer -r)"
[ "$("$OPHELP" -c $G -r)" = "AMD64 generic" ] && ok || bad "-c $G -r"
[ "$("$OPHELP" --get-cpu-type -c i386/arch_perfmon)" = "Intel Architectural Perfmon" ] && ok || bad "--get-cpu-type"
[ "$("$OPHELP" -c timer -d)" = "TIMER:250000:0:1:1" ] && ok || bad "-c timer -d: $("$OPHELP" -c timer -d 2>&1)"
d=$("$OPHELP" -c $G --get-default-event) && "$OPHELP" -c $G -e "$d" >/dev/null 2>&1 &&
	echo "$d" | grep -q '^CPU_CLK_UNHALTED:[0-9]*:[0-9]*:1:1$' && ok || bad "-d $G: $d not checked fine"
if [ ! -d /sys/bus/event_source/devices/cpu ]; then
	# this machine: no PMU, timer mode without -c
	[ "$("$OPHELP" -d)" = "TIMER:250000:0:1:1" ] && ok || bad "-d here: $("$OPHELP" -d 2>&1)"
	"$OPHELP" -e "$("$OPHELP" -d)" >/dev/null 2>&1 && ok || bad "-e of -d's event refused here"
fi

# -u and -E: decimal, as OProfile's
[ "$("$OPHELP" -c $G -u RETIRED_MMX_FP_INSTRUCTIONS)" = 7 ] && ok || bad "-u"
[ "$("$OPHELP" -c $G --unit-mask=RETIRED_MMX_FP_INSTRUCTIONS)" = 7 ] && ok || bad "--unit-mask="
expect_fail 'no event NOPE' -c $G -u NOPE
expect_fail 'no event given' -c $G -u
# the extra bits of a named value: the catalogue's own encoding
e=$("$OPHELP" -c $G -E RETIRED_MMX_FP_INSTRUCTIONS:1000:sse) && [ "$e" -gt 0 ] 2>/dev/null && ok ||
	bad "-E of a named value: $e"
[ "$("$OPHELP" -c $G -E CPU_CLK_UNHALTED:100000)" = 0 ] && ok || bad "-E without extra"
expect_fail 'one expected' -c $G -E CPU_CLK_UNHALTED:100000,RETIRED_UOPS:1000

# -X: well-formed XML with OProfile's elements and every event of the listing
"$OPHELP" -c $G -X >"$W/x.xml" 2>"$W/x.err" || bad "-X failed: $(cat "$W/x.err")"
n_text=$(grep -c '^[A-Z0-9_]*: (' "$W/c")
python3 - "$W/x.xml" "$n_text" >"$W/x.py" 2>&1 <<'PY' && ok || bad "-X: $(cat "$W/x.py")"
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert r.tag == "help_events" and r.get("schemaversion") == "2.0", r.attrib
h = r.find("header")
assert h is not None and h.get("title") == 'oprofile: available events for CPU type "AMD64 generic"', h.attrib
ev = r.findall("event")
assert len(ev) == int(sys.argv[2]), (len(ev), sys.argv[2])
mmx = [e for e in ev if e.get("event_name") == "RETIRED_MMX_FP_INSTRUCTIONS"][0]
ums = mmx.find("unit_masks")
assert ums.get("default") == "7" and ums.get("category") == "bitmask", ums.attrib
assert [u.get("mask") for u in ums.findall("unit_mask")] == ["1", "2", "4"]
assert [u.get("name") for u in ums.findall("unit_mask")] == ["x87", "mmx_3dnow", "sse"]
for e in ev:
    int(e.get("counter_mask")); int(e.get("min_count")); assert e.get("desc") is not None
PY
"$OPHELP" -c timer --xml >"$W/t.xml" && python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
e = r.findall("event")
assert [x.get("event_name") for x in e] == ["TIMER"] and e[0].get("min_count") == "100000"
' "$W/t.xml" && ok || bad "-c timer -X: $(cat "$W/t.xml")"
# a catalogue with characters XML must escape and bytes that are not UTF-8
mkdir -p "$W/ev/x86-64/generic"
printf 'name:zero type:mandatory default:0x00\n\t0x00 No unit mask\nname:odd type:bitmask default:0x01\n\t0x01 extra: a&b value "one" <1> \047q\047\n' \
	>"$W/ev/x86-64/generic/unit_masks"
printf 'event:0x076 counters:0,1,2,3 um:zero minimum:500 name:CPU_CLK_UNHALTED : Cycles <not> & "halted" \377\376 end\nevent:0x077 counters:0 um:odd minimum:500 name:ODD : odd\n' \
	>"$W/ev/x86-64/generic/events"
if OPROFILE_EVENTS_DIR=$W/ev "$OPHELP" -c $G -X >"$W/h.xml" 2>"$W/h.err"; then
	python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
e = r.findall("event")
assert e[0].get("desc") == "Cycles <not> & \"halted\" \ufffd\ufffd end", e[0].get("desc")
u = e[1].find("unit_masks").find("unit_mask")
assert u.get("name") == "a&b" and u.get("desc") == "value \"one\" <1> %sq%s" % (chr(39), chr(39)), u.attrib
assert e[1].get("counter_mask") == "1", e[1].attrib
' "$W/h.xml" >"$W/h.py" 2>&1 && ok || bad "hostile catalogue -X: $(cat "$W/h.py") $(cat "$W/h.xml")"
else
	bad "hostile catalogue -X failed: $(cat "$W/h.err")"
fi
expect_fail 'no EVENT arguments' -c $G -X CPU_CLK_UNHALTED

# --get-cpu-frequency: the MHz of /proc/cpuinfo when it has them
if grep -q '^cpu MHz' /proc/cpuinfo; then
	f=$("$OPHELP" --get-cpu-frequency) && awk -v f="$f" 'BEGIN { exit !(f + 0 > 0) }' && ok ||
		bad "--get-cpu-frequency: $f"
else
	"$OPHELP" --get-cpu-frequency >/dev/null 2>&1 && bad "--get-cpu-frequency without cpu MHz succeeded" || ok
fi

# event descriptions by name; -v, -?, --usage, -h
"$OPHELP" -c $G CPU_CLK_UNHALTED RETIRED_UOPS >"$W/n" 2>&1 && [ "$(grep -c '^[A-Z_]*: (' "$W/n")" = 2 ] && ok ||
	bad "two EVENT names: $(cat "$W/n")"
expect_fail 'no event BOGUS' -c $G BOGUS
"$OPHELP" -v | grep -q "^ophelp: oprofile-ng [0-9]" && ok || bad "-v: $("$OPHELP" -v)"
[ "$("$OPHELP" -v)" = "$("$OPHELP" --version)" ] && ok || bad "-v and --version differ"
"$OPHELP" -? | grep -q '^Usage: ophelp' && ok || bad "-?"
"$OPHELP" --usage | grep -q -- '--check-events' && ok || bad "--usage"
"$OPHELP" -h | grep -q -- '-c, --cpu-type=TYPE' && ok || bad "-h"
expect_fail 'unknown option --check-event-typo' --check-event-typo
expect_fail 'unknown option -Z' -Z

echo "ophelp_options: $npass passed, $fail failed"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
