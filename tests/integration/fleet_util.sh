# fleet_util.sh - sourced by the issue 20 tests (idle_wakeups.sh, cgroup.sh,
# fleet_rotate.sh): wait for a daemon started in the background.
# SPDX-License-Identifier: MIT

# fleet_wait_started PID SESSION_DIR ERR_FILE: return once the log says
# "profiling started" (at most 10 s); exit 77 when the kernel refused
# perf_event_open, exit 1 when the daemon died first.
fleet_wait_started() {
	_i=0
	while ! grep -q "profiling started" "$2/samples/oprofiled.log" 2> /dev/null && [ $_i -lt 200 ]; do
		kill -0 "$1" 2> /dev/null || break
		sleep 0.05; _i=$((_i + 1))
	done
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$3"; then
		echo "SKIP: the kernel forbids perf_event_open here"
		kill "$1" 2> /dev/null
		exit 77
	fi
	kill -0 "$1" 2> /dev/null || { echo "FAIL: oprofiled did not start"; cat "$3"; exit 1; }
}
