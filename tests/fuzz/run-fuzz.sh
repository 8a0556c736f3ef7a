#!/bin/sh
# run-fuzz.sh - build a libFuzzer target with clang (ASan+UBSan) and run it.
# Usage: tests/fuzz/run-fuzz.sh [target=odb] [seconds=300] [extra libFuzzer args]
# Work dir (binary, growing corpus copy, crash files): $FUZZ_OUT or /tmp/oprofile-ng-fuzz.
# Crashes found should be minimised and added to tests/fuzz/corpus/<target>/ (bad-* or valid-*).
# SPDX-License-Identifier: MIT
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:-odb}
secs=${2:-300}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
out=${FUZZ_OUT:-/tmp/oprofile-ng-fuzz}/$target
CC=${CC_FUZZ:-clang}
command -v "$CC" >/dev/null || { echo "run-fuzz: $CC not found (apt-get install clang)" >&2; exit 1; }
mkdir -p "$out/corpus" "$out/crashes"
case $target in
odb) srcs="$top/lib/odb.c $top/lib/op_header.c $top/tests/fuzz/fuzz_odb.c" ;;
*) echo "run-fuzz: unknown target $target" >&2; exit 1 ;;
esac
# shellcheck disable=SC2086
$CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DOP_LIBFUZZER -D_GNU_SOURCE -I"$top/lib" -I"$top/sdk" $srcs -o "$out/fuzz_$target"
cp -n "$top/tests/fuzz/corpus/$target"/* "$out/corpus/" 2>/dev/null || true
cd "$out"
# the target writes each input to a file: keep that in memory when possible
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm; export TMPDIR
fi
exec "./fuzz_$target" -max_total_time="$secs" -max_len=16384 -print_final_stats=1 \
	-artifact_prefix="$out/crashes/" "$@" "$out/corpus"
