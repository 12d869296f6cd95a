#!/usr/bin/env bash
# The check that holds a kselftest run to the lab's judgement (tests/kselftest.py, in make test's
# kselftest_test) seen failing: fed a data channel holding one fault each, a runner's "ok" for a
# program whose frame has a failed case, no runner output at all, a program the runner never named,
# a program of a collection of its own (and its control: that one agreeing passes); and the list
# vm/kselftest-list.sh makes, grouped by collection.
# No guest (the collection on a machine the lab did not set up is CI's: tests/ci/kselftest.sh).
# Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
kselftest_setup kselftest-host

echo "TAP version 13"
echo "1..12"

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
# The list vm/kselftest-list.sh makes names each collection in one run of lines, whatever the
# manifest's order: 6.1's run_kselftest.sh finds collections with uniq, unsorted, and would run
# lab/tests twice around a collection listed among its programs.
printf 'timeout=8\ntimeout_b_test=20\n' >"$work/order.settings"
printf 'a_test\nb_test\nc_test\n' >"$work/order.manifest"
"$top/vm/kselftest-list.sh" "$work/order.settings" "$work/order.manifest" "$work/order"
runs=$(cut -d: -f1 "$work/order/kselftest/kselftest-list.txt" | uniq | paste -sd' ')
ok=0
[[ $runs == "lab/tests lab/tests/b" ]] && ok=1
verdict "vm/kselftest-list.sh lists each collection in one run of lines" "$ok" \
	"$([[ $ok == 1 ]] || echo "collections in order: $runs")"

# collection_problems STAGE SETTINGS: what is wrong with a kselftest install laid out in STAGE
# (kselftest/kselftest-list.txt, lab/...) for the timeouts of SETTINGS: a listed program missing or
# not executable, a collection of its own whose timeout is not its program's line, or whose script
# runs another program, a program with a timeout of its own left in lab/tests.
collection_problems() {
	local stage=$1 settings=$2 col prog f want got
	while IFS=: read -r col prog; do
		f=$stage/$col/$prog
		[[ -f $f && -x $f ]] || { echo "$col:$prog: no program"; continue; }
		want=$(sed -n "s/^timeout_$prog=//p" "$settings")
		if [[ $col == lab/tests ]]; then
			[[ -z $want ]] || echo "$col:$prog: its own timeout ($want) is not its collection's"
			continue
		fi
		got=$(sed -n 's/^timeout=//p' "$stage/$col/settings" 2>/dev/null)
		[[ -n $want && $got == "$want" ]] || echo "$col:$prog: timeout ${got:-none}, its line ${want:-none}"
		[[ -f $stage/lab/tests/$prog ]] && grep -qF "/../$prog\"" "$f" || echo "$col:$prog: runs no lab/tests/$prog"
	done <"$stage/kselftest/kselftest-list.txt"
}
got=$(collection_problems "$build/guest" "$top/tests/settings")
verdict "the build's kselftest install: every listed program there, each own collection its program's timeout" \
	"$([[ -z $got ]] && echo 1 || echo 0)" "$(tr '\n' ';' <<<"$got" | sed 's/;$//')"
# The check seen failing, on an install made by vm/kselftest-list.sh beside stand-in programs.
fake() { # STAGE: a_test and b_test (b_test with a timeout of its own), as a build lays them out
	printf 'timeout=8\ntimeout_b_test=20\n' >"$work/fake.settings"
	printf 'a_test\nb_test\n' >"$work/fake.manifest"
	"$top/vm/kselftest-list.sh" "$work/fake.settings" "$work/fake.manifest" "$1"
	printf '#!/bin/sh\n' | tee "$1/lab/tests/a_test" >"$1/lab/tests/b_test"
	chmod +x "$1/lab/tests/a_test" "$1/lab/tests/b_test"
}
for plant in none wrapper timeout program; do
	s=$work/fake-$plant
	fake "$s"
	case $plant in
	wrapper) rm "$s/lab/tests/b/b_test" ;;
	timeout) sed -i 's/^timeout=20$/timeout=8/' "$s/lab/tests/b/settings" ;;
	program) rm "$s/lab/tests/b_test" ;;
	esac
	got=$(collection_problems "$s" "$work/fake.settings")
	if [[ $plant == none ]]; then
		verdict "a kselftest install as vm/kselftest-list.sh lays it out passes the install's check" \
			"$([[ -z $got ]] && echo 1 || echo 0)" "$(tr '\n' ';' <<<"$got" | sed 's/;$//')"
	else
		verdict "an install whose own collection lost its $plant turns the install's check red" \
			"$([[ -n $got ]] && echo 1 || echo 0)" "$([[ -n $got ]] || echo "nothing found")"
	fi
done
# A settings line the runner would take for another variable (indented) is refused at build time.
printf 'timeout=8\n timeout_b_test=20\n' >"$work/indent.settings"
rc=0
"$top/vm/kselftest-list.sh" "$work/indent.settings" "$work/fake.manifest" "$work/indent" 2>"$work/indent.err" || rc=$?
ok=0
[[ $rc != 0 ]] && grep -q "not a comment nor NAME=SECONDS" "$work/indent.err" && ok=1
verdict "an indented timeout_ line in the settings fails vm/kselftest-list.sh, saying so" "$ok" \
	"$([[ $ok == 1 ]] || echo "status $rc: $(cat "$work/indent.err")")"
