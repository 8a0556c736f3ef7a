#!/bin/sh
# optop.sh - optop's curses view driven through tmux (new-session -d at a
# fixed size, send-keys, capture-pane) beside tests/integration/hot (work_big
# does 3x the work of work_small): the two hot functions lead the view with
# a 3:1 ratio (+-0.3 on thousands of samples; the view of its --pid: other
# tests burn CPU beside it); z toggles delta/cumulative,
# p pauses (the counts stand still), / filters, a resize redraws at the new
# size, s sorts, k/u keep kernel/user rows, h helps, enter shows the
# symbol's addresses, q quits with status 0 and the private session is
# removed. Then optop --stdio prints the same rows; --separate=cpu splits
# rows per CPU, --pid keeps the workload's samples only.
# Root: optop alone starts a private system-wide daemon (4 kHz cpu-clock).
# SPDX-License-Identifier: MIT
set -u
B=${OP_BUILDDIR:-$(pwd)}
OPTOP=$B/tools/optop/optop
HOT=$B/tests/integration/hot
W=$B/tests/integration/optop.work
export OP_PLUGIN_DIR=${OP_PLUGIN_DIR:-$B/plugins/.libs}
SOCK=optop-test-$$
rm -rf "$W"
mkdir -p "$W/tmp" "$W/tmp2"
cd "$W" || exit 99
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
hot=
cleanup() {
	tmux -L "$SOCK" kill-server 2> /dev/null
	[ -n "$hot" ] && kill "$hot" 2> /dev/null
	wait 2> /dev/null
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: optop without --session-dir starts a system-wide daemon: needs root"; exit 77
fi
command -v tmux > /dev/null || { echo "FAIL: tmux missing (tools/install-deps.sh installs it)"; exit 1; }

screen() { tmux -L "$SOCK" capture-pane -p -t top > "$1"; }
# the data rows: "SAMPLES PCT% IMAGE SYMBOL" below the column titles
rows() { awk 'seen && $2 ~ /%$/ { print } /^ +samples +%/ { seen = 1 }' "$1"; }
# wait up to $2 seconds for the screen to satisfy the shell test $1 (on file "cur")
wait_screen() {
	i=0
	while [ $i -lt $(($2 * 5)) ]; do
		screen cur
		if eval "$1"; then return 0; fi
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
# Our workload's first two rows are work_big then work_small, ratio 3 +- $2
# with >= $3 samples of work_small; with $4 = lead, they are the view's
# first two rows.
check_ratio() {
	rows "$1" > all
	awk -v tol="$2" -v min="$3" -v want_lead="${4:-}" '
		NR == 1 && $3 == "optop_hot" && $4 == "work_big" { lead = 1 }
		NR == 2 && !($3 == "optop_hot" && $4 == "work_small") { lead = 0 }
		!want_lead { lead = 1 }
		$3 == "optop_hot" { n++ }
		$3 == "optop_hot" && n == 1 && $4 == "work_big" { big = $1 }
		$3 == "optop_hot" && n == 2 && $4 == "work_small" { small = $1 }
		END {
			if (!lead || !big || !small || small < min) exit 1
			r = big / small
			printf "ratio %.3f (%d / %d)\n", r, big, small
			exit (r < 3 - tol || r > 3 + tol)
		}' all
}

# a name of its own: rows show base names
cp "$HOT" "$W/optop_hot" || exit 99
"$W/optop_hot" 60000 > /dev/null 2>&1 &
hot=$!
sleep 0.3
# TMPDIR: the private session goes below $W/tmp, where the test looks for it
# --pid: the view of the workload's process (make check runs other CPU-bound
# tests beside this one, some the same hot program: system-wide, which leads
# is up to them)
tmux -L "$SOCK" new-session -d -s top -x 120 -y 30 \
	"TMPDIR='$W/tmp' OP_PLUGIN_DIR='$OP_PLUGIN_DIR' '$OPTOP' -d 1 -z --pid=$hot 2> '$W/optop.err'; echo \$? > '$W/optop.rc'; sleep 60"

# 1. the two hot functions lead, 3:1 (cumulative: thousands of samples)
if ! wait_screen 'check_ratio cur 0.3 1500 lead > ratio.out' 40; then
	bad "the hot functions do not lead with 3:1"; cat cur; cat "$W/optop.err" 2> /dev/null
else
	echo "curses: $(cat ratio.out)"
fi
ls "$W/tmp" | grep -q '^optop-' || bad "no private session below TMPDIR"
cp cur cumulative.screen

# 2. z: the last period's delta, z again: cumulative
tmux -L "$SOCK" send-keys -t top z
wait_screen 'grep -q "delta of the last period" cur' 5 || bad "z did not switch to the delta"
tmux -L "$SOCK" send-keys -t top z
wait_screen 'grep -q "^cumulative" cur' 5 || bad "z did not switch back to cumulative"

# 3. p: paused, the session's count stands still over 3 refreshes
tmux -L "$SOCK" send-keys -t top p
wait_screen 'grep -q "^PAUSED" cur' 5 || bad "p did not pause"
n1=$(sed -n 's/.*| \([0-9]*\) samples in the session.*/\1/p' cur)
sleep 3
screen cur
n2=$(sed -n 's/.*| \([0-9]*\) samples in the session.*/\1/p' cur)
[ -n "$n1" ] && [ "$n1" = "$n2" ] || bad "paused, but the count moved: '$n1' -> '$n2'"
tmux -L "$SOCK" send-keys -t top p
wait_screen '! grep -q "^PAUSED" cur && n3=$(sed -n "s/.*| \([0-9]*\) samples in the session.*/\1/p" cur) && [ "$n3" -gt "$n2" ]' 6 ||
	bad "p did not resume the refreshes"

# 4. / filter: only rows whose image or symbol holds work_small
tmux -L "$SOCK" send-keys -t top / work_small Enter
wait_screen 'grep -q "filter: work_small" cur' 5 || bad "/ did not set the filter"
rows cur > filtered
if [ "$(awk '{ print $4 }' filtered | sort -u)" != "work_small" ] || ! grep -q optop_hot filtered; then
	bad "the filter shows other rows:"; cat filtered
fi
tmux -L "$SOCK" send-keys -t top / Enter
wait_screen '! grep -q "filter:" cur && rows cur | grep -q work_big' 5 || bad "an empty filter did not clear it"

# 4b. s: the next sort key (symbol: names in order); k: kernel rows only, u: user
# rows only (again: all); h: the help, any key back
tmux -L "$SOCK" send-keys -t top s
if wait_screen 'grep -q "sort: symbol" cur' 5; then
	# (rows of one-word images and symbols: an anon image's name has spaces)
	rows cur | awk 'NF == 4 { print $4 }' > names
	LC_ALL=C sort -c names 2> /dev/null || { bad "s: rows not sorted by symbol"; cat names; }
else
	bad "s did not sort by symbol"
fi
tmux -L "$SOCK" send-keys -t top s s
wait_screen 'grep -q "sort: samples" cur' 5 || bad "s did not cycle back to samples"
tmux -L "$SOCK" send-keys -t top k
if wait_screen 'grep -q "kernel only" cur' 5; then
	# (the workload spends little time in the kernel: maybe no row at all)
	rows cur | awk '$3 == "optop_hot" || $3 ~ /^lib/' | grep . && bad "k: user rows shown"
else
	bad "k did not show kernel rows only"
fi
tmux -L "$SOCK" send-keys -t top u
if wait_screen 'grep -q "user only" cur && rows cur | grep -q optop_hot' 5; then
	rows cur | awk '$3 == "vmlinux"' | grep . && bad "u: kernel rows shown"
else
	bad "u did not show user rows only"
fi
tmux -L "$SOCK" send-keys -t top u
wait_screen '! grep -q "user only" cur' 5 || bad "u again did not show every row"
tmux -L "$SOCK" send-keys -t top h
wait_screen 'grep -q "^optop keys" cur' 5 || bad "h did not show the help"
tmux -L "$SOCK" send-keys -t top x
wait_screen 'rows cur | grep -q optop_hot' 5 || bad "a key did not leave the help"

# 5. a resize redraws: the status bar moves to the new last line, nothing wider
tmux -L "$SOCK" resize-window -t top -x 70 -y 15
wait_screen '[ "$(wc -l < cur)" -eq 15 ] && tail -1 cur | grep -q "h help"' 5 ||
	{ bad "no redraw at 70x15"; cat cur; }
awk 'length($0) > 70 { exit 1 }' cur || bad "lines wider than the 70 columns after the resize"
# too small: said on the screen, and back when large again
tmux -L "$SOCK" resize-window -t top -x 40 -y 8
wait_screen 'grep -q "terminal too small" cur' 5 || bad "no message in a 40x8 window"
tmux -L "$SOCK" resize-window -t top -x 120 -y 30
wait_screen '[ "$(wc -l < cur)" -eq 30 ] && rows cur | grep -q work_big' 5 || bad "no redraw at 120x30"

# 6. enter: the selected symbol's addresses; Esc back
tmux -L "$SOCK" send-keys -t top / optop_hot Enter
wait_screen 'grep -q "filter: optop_hot" cur' 5 || bad "/ did not set the filter optop_hot"
tmux -L "$SOCK" send-keys -t top Home Enter
wait_screen 'grep -q "address .*session .*period" cur && grep -q "^work_big  (optop_hot)" cur' 5 ||
	{ bad "enter did not show work_big's addresses"; cat cur; }
tmux -L "$SOCK" send-keys -t top Escape
wait_screen 'rows cur | grep -q work_big' 5 || bad "Esc did not return to the rows"

# 7. q: exit 0, the private daemon stopped and its session removed
tmux -L "$SOCK" send-keys -t top q
i=0
while [ ! -s optop.rc ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
[ "$(cat optop.rc 2> /dev/null)" = 0 ] || { bad "q: exit status '$(cat optop.rc 2> /dev/null)'"; cat optop.err; }
[ -z "$(ls "$W/tmp")" ] || bad "the private session was left behind: $(ls "$W/tmp")"
pgrep -f "session-dir=$W/tmp/" > /dev/null && bad "the private oprofiled still runs"

# 8. --stdio prints the same rows (system-wide here): the same columns, the ratio
# (cumulative: a loaded machine may give the workload little of a 3 s period)
TMPDIR="$W/tmp2" "$OPTOP" --stdio -z -d 3 -n 3 --rows=20 > stdio.out 2> stdio.err
rc=$?
[ $rc -eq 0 ] || { bad "--stdio exited $rc"; cat stdio.err; }
[ "$(grep -c "^optop - event TIMER" stdio.out)" -eq 3 ] || bad "--stdio did not print 3 tables"
# the last table (9 s of the private session: thousands of samples of work_small)
awk 'BEGIN { RS = "" } { last = $0 } END { print last }' stdio.out > last
if ! check_ratio last 0.45 500 > ratio2.out; then
	bad "--stdio: the hot functions do not lead with 3:1"; cat last
else
	echo "stdio: $(cat ratio2.out)"
fi
# a row of both views reads the same way: SAMPLES PCT% IMAGE SYMBOL
grep -q "^ *[0-9][0-9]*  *[0-9.]*%  optop_hot  *work_big$" last || bad "--stdio row format"
grep -q "^ *[0-9][0-9]*  *[0-9.]*%  optop_hot  *work_big$" cumulative.screen ||
	bad "curses row format"
[ -z "$(ls "$W/tmp2")" ] || bad "--stdio left its private session behind"

# 9. --separate=cpu: a row per symbol and CPU; --pid (stdio): only the
# workload's samples (the private daemon separates by thread), work_big first
TMPDIR="$W/tmp2" "$OPTOP" --stdio -d 2 -n 2 --rows=20 --separate=cpu > cpu.out 2> cpu.err ||
	{ bad "--separate=cpu exited $?"; cat cpu.err; }
grep -q "^ *[0-9][0-9]*  *[0-9.]*%  optop_hot  *cpu [0-9][0-9]*  work_big$" cpu.out ||
	{ bad "--separate=cpu: no per-cpu row of work_big"; cat cpu.out; }
TMPDIR="$W/tmp2" "$OPTOP" --stdio -d 2 -n 2 --rows=5 --pid="$hot" > pid.out 2> pid.err ||
	{ bad "--pid exited $?"; cat pid.err; }
awk 'BEGIN { RS = "" } { last = $0 } END { print last }' pid.out > pid.last
rows pid.last | head -1 | grep -q "optop_hot  *work_big$" ||
	{ bad "--pid=$hot: work_big is not the first row"; cat pid.out pid.err; }
[ -z "$(ls "$W/tmp2")" ] || bad "--separate/--pid runs left their private sessions behind"

if [ $fail -eq 0 ]; then
	echo "PASS: optop.sh"
	cd "$B" && rm -rf "$W"
fi
exit $fail
