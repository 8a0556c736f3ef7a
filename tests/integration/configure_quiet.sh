#!/bin/sh
# configure_quiet.sh - configure says nothing on stderr in a build directory
# that already has our core/ subdirectory (every build after the first, and
# the first one's exit): autoconf's own "rm -f core" cleanups printed
# "rm: cannot remove 'core': Is a directory" and the exit trap's failed rm
# left confdefs.h behind. Runs the checks only (--no-create: no config.status).
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
W=$OP_BUILDDIR/tests/configure_quiet.tmp
rm -rf "$W" && mkdir -p "$W/core"
fail=0

# the same compiler as this build, no cache: every probe runs
CC_USED=$(sed -n 's/^CC = //p' "$OP_BUILDDIR/Makefile")
(cd "$W" && CC=${CC_USED:-cc} "${CONFIG_SHELL:-/bin/sh}" "$OP_SRCDIR/configure" -q --no-create \
	--no-recursion >out 2>err) 2>/dev/null
rc=$?
if [ "$rc" != 0 ]; then
	echo "FAIL: configure exited $rc"; sed 's/^/#   /' "$W/err" | head -20; fail=1
fi
if [ -s "$W/err" ]; then
	echo "FAIL: configure wrote to stderr ($(wc -l <"$W/err") lines), expected nothing:"
	sort "$W/err" | uniq -c | sed 's/^/#   /' | head -20
	fail=1
fi
[ -d "$W/core" ] || { echo "FAIL: configure removed the core/ directory"; fail=1; }
for f in confdefs.h conftest.c conftest.err; do
	[ -e "$W/$f" ] && { echo "FAIL: configure left $f behind (its exit trap stopped early)"; fail=1; }
done
[ "$fail" = 0 ] && echo "configure_quiet: configure silent beside core/, nothing left behind"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
