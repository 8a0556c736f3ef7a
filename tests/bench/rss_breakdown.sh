#!/bin/bash
# rss_breakdown.sh - where oprofiled's memory goes at fleet defaults with
# both network plugins loaded (issue 20: RSS <= 8 MiB with push and pull).
# Run by hand as root from the build directory (system-wide sampling):
#   OP_BUILDDIR=build tests/bench/rss_breakdown.sh [SECONDS=90] [PLUGINS="pprof push"]
# Two daemons run side by side on the same workload (both CPUs busy):
# conf/fleet.conf with the pprof (pull) and push plugins enabled (push to
# a loopback receiver, one 5 s pull in the middle, at least one rotation
# so that one push happens) and the same conf without them. At the end it
# prints, for each daemon and each of its helper processes (issue 20: the
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

for _ in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
	"$HOT" $(((SECS + 30) * 1000)) > /dev/null 2>&1 &
	pids="$pids $!"
done
"$OPD" --config="$W/net.conf" > "$W/net.out" 2>&1 &
npid=$!
"$OPD" --config="$W/base.conf" > "$W/base.out" 2>&1 &
bpid=$!
pids="$pids $npid $bpid"
sleep $((SECS / 2))
case " $PLUGINS " in
*" pprof "*)
	curl -sS -o "$W/pull.pb.gz" "http://127.0.0.1:$PP/debug/pprof/profile?seconds=5" ||
		echo "rss_breakdown: the pull failed"
	;;
esac
sleep $((SECS - SECS / 2))
for d in "$npid:net" "$bpid:base"; do
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
family $npid "with $PLUGINS"
family $bpid "without the network plugins"
ls "$W/recv" 2> /dev/null | grep -c body | sed 's/^/pushes received: /'
