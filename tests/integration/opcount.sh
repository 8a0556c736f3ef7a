#!/bin/sh
# opcount.sh - the opcount tool on live software events: counts for known
# workloads, exit status propagation, CSV/JSON that parse, per-thread/per-CPU
# rows, intervals, --pid/--tid/--system-wide, and the bad-input messages.
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPC=$B/tools/opcount
W=$B/tests/bench/count_workloads
T=$B/tests/opcount.tmp
. "${OP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/sig_util.sh"
rm -rf "$T"; mkdir -p "$T"
fails=0 n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -f "$T/err" ] && sed 's/^/#   /' "$T/err" | head -20; }
check() { # $1 = description, rest = a shell condition (a command's status: save it first, py=$?)
	d=$1; shift
	if eval "$@"; then ok "$d"; else bad "$d"; fi
}

for f in "$OPC" "$W"; do
	[ -x "$f" ] || { echo "missing $f (build it first)"; exit 1; }
done
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 3 ] && [ "$(id -u)" != 0 ]; then
	echo "perf_event_paranoid >= 3 and not root: the kernel forbids perf here"; exit 77
fi

# the name suffix opcount gives every event as this user: "" where the kernel
# lets us count kernel mode too (root, CAP_PERFMON, perf_event_paranoid <= 1),
# ":u" where it allows user space only (as perf stat names them); asked of
# opcount itself once, then part of every name matched below
"$OPC" -e task-clock --csv -o "$T/u.csv" -- true 2>"$T/err"
U=$(awk -F, '$1 == "total" && $3 == "" && $4 == "" { print $5 }' "$T/u.csv")
case $U in
task-clock) U= ;;
task-clock:u) U=:u ;;
*) echo "cannot tell what opcount calls task-clock as $(id -un): '$U'"; cat "$T/err"; exit 1 ;;
esac
if [ "$(id -u)" = 0 ] && [ -n "$U" ]; then
	echo "root counts user space only ('task-clock$U'): the library's fallback misfired"; exit 1
fi
export U
[ -n "$U" ] && echo "# not privileged: events are named with '$U' (user space only)"

