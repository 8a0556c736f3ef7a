# net_util.sh - sourced by the network plugins' tests (pprof_pull.sh,
# push*.sh): the upstream pprof CLI built offline, a free loopback port,
# bounded waits. Every wait is bounded; nothing here reaches beyond 127.0.0.1.
# SPDX-License-Identifier: MIT

# the build tree's plugins and helpers, unless make check (or the caller) set them
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OP_HELPER_DIR=${OP_HELPER_DIR:-$B/plugins/libexec}
PROTO=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto
OPD=$B/core/oprofiled
HOT=$B/tests/integration/hot
CHECK="python3 $S/tests/integration/push_check.py"

# net_init NAME PLUGIN...: a fresh work directory $W (made current), fail=0,
# the plugins built, background processes ended at exit (net_cleanup), $HOT
# the workload's own copy
net_init() {
	W=$B/tests/integration/$1.work
	shift
	rm -rf "$W"
	mkdir -p "$W"
	cd "$W" || exit 99
	fail=0
	for _p; do
		[ -e "$OP_PLUGIN_DIR/$_p.so" ] ||
			{ echo "FAIL: $_p.so was not built (configure warned which library is missing)"; exit 1; }
	done
	trap net_cleanup EXIT
	# the workload is a copy of hot under a name of its own: other tests
	# running beside these look for hot's sample files system-wide
	cp "$HOT" "$W/network" || exit 99
	HOT=$W/network
}

# $PPROF: the upstream pprof CLI, built once (~5 s, no network) where
# opexport.sh builds and keeps it too (tests/pprof, Go's cache tests/gocache,
# removed by make clean)
net_pprof() {
	PPROF=$B/tests/pprof
	[ -x "$PPROF" ] && return 0
	if ! command -v go > /dev/null || [ ! -d /usr/share/gocode/src/github.com/google/pprof ]; then
		echo "FAIL: go and golang-github-google-pprof-dev are needed (tools/install-deps.sh)"
		return 1
	fi
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$B/tests/gocache HOME=$W \
		timeout 300 go build -o "$PPROF.$$" github.com/google/pprof && mv "$PPROF.$$" "$PPROF"
}

# system-wide profiling needs root or perf_event_paranoid <= 0: else skip, saying so
net_need_system_wide() {
	_par=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
	if [ "$(id -u)" -ne 0 ] && [ "$_par" -gt 0 ]; then
		echo "SKIP: system-wide profiling needs root or perf_event_paranoid <= 0 (it is $_par)"
		exit 77
	fi
}

# a loopback TCP port nobody listens on right now
net_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# net_wait SECONDS CMD...: run CMD every 0.1 s until it succeeds or time is up
net_wait() {
	_t=$(($1 * 10))
	shift
	while [ $_t -gt 0 ]; do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.1
		_t=$((_t - 1))
	done
	return 1
}

no_perf() {
	# the kernel refused perf_event_open itself: the only reason to skip
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$1" 2>/dev/null; then
		echo "SKIP: the kernel forbids perf_event_open here"
		exit 77
	fi
}

# net_status SESSION PLUGIN: that plugin's section of opcontrol --status
# ("name: value" counter lines, then its text lines)
net_status() {
	timeout 10 "$B/tools/opcontrol" --session-dir="$1" --status 2> /dev/null |
		sed -n "/^-- plugin $2 --/,/^-- plugin /p"
}

# net_counter SESSION PLUGIN NAME: one counter of net_status (empty if absent)
net_counter() {
	net_status "$1" "$2" | sed -n "s/^$3: //p"
}

# background processes the test started, ended by net_cleanup (trap it on EXIT)
net_pids=
net_cleanup() {
	for _p in $net_pids; do kill $_p 2>/dev/null; done
	for _p in $net_pids; do wait $_p 2>/dev/null; done
	net_pids=
}

# net_finish NAME: the end of a test: background processes ended, "PASS:
# NAME" and the work directory removed when nothing failed; exits with $fail
net_finish() {
	net_cleanup
	if [ "$fail" -eq 0 ]; then
		echo "PASS: $1"
		cd "$B" && rm -rf "$W"
	fi
	exit "$fail"
}

# net_recv_start DIR [push_receiver.py options]: a loopback receiver storing
# what it gets in DIR; its port is in DIR.port once it listens
net_recv_start() {
	_d=$1
	shift
	rm -f "$_d.port"
	python3 "$S/tests/integration/push_receiver.py" --dir "$_d" --port-file "$_d.port" "$@" &
	net_pids="$net_pids $!"
	net_wait 10 test -s "$_d.port"
}

# --- issue 20: privsep push ---
# net_push_start SESSION PUSH_ARGS: a daemon pushing (--ext-feature=push:PUSH_ARGS)
# while a long workload runs; its pid in $dpid (ended by net_cleanup), its
# output in SESSION.out and SESSION.err; the test ends when it does not start
net_push_start() {
	"$OPD" --session-dir="$1" --events=TIMER:1000000 "--ext-feature=push:$2" \
		-- "$HOT" 60000 > "$1.out" 2> "$1.err" &
	dpid=$!
	net_pids="$net_pids $dpid"
	net_wait 20 grep -q "pushing to" "$1/samples/oprofiled.log" && return 0
	no_perf "$1.err"
	echo "FAIL: the push plugin did not start"; cat "$1.err"
	exit 1
}

# samples so far of the daemon of session DIR $1 (all its sessions), from
# opcontrol --status right after a dump (the counts are then those of the
# samples the kernel gave so far)
net_samples() {
	timeout 5 "$B/tools/opcontrol" --session-dir="$1" --dump > /dev/null
	timeout 5 "$B/tools/opcontrol" --session-dir="$1" --status | sed -n 's/^samples: \([0-9]*\) .*/\1/p'
}
# samples per second of the daemon of session DIR $1 over $2 seconds
net_rate() {
	_a=$(net_samples "$1")
	_t0=$(date +%s.%N)
	sleep "$2"
	_b=$(net_samples "$1")
	_t1=$(date +%s.%N)
	python3 -c "print(int(($_b - $_a) / ($_t1 - $_t0)))"
}
