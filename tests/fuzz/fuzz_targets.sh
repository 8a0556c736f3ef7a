#!/bin/sh
# fuzz_targets.sh - run-fuzz.sh knows every fuzz target of the tree: each
# tests/fuzz/fuzz_*.c is listed by `run-fuzz.sh list`, and nothing else is.
# (A target added without teaching run-fuzz.sh would never be fuzzed.)
# SPDX-License-Identifier: MIT
set -u
src=$(cd "$(dirname "$0")" && pwd)
have=$(sh "$src/run-fuzz.sh" list | LC_ALL=C sort | tr '\n' ' ')
want=$(cd "$src" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//' | LC_ALL=C sort | tr '\n' ' ')
if [ -z "$want" ]; then
	echo "FAIL: no tests/fuzz/fuzz_*.c found next to $0"; exit 1
fi
if [ "$have" != "$want" ]; then
	echo "FAIL: run-fuzz.sh list gives '$have', the tree has targets '$want'"; exit 1
fi
echo "ok: run-fuzz.sh knows every target: $have"
