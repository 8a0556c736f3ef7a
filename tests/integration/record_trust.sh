#!/bin/sh
# record_trust.sh - oprofiled --record=FILE creates FILE and never writes
# through what it finds there (issue 14, hole 6): an existing file is
# refused (the message names it and --record-overwrite), a symlink is not
# followed (its target keeps its content), a fresh name records. As root
# (else skipped with a note): a directory every user can write (1777, as
# /tmp) is refused for the record file, with or without a symlink planted
# in it. --record-overwrite replaces a regular file with a new one (a hard
# link keeps the old content); the writer's cases: tests/unit/test_replay.c.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
W=$B/tests/integration/record_trust.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0 npass=0 n=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# rec FILE [OPTIONS]: a short launch-mode run recording to FILE (user-mode
# samples only: allowed at perf_event_paranoid 2), each in its own session
rec() {
	f=$1; shift
	n=$((n + 1))
	"$OPD" --session-dir="$W/s$n" --events=TIMER:1000000:0:0:1 "$@" --record="$f" -- true \
		> "out$n" 2> "err$n"
	rc=$?
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "err$n"; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	return $rc
}
# refused WHAT PATTERN FILE [OPTIONS]: rec fails with PATTERN in its message
refused() {
	what=$1 pat=$2; shift 2
	if rec "$@"; then bad "$what: --record=$1 was accepted"
	elif grep -q -- "$pat" "err$n"; then ok
	else bad "$what: message does not match '$pat'"; cat "err$n"; fi
}
# intact WHAT FILE CONTENT
intact() {
	[ "$(cat "$2")" = "$3" ] && ok || bad "$1: $2 was overwritten (now $(wc -c < "$2") bytes)"
}

# 1. a fresh name records (a complete file: header and END chunk)
rec "$W/fresh.oprec" && [ "$(wc -c < "$W/fresh.oprec")" -gt 64 ] && ok ||
	{ bad "--record to a fresh name"; cat "err$n"; }

# 2. an existing file is refused, named, with the option that replaces it
echo keep > "$W/old.oprec"
refused existing "record file $W/old.oprec exists.*--record-overwrite" "$W/old.oprec"
intact existing "$W/old.oprec" keep

# 3. a symlink is never followed, even with --record-overwrite
echo precious > "$W/target"
ln -s "$W/target" "$W/link.oprec"
refused symlink "$W/link.oprec.*symbolic link" "$W/link.oprec"
intact symlink "$W/target" precious
refused symlink-overwrite "$W/link.oprec.*symbolic link" "$W/link.oprec" --record-overwrite
intact symlink-overwrite "$W/target" precious

# 4. --record-overwrite is an option of --record
"$OPD" --session-dir="$W/s0" --record-overwrite -- true > out0 2> err0 &&
	bad "--record-overwrite without --record was accepted" || ok
grep -q -- "--record-overwrite without --record" err0 && ok ||
	{ bad "--record-overwrite without --record: message"; cat err0; }

# 5. --record-overwrite replaces an existing regular file by a new one: the
# recording is complete, and a hard link to the old file keeps "keep"
ln "$W/old.oprec" "$W/old.hardlink"
rec "$W/old.oprec" --record-overwrite && ok ||
	{ bad "--record-overwrite over an existing file"; cat "err$n"; }
[ "$(wc -c < "$W/old.oprec")" -gt 64 ] && ok ||
	bad "--record-overwrite: $W/old.oprec holds no recording ($(wc -c < "$W/old.oprec") bytes)"
intact overwrite-hardlink "$W/old.hardlink" keep

# 6. root: never into a directory every user can write. The symlink stands
# in for a user's (planted by root: followed whatever fs.protected_symlinks)
if [ "$(id -u)" = 0 ]; then
	T=$W/sticky
	mkdir "$T" && chmod 1777 "$T"
	echo precious > "$W/rootfile"
	ln -s "$W/rootfile" "$T/rec.oprec"
	refused sticky-symlink "directory $T is writable by every user" "$T/rec.oprec"
	intact sticky-symlink "$W/rootfile" precious
	refused sticky-fresh "directory $T is writable by every user" "$T/new.oprec"
	[ ! -e "$T/new.oprec" ] && ok || bad "sticky-fresh: $T/new.oprec was created"
else
	echo "note: not root: the world-writable directory cases were not run"
fi

echo "record_trust: $npass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
cd "$B" && rm -rf "$W"
