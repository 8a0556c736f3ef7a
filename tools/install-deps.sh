#!/bin/sh
# install-deps.sh - install the Debian 12 packages the build and tests need,
# when they are missing. Needs root (apt-get); does nothing if all are there.
# SPDX-License-Identifier: MIT
# librsvg2-bin: rsvg-convert, which tests/integration/callgraph.sh uses to render the flame graph
# logrotate: tests/integration/deploy.sh runs conf/oprofiled.logrotate
# libxml2-utils: xmllint checks the flame-graph SVG and opreport -X; python3: the tests' JSON/CSV checks
# man-db, groff-base: tests/integration/man_pages.sh renders the man pages (man -l, man -M)
pkgs="build-essential autoconf automake libtool pkg-config libconfig-dev binutils-dev libpfm4-dev libcmocka-dev librsvg2-bin logrotate libxml2-utils python3 man-db groff-base"
# --- issue 19: libdebuginfod-dev (report tools' debug info by build ID), debuginfod (the tests' local server)
pkgs="$pkgs libdebuginfod-dev debuginfod"
# --- issue 19: opexport: protobuf-c and zlib; the consumers its tests run: pprof (built from
# Debian's Go sources), protoc --decode, node/npm for speedscope's schema ---
pkgs="$pkgs golang-go golang-github-google-pprof-dev protobuf-compiler protobuf-c-compiler libprotobuf-c-dev zlib1g-dev nodejs"
# npm: Debian's package, unless a node distribution that bundles it is installed
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
# --- issue 19: the pprof encoder's gzip members (libdeflate) ---
pkgs="$pkgs libdeflate-dev"
# --- issue 21: optop's curses view (libncurses-dev), its tmux-driven test (tmux) ---
pkgs="$pkgs libncurses-dev tmux"
# --- issue 20: pprof pull (libmicrohttpd), push (libcurl, jansson, nettle for base64); the
# tests check profiles with the upstream pprof CLI (built offline from golang-github-google-pprof-dev)
# and protoc --decode, and run the loopback receiver with python3, the requests with curl.
# libcurl's GnuTLS flavour: libmicrohttpd brings GnuTLS already, one TLS stack in the daemon.
# It conflicts with libcurl4-openssl-dev, which apt-get install replaces (removes) by itself;
# python3-prometheus-client: the /metrics test parses the scrape with Prometheus' own parser;
# openssl (the CLI): push_tls.sh makes its receiver's certificate ---
pkgs="$pkgs libmicrohttpd-dev libcurl4-gnutls-dev libjansson-dev nettle-dev golang-go golang-github-google-pprof-dev protobuf-compiler curl python3-prometheus-client openssl"
# --- issue 20: the push plugin's URL parsing and query escaping (liburiparser, libc only) ---
pkgs="$pkgs liburiparser-dev"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
apt-get update -qq >/dev/null && \
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
