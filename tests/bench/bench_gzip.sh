#!/bin/sh
# bench_gzip.sh - the gzip stage of opexport --format=pprof alone (issue 19):
# the bare profile.proto of real exports (zcat of what opexport wrote) cut
# into the encoder's 256 KiB stages, each a whole gzip member, compressed by
# zlib 1..6 (and level 5 with the deflateTune 8/16/64/16 the encoder used
# before libdeflate) and libdeflate 1..9: median CPU of one thread over RUNS
# passes and bytes, each against zlib 5 tuned (tests/bench/bench_gzip.c;
# every output is inflated back by zlib and compared, or the bench fails).
# Each INPUT is a session directory (exported here: opexport --format=pprof,
# with symbols) or a .pb.gz file an export wrote. Without INPUT: the two
# sessions bench_export.sh leaves in BUILD/tests/bench_export.tmp (s: thread
# and cpu labels, >= 1 M samples; sdef: the default split).
# Usage: tests/bench/bench_gzip.sh [BUILD_DIR=.] [RUNS=5] [INPUT...]
#        (run by hand, never in `make check`; CPU time, so a loaded machine
#        moves the ratios little)
# SPDX-License-Identifier: MIT
set -u
build=$(cd "${1:-.}" && pwd)
runs=${2:-5}
[ $# -gt 2 ] && shift 2 || set --
B=$build/tests/bench/bench_gzip
X=$build/tools/opexport
[ -x "$B" ] || { echo "bench_gzip: $B missing (make tests/bench/bench_gzip)"; exit 1; }
if [ $# -eq 0 ]; then
	E=$build/tests/bench_export.tmp
	[ -d "$E/s" ] && [ -d "$E/sdef" ] ||
		{ echo "bench_gzip: no INPUT and no $E/s, $E/sdef (run bench_export.sh first)"; exit 1; }
	set -- "$E/s" "$E/sdef"
fi
W=$(mktemp -d) || exit 1
trap 'rm -rf "$W"' EXIT
i=0
for in in "$@"; do
	i=$((i + 1))
	if [ -d "$in" ]; then
		[ -x "$X" ] || { echo "bench_gzip: $X missing (make first)"; exit 1; }
		"$X" --session-dir="$in" --format=pprof -o "$W/$i.pb.gz" 2>"$W/err" ||
			{ echo "bench_gzip: opexport --session-dir=$in failed:"; head -5 "$W/err"; exit 1; }
		gz=$W/$i.pb.gz
	else
		gz=$in
	fi
	gzip -dc <"$gz" >"$W/$i.pb" || { echo "bench_gzip: $gz does not gunzip"; exit 1; }
	echo "== $in: the export $(wc -c <"$gz") B, its protobuf $(wc -c <"$W/$i.pb") B"
	"$B" "$W/$i.pb" "$runs" || exit 1
	echo
done
