#!/bin/sh
# autogen.sh - regenerate the autotools build (configure, Makefile.in).
# SPDX-License-Identifier: MIT
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
# tap-driver.sh is not installed by automake --add-missing
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
autoreconf --force --install
