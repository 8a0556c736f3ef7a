#!/bin/sh
# deploy.sh - oprofiled as a service (issue 7): starts the daemon with the
# systemd unit's own ExecStart line (daemon mode, from a config file),
# profiles tests/integration/hot system-wide at 1 kHz, then drives it with
# opcontrol: status, dump, save (opreport session:NAME reads it), reset,
# timed rotation (the count of rotate-* sessions stays at rotate_keep), HUP
# and the logrotate snippet, the owner-only socket, stop. Also:
# --check-config and command-line precedence, the lock against a second
# daemon, systemd-analyze verify.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
OPC=$B/tools/opcontrol
RPT=$B/tools/opreport/opreport
HOT=$B/tests/integration/hot
W=$B/tests/integration/deploy.work
UNIT_IN=$S/conf/oprofiled.service.in
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OPROFILE_EVENTS_DIR=${OPROFILE_EVENTS_DIR:-$S/events}
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
SD=$W/sess
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
C() { "$OPC" --session-dir="$SD" "$@"; }
# poll: run "$@" every 0.2 s for up to $T seconds until it succeeds
T=30
poll() {
	i=0
	while [ $i -lt $((T * 5)) ]; do
		"$@" && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
log_tail() { echo "--- daemon log:"; tail -40 "$SD/samples/oprofiled.log" 2>/dev/null; }
cleanup() {
	# never leave a daemon behind
	if [ -s "$SD/lock" ]; then
		p=$(cat "$SD/lock")
		[ -n "$p" ] && kill "$p" 2>/dev/null
	fi
}
trap cleanup EXIT

cat > "$W/oprofiled.conf" <<EOF
# the test's configuration: every setting the run depends on
session_dir = "$SD";
events = "TIMER:1000000";   # cpu-clock at 1 kHz per CPU
separate = "lib,kernel";
sync_interval = 1;
max_open_files = 2048;   # above the usual soft RLIMIT_NOFILE of 1024
rotate_interval = 0;
rotate_keep = 2;
EOF

# 1. --check-config prints the effective configuration; the command line wins
if "$OPD" --config="$W/oprofiled.conf" -a --check-config > cc1 2> cc1.err &&
   grep -qx "session_dir = \"$SD\";" cc1 && grep -qx "rotate_keep = 2;" cc1 &&
   grep -qx 'events = "TIMER:1000000";' cc1 && grep -qx "sync_interval = 1;" cc1; then ok
else bad "--check-config output"; cat cc1 cc1.err; fi
if "$OPD" --config="$W/oprofiled.conf" -a --rotate=5m --rotate-keep=7 --check-config > cc2 2>&1 &&
   grep -qx "rotate_interval = 300;" cc2 && grep -qx "rotate_keep = 7;" cc2; then ok
else bad "command-line --rotate/--rotate-keep did not override the file"; cat cc2; fi

# 2. the unit: one ExecStart line, and systemd accepts the unit with this build's paths
n=$(grep -c '^ExecStart=' "$UNIT_IN")
[ "$n" = 1 ] && ok || bad "$UNIT_IN has $n ExecStart lines, expected 1"
execstart=$(sed -n 's/^ExecStart=//p' "$UNIT_IN")
# the test runs that very line, with this build's binary and the test's config
cmd=$(printf '%s\n' "$execstart" | sed -e "s|@sbindir@/|$B/core/|g" -e "s|@bindir@/|$B/tools/|g")
case "$cmd" in *--daemonize*) ok ;; *) bad "ExecStart does not use --daemonize: $execstart" ;; esac
sed -e "s|@sbindir@/|$B/core/|g" -e "s|@bindir@/|$B/tools/|g" \
	-e "s|@sysconfigfile@|$W/oprofiled.conf|g" "$UNIT_IN" > "$W/oprofiled.service"
if command -v systemd-analyze > /dev/null 2>&1; then
	if systemd-analyze verify "$W/oprofiled.service" > verify.out 2>&1; then ok
	else bad "systemd-analyze verify refuses the unit"; cat verify.out; fi
	grep -qx "ExecStart=$cmd" "$W/oprofiled.service" && ok ||
		bad "the verified unit's ExecStart is not the command the test runs"
else
	echo "note: systemd-analyze not installed, the unit was not verified"
fi

# 3. start the daemon exactly as systemd would (${OPROFILED_CONFIG} from Environment=)
OPROFILED_CONFIG=$W/oprofiled.conf
export OPROFILED_CONFIG
echo "running: $cmd"
# a soft RLIMIT_NOFILE below max_open_files: the daemon must raise it
sh -c "ulimit -S -n 1024 2>/dev/null; $cmd" > start.out 2> start.err
rc=$?
if [ $rc -ne 0 ]; then
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" start.err \
		"$SD/samples/oprofiled.log" 2>/dev/null; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	echo "FAIL: the ExecStart command exited $rc"; cat start.err; log_tail; exit 1
