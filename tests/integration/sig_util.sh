# sig_util.sh - sourced by the tests that stop a tool running in the
# background with SIGINT (ocount/opcount/operf "until SIGINT").
# A background job of a non-interactive shell starts with SIGINT ignored
# (POSIX), and the tools block SIGINT first thing in main: a SIGINT sent
# before that is thrown away and the tool counts on forever. So the test
# waits until the process blocks the signal (its SigBlk in /proc) or waits
# for it in sigtimedwait (which takes it out of SigBlk while it sleeps:
# opcount), then sends it.
# SPDX-License-Identifier: MIT

# sig_wait_blocked PID SIGNUM: 0 once PID blocks SIGNUM, 1 after 20 s or
# when PID is gone (the caller's next check then says what went wrong)
sig_wait_blocked() {
	_t=0
	while [ $_t -lt 200 ]; do
		_m=$(awk '$1 == "SigBlk:" { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
		[ -n "$_m" ] || return 1
		[ $((0x$_m >> ($2 - 1) & 1)) = 1 ] && return 0
		grep -q sigtimedwait "/proc/$1/wchan" 2>/dev/null && return 0
		sleep 0.1
		_t=$((_t + 1))
	done
	return 1
}
