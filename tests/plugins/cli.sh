#!/bin/sh
# cli.sh - the loader through the real oprofiled binary: --list-plugins on
# fixture plugins, --check-config on the shipped example config, and refusal
# of bad plugins / bad options with a non-zero exit and a clear message.
# SPDX-License-Identifier: MIT
set -u
: "${OP_BUILDDIR:?}" "${OP_SRCDIR:?}"
od=$OP_BUILDDIR/core/oprofiled
fx=$OP_BUILDDIR/tests/plugins/.libs
dir=$OP_BUILDDIR/tests/plugins/cli-tmp
fails=0
rm -rf "$dir"
mkdir -p "$dir/plugins"
chmod 0755 "$dir" "$dir/plugins"
for p in fx_all fx_old fx_major fx_fail; do
	cp "$fx/$p.so" "$dir/plugins/$p.so"
	chmod 0644 "$dir/plugins/$p.so"
done

check() { # $1 = what, $2 = text, $3 = expected fixed string
	if printf '%s\n' "$2" | grep -qF -- "$3"; then
		echo "ok: $1"
	else
		echo "FAIL: $1: expected \"$3\" in:"; printf '%s\n' "$2"; fails=$((fails + 1))
	fi
}

out=$("$od" --config= --plugin-dir="$dir/plugins" --list-plugins 2>&1); rc=$?
check "list-plugins exit" "rc=$rc" "rc=0"
check "list-plugins good" "$out" "fx_all       1.2.3    SDK 1.3  fixture: one registration of every kind"
check "list-plugins old" "$out" "fx_old       1.0      SDK 1.0"
check "list-plugins refused" "$out" "fx_major     REFUSED: built for SDK 2.3, oprofiled provides 1.3 - rebuild the plugin against SDK 1.x"

out=$("$od" --config="$OP_SRCDIR/conf/oprofiled.conf" --check-config 2>&1); rc=$?
check "check-config exit" "rc=$rc" "rc=0"
check "check-config names the file" "$out" "(command line > $OP_SRCDIR/conf/oprofiled.conf > defaults)"
check "check-config values" "$out" 'separate = "lib,kernel";'

out=$("$od" --config= --plugin-dir="$dir/plugins" --session-dir="$dir/s1" \
	--ext-feature=fx_major -- true 2>&1); rc=$?
check "refused plugin exit" "rc=$rc" "rc=1"
log=$(cat "$dir/s1/samples/oprofiled.log" 2>/dev/null; printf '%s' "$out")
check "refused plugin message" "$log" "plugin \"fx_major\" ($dir/plugins/fx_major.so): built for SDK 2.3, oprofiled provides 1.3"

out=$("$od" --config= --plugin-dir="$dir/plugins" --session-dir="$dir/s2" \
	--ext-feature=fx_fail -- true 2>&1); rc=$?
check "failing init exit" "rc=$rc" "rc=1"
log=$(cat "$dir/s2/samples/oprofiled.log" 2>/dev/null; printf '%s' "$out")
check "failing init message" "$log" "ext_init failed with -5 (Input/output error)"

chmod 0775 "$dir/plugins"
out=$("$od" --config= --plugin-dir="$dir/plugins" --session-dir="$dir/s3" \
	--ext-feature=fx_old -- true 2>&1); rc=$?
check "unsafe dir exit" "rc=$rc" "rc=1"
log=$(cat "$dir/s3/samples/oprofiled.log" 2>/dev/null; printf '%s' "$out")
check "unsafe dir message" "$log" "is writable by its group (mode 0775) - run chmod go-w"
chmod 0755 "$dir/plugins"

out=$("$od" --config= --separate=lib,sideways -a 2>&1); rc=$?
check "bad --separate exit" "rc=$rc" "rc=1"
check "bad --separate message" "$out" 'unknown --separate value "sideways" - allowed: none,lib,kernel,thread,cpu,all'
out=$("$od" --config= --pid=12x 2>&1); rc=$?
check "bad --pid exit" "rc=$rc" "rc=1"
check "bad --pid message" "$out" '--pid=12x: "12x" is not a process id'
out=$("$od" --config= 2>&1); rc=$?
check "no command exit" "rc=$rc" "rc=1"
check "no command message" "$out" "nothing to profile"

printf 'ring_pages = "lots";\n' > "$dir/bad.conf"
out=$("$od" --config="$dir/bad.conf" --check-config 2>&1); rc=$?
check "bad config exit" "rc=$rc" "rc=1"
check "bad config message" "$out" "$dir/bad.conf:1: \"ring_pages\": expected an integer, found a string"

rm -rf "$dir"
exit $((fails != 0))
