#!/bin/sh
# quickstart.sh - the README's first command: install dependencies, build,
# profile the bundled demo workload with oprofiled and print opreport's
# report. Run from a fresh clone as root on Debian 12.
# SPDX-License-Identifier: MIT
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build/quickstart
"$top/tools/install-deps.sh"
(cd "$top" && ./autogen.sh >/dev/null 2>&1)
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" -q CFLAGS="-O2 -g"
make -s -j2 >/dev/null
echo "quickstart: built in $build"
rm -rf oprofile_data
echo "quickstart: profiling tools/op-demo with oprofiled (timer plugin on cpu-clock)"
OP_PLUGIN_DIR=$build/plugins/.libs ./core/oprofiled --session-dir=oprofile_data -- ./tools/op-demo
echo "quickstart: sample files are in $build/oprofile_data/samples/current"
./tools/opreport/opreport --session-dir=oprofile_data
./tools/opreport/opreport --session-dir=oprofile_data -l ./tools/op-demo
