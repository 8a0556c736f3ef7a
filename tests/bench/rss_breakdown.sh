#!/bin/bash
# rss_breakdown.sh - where oprofiled's memory goes at fleet defaults with
# both network plugins loaded (issue 20: RSS <= 8 MiB with push and pull).
# Run by hand as root from the build directory (system-wide sampling):
#   OP_BUILDDIR=build tests/bench/rss_breakdown.sh [SECONDS=90] [PLUGINS="pprof push"]
# Three daemons run side by side on the same workload (both CPUs busy):
# conf/fleet.conf with the pprof (pull) and push plugins enabled (push to
# a loopback receiver, one 5 s pull in the middle, at least one rotation
# so that one push happens), once with resident helpers (helper_idle 0)
# and once on demand (helper_idle 5s, not the default 30s, so that a 65 s
# run sees the push helper go), and the same conf without them. The on-
# demand daemon's helpers are sampled every 50 ms while they run (the
# peak Pss and VmHWM of each: the cost during network work); after the
# run it is reported once its helpers have exited (the cost between
# network work). At the end it prints, for each daemon and each of its
# helper processes (issue 20: the
# network plugins' HTTP runs in oprofiled-pull/-push), then their sum,
# VmRSS/VmHWM/RssAnon/RssFile from /proc/PID/status, Pss
# from smaps_rollup, the thread count, and /proc/PID/smaps summed by kind:
# [heap], other anonymous memory (thread stacks, malloc arenas), perf
# rings, sample files (mmap'd, one page at least each), the call-graph
# stacks table, and each shared library (Rss, Pss, Private_Dirty).
# SPDX-License-Identifier: MIT
set -u
B=$(cd "${OP_BUILDDIR:-.}" && pwd) # absolute: helpers and plugins are looked up by it
S=${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
OPD=$B/core/oprofiled
HOT=$B/tests/integration/hot
SECS=${1:-90}
PLUGINS=${2:-pprof push}
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
export OP_HELPER_DIR=${OP_HELPER_DIR:-$B/plugins/libexec}
. "$S/tests/bench/net_helpers.sh"
[ -x "$OPD" ] && [ -x "$HOT" ] || { echo "rss_breakdown: make && make check TESTS= first"; exit 2; }
[ "$(id -u)" = 0 ] || { echo "rss_breakdown: system-wide profiling needs root"; exit 2; }
[ "$SECS" -ge 65 ] || { echo "rss_breakdown: SECONDS must be >= 65 (one rotation)"; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/rss-breakdown.XXXXXX")
pids=
trap 'kill $pids 2> /dev/null; wait 2> /dev/null; rm -rf "$W"' EXIT

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

python3 "$S/tests/integration/push_receiver.py" --dir "$W/recv" --port-file "$W/recv.port" &
pids="$pids $!"
for _ in $(seq 100); do [ -s "$W/recv.port" ] && break; sleep 0.1; done
RP=$(cat "$W/recv.port")
PP=$(free_port)

# fleet.conf as shipped, in a session of its own; "net": the commented
# pprof and push entries enabled on loopback ports of this run
sed -e "s|^session_dir = .*|session_dir = \"$W/base\";|" "$S/conf/fleet.conf" > "$W/base.conf"
sed -e "s|^session_dir = .*|session_dir = \"$W/net\";|" \
	-e 's|^\t#,{|\t,{|; s|^\t#\t|\t\t|; s|^\t#}|\t}|' \
	-e "s|127.0.0.1:6060|127.0.0.1:$PP|; s|http://127.0.0.1:4040|http://127.0.0.1:$RP|" \
	-e 's|helper_idle = "[^"]*"|helper_idle = "0"|' \
	"$S/conf/fleet.conf" > "$W/net.conf"
for p in pprof push; do
	case " $PLUGINS " in
	*" $p "*) ;;
	*) python3 - "$W/net.conf" "$p" << 'EOF' ;;
import re, sys
path, name = sys.argv[1], sys.argv[2]
t = open(path).read()
t = re.sub(r'\n\t,\{\n\t\tname = "%s";.*?\n\t\}' % name, '', t, flags=re.S)
open(path, "w").write(t)
EOF
	esac
done