# count of EVENT from a CSV total row (aggregate, no tid/cpu)
csv_count() { # $1 file, $2 event
	awk -F, -v e="$2" '$1 == "total" && $3 == "" && $4 == "" && $5 == e { print $6 }' "$1"
}
within() { # $1 value, $2 low, $3 high
	[ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# 1. page faults of a command: N fresh pages + exec start-up (< 200)
"$OPC" -e page-faults,minor-faults,major-faults --csv -o "$T/pf.csv" -- "$W" touch 20000 2>"$T/err"
rc=$?
pf=$(csv_count "$T/pf.csv" page-faults$U)
check "touch 20000: exit 0" '[ $rc = 0 ]'
check "touch 20000: page-faults $pf in [20000, 20600]" 'within "$pf" 20000 20600'

# 2. text output: thousands separators, header, % column
"$OPC" -e page-faults -o "$T/pf.txt" -- "$W" touch 12345 2>"$T/err"
check "text: 'Event counts (actual)' header" 'grep -q "^Event counts (actual) for .*count_workloads touch 12345:" "$T/pf.txt"'
check "text: count with thousands separators" 'grep -Eq "^	page-faults$U +12,[0-9]{3} +100\.00$" "$T/pf.txt"'
check "text: '% time counted' column" 'grep -q "% time counted" "$T/pf.txt"'

# 3. exit status of the command
"$OPC" -e task-clock -o "$T/x" -- "$W" exit 7 2>"$T/err"; rc=$?
check "exit status 7 propagated" '[ $rc = 7 ]'
"$OPC" -e task-clock -o "$T/x" -- sh -c 'kill -TERM $$' 2>"$T/err"; rc=$?
check "killed by SIGTERM -> 143" '[ $rc = 143 ]'
"$OPC" -e task-clock -- "$T/no-such-program" >"$T/out" 2>"$T/err"; rc=$?
check "missing command -> 127 and a message" '[ $rc = 127 ] && grep -q "cannot run .*no-such-program.*No such file" "$T/err"'

# 4. children: K forks x M pages are in the command's totals
"$OPC" -e page-faults --csv -o "$T/fork.csv" -- "$W" fork 4 5000 2>"$T/err"
pf=$(csv_count "$T/fork.csv" page-faults$U)
check "fork 4 x 5000: page-faults $pf in [20000, 20800]" 'within "$pf" 20000 20800'

# 5. context switches: N ping-pong round trips on one CPU
"$OPC" -e context-switches --csv -o "$T/cs.csv" -- "$W" pingpong 3000 2>"$T/err"
cs=$(csv_count "$T/cs.csv" context-switches$U)
if [ -z "$U" ]; then
	check "pingpong 3000: context-switches $cs >= 3000" 'within "$cs" 3000 1000000000'
else
	# user space only: a context switch always happens in kernel mode, so
	# context-switches:u reads 0 (opcount says so); the >= 3000 check needs
	# kernel counting (root, CAP_PERFMON or perf_event_paranoid <= 1)
	echo "# not privileged: 'pingpong 3000: context-switches >= 3000' needs kernel counting, checked as root only"
	"$OPC" -e context-switches -o "$T/cs.txt" -- "$W" pingpong 300 2>"$T/err"
	check "pingpong as a user: context-switches$U $cs = 0 (a kernel-mode event), the text output says why" \
		'[ "$cs" = 0 ] && grep -q "^:u = user space only .*context-switches, read 0" "$T/cs.txt"'
fi

# 6. JSON parses, has the exit status and the events
# irq + softirq + steal ms of all CPUs (/proc/stat): task-clock holds them, the
# spin's CPU-time clock does not (a loaded VM host steals; test_opcount too)
lost_ms() { awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" { printf "%d\n", ($7 + $8 + $9) * 1000 / hz }' /proc/stat; }
l0=$(lost_ms)
"$OPC" -e task-clock,page-faults --json -o "$T/spin.json" -- "$W" spin 300 2>"$T/err"; rc=$?
lost=$(($(lost_ms) - l0))
check "json: exit 0" '[ $rc = 0 ]'
python3 - "$T/spin.json" "$lost" >"$T/err" 2>&1 <<'EOF'
import json, os, sys
U = os.environ["U"]
d = json.load(open(sys.argv[1]))
assert d["exit_status"] == 0, d
ev = {c["event"]: c for c in d["counts"]}
assert set(ev) == {"task-clock" + U, "page-faults" + U}, ev
tc = ev["task-clock" + U]["count"]
# spin 300 = 300 ms of process CPU time, plus start-up (+15 %); task-clock
# also holds irq and steal time, as much as /proc/stat saw meanwhile
assert 300e6 <= tc <= 345e6 + int(sys.argv[2]) * 1e6, (tc, "irq+steal ms", sys.argv[2])
assert ev["task-clock" + U]["percent_counted"] == 100.0
assert d["scaled"] is False
EOF
py=$?
check "json: parses, task-clock of 'spin 300' in [300, 345 + $lost irq/steal] ms" '[ $py = 0 ]'

# 7. intervals: text and CSV
"$OPC" -e task-clock -i 100 -o "$T/iv.txt" -- "$W" spin 450 2>"$T/err"
iv=$(grep -Ec "^ +[0-9]+\.[0-9]{3} +task-clock$U " "$T/iv.txt")
check "interval text: $iv rows >= 3" '[ "$iv" -ge 3 ]'
"$OPC" -e task-clock -i 100 --csv -o "$T/iv.csv" -- "$W" spin 450 2>"$T/err"
python3 - "$T/iv.csv" >"$T/err" 2>&1 <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
iv = [r for r in rows if r["kind"] == "interval"]
tot = [r for r in rows if r["kind"] == "total"]
assert len(iv) >= 3 and len(tot) == 1, rows
times = [float(r["time_s"]) for r in iv]
assert times == sorted(times), times
# a single spinning thread cannot count more than the wall time between two
# reads (less when the machine is busy): each row's time since the one before,
# not the nominal 100 ms (a loaded machine wakes opcount late), +20 ms for
# where the time is stamped against the read
prev = 0.0
for r, t in zip(iv[:3], times):
    assert 0 < int(r["count"]) <= (t - prev) * 1e9 + 20e6, (r, "since the last row", t - prev)
    prev = t
# the intervals add up to no more than the total
assert sum(int(r["count"]) for r in iv) <= int(tot[0]["count"])
EOF
py=$?
check "interval csv: parses, monotonic, 0 < count <= the wall time since the row before (+20 ms)" '[ $py = 0 ]'
"$OPC" -e task-clock -i 100 --json -o "$T/iv.json" -- "$W" spin 250 2>"$T/err"
check "interval json: parses" 'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d[\"intervals\"]) >= 2" "$T/iv.json" 2>"$T/err"'

# 8. --pid with --separate-thread, --tid: a running process
"$W" loop 1 20 & lp=$!
sleep 0.1
"$OPC" -e page-faults,task-clock --pid=$lp --separate-thread --csv -o "$T/pid.csv" 2>"$T/err"; rc=$?
wait $lp
check "--pid: ends with the target, exit 0" '[ $rc = 0 ]'
pf=$(csv_count "$T/pid.csv" page-faults$U)
check "--pid: page-faults $pf >= 1000 (~90 loops x 20 pages)" 'within "$pf" 1000 100000'
check "--pid --separate-thread: a row with tid $lp" 'grep -q "^total,,$lp,,page-faults$U," "$T/pid.csv"'
"$W" loop 1 10 & lp=$!
sleep 0.1
"$OPC" -e page-faults --tid=$lp -o "$T/tid.txt" 2>"$T/err"; rc=$?
wait $lp
check "--tid: counts and exits 0" '[ $rc = 0 ] && grep -q "for tid $lp:" "$T/tid.txt"'

# 9. per-CPU rows: command and system-wide
ncpu=$(getconf _NPROCESSORS_ONLN)
"$OPC" -e task-clock --separate-cpu --csv -o "$T/cpu.csv" -- "$W" spin 100 2>"$T/err"
rows=$(awk -F, '$1 == "total" && $4 != ""' "$T/cpu.csv" | wc -l)
check "--separate-cpu with a command: $rows rows = $ncpu CPUs" '[ "$rows" = "$ncpu" ]'
# a task's per-CPU counter is idle while the task runs elsewhere: placement,
# not multiplexing -> never scaled, CPU rows add up to the total
sum=$(awk -F, '$1 == "total" && $4 != "" { s += $6 } END { print s + 0 }' "$T/cpu.csv")
tot=$(csv_count "$T/cpu.csv" task-clock$U)
check "--separate-cpu: CPU rows sum to the total ($sum = $tot), 100 % counted" '[ "$sum" = "$tot" ] && ! grep -v "^kind" "$T/cpu.csv" | grep -qv ",100.00$"'
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	"$OPC" -e cpu-clock --system-wide --separate-cpu --json -o "$T/sw.json" -- sleep 0.2 2>"$T/err"; rc=$?
	python3 - "$T/sw.json" "$ncpu" >"$T/err" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
per = [c for c in d["counts"] if "cpu" in c]
assert len(per) == n, per
# cpu-clock on each CPU ~ the 0.2 s the command ran
for c in per:
    assert 0.15e9 <= c["count"] <= 1.0e9, c
EOF
py=$?
	check "--system-wide --separate-cpu: one row per CPU, ~0.2 s each" '[ $py = 0 ] && [ $rc = 0 ]'
fi

# 9b. without a command, SIGINT ends counting and prints the totals (exit 0)
"$OPC" -e page-faults --pid=$$ --csv -o "$T/int.csv" 2>"$T/err" & op=$!
sig_wait_blocked $op 2
sleep 0.3
kill -INT $op
wait $op; rc=$?
check "--pid=\$\$ stopped by SIGINT: exit 0 and a total row" '[ $rc = 0 ] && grep -q "^total,,,,page-faults$U," "$T/int.csv"'

# 10. bad input: clear messages, non-zero exit
"$OPC" -e page-faults,bogus-event -- true >"$T/out" 2>"$T/err"; rc=$?
check "unknown event: rc != 0, names it" '[ $rc != 0 ] && grep -q "event .bogus-event.: unknown event" "$T/err"'
"$OPC" --pid=999999999 >"$T/out" 2>"$T/err"; rc=$?
check "bad pid: rc != 0, message" '[ $rc != 0 ] && grep -q "no such process" "$T/err"'
"$OPC" --pid=abc >"$T/out" 2>"$T/err"; rc=$?
check "non-numeric pid: rc != 0, message" '[ $rc != 0 ] && grep -q "expected a positive process id" "$T/err"'
"$OPC" -e page-faults >"$T/out" 2>"$T/err"; rc=$?
check "no target: rc != 0, usage message" '[ $rc != 0 ] && grep -q "expected exactly one target" "$T/err"'
"$OPC" --separate-thread -- true >"$T/out" 2>"$T/err"; rc=$?
check "--separate-thread with a command: rc != 0, explained" '[ $rc != 0 ] && grep -q "needs --pid or --tid" "$T/err"'
"$OPC" -i 0 -- true >"$T/out" 2>"$T/err"; rc=$?
check "bad interval: rc != 0" '[ $rc != 0 ] && grep -q "time-interval" "$T/err"'
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if $nobody test -x "$OPC"; then
		$nobody "$OPC" -e page-faults --pid=1 >"$T/out" 2>"$T/err"; rc=$?
		check "no permission (pid 1 as nobody): rc != 0, paranoid value" '[ $rc != 0 ] && grep -q "no permission: kernel.perf_event_paranoid is [0-9]" "$T/err"'
		$nobody "$OPC" -e page-faults --system-wide -- true >"$T/out" 2>"$T/err"; rc=$?
		check "no permission (system-wide as nobody): rc != 0, what to change" '[ $rc != 0 ] && grep -q "perf_event_paranoid" "$T/err"'
		$nobody "$OPC" -e page-faults --csv -- "$W" touch 3000 >"$T/err" 2>"$T/nb.csv"; rc=$?
		pf=$(awk -F, '$1 == "total" && $5 == "page-faults:u" { print $6 }' "$T/nb.csv")
		check "as nobody: own command counts user-only (page-faults:u = $pf)" '[ $rc = 0 ] && within "$pf" 3000 3300'
	else
		echo "# nobody cannot reach $OPC: permission checks not run"
	fi
fi

# 12. the command's output and the document on one stream (2>&1): CSV and
# JSON are written whole when counting ends, so neither interleaves; first the
# exact report (a race), then a command that writes while the counters run
"$OPC" --json -e task-clock -- echo hello >"$T/mix1" 2>&1; rc=$?
"$OPC" --json -e task-clock -- sh -c 'sleep 0.2; echo hello; echo bye >&2' >"$T/mix2" 2>&1
"$OPC" --json -e task-clock -i 100 -- sh -c 'echo a; sleep 0.35; echo b' >"$T/mix3" 2>&1
python3 - "$T" >"$T/err" 2>&1 <<'PY'
import json, os, sys
U = os.environ["U"]
T = sys.argv[1]
def split(name, cmd_lines):
    text = open(f"{T}/{name}").read()
    lines = text.split("\n")
    # the command's lines are whole lines before or after the document
    k = len(cmd_lines)
    assert sorted(lines[:k]) == sorted(cmd_lines) or sorted(lines[-k - 1:-1]) == sorted(cmd_lines), (name, text)
    for l in cmd_lines:
        lines.remove(l)
    return json.loads("\n".join(lines))
d = split("mix1", ["hello"])
assert [c["event"] for c in d["counts"]] == ["task-clock" + U], d
d = split("mix2", ["hello", "bye"])
assert d["exit_status"] == 0 and d["counts"][0]["count"] > 0, d
d = split("mix3", ["a", "b"])
assert len(d["intervals"]) >= 3, d
PY
py=$?
check "json on the command's stream (2>&1): whole document, command lines apart (rc $rc)" '[ $py = 0 ] && [ $rc = 0 ]'
"$OPC" --csv -e task-clock -- sh -c 'sleep 0.2; echo hello; sleep 0.1' >"$T/mix4" 2>&1
python3 - "$T/mix4" >"$T/err" 2>&1 <<'PY'
import csv, os, sys
U = os.environ["U"]
lines = open(sys.argv[1]).read().splitlines()
assert lines.count("hello") == 1 and "hello" in (lines[0], lines[-1]), lines
lines.remove("hello")
rows = list(csv.DictReader(lines))
assert [r["event"] for r in rows] == ["task-clock" + U] and rows[0]["kind"] == "total", rows
PY
py=$?
check "csv on the command's stream (2>&1): header and rows in one piece, the command's line apart" '[ $py = 0 ]'

# 13. the last, partial interval is printed (as perf stat -I): the intervals
# add up to the total exactly, the last one is shorter than -i
for fmt in csv json text; do
	"$OPC" -e task-clock,page-faults -i 100 $([ $fmt = text ] || echo --$fmt) -o "$T/piv.$fmt" \
		-- "$W" spin 250 2>>"$T/err"
done
python3 - "$T" >"$T/err" 2>&1 <<'PY'
import csv, json, re, sys
T = sys.argv[1]
def check(iv, tot, what):
    # iv: [(time, event, count)], tot: {event: count}
    for ev, total in tot.items():
        rows = [(t, c) for t, e, c in iv if e == ev]
        assert sum(c for t, c in rows) == total, (what, ev, rows, total)
    times = sorted({t for t, e, c in iv})
    assert len(times) >= 3, (what, times)
    assert times[-1] - times[-2] < 0.1, (what, "last interval not partial", times)
rows = list(csv.DictReader(open(f"{T}/piv.csv")))
check([(float(r["time_s"]), r["event"], int(r["count"])) for r in rows if r["kind"] == "interval"],
      {r["event"]: int(r["count"]) for r in rows if r["kind"] == "total"}, "csv")
d = json.load(open(f"{T}/piv.json"))
check([(r["time_s"], r["event"], r["count"]) for r in d["intervals"]],
      {r["event"]: r["count"] for r in d["counts"]}, "json")
iv, tot = [], {}
for l in open(f"{T}/piv.text"):
    m = re.match(r"^ +([0-9.]+) +(\S+) +([0-9,]+) ", l)
    if m:
        iv.append((float(m[1]), m[2], int(m[3].replace(",", ""))))
    m = re.match(r"^\t(\S+) +([0-9,]+) ", l)
    if m:
        tot[m[1]] = int(m[2].replace(",", ""))
check(iv, tot, "text")
PY
py=$?
check "-i 100 on 'spin 250': the partial last interval printed, intervals sum to the total (csv, json, text)" '[ $py = 0 ]'

# 14. an event the machine cannot count is <not supported> (as perf stat);
# the others count, the exit status is the command's; unknown names stay errors
if [ ! -e /sys/bus/event_source/devices/cpu ]; then
	"$OPC" -e task-clock,cycles -o "$T/ns.txt" -- "$W" exit 7 2>"$T/err"; rc=$?
	check "task-clock,cycles without a PMU: exit status 7 (the command's)" '[ $rc = 7 ]'
	check "text: cycles <not supported>, task-clock counted, the reason given" \
		'grep -Eq "^	cycles$U +<not supported> *$" "$T/ns.txt" && grep -Eq "^	task-clock$U +[1-9][0-9,]* +100\.00$" "$T/ns.txt" && grep -q "no hardware PMU" "$T/ns.txt"'
	"$OPC" -e task-clock,cycles -i 100 --csv -o "$T/ns.csv" -- "$W" spin 150 2>"$T/err"; rc=$?
	"$OPC" -e cycles,task-clock -i 100 --json -o "$T/ns.json" -- "$W" spin 150 2>>"$T/err"; rc2=$?
	python3 - "$T" >>"$T/err" 2>&1 <<'PY'
import csv, json, os, sys
U = os.environ["U"]
T = sys.argv[1]
rows = list(csv.DictReader(open(f"{T}/ns.csv")))
cyc = [r for r in rows if r["event"] == "cycles" + U]
tc = [r for r in rows if r["event"] == "task-clock" + U]
assert len(cyc) == len(tc) >= 2, rows
assert all(r["count"] == "<not supported>" and r["scaled_count"] == "" and r["percent_counted"] == "" for r in cyc), cyc
assert all(int(r["count"]) > 0 for r in tc), tc
d = json.load(open(f"{T}/ns.json"))
for part in ("intervals", "counts"):
    cyc = [r for r in d[part] if r["event"] == "cycles" + U]
    tc = [r for r in d[part] if r["event"] == "task-clock" + U]
    assert cyc and all(r["supported"] is False and r["count"] is None and r["scaled_count"] is None for r in cyc), d
    assert tc and all(r["supported"] is True and r["count"] > 0 for r in tc), d
PY
py=$?
	check "csv and json with -i: cycles <not supported> / null, task-clock counted (rc $rc $rc2)" '[ $py = 0 ] && [ $rc = 0 ] && [ $rc2 = 0 ]'
	"$OPC" -e cycles -- true >"$T/out" 2>"$T/err"; rc=$?
	check "cycles alone: exit 0, <not supported>" '[ $rc = 0 ] && grep -q "cycles$U .*<not supported>" "$T/err"'
	"$OPC" -e cycles,bogus-event -- true >"$T/out" 2>"$T/err"; rc=$?
	check "cycles,bogus-event: the unknown name is still an error" '[ $rc = 1 ] && grep -q "event .bogus-event.: unknown event" "$T/err"'
fi

# 15. --brief (ocount's -b lines), --intervals N, --cpu-list
"$OPC" -e task-clock --brief -o "$T/b.txt" -- "$W" spin 100 2>"$T/err"; rc=$?
tc=$(awk -F, -v e="task-clock$U" '$1 == e && $3 ~ /^[0-9]+\.[0-9][0-9]$/ { print $2 }' "$T/b.txt")
check "--brief: a blank line and task-clock$U,COUNT,PERCENT only, spin 100 ms = '$tc' ns" \
	'[ $rc = 0 ] && within "$tc" 80000000 1000000000 && [ "$(sed -n 1p "$T/b.txt")" = "" ] && [ $(wc -l <"$T/b.txt") = 2 ]'
start=$(date +%s%N)
"$OPC" -e task-clock -i 100 --intervals=3 --brief -o "$T/bi.txt" -- sleep 5 2>"$T/err"; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "--intervals=3 -i 100: 3 timestamped intervals, the command killed after ${ms} ms, exit 0" \
	'[ $rc = 0 ] && [ $ms -lt 3000 ] && [ "$(grep -c "^timestamp,[0-9]*\.[0-9]$" "$T/bi.txt")" = 3 ] && [ "$(grep -c "^task-clock$U,[0-9]*," "$T/bi.txt")" = 3 ]'
"$OPC" --intervals=2 -- true >"$T/out" 2>"$T/err"; rc=$?
check "--intervals without -i: rc != 0, explained" '[ $rc != 0 ] && grep -q "needs --time-interval" "$T/err"'
for l in x 0,,1 3-1 99999 -1; do
	"$OPC" --cpu-list=$l -- true >"$T/out" 2>"$T/err"; rc=$?
	check "--cpu-list=$l: rc != 0, names the item" '[ $rc != 0 ] && grep -q "^opcount: --cpu-list=$l: item [0-9] is not a CPU number" "$T/err"'
done
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	"$OPC" -e cpu-clock --cpu-list=0 --brief -o "$T/c0.txt" -- sleep 0.2 2>"$T/err"; rc=$?
	c0=$(awk -F, '$1 == "cpu-clock" { print $2 }' "$T/c0.txt")
	# cpu-clock on one CPU counts its wall time: the 0.2 s the command ran
	check "--cpu-list=0 --brief: cpu-clock of CPU 0 over 0.2 s = '$c0' ns" '[ $rc = 0 ] && within "$c0" 150000000 1000000000'
	"$OPC" -e cpu-clock --cpu-list=60000 -- true >"$T/out" 2>"$T/err"; rc=$?
	check "--cpu-list=60000: rc != 0, not online" '[ $rc != 0 ] && grep -q "cpu-list=60000: cpu 60000 .*not online" "$T/err"'
	"$OPC" -e cpu-clock --cpu-list=0,0 -- true >"$T/out" 2>"$T/err"; rc=$?
	check "--cpu-list=0,0: rc != 0, given twice" '[ $rc != 0 ] && grep -q "given twice" "$T/err"'
	if [ "$ncpu" -ge 2 ]; then
		"$OPC" -e cpu-clock -C 1,0 --separate-cpu --brief -o "$T/c01.txt" -- sleep 0.2 2>"$T/err"; rc=$?
		rows=$(awk -F, 'NF == 4 && $1 ~ /^[01]$/ && $2 == "cpu-clock" && $3 > 150000000 && $3 < 1000000000 { print $1 }' "$T/c01.txt" | tr '\n' ' ')
		check "-C 1,0 --separate-cpu --brief: CPU,cpu-clock,COUNT,PERCENT rows for 1 then 0, no total: '$rows'" \
			'[ $rc = 0 ] && [ "$rows" = "1 0 " ] && [ $(grep -c . "$T/c01.txt") = 2 ]'
		"$OPC" -e cpu-clock -C 0-1 -o "$T/c2.txt" -- sleep 0.2 2>"$T/err"; rc=$?
		check "-C 0-1 text: the target is named 'CPUs 0-1'" '[ $rc = 0 ] && grep -q "for sleep 0.2 (CPUs 0-1):" "$T/c2.txt"'
	fi
fi

# 11. --list
"$OPC" --list >"$T/out" 2>"$T/err"
check "--list names the software events" 'grep -q "page-faults" "$T/out" && grep -q "context-switches" "$T/out"'

echo "1..$n"
[ "$fails" = 0 ] && rm -rf "$T"
exit $((fails != 0))
