#!/bin/sh
# run-fuzz.sh - build libFuzzer targets with clang (ASan+UBSan) and run them.
# Usage: tests/fuzz/run-fuzz.sh [TARGET|all|list] [seconds=300] [extra libFuzzer args]
#   TARGET is one of the targets `list` prints (one per tests/fuzz/fuzz_*.c);
#   `all` runs every target in turn, each for the given seconds.
# The perf target includes the core's config.h: it is taken from a configured
# build tree, $OP_BUILDDIR or else build/dev under the top of the tree.
# Work dir (binary, growing corpus copy, crash files): $FUZZ_OUT or /tmp/oprofile-ng-fuzz.
# Crashes found should be minimised and added to tests/fuzz/corpus/<target>/ (bad-* or valid-*).
# SPDX-License-Identifier: MIT
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
targets="odb names perf opimport buildid jitdump jitmap cgstacks"
target=${1:-odb}
secs=${2:-300}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift

case $target in
list) for t in $targets; do echo "$t"; done; exit 0 ;;
all)
	rc=0
	for t in $targets; do
		echo "run-fuzz: $t for ${secs}s"
		"$0" "$t" "$secs" "$@" || rc=1
	done
	exit $rc ;;
esac

out=${FUZZ_OUT:-/tmp/oprofile-ng-fuzz}/$target
CC=${CC_FUZZ:-clang}
command -v "$CC" >/dev/null || { echo "run-fuzz: $CC not found (apt-get install clang)" >&2; exit 1; }
incs="-I$top/lib -I$top/sdk"
libs=""
case $target in
odb) srcs="$top/lib/odb.c $top/lib/op_header.c" ;;
names) srcs="$top/lib/op_mangle.c $top/lib/op_events.c" ;;
opimport) srcs="$top/lib/op_abi.c $top/lib/odb.c $top/lib/op_header.c" ;;
buildid) srcs="$top/lib/op_buildid.c" ;;
jitdump | jitmap) srcs="$top/lib/op_jit.c" ;;
perf)
	build=${OP_BUILDDIR:-$top/build/dev}
	[ -f "$build/config.h" ] || {
		echo "run-fuzz: perf needs a configured build tree for config.h: $build/config.h is missing" \
			"(configure one, or set OP_BUILDDIR)" >&2
		exit 1
	}
	incs="-I$build $incs -I$top/core"
	srcs=""
	for f in perf perf_deliver perf_open perf_replay perf_decode perf_queue ring replay \
		proc_synth; do srcs="$srcs $top/core/$f.c"; done ;;
cgstacks)
	# issue 19: the stack table reader and libopprofile (pprof through protobuf-c, zlib)
	build=${OP_BUILDDIR:-$top/build/dev}
	[ -f "$build/config.h" ] || {
		echo "run-fuzz: cgstacks needs a configured build tree for config.h: $build/config.h is missing" >&2
		exit 1
	}
	mkdir -p "$out"
	protoc-c --c_out="$out" -I"$top/lib/profile" "$top/lib/profile/profile.proto"
	incs="-I$build $incs -I$top/lib/profile -I$out"
	srcs="$out/profile.pb-c.c"
	for f in op_cg_read op_mangle odb op_header op_ksyms op_buildid op_cgroups profile/op_profile \
		profile/op_profile_load profile/op_pprof; do srcs="$srcs $top/lib/$f.c"; done
	libs="-lprotobuf-c -lz" ;;
*) echo "run-fuzz: unknown target '$target' (targets: $targets)" >&2; exit 1 ;;
esac
mkdir -p "$out/corpus" "$out/crashes"
# shellcheck disable=SC2086
$CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DOP_LIBFUZZER -D_GNU_SOURCE $incs $srcs "$top/tests/fuzz/fuzz_$target.c" $libs -o "$out/fuzz_$target"
cp -n "$top/tests/fuzz/corpus/$target"/* "$out/corpus/" 2>/dev/null || true
cd "$out"
# the targets write inputs to files: keep them in memory when possible
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm; export TMPDIR
fi
exec "./fuzz_$target" -max_total_time="$secs" -max_len=16384 -print_final_stats=1 \
	-artifact_prefix="$out/crashes/" "$@" "$out/corpus"
