#!/usr/bin/env bash
# The check that holds a kselftest run to the lab's judgement (tests/kselftest.py, in make test's
# kselftest_test) seen failing: fed a data channel holding one fault each, a runner's "ok" for a
# program whose frame has a failed case, no runner output at all, a program the runner never named,
# a program of a collection of its own (and its control: that one agreeing passes).
# No guest (the collection on a machine the lab did not set up is CI's: tests/ci/kselftest.sh).
# Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
build=${BUILD:-$top/build}
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
ksrc=$(build_ksrc "$build")
work=$(fresh_dir "$build/kselftest-host")

echo "TAP version 13"
echo "1..5"

frame() { # name status case-line
	printf '@@lab-prog-begin %s\nTAP version 13\n1..1\n%s\n@@lab-prog-end %s %s 0.1\n' "$1" "$3" "$1" "$2"
}
runner() { # result-line of program a_test [its collection, lab/tests]
	printf '@@lab-kselftest-begin\nTAP version 13\n1..1\n# selftests: %s: a_test\n# TAP version 13\n' \
		"${2:-lab/tests}"
	printf '# 1..1\n# ok 1 x\n%s\n@@lab-kselftest-end\n' "$1"
}
plant() { # description message data
	local got
	printf '%s\n' "$3" >"$work/plant.data"
	got=$("$py" "$top/tests/kselftest.py" "$work/plant.data" "$ksrc" 2>&1) && rc=0 || rc=$?
	if [[ $rc == 1 ]] && grep -qF -- "$2" <<<"$got"; then
		verdict "$1 turns the kselftest check red" 1
	else
		verdict "$1 turns the kselftest check red" 0 "status $rc, no '$2' in: $(tr '\n' ' ' <<<"$got")"
	fi
}
plant "the runner's ok for a program whose case failed" "a_test: kunit.py PASS, the lab FAIL" \
	"$(frame a_test 1 'not ok 1 x'; runner 'ok 1 selftests: lab/tests: a_test')"
plant "no runner output" "the guest handed over no run_kselftest.sh output" "$(frame a_test 0 'ok 1 x')"
plant "a second program's result missing from its runner's document" "b_test: kunit.py none, the lab PASS" \
	"$(frame a_test 0 'ok 1 x'; frame b_test 0 'ok 1 x'; runner 'ok 1 selftests: lab/tests: a_test')"
# A program in a collection of its own (a timeout of its own: vm/kselftest-list.sh) is the same
# program to the check: its agreeing result passes, its disagreeing one is named by the program.
rc=0
printf '%s\n' "$(frame a_test 0 'ok 1 x'; runner 'ok 1 selftests: lab/tests/a: a_test' lab/tests/a)" \
	>"$work/own.data"
got=$("$py" "$top/tests/kselftest.py" "$work/own.data" "$ksrc" 2>&1) || rc=$?
verdict "a program's agreeing result from a collection of its own passes the kselftest check" \
	"$([[ $rc == 0 ]] && echo 1 || echo 0)" "$([[ $rc == 0 ]] || echo "status $rc: $(tr '\n' ' ' <<<"$got")")"
plant "a program's disagreeing result from a collection of its own" "a_test: kunit.py PASS, the lab FAIL" \
	"$(frame a_test 1 'not ok 1 x'; runner 'ok 1 selftests: lab/tests/a: a_test' lab/tests/a)"
