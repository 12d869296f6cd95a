#!/usr/bin/env bash
# The lab's kselftest collection on a machine the lab did not set up, and the check that holds a
# kselftest run to the lab's judgement (tests/kselftest.py) seen failing.
#   1. A guest with nothing vm/run usually gives: no disk, no edu device, one vCPU, no module
#      loaded (VM_KMODS=none). There the kernel tree's own run_kselftest.sh runs programs of the
#      guest's kselftest install (the collection lab/tests, as make kselftest-install lays it out),
#      and its output is parsed by the tree's kunit.py: the programs that need a disk or the edu
#      device are kselftest skips (the runner's "# SKIP"), saying what they need; the fuzzer's
#      case a skip, saying it needs two CPUs; access_test passes, pindma.ko loaded from the
#      collection by the first program that opened /dev/pindma.
#   2. tests/kselftest.py fed a data channel holding one fault each: a runner's "ok" for a program
#      whose frame has a failed case, no runner output at all, a knob left changed.
# Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
build=${BUILD:-$top/build}
tree=$(readlink -f "$build/linux")
ksrc=$tree
[[ ! -f $tree/source/Makefile ]] || ksrc=$tree/source
work=$build/kselftest-host
rm -rf "$work"
mkdir -p "$work"

n=0
verdict() { # description ok [why]
	n=$((n + 1))
	[[ -z ${3:-} ]] || echo "# $3"
	if [[ $2 == 1 ]]; then echo "ok $n $1"; else echo "not ok $n $1"; fi
}
echo "TAP version 13"
echo "1..11"

# 1. The bare machine.
skips=(
	"fadvise_eio_test|no disk with serial eio whose writes fail"
	"fadvise_test|no scratch disk /dev/vda on /mnt/disk"
	"pindma_edu_test|no edu PCI device bound to pindma"
	"rows_test|no ext4 scratch disk on /mnt/disk"
	"cow_test|no scratch disk on /mnt/disk for the swap file"
)
tests=()
for s in "${skips[@]}"; do tests+=(-t "lab/tests:${s%%|*}"); done
tests+=(-t lab/tests:fuzz_test -t lab/tests:access_test)
rc=0
# At the lowest priority: nothing here waits on a clock, and beside it the plants' boots and the
# suite's guests do (a plant's I/O window, seen closing under this boot at make test's priority).
VM_SMP=1 VM_EDU=0 VM_KMODS=none nice -n 19 "$top/vm/run" --name kselftest-bare --out "$work/bare.out" -- \
	sh -c "/kselftest/run_kselftest.sh ${tests[*]} >\"\$LAB_OUT\" 2>&1" >"$work/bare.log" 2>&1 || rc=$?
out=$(tr -d '\r' <"$work/bare.out" | sed '/^@@lab-dmesg-begin/,$d')
printf '%s\n' "$out" >"$work/runner.out"
"$py" "$ksrc/tools/testing/kunit/kunit.py" parse "$work/runner.out" >"$work/kunit.out" 2>&1 || true
summary=$(grep -o 'Testing complete.*' "$work/kunit.out" || true)
echo "# kunit.py parse: ${summary:-nothing}"
verdict "the tree's runner ran the collection's programs on the bare machine and kunit.py parsed them" \
	"$([[ $rc == 0 && $summary == "Testing complete. Ran 7 tests: passed: 2, skipped: 5" ]] && echo 1)" \
	"boot status $rc; see $work/bare.log, $work/runner.out, $work/kunit.out"
for s in "${skips[@]}"; do
	prog=${s%%|*} why=${s#*|}
	ok=0
	grep -qE "^ok [0-9]+ selftests: lab/tests: $prog # SKIP\$" <<<"$out" &&
		grep -qF "# 1..0 # SKIP $why" <<<"$out" && ok=1
	verdict "$prog is a kselftest skip saying: $why" $ok
done
grep -qE '^# ok [0-9]+ ([^ ]+ )?# SKIP a race of 2 CPUs, 1 online' <<<"$out" &&
	grep -qE '^ok [0-9]+ selftests: lab/tests: fuzz_test$' <<<"$out" && ok=1 || ok=0
verdict "fuzz_test's processes racing at the driver skip on one CPU, saying so" "$ok"
grep -qE '^ok [0-9]+ selftests: lab/tests: access_test$' <<<"$out" &&
	grep -q '^# ok 1 global.node_is_a_char_device_open_to_all$' <<<"$out" && ok=1 || ok=0
verdict "access_test passes with pindma.ko loaded from the collection" "$ok"

# 2. The check of a kselftest run, fed one fault each.
frame() { # name status case-line
	printf '@@lab-prog-begin %s\nTAP version 13\n1..1\n%s\n@@lab-prog-end %s %s 0.1\n' "$1" "$3" "$1" "$2"
}
runner() { # result-line of program a_test
	printf '@@lab-kselftest-begin\nTAP version 13\n1..1\n# selftests: lab/tests: a_test\n# TAP version 13\n'
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
plant "a knob left changed" "the runner left /proc/sys/vm/fork_share_pinned at 1 (it was 0)" \
	"$(frame a_test 0 'ok 1 x'; runner 'ok 1 selftests: lab/tests: a_test'
		echo '@@lab-knob /proc/sys/vm/fork_share_pinned 0 1')"
