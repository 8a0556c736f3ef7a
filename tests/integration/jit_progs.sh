#!/bin/sh
# jit_progs.sh - libopagent as installed programs see it, and the JIT test
# programs the jit plugin's end-to-end tests run (issue 18): the library's
# soname and exports (OProfile's seven functions, no symbol versions);
# jit_opagent's dump (default /tmp/.oprofile/jitdump and
# $OPROFILE_JITDUMP_DIR) mapped executable while it runs, read back with
# lib/op_jit (loads, line tables, unload + reload, close); a killed agent's
# dump still readable; jit_dump's perf jitdump (DEBUG_INFO, LOAD, MOVE,
# CLOSE) mapped executable; jit_perfmap's map; opagent_compat (OProfile's
# header text) running against our library.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
P=$OP_BUILDDIR/tests/integration/jit_progs
LIB=$OP_BUILDDIR/lib/opagent/.libs/libopagent.so.1
W=$OP_BUILDDIR/tests/jit_progs.tmp
rm -rf "$W"
mkdir -p "$W"
fail=0
npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# want FILE PATTERN WHAT: a line of FILE matches the extended regex
want() { if grep -Eq "$2" "$1"; then ok; else bad "$3 (no line /$2/ in $1)"; cat "$1"; fi; }
# count FILE PATTERN N WHAT
count() {
	n=$(grep -Ec "$2" "$1")
	if [ "$n" -eq "$3" ]; then ok; else bad "$4: $n lines /$2/ in $1, want $3"; fi
}
# field LINE KEY: the value of KEY=VALUE in the program's summary line
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# mapped_exec PID FILE: FILE is mapped r-x in PID
mapped_exec() { grep -F "$2" "/proc/$1/maps" | grep -q ' r-xp '; }

for f in "$LIB" "$P/jit_opagent" "$P/jit_dump" "$P/jit_perfmap" "$P/opagent_compat" "$P/jit_read"; do
	[ -e "$f" ] || { echo "jit_progs: missing $f (make check builds it)"; exit 1; }
done

# --- the library as the dynamic linker sees it ---
readelf -d "$LIB" > "$W/dyn" || bad "readelf -d $LIB"
want "$W/dyn" 'SONAME.*\[libopagent\.so\.1\]' "soname libopagent.so.1"
nm -D --defined-only "$LIB" | awk '$2 == "T" { print $3 }' | sort > "$W/exports"
printf '%s\n' op_close_agent op_major_version op_minor_version op_open_agent \
	op_unload_native_code op_write_debug_line_info op_write_native_code > "$W/exports.want"
if cmp -s "$W/exports" "$W/exports.want"; then ok; else
	bad "exported functions differ from OProfile's seven"; diff "$W/exports.want" "$W/exports"
fi
# OProfile's library had no symbol versions: neither has ours (a program
# linked here must also run on OProfile's)
if readelf -V "$LIB" | grep -q 'Version definition'; then bad "libopagent defines symbol versions"; else ok; fi
# the programs load it by soname from the build tree
ldd "$P/opagent_compat" > "$W/ldd" 2>&1
want "$W/ldd" "libopagent\.so\.1 => .*lib/opagent/\.libs/libopagent\.so\.1" "opagent_compat links libopagent.so.1"

