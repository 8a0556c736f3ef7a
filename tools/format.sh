#!/bin/sh
# format.sh - the top-level .clang-format applied to, or checked against, the
# C sources of core/ lib/ tools/ plugins/ sdk/ (or the files named).
# Usage: tools/format.sh [--check | --diff] [FILE...]
#   (no option)  reformat the files in place
#   --check      change nothing; list the files that would change, exit 1 if any
#   --diff       change nothing; print what would change and how many lines
# CLANG_FORMAT names the program (default clang-format); the .clang-format was
# tuned with version 14, and other versions may format some lines differently.
# SPDX-License-Identifier: MIT
set -u
top=$(cd "$(dirname "$0")/.." && pwd) || exit 2
cf=${CLANG_FORMAT:-clang-format}
mode=apply
case ${1:-} in
--check) mode=check; shift ;;
--diff) mode=diff; shift ;;
-h | --help) sed -n '2,/^# SPDX/{/^# SPDX/!s/^# \{0,1\}//p}' "$0"; exit 0 ;;
-*) echo "format.sh: unknown option '$1' (--check, --diff or none)" >&2; exit 2 ;;
esac
command -v "$cf" > /dev/null 2>&1 || { echo "format.sh: $cf not found (apt-get install clang-format, or set CLANG_FORMAT)" >&2; exit 2; }
[ -f "$top/.clang-format" ] || { echo "format.sh: no .clang-format in $top" >&2; exit 2; }
ver=$("$cf" --version | sed -n 's/.*version \([0-9][0-9]*\).*/\1/p')
[ "$ver" = 14 ] || echo "format.sh: warning: $cf is version ${ver:-unknown}, .clang-format was tuned with 14" >&2

list=$(mktemp "${TMPDIR:-/tmp}/format.XXXXXX") || exit 2
out=$(mktemp "${TMPDIR:-/tmp}/format.XXXXXX") || { rm -f "$list"; exit 2; }
trap 'rm -f "$list" "$out"' EXIT
if [ $# -gt 0 ]; then
	for f in "$@"; do
		[ -f "$f" ] || { echo "format.sh: $f: no such file" >&2; exit 2; }
		printf '%s\n' "$f"
	done > "$list"
elif git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	(cd "$top" && git ls-files -- 'core/*.[ch]' 'lib/*.[ch]' 'tools/*.[ch]' 'plugins/*.[ch]' 'sdk/*.[ch]') |
		sed "s|^|$top/|" > "$list"
else
	find "$top/core" "$top/lib" "$top/tools" "$top/plugins" "$top/sdk" -name '*.[ch]' | sort > "$list"
fi

nfiles=0 nlines=0 rc=0
while read -r f; do
	# --style=file finds the .clang-format above each file
	if ! "$cf" --style=file "$f" > "$out"; then
		echo "format.sh: $cf failed on $f" >&2
		rc=2
		continue
	fi
	cmp -s "$f" "$out" && continue
	nfiles=$((nfiles + 1))
	n=$(diff "$f" "$out" | grep -c '^<')
	nlines=$((nlines + n))
	case $mode in
	apply) cat "$out" > "$f" || rc=2 ;;
	check) echo "$f: $n lines to reformat" ;;
	diff) diff -u "$f" "$out" | sed "1s|^--- .*|--- $f|; 2s|^+++ .*|+++ $f (formatted)|" ;;
	esac
done < "$list"
case $mode in
apply) echo "format.sh: reformatted $nfiles files ($nlines lines)" ;;
*) echo "format.sh: $nfiles of $(wc -l < "$list") files, $nlines lines would change" >&2 ;;
esac
[ $rc -ne 0 ] && exit $rc
[ $mode = check ] && [ $nfiles -gt 0 ] && exit 1
exit 0
