#!/bin/sh
# opexport_ctx.sh - whole stacks carry pid/tid/cpu where --separate recorded
# them (issue 19; the stack table's version 3 context level): a live
# call-graph session of two processes (cg_tree twice, cpu-clock 4 kHz,
# --separate=thread,cpu, callgraph:context=thread+cpu) exported to pprof;
# every sample of a whole stack has pid, tid and cpu labels, and the
# upstream pprof's -tags counts per pid, per tid and per cpu equal
# opreport's totals of tgid:N, tid:N and cpu:N on the same session (the
# flat sample files), while -cum of main still equals opreport -c's. A
# call-graph session without the split writes no context: no pid label, the
# same inclusive counts.
# SPDX-License-Identifier: MIT
set -u
: "${OP_SRCDIR:?}" "${OP_BUILDDIR:?}"
D=$OP_BUILDDIR/core/oprofiled
R=$OP_BUILDDIR/tools/opreport/opreport
X=$OP_BUILDDIR/tools/opexport
CG=$OP_BUILDDIR/tests/integration/cg_tree
W=$OP_BUILDDIR/tests/opexport_ctx.tmp
if [ ! -x "$D" ] || [ ! -x "$X" ]; then
	echo "opexport_ctx: SKIP: $D or $X is not built (configure found no libbfd, protobuf-c, zlib or libdeflate)"
	exit 77
fi
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -gt 2 ]; then
	echo "opexport_ctx: SKIP: kernel.perf_event_paranoid > 2 forbids perf_event_open for this user"
	exit 77
fi
for t in python3 protoc; do
	command -v "$t" >/dev/null 2>&1 || { echo "opexport_ctx: $t missing: run tools/install-deps.sh"; exit 1; }
