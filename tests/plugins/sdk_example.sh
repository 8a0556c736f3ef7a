#!/bin/sh
# sdk_example.sh - the SDK example plugin, built in-tree (sdk/examples/example.la),
# is accepted by oprofiled's loader and registers its hook and stats.
# SPDX-License-Identifier: MIT
set -e
: "${OP_BUILDDIR:?}"
dir=$OP_BUILDDIR/tests/plugins/sdk-example-check
rm -rf "$dir"
mkdir -p "$dir"
chmod 0755 "$dir"
cp "$OP_BUILDDIR/sdk/examples/.libs/example.so" "$dir/example.so"
chmod 0644 "$dir/example.so"
out=$("$OP_BUILDDIR/tests/plugins/op_ext_check" "$dir" example check-label 2>&1)
echo "$out"
echo "$out" | grep -q 'example      1.0      SDK 1.3  example plugin: counts samples by cpu mode'
echo "$out" | grep -q 'loaded example: 0 escape codes, 0 sfile handlers, 0 sources, 1 hooks, 0 models, 0 kernel resolver, 0 counters, 1 stats'
echo "$out" | grep -q 'example: counting samples as "check-label"'
echo "$out" | grep -q 'label: check-label'
echo "$out" | grep -q 'example: 0 samples seen'
rm -rf "$dir"
