#!/bin/sh
# bench_churn.sh - the daemon's cost of process churn at fleet defaults
# (issue 20): system calls per new process and per new (cgroup, binary)
# pair, and its CPU beside perf record at the same rate in the same run.
# Run by hand from the build directory as root; see tests/bench/README.md.
#   bench_churn.sh [RATE=150] [PER=10] [SECONDS=20]     (SPIN_RATE=40)
# oprofiled runs with conf/fleet.conf (99 Hz, call graphs, cgroup plugin,
# separate = lib,kernel,cgroup; no rotation) and perf record -F 99 -a -g
# beside it, both CPUs kept busy by two spinning shells. A churn loop in
# cgroups made by the bench starts processes in batches every 0.1 s (the
# rate reached is measured and printed):
#   proc   RATE a second of /bin/true in one cgroup: new processes, no new pair
#   spin   SPIN_RATE a second of count_workloads spin 10 2000 (10 ms of CPU:
#          most are sampled; then 2 s asleep, so the cgroup plugin's read of
#          /proc at the exec, about a second later, finds the process) in
#          that cgroup: new processes of a known pair
#   pair   the same, a new cgroup every PER processes: a new (cgroup,
#          binary) pair every PER processes, so new sample files
# System calls: strace -f -y over a proc and a pair window, each call
# attributed by what it names (-y prints the path of every fd): to a churn
# process (/proc/PID/... of a pid the loop started) or to a new pair (a
# path below the bench's pair cgroups in the session). The host's other
# processes (a shared machine: other users' builds) cost the daemon too
# and change from one second to the next; attribution leaves them out, a
# difference of two windows would not. Pairs are counted in the session
# (cgroup directories holding count_workloads's files).
# CPU: idle (no churn), proc, spin and pair windows without strace (it
# slows the daemon): oprofiled's and perf record's from
# /proc/PID/task/*/schedstat over the same window; the host's own churn is
# in every window (the idle one shows it).
# Replay: CPU without the host's noise. A daemon records (--record) a run
# of 60 new binaries (copies of count_workloads at build-tree-like paths,
# each run 5 times: 60 new pairs by binary), and the stream is replayed
# (--replay) through OPD, and CMP_OPD when given, 3 rounds alternated: the
# replay loop's own CPU (replay_cpu_ns), sample files made and system calls
# (strace -c -f, one more replay each). The records are the same for both.
# OPD=PATH benchmarks another build's oprofiled; CMP_OPD=PATH adds a second
# build to the replay (before/after on the same stream).
# SPDX-License-Identifier: MIT
set -u
B=$(cd "${OP_BUILDDIR:-.}" && pwd) # absolute: helpers and plugins are looked up by it
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=${OPD:-$B/core/oprofiled}
CONF=$S/conf/fleet.conf
SPIN=$B/tests/bench/count_workloads
RATE=${1:-150}
PER=${2:-10}
SECS=${3:-20}
SPIN_RATE=${SPIN_RATE:-40}
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
[ -x "$OPD" ] || { echo "missing $OPD: make first"; exit 2; }
[ -x "$SPIN" ] || (cd "$B" && make tests/bench/count_workloads > /dev/null) ||
	{ echo "cannot build $SPIN"; exit 2; }
