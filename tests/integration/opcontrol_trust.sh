#!/bin/sh
# opcontrol_trust.sh - root's opcontrol believes a session directory only
# when root owns it and nobody else can write it, the lock is held, and the
# control socket is served by root as the pid in the lock (issue 14, hole 5).
# Forged lock files (a victim's pid, the flock held by the forger) and
# forged control sockets (a server of the test user's) are refused with a
# message and a non-zero exit: the victim process lives and nothing the
# forger sent is printed. A real daemon: tests/integration/deploy.sh.
# Root only (plays the user opng-tester, tests/integration/test_user.sh).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPC=$B/tools/opcontrol
W=$B/tests/integration/opcontrol_trust.work
. "$S/tests/integration/test_user.sh"
op_test_user
# the forger needs a python3 the user may run (not a root-only pyenv shim)
PY=
for p in /usr/bin/python3 $(command -v python3); do
	op_as_user "$p" -c '' 2> /dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "SKIP: no python3 that $OP_USER may run (plays the forger)"; exit 77; }
rm -rf "$W"
mkdir -p "$W"
chmod 755 "$W"
cd "$W" || exit 99
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
helpers=
cleanup() {
	for p in $helpers; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap cleanup EXIT

# forge.py DIR PID SOCK [UID GID]: writes PID ("self": its own) into DIR/lock
# and holds the lock's flock; with SOCK=sock it serves DIR/control with a
# forged "ok" reply; with UID it binds as the caller, then becomes UID
# before listen (the socket's SO_PEERCRED is UID's). "ready PID" on stdout.
cat > forge.py << 'EOF'
import fcntl, os, socket, sys, time
d, pid, mode = sys.argv[1], sys.argv[2], sys.argv[3]
fd = os.open(d + "/lock", os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, ("%d\n" % os.getpid() if pid == "self" else pid + "\n").encode())
s = None
if mode == "sock":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(d + "/control")
    except FileNotFoundError:
        pass
    s.bind(d + "/control")
    os.chmod(d + "/control", 0o600)
if len(sys.argv) > 5:
    os.setgid(int(sys.argv[5]))
    os.setuid(int(sys.argv[4]))
if s:
    s.listen(8)
print("ready %d" % os.getpid(), flush=True)
while True:
    if not s:
        time.sleep(600)
        continue
    c, _ = s.accept()
    try:
        c.recv(512)
        c.sendall(b"ok\nFORGED STATUS: all is well\n")
    except OSError:
        pass  # a client that hung up (a refusal)
    c.close()
EOF

# forge NAME ARGS...: start forge.py, wait for "ready"; its pid joins $helpers
# (the pid it prints: $! may be a subshell's)
forge() {
	name=$1; shift
	"$@" > "$name.ready" 2> "$name.err" &
	i=0
	while [ $i -lt 50 ] && ! grep -q ready "$name.ready" 2> /dev/null; do sleep 0.1; i=$((i + 1)); done
	grep -q ready "$name.ready" || { echo "FAIL: setup: forger $name did not start"; cat "$name.err"; exit 1; }
	helpers="$helpers $(sed -n 's/^ready //p' "$name.ready")"
}

# the victim: a root process whose pid the forgers name (a new one for the
# cases after a kill: each case shows its own failure)
new_victim() {
	sleep 600 &
	victim=$!
	helpers="$helpers $victim"
}
new_victim
alive() { kill -0 "$victim" 2> /dev/null && [ "$(ps -o stat= -p "$victim" | cut -c1)" != Z ]; }

# refused CASE PATTERN -- opcontrol args: non-zero exit, PATTERN in the
# message, nothing forged printed, the victim alive
refused() {
	what=$1 pat=$2; shift 3
	"$OPC" "$@" > "$what.out" 2> "$what.err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q -- "$pat" "$what.err"; then ok
	else bad "$what: opcontrol $* exited $rc, expected a refusal matching '$pat'"; cat "$what.out" "$what.err"; fi
	grep -q FORGED "$what.out" "$what.err" && bad "$what: opcontrol printed the forger's reply"
	alive && ok || { bad "$what: the victim (pid $victim) was killed"; new_victim; }
}

# 1. a user's session directory: a forged lock (the victim's pid, flock held
# by the user) and a forged socket. Root believes neither.
U=$W/user
mkdir "$U" && chown "$OP_UID:$OP_GID" "$U"
forge user op_as_user "$PY" forge.py "$U" "$victim" sock
refused user-status "owned by uid $OP_UID" -- --session-dir="$U" --status
refused user-pid "owned by uid $OP_UID" -- --session-dir="$U" --pid
grep -qx "$victim" user-pid.out && bad "user-pid: opcontrol --pid printed the forged pid"
refused user-hup "owned by uid $OP_UID" -- --session-dir="$U" --hup
# a user's own opcontrol believes a server of the user's own in the user's
# own directory (what a user running a daemon needs)
O=$W/own
mkdir "$O" && chown "$OP_UID:$OP_GID" "$O"
forge own op_as_user "$PY" forge.py "$O" self sock
op_as_user "$OPC" --session-dir="$O" --status > own.out 2> own.err
grep -q FORGED own.out && ok || { bad "the user's opcontrol on the user's own session"; cat own.out own.err; }

# 2. a root-owned directory every user can write (as /tmp): same forgery
T=$W/sticky
mkdir "$T" && chmod 1777 "$T"
forge sticky op_as_user "$PY" forge.py "$T" "$victim" sock
refused sticky-status "writable by group or others" -- --session-dir="$T" --status
refused sticky-hup "writable by group or others" -- --session-dir="$T" --hup

# 3. root's directory, the lock held but naming the victim, no control
# socket: the pid cannot be verified, nothing is signalled
R=$W/nosock
mkdir "$R"
forge nosock "$PY" forge.py "$R" "$victim" none
refused nosock-hup "not signalled" -- --session-dir="$R" --hup

# 4. root's directory, the lock names the victim, the socket is served by
# another process (root's): the pids differ
P=$W/otherpid
mkdir "$P"
forge otherpid "$PY" forge.py "$P" "$victim" sock
refused otherpid-status "served by pid" -- --session-dir="$P" --status
refused otherpid-hup "served by pid" -- --session-dir="$P" --hup

# 5. root's directory and files, but the socket's server is the user (bound
# by root, listening after setuid): SO_PEERCRED names the user
Q=$W/peeruid
mkdir "$Q"
forge peeruid "$PY" forge.py "$Q" self sock "$OP_UID" "$OP_GID"
refused peeruid-status "served by uid $OP_UID" -- --session-dir="$Q" --status

# 6. root's directory, control a symlink to the user's forged socket
L=$W/symlink
mkdir "$L"
forge symlink "$PY" forge.py "$L" self none
ln -s "$U/control" "$L/control"
refused symlink-status "control is not a socket" -- --session-dir="$L" --status

# 7. a lock nobody holds (a dead daemon's, or forged): said so, not signalled
D=$W/stale
mkdir "$D"
echo "$victim" > "$D/lock"
"$OPC" --session-dir="$D" --hup > stale.out 2> stale.err
rc=$?
[ $rc -eq 3 ] && grep -q "stale or forged" stale.err && ok ||
	{ bad "stale lock: rc $rc, expected 3 and 'stale or forged'"; cat stale.err; }
alive && ok || bad "stale lock: the victim (pid $victim) was killed"

echo "opcontrol_trust: $npass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
cleanup
trap - EXIT
cd "$B" && rm -rf "$W"