done
rm -rf "$W" && mkdir -p "$W"
fail=0 npass=0
ok() { npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# upstream pprof, built offline where opexport.sh and the network tests keep it
B=$OP_BUILDDIR S=$OP_SRCDIR
# shellcheck source=tests/integration/net_util.sh
. "$OP_SRCDIR/tests/integration/net_util.sh"
net_pprof || exit 1
pp() { HOME=$W "$PPROF" "$@"; }

profile() { # $1 = session dir, $2 = daemon options; two cg_tree processes at once
	s=$1 extra=$2
	# shellcheck disable=SC2086
	if ! "$D" --session-dir="$s" --events=TIMER:250000 $extra -- \
		sh -c "\"$CG\" 1500 & \"$CG\" 1500; wait" >"$W/prof.log" 2>&1; then
		if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" "$W/prof.log"; then
			echo "opexport_ctx: SKIP: the kernel forbids perf_event_open here"; exit 77
		fi
		echo "opexport_ctx: oprofiled failed:"; cat "$W/prof.log"; exit 1
	fi
}
# "value count" of label $2 in pprof -tags of $1 (samples)
tags() {
	pp -tags -sample_index=samples "$1" 2>/dev/null | awk -v k="$2" '
		/^ *[a-z_]+: Total/ { f = ($1 == k ":") ; next }
		f && NF >= 3 { print $NF, $1 + 0 }' | sort
}
# opreport's total of the sample files matching $2 (tgid:N, tid:N, cpu:N)
rtotal() {
	"$R" --session-dir="$1" --merge=all "$2" 2>/dev/null |
		awk '/^ *[0-9]+ +[0-9.]+ / { s += $1 } END { print s + 0 }'
}
# inclusive samples of main: opreport -c's, pprof -cum's
cum_main() {
	"$R" --session-dir="$1" --merge=all -c 2>/dev/null | awk '/^[0-9]/ && NF >= 6 && $NF == "main" { print $3; exit }'
}
pcum_main() {
	pp -top -cum -sample_index=samples -nodefraction=0 -nodecount=1000000 "$1" 2>/dev/null |
		awk '$NF == "main" { print $4; exit }'
}

# 1. --separate=thread,cpu with the stacks' context
profile "$W/s" "--separate=thread,cpu --ext-feature=callgraph:context=thread+cpu"
grep -q 'stack context: thread+cpu' "$W/s/samples/oprofiled.log" && ok ||
	bad "the callgraph plugin did not log its context"
"$X" --session-dir="$W/s" -o "$W/s.pb.gz" 2>"$W/x.err" && ok || { bad "opexport failed"; cat "$W/x.err"; }
gzip -dc "$W/s.pb.gz" | protoc --decode=perftools.profiles.Profile -I"$(dirname "$PROTO")" "$PROTO" \
	>"$W/s.txt" 2>"$W/s.perr" && ok || { bad "protoc --decode failed"; head -5 "$W/s.perr"; }
# every sample of a whole stack (more than one location) has pid, tid and cpu labels
python3 - "$W/s.txt" <<'EOF' >"$W/stk.txt" && ok || { bad "stack samples without pid/tid/cpu labels"; cat "$W/stk.txt"; }
import re, sys
t = open(sys.argv[1]).read()
strs = [eval(s) for s in re.findall(r'^string_table: (".*")$', t, re.M)]
stacks = bad = 0
for s in re.findall(r'^sample \{\n(.*?)^\}', t, re.M | re.S):
    if len(re.findall(r'^  location_id:', s, re.M)) < 2:
        continue
    stacks += 1
    keys = {strs[int(k)] for k in re.findall(r'^    key: (\d+)', s, re.M)}
    if not {'pid', 'tid', 'cpu'} <= keys:
        bad += 1
print(stacks, 'stack samples,', bad, 'without pid/tid/cpu')
sys.exit(0 if stacks and not bad else 1)
EOF
cat "$W/stk.txt"
# pprof -tags per pid, tid and cpu: opreport's totals of the same flat files
for k in pid tid cpu; do
	tags "$W/s.pb.gz" "$k" >"$W/$k.tags"
	case $k in pid) spec=tgid ;; *) spec=$k ;; esac
	: >"$W/$k.rep"
	while read -r v n; do
		echo "$v $(rtotal "$W/s" "$spec:$v")" >>"$W/$k.rep"
	done <"$W/$k.tags"
	echo "$k: pprof $(tr '\n' ' ' <"$W/$k.tags")| opreport $(tr '\n' ' ' <"$W/$k.rep")"
	[ -s "$W/$k.tags" ] && cmp -s "$W/$k.tags" "$W/$k.rep" && ok ||
		bad "pprof -tags per $k differs from opreport's $spec: totals"
done
# two cg_tree processes, each with most of its own samples
[ "$(awk '$2 > 200' "$W/pid.tags" | wc -l)" -ge 2 ] && ok || bad "not two busy processes: $(cat "$W/pid.tags")"
a=$(cum_main "$W/s") b=$(pcum_main "$W/s.pb.gz")
echo "main inclusive: opreport -c ${a:-none}, pprof -cum ${b:-none}"
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "inclusive samples of main differ"

# 2. no split, no context: no pid label, the same inclusive counts
profile "$W/d" "--ext-feature=callgraph"
grep -q 'stack context: none' "$W/d/samples/oprofiled.log" && ok || bad "default context is not none"
"$X" --session-dir="$W/d" -o "$W/d.pb.gz" 2>"$W/xd.err" && ok || { bad "opexport failed"; cat "$W/xd.err"; }
[ -z "$(tags "$W/d.pb.gz" pid)" ] && ok || bad "pid labels without --separate=thread"
a=$(cum_main "$W/d") b=$(pcum_main "$W/d.pb.gz")
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "inclusive samples of main differ without context (${a:-none} vs ${b:-none})"

# 3. bad argument: a clear error naming it
"$D" --session-dir="$W/e" --events=TIMER:250000 --ext-feature=callgraph:context=tid -- true \
	>"$W/e.log" 2>&1 && bad "context=tid accepted" ||
	{ grep -q "bad context 'tid'" "$W/e.log" && ok || { bad "context=tid error message"; tail -3 "$W/e.log"; }; }

echo "opexport_ctx: $npass checks passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
rm -rf "$W"
exit 0