for c in perf strace; do
	command -v $c > /dev/null || { echo "$c is not installed"; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "system-wide profiling and cgroups need root"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bench-churn.XXXXXX")
cd "$T" || exit 2
# the cgroup hierarchy and the fixed cgroup (CA), as the cgroup tests make them
. "$S/tests/integration/fleet_util.sh"
fleet_make_cgroups bench-churn
rmdir "$CB"
CG=$fleet_cgroot/bench-churn-n.$$
mkdir "$CG" || exit 2
spin= po= pp=
cleanup() {
	for p in $spin $po $pp; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	rmdir "$CG"/* "$CG" "$CA" 2> /dev/null
	cd / && rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# nanoseconds on CPU of all threads of $1
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2> /dev/null | awk '{ n += $1 } END { printf "%d", n }'; }
forks() { awk '/^processes/ { print $2 }' /proc/stat; }

# churn KIND TAG: RATE (proc) or SPIN_RATE (spin, pair) processes a second
# for SECS seconds, batches every 0.1 s; the pids it starts go to
# $T/pids.TAG; prints how many ran. The loop shell moves itself into the
# cgroup its children start in; /proc/uptime is its clock (read without a
# process).
churn() {
	r=$RATE
	[ "$1" = proc ] || r=$SPIN_RATE
	sh -s "$1" "$r" "$PER" "$SECS" "$CA" "$CG" "$SPIN" "$2" "$T/pids.$2" << 'EOF'
kind=$1 rate=$2 per=$3 secs=$4 ca=$5 cg=$6 spin=$7 tag=$8 pids=$9
batch=$((rate / 10)); [ $batch -gt 0 ] || batch=1
echo $$ > "$ca/cgroup.procs"
read -r up _ < /proc/uptime
n=0 k=0 end=$((${up%.*}${up#*.} + secs * 100)) now=0
while [ $now -lt $end ]; do
	i=0
	while [ $i -lt $batch ]; do
		case $kind in
		proc) /bin/true & ;;
		spin) "$spin" spin 10 2000 & ;;
		pair)
			if [ $((n % per)) = 0 ]; then
				k=$((k + 1))
				mkdir "$cg/$tag$k" && echo $$ > "$cg/$tag$k/cgroup.procs"
			fi
			"$spin" spin 10 2000 & ;;
		esac
		echo $! >> "$pids"
		i=$((i + 1)) n=$((n + 1))
	done
	[ "$kind" != proc ] || wait
	sleep 0.1
	read -r up _ < /proc/uptime
	now=${up%.*}${up#*.}
done
wait
echo $$ > "$ca/cgroup.procs"
echo $n
EOF
}

# strace window KIND: the daemon's calls with fd paths, over one churn run
straced() {
	strace -f -y -qq -p "$po" -o "$T/st.$1" &
	sp=$!
	sleep 1
	n=$(churn "$1" "$1s")
	sleep 2 # the daemon reads its rings about once a second
	kill -INT $sp
	wait $sp
	echo "$n" > "$T/n.$1"
}

# CPU window KIND: "daemon_ns perf_ns window_ns processes host_forks"
cpu_window() {
	sleep 1
	f0=$(forks) o0=$(cpu_ns "$po") p0=$(cpu_ns "$pp") t0=$(date +%s%N)
	if [ "$1" = idle ]; then sleep "$SECS"; n=0; else n=$(churn "$1" "$1c"); fi
	o1=$(cpu_ns "$po") p1=$(cpu_ns "$pp") t1=$(date +%s%N) f1=$(forks)
	echo "$((o1 - o0)) $((p1 - p0)) $((t1 - t0)) $n $((f1 - f0))" > "$T/cpu.$1"
}

for c in 1 2; do
	sh -c 'while :; do :; done' &
	spin="$spin $!"
done
"$OPD" --config="$CONF" --session-dir="$T/s" --rotate=0 > "$T/o.log" 2>&1 &
po=$!
fleet_wait_started "$po" "$T/s" "$T/o.log"
perf record -F 99 -a -g -o "$T/perf.data" > "$T/p.log" 2>&1 &
pp=$!
sleep 3
echo "bench_churn: $OPD with fleet.conf; /bin/true at $RATE/s, spinners at $SPIN_RATE/s, a new cgroup every $PER in 'pair'; $SECS s windows"
straced proc
straced pair
for k in idle proc spin pair; do
	cpu_window $k
done
"$B/tools/opcontrol" --session-dir="$T/s" --dump > /dev/null 2>&1

# pairs of a window (TAG): its cgroups that hold count_workloads's files
pairs() {
	_n=0
	for d in "$CG"/"$1"*; do
		[ -d "$d" ] || continue
		find "$T/s/samples/current/{cgroup}" -path "*/${d##*/}/*count_workloads*" -type f \
			2> /dev/null | grep -q . && _n=$((_n + 1))
	done
	echo $_n
}

# attributed calls of strace log $1 by name, per $3: lines naming
# /proc/PID (PID in file $2) when $4 = proc, else lines matching regex $4
attr() {
	awk -v n="$3" -v what="$4" -v lbl="$5" '
		FILENAME == ARGV[1] { pid[$1] = 1; next }
		/^[0-9]+ +[a-z_0-9]+\(/ {
			hit = 0
			if (what == "proc") {
				if (match($0, /(<\/proc\/|")[0-9]+\//)) {
					p = substr($0, RSTART, RLENGTH)
					gsub(/[^0-9]/, "", p)
					hit = p in pid
				}
			} else {
				hit = $0 ~ what
			}
			if (!hit)
				next
			name = $2
			sub(/\(.*/, "", name)
			c[name]++
			tot++
			if (name == "openat" && /O_CREAT/ && !/= -1/)
				files++
		}
		END {
			if (n <= 0) { printf "%s: none\n", lbl; exit }
			out = ""
			for (s in c)
				out = out sprintf(" %s %.2f", s, c[s] / n)
			printf "%s: %.2f system calls (%s )", lbl, tot / n, out
			if (files)
				printf "; %.2f sample files made each, %.1f calls a file", files / n, tot / files
			printf "\n"
		}' "$2" "$1"
}
np=$(cat "$T/n.proc")
npair=$(pairs pairs)
echo "strace windows: proc $np processes ($(awk -v n="$np" -v s="$SECS" 'BEGIN { printf "%.1f", n / s }')/s), pair $(cat "$T/n.pair") processes in $npair new pairs"
attr "$T/st.proc" "$T/pids.procs" "$np" proc "per new process (/bin/true, its /proc reads)"
attr "$T/st.pair" /dev/null "$npair" "bench-churn-n\\.$$(/|>, \")pairs" "per new (cgroup, binary) pair (its sample files)"
echo "CPU, % of one CPU over each window (no strace), beside perf record -F 99 -a -g:"
for k in idle proc spin pair; do
	read -r o p t n f < "$T/cpu.$k"
	awk -v o="$o" -v p="$p" -v t="$t" -v n="$n" -v f="$f" -v k="$k" 'BEGIN {
		r = p > 0 ? o / p : 0
		printf "%-6s oprofiled %.3f %%  perf %.3f %%  ratio %5.1f  churn %5.1f/s  host new processes %5.1f/s\n",
			k, o / t * 100, p / t * 100, r, n / (t / 1e9), f / (t / 1e9) }'
done
npc=$(pairs pairc)
read -r o1 p1 t1 n1 f1 < "$T/cpu.spin"
read -r o2 p2 t2 n2 f2 < "$T/cpu.pair"
awk -v a="$o1" -v ta="$t1" -v b="$o2" -v tb="$t2" -v n="$npc" 'BEGIN {
	if (n > 0) printf "daemon CPU of a new pair ((pair - spin window) / %d pairs): %.0f us\n", n, (b - a * tb / ta) / n / 1000 }'
echo "session: $(du -sk "$T/s" | cut -f1) KiB, $(find "$T/s/samples/current" -type f | wc -l) files"
for p in $pp $po; do kill -INT "$p" 2> /dev/null; done
wait $pp $po 2> /dev/null
pp= po=

# replay: one recorded stream of 60 new binaries through each build
for i in $(seq 1 60); do
	mkdir -p "$T/w/build/dev/tests/t$i" && cp "$SPIN" "$T/w/build/dev/tests/t$i/prog"
done
"$OPD" --config="$CONF" --session-dir="$T/rec" --rotate=0 --record="$T/stream" > "$T/rec.log" 2>&1 &
po=$!
fleet_wait_started "$po" "$T/rec" "$T/rec.log"
for k in 1 2 3 4 5; do
	for i in $(seq 1 60); do "$T/w/build/dev/tests/t$i/prog" spin 10; done
done
sleep 2
kill -INT $po
wait $po
po=
replay() { # OPD: "cpu_ns files"
	rm -rf "$T/r"
	"$1" --config="$CONF" --session-dir="$T/r" --rotate=0 --replay="$T/stream" > /dev/null 2>&1
	echo "$(awk '/replay_cpu_ns:/ { v = $2 } END { print v + 0 }' "$T/r/samples/oprofiled.log")" \
		"$(find "$T/r/samples/current" -type f -name '*.all' | wc -l)"
}
echo "replay of $(($(stat -c %s "$T/stream") / 1024)) KiB recorded (60 new binaries x 5 runs, and the host's own processes):"
for round in 1 2 3; do
	for o in $OPD ${CMP_OPD:-}; do
		set -- $(replay "$o")
		printf "  round %d %-50s replay_cpu_ns %9s  sample files %s\n" "$round" "$o" "$1" "$2"
	done
done
for o in $OPD ${CMP_OPD:-}; do
	rm -rf "$T/r"
	strace -c -f -o "$T/rs" "$o" --config="$CONF" --session-dir="$T/r" --rotate=0 \
		--replay="$T/stream" > /dev/null 2>&1
	echo "  $o: $(awk '$NF == "total" { print $4 }' "$T/rs") system calls ($(awk '$NF ~ /^(mkdirat|openat|openat2|close|newfstatat)$/ { printf "%s %s ", $NF, $4 }' "$T/rs"))"
done
