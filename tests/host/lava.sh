#!/usr/bin/env bash
# tests/lava.py, the check of a LAVA job's output against the suite's KTAP (CI runs a real job:
# tests/ci/lava.sh), seen failing: fed a lava-run output made here, holding one program's frame
# on the console (as guest/run-tests prints it) and LAVA's results for its cases, with one fault
# each: a skip that LAVA recorded as a pass (what a TAP pattern does with "ok ... # SKIP"), a case
# LAVA never recorded, a LAVA case that is no KTAP case, a kernel splat on the console, a case that
# failed (LAVA agreeing). The unplanted output must pass. No guest, no lava-dispatcher. Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
build=${BUILD:-$top/build}
work=$build/lava-host
mkdir -p "$work"
budget=$work/skips.txt
echo "a_test | global.needs_more | a plant" >"$budget"

# lava-run's JSON lines: the console's (target) and the monitor's results.
target() { "$py" -c 'import json, sys; print(json.dumps({"lvl": "target", "msg": sys.argv[1]}))' "$1"; }
result() { # name result
	"$py" -c 'import json, sys
print(json.dumps({"lvl": "results", "msg": {"definition": "dontfork-lab", "case": sys.argv[1],
      "result": sys.argv[2], "extra": {"test_case_id": sys.argv[1]}}}))' "$1" "$2"
}
output() { # second case's KTAP line, its LAVA result, extra console line, extra LAVA case
	local l
	for l in "@@lab-prog-begin a_test" "TAP version 13" "1..2" "ok 1 global.works" "$1" \
		"@@lab-prog-end a_test 0 0.5" ${3:+"$3"}; do
		target "$l"
	done
	result a_test.global.works pass
	[[ -z $2 ]] || result a_test.global.needs_more "$2"
	[[ -z ${4:-} ]] || result "$4" pass
}

n=0
check() { # description expect-status message output...
	local what=$1 want=$2 msg=$3 rc=0
	shift 3
	output "$@" >"$work/plant.log"
	"$py" "$top/tests/lava.py" "$work/plant.log" "$budget" >"$work/plant.out" 2>&1 || rc=$?
	n=$((n + 1))
	if [[ $rc == "$want" ]] && grep -qF -- "$msg" "$work/plant.out"; then
		echo "ok $n $what"
	else
		echo "# status $rc, no '$msg' in: $(tr '\n' ' ' <"$work/plant.out")"
		echo "not ok $n $what"
	fi
}
skip='ok 2 global.needs_more # SKIP a plant'
echo "TAP version 13"
echo "1..6"
check "the unplanted output passes" 0 "lava: 2 KTAP cases of 1 programs, 2 LAVA cases" "$skip" skip
check "a skip LAVA recorded as a pass turns the check red" 1 \
	"case differs: a_test.global.needs_more: KTAP skip, LAVA pass" "$skip" pass
check "a case LAVA never recorded turns the check red" 1 \
	"case differs: a_test.global.needs_more: KTAP skip, LAVA none" "$skip" ""
check "a LAVA case that is no KTAP case turns the check red" 1 \
	"case differs: a_test.ghost: KTAP none, LAVA pass" "$skip" skip "" a_test.ghost
check "a kernel splat on the console turns the check red" 1 \
	"kernel splat on the console: warn" "$skip" skip "WARNING: CPU: 0 PID: 1 at mm/gup.c:1 a plant"
check "a failed case, LAVA agreeing, turns the check red" 1 \
	"the suite judged as make test judges it: 1 passed, 1 failed" "not ok 2 global.needs_more" fail
