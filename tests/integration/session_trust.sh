#!/bin/sh
# session_trust.sh - what oprofiled trusts in a session directory (issue 14,
# holes 1, 2, 4, 9). Any user: a FIFO planted as samples/oprofiled.log is
# refused, not waited on; --session-dir=LINK/ and a symlinked parent are
# refused and nothing is written in the link's target; session_dir = "" and
# an unknown session_group in the config file are FILE:LINE errors.
# As root (against the user opng-tester of test_user.sh): a session
# directory, an ancestor, samples/, samples/current, lock, the log or a
# sample file that the user owns or may write is refused (the file left
# as it was); a root-owned entry of a sticky /tmp-like directory is accepted;
# a root session is private (directories 0700, files 0600, the kernel
# symbol snapshot too) and a 0755 one from an older version is tightened.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
SRC=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
HOT=$B/tests/integration/hot
W=$B/tests/integration/session_trust.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$SRC/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# run NAME ARGS...: oprofiled with a bounded time (a hang is exit 124); output in NAME.out/.err
run() {
	name=$1; shift
	timeout 20 "$OPD" "$@" > "$name.out" 2> "$name.err"
	rc=$?
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$name.err"; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	return $rc
}
# refused NAME PATTERN ARGS...: oprofiled exits non-zero (not a hang) saying PATTERN
refused() {
	name=$1 pat=$2; shift 2
	run "$name" "$@"
	rc=$?
	if [ $rc -eq 124 ]; then bad "$name: oprofiled hung (killed after 20 s)"
	elif [ $rc -eq 0 ]; then bad "$name: oprofiled $* was accepted"
	elif grep -q -- "$pat" "$name.err"; then ok
	else bad "$name: no message matching '$pat'"; cat "$name.err"; fi
}
sums() { find "$@" -type f | LC_ALL=C sort | xargs md5sum; }
mode() { stat -c %a "$1"; }

# 1. a FIFO as samples/oprofiled.log: refused at once (it hung the daemon)
mkdir -p fifo/samples
mkfifo fifo/samples/oprofiled.log
refused fifo-log 'oprofiled.log.*not a regular file' --session-dir="$W/fifo" -- "$HOT" 10

# 2. --session-dir=LINK/ and a symlinked parent: refused, the target untouched
mkdir target
echo 4242 > target/lock
echo "not a socket" > target/control
echo "old abi" > target/abi
sums target > target.before
ln -s "$W/target" link
refused link-slash 'symbolic link' --session-dir="$W/link/" -- "$HOT" 10
refused link-dot 'symbolic link' --session-dir="$W/link/." -- "$HOT" 10
sums target > target.after
cmp -s target.before target.after && ok || { bad "the link's target changed"; diff target.before target.after; }
[ ! -e target/samples ] && ok || bad "samples/ made in the link's target"
mkdir realparent
ln -s "$W/realparent" parentlink
refused link-parent 'parentlink is a symbolic link' --session-dir="$W/parentlink/sess" -- "$HOT" 10
[ ! -e realparent/sess ] && ok || bad "a session was made through a symlinked parent"

# 3. config: an empty session_dir and an unknown session_group are FILE:LINE errors
printf '# empty\nsession_dir = "";\n' > empty.conf
if (cd "$W/fifo" && "$OPD" --config="$W/empty.conf" -a --check-config) > empty.out 2> empty.err; then
	bad "session_dir = \"\" accepted"; cat empty.out
elif grep -q "^oprofiled: $W/empty.conf:2: .*session_dir" empty.err; then ok
else bad "session_dir = \"\": no FILE:LINE message"; cat empty.err; fi
printf '# group\nsession_dir = "%s";\nsession_group = "no-such-group-opng";\n' "$W/g" > group.conf
if "$OPD" --config="$W/group.conf" -a --check-config > group.out 2> group.err; then
	bad "an unknown session_group accepted"; cat group.out
elif grep -q "^oprofiled: $W/group.conf:3: .*no-such-group-opng" group.err; then ok
else bad "unknown session_group: no FILE:LINE message"; cat group.err; fi
g0=$(id -gn)
printf 'session_group = "%s";\n' "$g0" > group2.conf
if "$OPD" --config="$W/group2.conf" -a --check-config > group2.out 2> group2.err &&
   grep -qx "session_group = \"$g0\";" group2.out; then ok
else bad "session_group = \"$g0\" not in --check-config"; cat group2.out group2.err; fi
if "$OPD" --session-group=no-such-group-opng -a --check-config > group3.out 2> group3.err; then
	bad "--session-group=no-such-group-opng accepted"