# "od": the same plugins, helpers on demand, on a port of its own
PP2=$(free_port)
sed -e "s|^session_dir = .*|session_dir = \"$W/od\";|" -e "s|127.0.0.1:$PP\"|127.0.0.1:$PP2\"|" \
	-e 's|helper_idle = "[^"]*"|helper_idle = "5s"|' "$W/net.conf" > "$W/od.conf"

for _ in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
	"$HOT" $(((SECS + 30) * 1000)) > /dev/null 2>&1 &
	pids="$pids $!"
done
"$OPD" --config="$W/net.conf" > "$W/net.out" 2>&1 &
npid=$!
"$OPD" --config="$W/base.conf" > "$W/base.out" 2>&1 &
bpid=$!
"$OPD" --config="$W/od.conf" > "$W/od.out" 2>&1 &
opid=$!
pids="$pids $npid $bpid $opid"
# the on-demand daemon's helpers while they run: the peak of each, by name
python3 - "$opid" "$W/stop" > "$W/peak.txt" << 'EOF' &
import os, sys, time
daemon, stop = sys.argv[1], sys.argv[2]
peak = {}
def field(pid, f, key):
    try:
        for line in open("/proc/%s/%s" % (pid, f)):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
while not os.path.exists(stop):
    kids = []
    for t in os.listdir("/proc/%s/task" % daemon) if os.path.isdir("/proc/%s/task" % daemon) else []:
        try:
            kids += open("/proc/%s/task/%s/children" % (daemon, t)).read().split()
        except OSError:
            pass
    for k in kids:
        try:
            name = open("/proc/%s/cmdline" % k).read().split("\0")[0]
        except OSError:
            continue
        if not name.startswith("oprofiled-"):
            continue
        p = peak.setdefault(name, {"Pss": 0, "VmHWM": 0, "VmRSS": 0, "pids": set()})
        p["pids"].add(k)
        p["Pss"] = max(p["Pss"], field(k, "smaps_rollup", "Pss"))
        for f in ("VmHWM", "VmRSS"):
            p[f] = max(p[f], field(k, "status", f))
    time.sleep(0.05)
for n, p in sorted(peak.items()):
    print("%s: %d runs seen, peak Pss %d kB, VmRSS %d kB, VmHWM %d kB"
          % (n, len(p["pids"]), p["Pss"], p["VmRSS"], p["VmHWM"]))
EOF
poller=$!
pids="$pids $poller"
sleep $((SECS / 2))
case " $PLUGINS " in
*" pprof "*)
	curl -sS -o "$W/pull.pb.gz" "http://127.0.0.1:$PP/debug/pprof/profile?seconds=5" &
	_c=$!
	curl -sS -o "$W/pull2.pb.gz" "http://127.0.0.1:$PP2/debug/pprof/profile?seconds=5" ||
		echo "rss_breakdown: the on-demand pull failed"
	wait $_c || echo "rss_breakdown: the pull failed"
	;;
esac
sleep $((SECS - SECS / 2))
for d in "$npid:net" "$bpid:base" "$opid:od"; do
	kill -0 "${d%%:*}" 2> /dev/null && continue
	echo "rss_breakdown: the ${d#*:} daemon is not running; its output:"
	cat "$W/${d#*:}.out"
	exit 1
done

