#!/bin/sh
# run-tests.sh - the project's test command (README, CI): install what the
# build needs, build from scratch with -Werror, run `make check`, run the
# unit tests again under ASan+UBSan, run `make distcheck`, and print one
# closing line "N passed, N failed, N skipped".
# SPDX-License-Identifier: MIT
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${OP_TEST_BUILD:-$top/build/test}
jobs=${OP_JOBS:-2}
pass=0 fail=0 skip=0

"$top/tools/install-deps.sh" || { echo "run-tests: installing dependencies failed"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

# summarise an automake test-suite.log into the counters
count() { # $1 = test-suite.log, $2 = label
	if [ ! -f "$1" ]; then
		echo "run-tests: $2: no test-suite.log"; fail=$((fail + 1)); return
	fi
	eval "$(awk '/^# PASS:/{p=$3} /^# FAIL:/{f=$3} /^# ERROR:/{e=$3} /^# XPASS:/{x=$3} /^# SKIP:/{s=$3}
		END{printf "p=%d f=%d s=%d\n", p, f+e+x, s}' "$1")"
	echo "run-tests: $2: $p passed, $f failed, $s skipped"
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	[ "$f" -eq 0 ] || sed -n '/^FAIL\|^ERROR/p' "$1" | head -40
}

step() { # $1 = label, rest = command; counts as one test
	label=$1; shift
	if "$@" >"$build.$label.log" 2>&1; then
		pass=$((pass + 1)); echo "run-tests: $label: ok"
	else
		fail=$((fail + 1)); echo "run-tests: $label: FAILED (tail of $build.$label.log)"
		tail -30 "$build.$label.log"
	fi
}

cd "$top" && ./autogen.sh >/dev/null 2>&1 || { echo "run-tests: autogen.sh failed"; ./autogen.sh; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

# 1. -Werror build and make check
rm -rf "$build"; mkdir -p "$build"
if (cd "$build" && "$top/configure" -q CFLAGS="-O2 -g -Werror" >/dev/null && make -s -j"$jobs" >/dev/null 2>"$build.make.err"); then
	(cd "$build" && make -j"$jobs" check >"$build.check.out" 2>&1)
	grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' "$build.check.out" | sed 's/^/  /'
	count "$build/test-suite.log" "make check"
else
	echo "run-tests: build failed:"; tail -40 "$build.make.err"; fail=$((fail + 1))
fi

# 2. unit tests under ASan + UBSan
asan=$build-asan
rm -rf "$asan"; mkdir -p "$asan"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if (cd "$asan" && "$top/configure" -q CFLAGS="-O1 -g $san" LDFLAGS="$san" >/dev/null && make -s -j"$jobs" >/dev/null 2>"$asan.make.err"); then
	(cd "$asan" && ASAN_OPTIONS=detect_leaks=1 make -j"$jobs" check TESTS='$(SANITIZER_TESTS)' >"$asan.check.out" 2>&1)
	count "$asan/test-suite.log" "asan+ubsan"
else
	echo "run-tests: sanitizer build failed:"; tail -40 "$asan.make.err"; fail=$((fail + 1))
fi

# 3. make distcheck (out-of-tree, read-only srcdir, install, uninstall, installcheck)
if [ "${OP_SKIP_DISTCHECK:-0}" = 1 ]; then
	echo "run-tests: distcheck: skipped (OP_SKIP_DISTCHECK=1)"; skip=$((skip + 1))
else
	step distcheck sh -c "cd '$build' && make -j$jobs distcheck DISTCHECK_CONFIGURE_FLAGS='CFLAGS=-O1' TESTS='\$(SANITIZER_TESTS)'"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