# --- OProfile's header text, our library ---
OPROFILE_JITDUMP_DIR=$W "$P/opagent_compat" 20 > "$W/compat.out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok; else bad "opagent_compat exit $rc"; cat "$W/compat.out"; fi
"$P/jit_read" "$W"/*.dump > "$W/compat.txt"
rc=$?
[ $rc -eq 0 ] && ok || bad "jit_read of opagent_compat's dump: exit $rc"
count "$W/compat.txt" '^load name=Lcompat/Klass;method[0-9]+\(I\)V ' 20 "opagent_compat LOAD records"
count "$W/compat.txt" '^unload ' 10 "opagent_compat UNLOAD records"
count "$W/compat.txt" '^  line .* file=Klass\.java$' 40 "opagent_compat line entries"
rm -f "$W"/*.dump

# --- jit_opagent: loads, lines, unload + reload; mapped while it runs ---
OPROFILE_JITDUMP_DIR=$W "$P/jit_opagent" -r -s "$W/src.fake" 600 > "$W/agent.out" 2>&1 &
pid=$!
sleep 0.3
if mapped_exec $pid "$W/$pid.dump"; then ok; else bad "jit_opagent's dump not mapped r-x"; cat "/proc/$pid/maps"; fi
wait $pid
rc=$?
[ $rc -eq 0 ] && ok || { bad "jit_opagent exit $rc"; cat "$W/agent.out"; }
line=$(cat "$W/agent.out")
big=$(field "$line" big)
small=$(field "$line" small)
moved=$(field "$line" moved)
"$P/jit_read" "$W/$pid.dump" > "$W/agent.txt"
rc=$?
[ $rc -eq 0 ] && ok || bad "jit_read of jit_opagent's dump: exit $rc"
want "$W/agent.txt" "^header pid=$pid " "jit_opagent header pid"
want "$W/agent.txt" "^load name=jit_big addr=$big size=[1-9]" "jit_big LOAD at $big"
want "$W/agent.txt" "^load name=jit_small addr=$small " "jit_small LOAD at $small"
want "$W/agent.txt" "^unload addr=$big " "jit_big UNLOAD"
want "$W/agent.txt" "^load name=jit_big addr=$moved " "jit_big reloaded at $moved"
want "$W/agent.txt" "^  line addr=$big lineno=10 file=$W/src.fake$" "jit_big line 10"
want "$W/agent.txt" "^  line addr=$small lineno=20 file=$W/src.fake$" "jit_small line 20"
count "$W/agent.txt" '^debug ' 3 "jit_opagent DEBUG_INFO records"
count "$W/agent.txt" '^close ' 1 "jit_opagent CLOSE"
# the unload comes before the reload, timestamps in order
awk '/^(load|unload|close)/ { for (i = 1; i <= NF; i++) if ($i ~ /^ts=/) { t = substr($i, 4) + 0;
	if (t < last) bad = 1; last = t } } END { exit bad }' "$W/agent.txt" && ok ||
	bad "jit_opagent's timestamps go backwards"

# --- a killed agent leaves a readable dump ---
OPROFILE_JITDUMP_DIR=$W "$P/jit_opagent" 10000 > /dev/null 2>&1 &
pid=$!
sleep 0.3
kill -KILL $pid
wait $pid 2> /dev/null
"$P/jit_read" "$W/$pid.dump" > "$W/killed.txt"
rc=$?
[ $rc -eq 0 ] && ok || { bad "jit_read of a killed agent's dump: exit $rc"; cat "$W/killed.txt"; }
count "$W/killed.txt" '^load ' 2 "killed agent's LOAD records"
count "$W/killed.txt" '^close ' 0 "killed agent's CLOSE"

# --- the default directory, OProfile's /tmp/.oprofile/jitdump (mode 1777) ---
"$P/jit_opagent" 50 > "$W/default.out" 2>&1
rc=$?
pid=$(field "$(cat "$W/default.out")" pid)
if [ $rc -eq 0 ] && [ -f "/tmp/.oprofile/jitdump/$pid.dump" ]; then ok; else
	bad "jit_opagent without OPROFILE_JITDUMP_DIR: exit $rc, no /tmp/.oprofile/jitdump/$pid.dump"
	cat "$W/default.out"
fi
mode=$(stat -c %a /tmp/.oprofile/jitdump 2> /dev/null)
[ "$mode" = 1777 ] && ok || bad "/tmp/.oprofile/jitdump has mode $mode, want 1777"
"$P/jit_read" "/tmp/.oprofile/jitdump/$pid.dump" > /dev/null && ok || bad "default dump unreadable"
rm -f "/tmp/.oprofile/jitdump/$pid.dump"

# --- jit_dump: perf's jitdump written by the runtime itself ---
"$P/jit_dump" "$W" 600 > "$W/dump.out" 2>&1 &
pid=$!
sleep 0.3
if mapped_exec $pid "$W/jit-$pid.dump"; then ok; else bad "jit_dump's dump not mapped r-x"; fi
wait $pid
rc=$?
[ $rc -eq 0 ] && ok || { bad "jit_dump exit $rc"; cat "$W/dump.out"; }
line=$(cat "$W/dump.out")
big=$(field "$line" big)
moved=$(field "$line" moved)
"$P/jit_read" "$W/jit-$pid.dump" > "$W/dump.txt"
rc=$?
[ $rc -eq 0 ] && ok || bad "jit_read of jit_dump's dump: exit $rc"
want "$W/dump.txt" "^load name=jit_big addr=$big .* index=1 " "jit_dump LOAD jit_big"
want "$W/dump.txt" "^load name=jit_small " "jit_dump LOAD jit_small"
want "$W/dump.txt" "^move index=1 old=$big new=$moved " "jit_dump MOVE of jit_big"
want "$W/dump.txt" "^  line addr=$big lineno=10 file=jit_dump.fake$" "jit_dump line 10"
count "$W/dump.txt" '^close ' 1 "jit_dump CLOSE"
# perf's order: the DEBUG_INFO of a function comes before its LOAD
first=$(grep -E '^(debug|load)' "$W/dump.txt" | head -n 1 | cut -d' ' -f1)
[ "$first" = debug ] && ok || bad "jit_dump: DEBUG_INFO does not precede LOAD"

# --- jit_perfmap ---
"$P/jit_perfmap" -d "$W" 100 > "$W/map.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || { bad "jit_perfmap exit $rc"; cat "$W/map.out"; }
line=$(cat "$W/map.out")
pid=$(field "$line" pid)
"$P/jit_read" -m "$W/perf-$pid.map" > "$W/map.txt"
rc=$?
[ $rc -eq 0 ] && ok || bad "jit_read -m of jit_perfmap's map: exit $rc"
want "$W/map.txt" "^map start=$(field "$line" big) size=[1-9][0-9]* name=jit_big$" "perf map jit_big"
want "$W/map.txt" "^map start=$(field "$line" small) size=[1-9][0-9]* name=jit_small$" "perf map jit_small"

# --- usage errors ---
"$P/jit_opagent" > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "jit_opagent without MS: exit not 2"
"$P/jit_dump" "$W" 0 > /dev/null 2>&1
[ $? -eq 2 ] && ok || bad "jit_dump MS=0: exit not 2"

echo "jit_progs: $npass checks passed, $fail failed"
[ $fail -eq 0 ] && rm -rf "$W"
[ $fail -eq 0 ]
