#!/bin/sh
# swap_race.sh - issue 14 hole 3 through the oprofiled binary: a root
# oprofiled and an unprivileged user who owns a directory above the plugin
# directory. (a) a plugin below that directory is refused and its constructor
# never runs; (b) the user swaps the root-owned plugin directory with their
# own (renameat2 RENAME_EXCHANGE in a loop) while root runs --list-plugins
# SWAP_TRIES times: the user's constructor never runs as root; (c) the user
# running their own oprofiled on their own plugin directory still works.
# The constructors leave $FX_CTOR_MARK (tests/plugins/fx_mark.c).
# SPDX-License-Identifier: MIT
set -u
: "${OP_BUILDDIR:?}" "${OP_SRCDIR:?}"
. "$OP_SRCDIR/tests/integration/test_user.sh"
op_test_user
od=$OP_BUILDDIR/core/oprofiled
fx=$OP_BUILDDIR/tests/plugins/.libs
xchg=$OP_BUILDDIR/tests/plugins/op_exchange
base=$OP_BUILDDIR/tests/plugins/swap-tmp
mark=$base/mark
tries=${SWAP_TRIES:-300}
fails=0
xpid=

cleanup() {
	[ -n "$xpid" ] && : > "$base/stop" && wait "$xpid"
	rm -rf "$base"
}
trap cleanup EXIT

check() { # $1 = what, $2 = text, $3 = expected fixed string
	if printf '%s\n' "$2" | grep -qF -- "$3"; then
		echo "ok: $1"
	else
		echo "FAIL: $1: expected \"$3\" in:"; printf '%s\n' "$2"; fails=$((fails + 1))
	fi
}

no_mark() { # $1 = what
	if [ -e "$mark" ]; then
		echo "FAIL: $1: a plugin constructor ran as root ($mark exists)"; fails=$((fails + 1))
	else
		echo "ok: $1: no constructor ran"
	fi
}

# put fixture $1 into directory $2 as $3.so, owned by $4
put() {
	cp "$fx/$1.so" "$2/$3.so" && chmod 0644 "$2/$3.so" && chown "$4" "$2/$3.so"
}

rm -rf "$base"
mkdir -p "$base/u/plain" "$base/u/plugins" "$base/u/evil" "$base/u/mine"
chmod 0755 "$base" "$base/u" "$base/u/plain" "$base/u/plugins" "$base/u/evil" "$base/u/mine"
put fx_mark "$base/u/plain" fx_mark root
cp "$OP_BUILDDIR/plugins/.libs/timer.so" "$OP_BUILDDIR/plugins/.libs/kernel.so" "$base/u/plain/"
put fx_all "$base/u/plugins" fx_all root
put fx_mark "$base/u/evil" fx_all "$OP_UID"
put fx_mark "$base/u/mine" fx_mark "$OP_UID"
chown "$OP_UID:$OP_GID" "$base/u" "$base/u/evil" "$base/u/mine"

# (a) a root-owned plugin directory below the user's directory
rm -f "$mark"
out=$(FX_CTOR_MARK=$mark "$od" --config= --plugin-dir="$base/u/plain" --list-plugins 2>&1)
check "user-owned ancestor, --list-plugins" "$out" \
	"fx_mark      REFUSED: directory $base/u (above the plugin directory) is owned by uid $OP_UID"
no_mark "user-owned ancestor, --list-plugins"
out=$(FX_CTOR_MARK=$mark "$od" --config= --plugin-dir="$base/u/plain" \
	--session-dir="$base/s" --ext-feature=fx_mark -- true 2>&1); rc=$?
check "user-owned ancestor, load exit" "rc=$rc" "rc=1"
check "user-owned ancestor, load message" "$out" \
	"plugin \"fx_mark\" ($base/u/plain/fx_mark.so): directory $base/u (above the plugin directory) is owned by uid $OP_UID"
no_mark "user-owned ancestor, load"
rm -f "$mark"
chmod 0777 "$base/u"
out=$(FX_CTOR_MARK=$mark "$od" --config= --plugin-dir="$base/u/plain" --list-plugins 2>&1)
check "world-writable ancestor" "$out" "directory $base/u (above the plugin directory) is writable by everyone (mode 0777)"
no_mark "world-writable ancestor"
chmod 0755 "$base/u"

# (b) the swap race: root's directory and the user's, exchanged in a loop
rm -f "$mark"
op_as_user "$xchg" "$base/u/plugins" "$base/u/evil" 120 "$base/stop" > "$base/xchg.out" 2>&1 &
xpid=$!
i=0
while [ "$i" -lt "$tries" ] && [ ! -e "$mark" ]; do
	out=$(FX_CTOR_MARK=$mark "$od" --config= --plugin-dir="$base/u/plugins" --list-plugins 2>&1)
	i=$((i + 1))
done
: > "$base/stop"; wait "$xpid"; xpid=
swaps=$(sed -n 's/ swaps$//p' "$base/xchg.out")
if [ "${swaps:-0}" -gt 0 ] 2>/dev/null; then
	echo "ok: the user swapped the directories $swaps times during $i runs"
else
	echo "FAIL: the swapper did not run:"; cat "$base/xchg.out"; fails=$((fails + 1))
fi
no_mark "swap race, $i runs of --list-plugins"
check "swap race, last listing refuses" "$out" "fx_all       REFUSED: directory $base/u (above the plugin directory) is owned by uid $OP_UID"

# (c) the user's own oprofiled on the user's own plugin directory
out=$(op_as_user env FX_CTOR_MARK="$base/u/mine/mark" "$od" --config= --plugin-dir="$base/u/mine" \
	--list-plugins 2>&1)
check "a user's own plugin dir" "$out" "fx_mark      1.0      SDK 1.3  fixture: its constructor leaves a mark file"
[ -e "$base/u/mine/mark" ] || { echo "FAIL: the user's own plugin was not loaded"; fails=$((fails + 1)); }

exit $((fails != 0))