elif grep -q -- "--session-group=no-such-group-opng: no such group" group3.err; then ok
else bad "--session-group: no message"; cat group3.err; fi

if [ "$(id -u)" != 0 ]; then
	echo "note: the root-daemon checks were skipped (not root): $npass passed, $fail failed"
	[ $fail -eq 0 ] && { cd "$B" && rm -rf "$W"; }
	exit $((fail > 0))
fi

. "$SRC/tests/integration/test_user.sh"
op_test_user
chmod 0755 "$W"

# 4. a session directory the user owns, or anyone may write: refused, nothing written
mkdir user
chown "$OP_UID" user
refused user-dir "session directory $W/user is owned by uid $OP_UID ($OP_USER), not root" \
	--session-dir="$W/user" -- "$HOT" 10
[ -z "$(ls -A user)" ] && ok || { bad "oprofiled wrote in the user's directory:"; ls -la user; }
mkdir -m 0777 open
chmod 0777 open
refused open-dir "session directory $W/open is writable by group or other (mode 0777)" \
	--session-dir="$W/open" -- "$HOT" 10
[ -z "$(ls -A open)" ] && ok || bad "oprofiled wrote in a world-writable directory"

# an ancestor the user owns (the user may rename it): refused
mkdir -p uparent/sess
chown "$OP_UID" uparent
refused user-ancestor "$W/uparent is owned by uid $OP_UID ($OP_USER)" \
	--session-dir="$W/uparent/sess" -- "$HOT" 10
[ -z "$(ls -A uparent/sess)" ] && ok || bad "oprofiled wrote below a user's directory"

# a sticky world-writable parent (/tmp): a root-owned session in it is fine, a user's is not
mkdir sticky
chmod 1777 sticky
if run sticky-root --session-dir="$W/sticky/rootsess" --events=TIMER:250000 -- "$HOT" 50; then ok
else bad "a root session in a sticky directory refused"; cat sticky-root.err; fi
op_as_user mkdir sticky/usersess
refused sticky-user "is owned by uid $OP_UID" --session-dir="$W/sticky/usersess" -- "$HOT" 10

# the common case keeps working: the user profiles their own command into their
# own directory with the default event (at perf_event_paranoid >= 2 the kernel
# gives a user no kernel samples: the daemon samples user space only, and says so)
op_as_user mkdir sticky/mine
if op_as_user env OP_PLUGIN_DIR="$OP_PLUGIN_DIR" "$OPD" --session-dir="$W/sticky/mine/s" \
	-- "$HOT" 100 > user-own.out 2> user-own.err; then ok
else bad "a user profiling their own command in their own directory: exit $?"; cat user-own.err; fi
[ -n "$(find "$W/sticky/mine/s/samples/current" -name 'TIMER.*' 2>/dev/null)" ] && ok ||
	bad "a user's own profile holds no sample file"
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	grep -q "sampling user space only" user-own.err && ok ||
		{ bad "user at paranoid >= 2: no note on user-space-only sampling"; cat user-own.err; }
fi

# 5. a root session; then one entry at a time made the user's: refused, left as it was
S=$W/s
run good --session-dir="$S" --events=TIMER:250000 -- "$HOT" 200 ||
	{ echo "FAIL: a root session: exit $?"; cat good.err; exit 1; }
