#!/bin/sh
# plugin_enabled.sh - "enabled = false" keeps a plugin oprofiled loads by
# itself (kernel, the hardware models) unloaded in both forms of the plugins
# setting: the list ( { name = "kernel"; enabled = false; } ) as well as the
# group { kernel = { enabled = false; }; }. A short launch of /bin/true per
# config file, with --verbose=ext so that the log names every plugin loaded.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
W=$B/tests/integration/plugin_enabled.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0 npass=0
# the program, not the shell's builtin
for TRUE in /bin/true /usr/bin/true; do [ -x "$TRUE" ] && break; done
[ -x "$TRUE" ] || { echo "FAIL: no /bin/true"; exit 1; }

# $1 case name, $2 the plugins setting ("" for none); runs oprofiled, leaves $1.log
run() {
	name=$1
	printf '%s\n' "$2" > "$name.conf"
	"$OPD" --config="$W/$name.conf" --session-dir="$W/$name" --verbose=ext -- "$TRUE" \
		> "$name.out" 2> "$name.err"
	rc=$?
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$name.err"; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: oprofiled exited $rc"; cat "$name.err"; fail=$((fail + 1))
	fi
	cp "$W/$name/samples/oprofiled.log" "$name.log" 2> /dev/null || : > "$name.log"
}

# $1 case name, $2 plugin, $3 "loaded" or "not loaded"
expect() {
	if grep -q "plugin \"$2\" .* loaded from " "$1.log"; then got=loaded; else got="not loaded"; fi
	if [ "$got" = "$3" ]; then
		npass=$((npass + 1))
	else
		echo "FAIL $1: plugin $2 $got, expected $3 with: $(cat "$1.conf")"
		grep 'plugin "' "$1.log"; fail=$((fail + 1))
	fi
}

run none ''
expect none kernel loaded
expect none amd64 loaded
expect none intel loaded
[ -f "$W/none/samples/current/stats/kallsyms" ] && npass=$((npass + 1)) ||
	{ echo "FAIL none: no kallsyms snapshot from the kernel plugin"; fail=$((fail + 1)); }

run group 'plugins = { kernel = { enabled = false; }; amd64 = { enabled = false; }; };'
expect group kernel "not loaded"
expect group amd64 "not loaded"
expect group intel loaded

run list 'plugins = ( { name = "kernel"; enabled = false; }, { name = "amd64"; enabled = false; } );'
expect list kernel "not loaded"
expect list amd64 "not loaded"
expect list intel loaded
[ ! -e "$W/list/samples/current/stats/kallsyms" ] && npass=$((npass + 1)) ||
	{ echo "FAIL list: a kallsyms snapshot, but the kernel plugin is disabled"; fail=$((fail + 1)); }

# enabled = true (or no enabled) loads it as a configured plugin, in either form
run list_on 'plugins = ( { name = "kernel"; enabled = true; } );'
expect list_on kernel loaded
run group_on 'plugins = { kernel = { args = ""; }; };'
expect group_on kernel loaded

echo "plugin_enabled: $npass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
rm -rf "$W"
exit 0