fi
# the start command returned once profiling runs: the daemon must be up now
pid=$(cat "$SD/lock" 2>/dev/null)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then ok
else echo "FAIL: no daemon after a successful start (lock: '$pid')"; log_tail; exit 1; fi
# the daemon's own view of paths (symlinks resolved)
SDR=$(cd "$SD" && pwd -P)
# double fork: not a session leader, no terminal, stdin from /dev/null
sid=$(ps -o sid= -p "$pid" | tr -d ' ')
[ -n "$sid" ] && [ "$sid" != "$pid" ] && ok || bad "daemon $pid is a session leader (sid $sid)"
[ "$(readlink "/proc/$pid/fd/0")" = /dev/null ] && ok || bad "daemon stdin is $(readlink "/proc/$pid/fd/0")"
[ "$(readlink "/proc/$pid/fd/2")" = "$SDR/samples/oprofiled.log" ] && ok ||
	bad "daemon stderr is $(readlink "/proc/$pid/fd/2"), expected the log"
[ "$(stat -c %a "$SD/control")" = 600 ] && ok || bad "control socket mode $(stat -c %a "$SD/control")"
nofile=$(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")
[ "${nofile:-0}" -ge 2176 ] && ok || bad "RLIMIT_NOFILE $nofile < max_open_files + rings + 128"
[ "$(C --pid)" = "$pid" ] && ok || bad "opcontrol --pid"

# a second daemon on the session is refused
sh -c "$cmd" > second.out 2> second.err
rc=$?
if [ $rc -ne 0 ] && grep -q "another oprofiled (pid $pid)" second.err; then ok
else bad "a second daemon was not refused (rc $rc)"; cat second.err; fi

# 4. profile a workload, then status and dump
"$HOT" 1500 > /dev/null
C --dump > dump.out 2>&1 && ok || { bad "opcontrol --dump"; cat dump.out; }
hot_files() { find "$1" -path "*/tests/integration/hot/*" -name 'TIMER.*' 2>/dev/null | grep -q .; }
hot_files "$SD/samples/current" && ok || { bad "no sample file of hot after --dump"; log_tail; }
# the session found through the config file's session_dir
"$OPC" --config="$W/oprofiled.conf" --status > status.out 2> status.err
rc=$?
samples=$(sed -n 's/^samples: \([0-9]*\).*/\1/p' status.out)
if [ $rc -eq 0 ] && grep -q "^running since: " status.out && grep -q "^lost: " status.out &&
   grep -q "^open sample files: [0-9]" status.out && grep -q "^-- plugin timer --" status.out &&
   grep -qx "config: $W/oprofiled.conf" status.out &&
   [ "${samples:-0}" -gt 500 ]; then ok
else bad "opcontrol --status (rc $rc, samples '$samples')"; cat status.out status.err; fi

# 5. save: samples/NAME holds the samples, opreport session:NAME reads them
C --save=run1 > save.out 2>&1 && ok || { bad "opcontrol --save=run1"; cat save.out; }
hot_files "$SD/samples/run1" && ok || bad "samples/run1 has no sample file of hot"
hot_files "$SD/samples/current" && bad "samples/current still has hot's files after the save" || ok
[ -s "$SD/samples/run1/stats/total_samples" ] && ok || bad "samples/run1/stats/total_samples missing"
if [ -f "$SD/samples/run1/stats/kallsyms" ]; then
	[ -f "$SD/samples/current/stats/kallsyms" ] && ok || bad "the kernel symbol snapshot was not carried to the new current"
fi
C --save=run1 > save2.out 2>&1 && bad "a second --save=run1 was accepted" || ok
grep -q "already exists" save2.out && ok || { bad "--save=run1 twice: message"; cat save2.out; }
C --save=../x > save3.out 2>&1 && bad "--save=../x was accepted" || ok
if [ -x "$RPT" ]; then
	"$RPT" --session-dir="$SD" -l session:run1 "$HOT" > report.txt 2> report.err
	if grep -q "work_big" report.txt && grep -q "work_small" report.txt; then ok
	else bad "opreport session:run1 does not show hot's functions"; cat report.txt report.err; fi
fi

# 6. reset: current goes to samples/previous
"$HOT" 300 > /dev/null
C --dump > /dev/null 2>&1
C --reset > reset.out 2>&1 && ok || { bad "opcontrol --reset"; cat reset.out; }
hot_files "$SD/samples/previous" && ok || bad "samples/previous has no hot files after --reset"
C --status > status2.out 2>&1
grep -q "^saves: 1, resets: 1" status2.out && ok || { bad "status after save+reset"; cat status2.out; }

# 7. timed rotation: at most rotate_keep (2) rotate-* sessions, however many rotations
nrot() { ls -d "$SD"/samples/rotate-* 2>/dev/null | wc -l; }
C --rotate=1s > rot.out 2>&1 && ok || { bad "opcontrol --rotate=1s"; cat rot.out; }
max=0
rotations() { C --status 2>/dev/null | sed -n 's/^rotation: .*done \([0-9]*\).*/\1/p'; }
enough() {
	k=$(nrot); [ "$k" -gt "$max" ] && max=$k
	[ "$(rotations)" -ge 5 ]
}
if poll enough; then ok; else bad "fewer than 5 rotations in ${T} s ($(rotations))"; fi
C --rotate=0 > rot0.out 2>&1 && grep -qx "rotation off" rot0.out && ok ||
	{ bad "opcontrol --rotate=0 does not say 'rotation off'"; cat rot0.out; }
k=$(nrot)
[ "$k" = 2 ] && [ "$max" -le 2 ] && ok || bad "rotate-* sessions: $k now, $max at most, expected 2"
C --rotate > rot1.out 2>&1 && grep -q "^saved samples/rotate-" rot1.out && ok || { bad "opcontrol --rotate"; cat rot1.out; }
[ "$(nrot)" = 2 ] && ok || bad "after a manual rotation $(nrot) rotate-* sessions"
[ -d "$SD/samples/run1" ] && ok || bad "rotation removed the saved session run1"

# 8. SIGHUP (logrotate): the log is reopened by name
mv "$SD/samples/oprofiled.log" "$SD/samples/oprofiled.log.1"
C --hup && ok || bad "opcontrol --hup"
T=10 poll grep -q "SIGHUP" "$SD/samples/oprofiled.log" 2>/dev/null && ok || bad "no new log after SIGHUP"
[ "$(readlink "/proc/$pid/fd/2")" = "$SDR/samples/oprofiled.log" ] && ok ||
	bad "after SIGHUP the daemon's stderr is $(readlink "/proc/$pid/fd/2")"

# 8b. the logrotate snippet, run for real on this session (its paths substituted,
# this build's opcontrol first on PATH): it moves the log and its postrotate
# sends SIGHUP with opcontrol --hup
LR=$(command -v logrotate 2>/dev/null || { [ -x /usr/sbin/logrotate ] && echo /usr/sbin/logrotate; })
if [ -n "$LR" ]; then
	sed -e "s|/var/lib/oprofile|$SD|g" "$S/conf/oprofiled.logrotate" > "$W/lr.conf"
	if PATH="$B/tools:$PATH" "$LR" -f -s "$W/lr.state" "$W/lr.conf" > lr.out 2>&1; then ok
	else bad "logrotate with conf/oprofiled.logrotate"; cat lr.out; fi
	[ -e "$SD/samples/oprofiled.log.1" ] && ok || bad "logrotate did not rotate the log"
	T=10 poll grep -q "SIGHUP" "$SD/samples/oprofiled.log" 2>/dev/null && ok ||
		bad "no new log after logrotate's SIGHUP"
else
	echo "note: logrotate not installed, conf/oprofiled.logrotate was not run"
fi

# 9. the control socket is owner-only
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$OPC" --session-dir="$SD" --status \
		> other.out 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -q "Permission denied" other.out; then ok
	else bad "another user reached the control socket (rc $rc)"; cat other.out; fi
fi

# 10. stop: returns once the daemon has flushed and exited
C --stop > stop.out 2>&1 && ok || { bad "opcontrol --stop"; cat stop.out; }
gone() { [ ! -e "/proc/$pid/stat" ] || awk '{ exit !($3 == "Z") }' "/proc/$pid/stat" 2>/dev/null; }
gone && ok || bad "daemon $pid still runs after --stop"
[ ! -e "$SD/lock" ] && [ ! -e "$SD/control" ] && ok || bad "lock or control socket left behind"
grep -q "profiling stopped" "$SD/samples/oprofiled.log" && ok || bad "no 'profiling stopped' in the log"
C --status > /dev/null 2>&1
[ $? -eq 3 ] && ok || bad "opcontrol --status without a daemon does not exit 3"
# bad --rotate / --rotate-keep values are usage errors (exit 2) found before the
# session is looked at: no daemon here, which would be exit 3
for a in --rotate=abc --rotate=-5 --rotate=5x --rotate= --rotate=400d --rotate-keep=abc \
	--rotate-keep=-1 --rotate-keep=0 --rotate-keep=; do
	C "$a" > badrot.out 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q "opcontrol: ${a%%=*}=.*: .*expected" badrot.out; then ok
	else bad "opcontrol $a: exit $rc (expected 2 and a message)"; cat badrot.out; fi
done
for a in --rotate=0 --rotate=30s --rotate-keep=3; do
	C "$a" > goodrot.out 2>&1
	[ $? -eq 3 ] && ok || { bad "opcontrol $a without a daemon: not exit 3"; cat goodrot.out; }
done

echo "deploy: $npass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
trap - EXIT
# the work directory stays only when something failed (distcheck wants a clean tree)
cd "$B" && rm -rf "$W"