report() { # PID TITLE
	echo "== $2 (pid $1)"
	awk '/^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem|Threads)/ { printf "%s %s %s  ", $1, $2, $3 } END { print "" }' \
		"/proc/$1/status"
	awk '/^Pss:/ { print "Pss: " $2 " kB" }' "/proc/$1/smaps_rollup"
	python3 - "$1" << 'EOF'
import collections, re, sys
maps, cur = [], None
for line in open("/proc/%s/smaps" % sys.argv[1]):
    m = re.match(r'^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$', line)
    if m:
        cur = {"path": m[4].strip(), "perm": m[3]}
        maps.append(cur)
        continue
    k, _, v = line.partition(":")
    if v.strip().endswith("kB"):
        cur[k] = int(v.split()[0])
agg = collections.defaultdict(collections.Counter)
for m in maps:
    p = m["path"]
    if "/samples/" in p:
        p = "sample files" if not p.endswith("/stacks") else "call-graph stacks table"
    elif "perf_event" in p:
        p = "perf rings"
    elif p == "":
        p = "anon (thread stacks, malloc arenas)"
    elif p.startswith("/") and "/build/" not in p and "/lib" in p:
        p = p.rsplit("/", 1)[1]
    elif p.startswith("/"):
        p = "oprofile-ng: " + p.rsplit("/", 1)[1]
    for k in ("Rss", "Pss", "Private_Dirty"):
        agg[p][k] += m.get(k, 0)
    agg[p]["n"] += 1
print("%7s %7s %7s %5s  %s" % ("Rss kB", "Pss", "PrivDty", "maps", "what"))
tot = collections.Counter()
for k, c in sorted(agg.items(), key=lambda kv: -kv[1]["Rss"]):
    tot.update(c)
    if c["Rss"] >= 64:
        print("%7d %7d %7d %5d  %s" % (c["Rss"], c["Pss"], c["Private_Dirty"], c["n"], k))
print("%7d %7d %7d %5d  total" % (tot["Rss"], tot["Pss"], tot["Private_Dirty"], tot["n"]))
EOF
}
# the daemon, each of its helpers (net_helpers.sh), and their sum (VmRSS counts shared pages in
# each process; Pss shares them out, so the Pss sum is what they cost)
family() { # PID TITLE
	report "$1" "$2: the daemon"
	_rss=$(awk '/^VmRSS/ { print $2 }' /proc/$1/status)
	_pss=$(awk '/^Pss:/ { print $2 }' /proc/$1/smaps_rollup)
	_n=0
	for _h in $(helpers "$1"); do
		report "$_h" "$2: helper $(tr '\0' '\n' < /proc/$_h/cmdline | head -1)"
		_rss=$((_rss + $(awk '/^VmRSS/ { print $2 }' /proc/$_h/status)))
		_pss=$((_pss + $(awk '/^Pss:/ { print $2 }' /proc/$_h/smaps_rollup)))
		_n=$((_n + 1))
	done
	echo "== $2: daemon + $_n helpers: VmRSS $_rss kB, Pss $_pss kB"
}
echo "fleet.conf, system-wide at 99 Hz, both CPUs busy, $SECS s (one rotation, one 5 s pull)"
family $npid "with $PLUGINS, resident helpers (helper_idle 0)"
family $bpid "without the network plugins"
# on demand: between network work, once the last push's helper has gone (bounded)
for _ in $(seq 600); do
	[ -z "$(helpers $opid)" ] && break
	sleep 0.1
done
touch "$W/stop"
wait $poller
family $opid "with $PLUGINS, helpers on demand (helper_idle 5s), between network work"
echo "== on demand: each helper while it ran (sampled every 50 ms)"
cat "$W/peak.txt"
ls "$W/recv" 2> /dev/null | grep -c body | sed 's/^/pushes received (both daemons with push): /'
# the price of on demand: CPU per helper start (perf stat -r 20 of the helper alone,
# started as np_child starts it: fd 3 a SOCK_SEQPACKET socket, here with its peer
# closed, so that it initialises, finds its daemon gone and exits; fd 4 a
# listening socket for the pull helper), beside a trivial helper's
if command -v perf > /dev/null; then
	echo "== CPU per helper start (perf stat -r 20, task-clock)"
	for h in "oprofiled-push" \
		"oprofiled-pull --listen=x --max-seconds=10 --max-connections=4 --daemon-uid=0 --idle-ms=1000" \
		"$B/tests/unit/np_child_helper"; do
		set -- $h
		case $1 in /*) ;; *) set -- "$OP_HELPER_DIR/$1" "${@:2}" ;; esac
		[ -x "$1" ] || continue
		python3 - 20 "$@" << 'EOF2' 2>&1 | sed -n "s|^ *\([0-9.]*\) msec task-clock.*(\(.*\))|$(basename "$1"): \1 ms CPU per start (\2)|p"
import os, socket, sys
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
a.close()
os.dup2(b.fileno(), 3)
os.set_inheritable(3, True)
l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(4)
os.dup2(l.fileno(), 4)
os.set_inheritable(4, True)
os.execvp("perf", ["perf", "stat", "-r", sys.argv[1], "-e", "task-clock", "--"] + sys.argv[2:])
EOF2
	done
fi
