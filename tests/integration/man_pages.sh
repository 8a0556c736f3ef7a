#!/bin/sh
# man_pages.sh - every program `make install` puts in bin/ and sbin/ has a
# man page there that `man -M` finds and renders without a groff warning, and
# answers --version (the package version), --usage and -? (exit 0, some
# text on stdout); the pages of tools/man/ are all installed.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
W=$OP_BUILDDIR/tests/man_pages.tmp
if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	echo "man_pages: SKIP: man or groff is not installed (tools/install-deps.sh installs man-db and groff-base)"
	exit 77
fi
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' "$OP_BUILDDIR/config.h")
[ -n "$version" ] || { echo "man_pages: no PACKAGE_VERSION in $OP_BUILDDIR/config.h"; exit 1; }

D=$W/dest
if ! make -C "$OP_BUILDDIR" install DESTDIR="$D" >"$W/install.log" 2>&1; then
	echo "man_pages: make install DESTDIR=$D failed:"; tail -20 "$W/install.log"; exit 1
fi
mandir=$(find "$D" -type d -path '*/share/man' | head -1)
[ -n "$mandir" ] || { echo "man_pages: make install put no share/man under $D"; exit 1; }
progs=$(find "$D" -type f \( -path '*/bin/*' -o -path '*/sbin/*' \) | sort)
[ -n "$progs" ] || { echo "man_pages: no programs installed under $D"; exit 1; }

for p in $progs; do
	name=$(basename "$p")
	# sbin: section 8; bin: 1, or 8 for an administration tool (opcontrol)
	case $p in */sbin/*) secs=8 ;; *) secs="1 8" ;; esac
	sec=
	for s in $secs; do
		page=$(man -M "$mandir" -w "$s" "$name" 2>/dev/null)
		case $page in "$mandir"/man$s/$name.$s*) sec=$s; break ;; esac
	done
	[ -n "$sec" ] && ok || { bad "$name: man -M $mandir finds no page in section(s) $secs"; continue; }
	# -ww: every groff warning (man-db's --warnings default leaves some out)
	MANWIDTH=80 man -M "$mandir" --warnings=w -E UTF-8 "$sec" "$name" >"$W/$name.txt" 2>"$W/$name.err"
	if [ -s "$W/$name.err" ]; then bad "$name.$sec renders with warnings: $(cat "$W/$name.err")"
	elif grep -q "^NAME" "$W/$name.txt" && grep -q "^SYNOPSIS" "$W/$name.txt" && grep -q "^OPTIONS" "$W/$name.txt"; then ok
	else bad "$name.$sec lacks NAME, SYNOPSIS or OPTIONS: $(head -5 "$W/$name.txt")"; fi

	# the build tree's program of that name (the installed one needs the installed libraries)
	b=$(find "$OP_BUILDDIR" -name "$name" -type f -perm -u+x ! -path '*/.libs/*' ! -path "$W/*" | head -1)
	[ -n "$b" ] || { bad "$name: not found in the build tree"; continue; }
	out=$("$b" --version 2>&1) && echo "$out" | grep -q -- "$version" && ok ||
		bad "$name --version: '$out' (expected the version $version)"
	for opt in --usage -?; do
		if "$b" "$opt" >"$W/u.out" 2>"$W/u.err" && [ -s "$W/u.out" ] && [ ! -s "$W/u.err" ]; then ok
		else bad "$name $opt: exit $?, stdout '$(head -1 "$W/u.out")', stderr '$(cat "$W/u.err")'"; fi
	done
	"$b" --help >"$W/h.out" 2>&1 && [ -s "$W/h.out" ] && ok || bad "$name --help failed"
done

# every page of tools/man/ is installed
for f in "$OP_SRCDIR"/tools/man/*.[18]; do
	n=$(basename "$f")
	[ -f "$mandir/man${n##*.}/$n" ] && ok || bad "tools/man/$n is not installed (dist_man${n##*.}_MANS)"
done

echo "man_pages: $npass passed, $fail failed ($(echo "$progs" | wc -l) programs)"
[ "$fail" -eq 0 ] && [ -z "${OP_KEEP_TMP:-}" ] && rm -rf "$W"
[ "$fail" -eq 0 ]