C=$S/samples/current
ls "$C"/*/ > /dev/null 2>&1 || { echo "FAIL: no sample file in the root session"; exit 1; }

chown "$OP_UID" "$C"
refused user-current "samples/current is owned by uid $OP_UID" --session-dir="$S" --append \
	--events=TIMER:250000 -- "$HOT" 10
refused user-current-move "samples/current is owned by uid $OP_UID" --session-dir="$S" \
	--events=TIMER:250000 -- "$HOT" 10
chown 0 "$C"
chown "$OP_UID" "$S/samples"
refused user-samples "samples is owned by uid $OP_UID" --session-dir="$S" --events=TIMER:250000 \
	-- "$HOT" 10
chown 0 "$S/samples"
chown "$OP_UID" "$S/samples/oprofiled.log"
refused user-log "samples/oprofiled.log is owned by uid $OP_UID" --session-dir="$S" \
	--events=TIMER:250000 -- "$HOT" 10
chown 0 "$S/samples/oprofiled.log"
: > "$S/lock"
chown "$OP_UID" "$S/lock"
refused user-lock "lock is owned by uid $OP_UID" --session-dir="$S" --events=TIMER:250000 \
	-- "$HOT" 10
rm -f "$S/lock"

# sample files the user owns, or may write: --append leaves them alone (it wrote to them)
files=$(find "$C" -path '*hot*' -name 'TIMER.*')
[ -n "$files" ] || { echo "FAIL: no sample file of hot"; exit 1; }
for f in $files; do chown "$OP_UID" "$f"; done
sums $files > files.before
run append-user --session-dir="$S" --append --events=TIMER:250000 -- "$HOT" 200 ||
	bad "--append with user-owned sample files: exit $?"
sums $files > files.after
cmp -s files.before files.after && ok || bad "--append wrote to sample files the user owns"
grep -q "owned by uid $OP_UID.*not root" "$S/samples/oprofiled.log" && ok ||
	{ bad "no log line on the refused sample files"; tail "$S/samples/oprofiled.log"; }
for f in $files; do chown 0 "$f"; chmod 0666 "$f"; done
run append-writable --session-dir="$S" --append --events=TIMER:250000 -- "$HOT" 200 ||
	bad "--append with world-writable sample files: exit $?"
sums $files > files.after2
cmp -s files.before files.after2 && ok || bad "--append wrote to world-writable sample files"
grep -q "writable by group or other (mode 0666)" "$S/samples/oprofiled.log" && ok ||
	{ bad "no log line on the writable sample files"; tail "$S/samples/oprofiled.log"; }

# 6. a root session is private: 0700 directories, 0600 files, the kallsyms snapshot included
P=$W/private
DD=$(readlink -f "$(command -v dd)")
run private --session-dir="$P" --events=TIMER:250000 -- "$DD" if=/dev/zero of=/dev/null \
	bs=512 count=200000 || { bad "private: exit $?"; cat private.err; }
[ -s "$P/samples/current/stats/kallsyms" ] || bad "no stats/kallsyms in the root session"
find "$P" -type d ! -perm 0700 > dirs.open
find "$P" -type f ! -perm 0600 > files.open
[ ! -s dirs.open ] && ok || { bad "directories of a root session not 0700:"; xargs ls -ld < dirs.open; }
[ ! -s files.open ] && ok || { bad "files of a root session not 0600:"; xargs ls -l < files.open; }
# a session made 0755 by an older version: tightened, and the log says so
chmod 0755 "$P" "$P/samples"
run tighten --session-dir="$P" --events=TIMER:250000 -- "$HOT" 10 || bad "tighten: exit $?"
[ "$(mode "$P")" = 700 ] && [ "$(mode "$P/samples")" = 700 ] && ok ||
	bad "a 0755 root session was not tightened: $(mode "$P") $(mode "$P/samples")"
grep -q "session directory $P was mode 0755: now 0700" "$P/samples/oprofiled.log" && ok ||
	{ bad "no log line on the tightened session"; tail "$P/samples/oprofiled.log"; }

# 7. session_group shares a root session with one group: directories 02750,
# files 0640, all of that group; a member reads it, another user does not
G=$W/grouped
run grouped --session-dir="$G" --session-group="$OP_USER" --events=TIMER:250000 -- "$DD" \
	if=/dev/zero of=/dev/null bs=512 count=100000 || { bad "grouped: exit $?"; cat grouped.err; }
find "$G" -type d ! -perm 2750 > gdirs.open
find "$G" -type f ! -perm 0640 ! -name lock > gfiles.open
find "$G" ! -group "$OP_USER" > gforeign
[ -s "$G/samples/current/stats/kallsyms" ] && [ ! -s gdirs.open ] && ok ||
	{ bad "session_group: directories not 02750:"; xargs ls -ld < gdirs.open; }
[ ! -s gfiles.open ] && ok || { bad "session_group: files not 0640:"; xargs ls -l < gfiles.open; }
[ ! -s gforeign ] && ok || { bad "session_group: entries not of group $OP_USER:"; head gforeign; }
if op_as_user cat "$G/samples/current/stats/kallsyms" > /dev/null 2>&1; then ok
else bad "session_group: a member of $OP_USER cannot read the shared kallsyms snapshot"; fi
if setpriv --reuid=65534 --regid=65534 --clear-groups -- ls "$G/samples" > /dev/null 2>&1; then
	bad "session_group: a user outside the group lists the session"
else ok; fi

echo "$npass checks passed, $fail failed"
if [ $fail -eq 0 ]; then
	echo "PASS: session_trust.sh"
	cd "$B" && rm -rf "$W"
fi
exit $((fail > 0))
