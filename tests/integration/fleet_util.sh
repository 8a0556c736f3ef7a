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

# fleet_make_cgroups NAME: two cgroups made for the test, NAME-a.$$ and
# NAME-b.$$, under the v2 hierarchy (pure or hybrid), else v1 name=systemd:
# their directories in CA/CB, the paths /proc/PID/cgroup will show
# (relative to the hierarchy's root) in PA/PB. Skips (exit 77) when the
# caller is not root or no hierarchy can take a new cgroup. The caller's
# EXIT trap removes them: rmdir "$CA" "$CB".
fleet_make_cgroups() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: making cgroups needs root"; exit 77; }
	fleet_cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	[ -n "$fleet_cgroot" ] ||
		fleet_cgroot=$(awk '$3 == "cgroup" && $4 ~ /name=systemd/ { print $2; exit }' /proc/self/mounts)
	[ -n "$fleet_cgroot" ] || { echo "SKIP: no cgroup v2 or name=systemd hierarchy mounted"; exit 77; }
	PA=/$1-a.$$
	PB=/$1-b.$$
	CA=$fleet_cgroot$PA
	CB=$fleet_cgroot$PB
	mkdir "$CA" "$CB" 2> mk.err ||
		{ echo "SKIP: cannot make a cgroup under $fleet_cgroot: $(cat mk.err)"; exit 77; }
}
