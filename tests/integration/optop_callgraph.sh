#!/bin/sh
# optop_callgraph.sh - in a call-graph session (oprofiled --ext-feature=
# callgraph on tests/integration/cg_tree: main -> mid -> leaf_b, leaf_c),
# optop's detail screen of a symbol (enter) shows its callers (leaf_b's and
# leaf_c's: mid) and its sampled addresses. Driven through
# tmux (new-session -d at a fixed size, send-keys, capture-pane).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPD=$B/core/oprofiled
OPTOP=$B/tools/optop/optop
CG=$B/tests/integration/cg_tree
W=$B/tests/integration/optop_callgraph.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
SOCK=optop-cg-$$
rm -rf "$W"
mkdir -p "$W"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
opd=
cleanup() {
	tmux -L "$SOCK" kill-server 2> /dev/null
	[ -n "$opd" ] && kill "$opd" 2> /dev/null
	wait 2> /dev/null
}
trap cleanup EXIT
command -v tmux > /dev/null || { echo "FAIL: tmux missing (tools/install-deps.sh installs it)"; exit 1; }

# the profiled command runs 40 s; optop watches its session meanwhile
"$OPD" --session-dir="$W/s" --config= --events=TIMER:500000 --ext-feature=callgraph -- \
	"$CG" 40000 > opd.out 2> opd.err &
opd=$!
i=0
while [ ! -S "$W/s/control" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ ! -S "$W/s/control" ]; then
	if grep -q "perf_event_open.*\(Permission denied\|Operation not permitted\)" opd.err; then
		echo "SKIP: the kernel forbids perf_event_open here"; exit 77
	fi
	echo "FAIL: oprofiled did not start"; cat opd.err; exit 1
fi
sleep 3

screen() { tmux -L "$SOCK" capture-pane -p -t top > cur; }
wait_screen() {
	i=0
	while [ $i -lt $(($2 * 5)) ]; do
		screen
		if eval "$1"; then return 0; fi
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
tmux -L "$SOCK" new-session -d -s top -x 120 -y 40 \
	"OP_PLUGIN_DIR='$OP_PLUGIN_DIR' '$OPTOP' --session-dir='$W/s' -d 1 -z 2> '$W/optop.err'; sleep 30"
wait_screen 'grep -q "cg_tree  *leaf_b$" cur' 20 || { bad "no leaf_b row"; cat cur optop.err; }

# detail(symbol): the callers block of opreport -c, and the addresses
detail() {
	tmux -L "$SOCK" send-keys -t top / "$1" Enter
	wait_screen "grep -q 'filter: $1' cur" 5 || bad "/ $1 did not filter"
	tmux -L "$SOCK" send-keys -t top Home Enter
	if wait_screen "grep -q '^$1  (cg_tree)' cur && grep -q 'address .*session .*period' cur" 10; then
		sed -n '/^callers/,/^$/p' cur > "callers.$1"
		grep -q "cg_tree  *$2\$" "callers.$1" || { bad "$1: its caller $2 is not shown:"; cat cur; }
		awk '/address .*session .*period/ { f = 1; next } f && /^ +0x[0-9a-f]+ +[0-9]+ +[0-9]+$/ { n++ } END { exit !(n > 0) }' cur ||
			bad "$1: no per-address counts"
	else
		bad "enter did not open $1's details"; cat cur
	fi
	tmux -L "$SOCK" send-keys -t top Escape
	wait_screen "grep -q 'filter: $1' cur" 5 || bad "Esc did not return to the rows"
}
detail leaf_b mid
detail leaf_c mid
tmux -L "$SOCK" send-keys -t top q

if [ $fail -eq 0 ]; then
	echo "PASS: optop_callgraph.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
