#!/usr/bin/env bash
# CI: the lab's kselftest collection on a machine the lab did not set up. A guest with nothing vm/boot
# usually gives: no disk, no edu device (VM_EDU=0), one vCPU, no module loaded (VM_KMODS=none). There
# the kernel tree's own run_kselftest.sh runs programs of the guest's kselftest install (the
# collection lab/tests, as make kselftest-install lays it out), and its output is parsed by the
# tree's kunit.py: the programs that need a disk or the edu device are kselftest skips (the runner's
# "# SKIP"), saying what they need; the fuzzer's case a skip, saying it needs two CPUs; access_test
# passes, pindma.ko loaded from the collection by the first program that opened /dev/pindma. Then
# make kselftest-install's copy, run from where it was copied: on an ext4 image mounted in a guest
# that loaded no module and whose own /lab is moved away (so that only the copy can serve), its
# run_kselftest.sh runs madvise_test, access_test (pindma.ko loaded from DESTDIR/lab/modules) and
# cow_test (cow.c and kernel.env from DESTDIR/lab), all passing. Not in
# make test: beside its boots that wait on clocks, this one closed a plant's window (docs/tests.md).
# Prints TAP; fails when a check does.
#   tests/ci/kselftest.sh        (on the build of make test: BUILD, KERNEL, FLAVOUR as for it)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/tap.sh
. "$top/tests/lib/tap.sh"
kselftest_setup kselftest-bare

echo "TAP version 13"
echo "1..9"

skips=(
	"fadvise_eio_test|no disk with serial eio whose writes fail"
	"fadvise_test|no scratch disk /dev/vda on /mnt/disk"
	"pindma_edu_test|no edu PCI device bound to pindma"
	"rows_test|no ext4 scratch disk on /mnt/disk"
	"cow_test|no scratch disk on /mnt/disk for the swap file"
)
# A program's entry in the collection's list, COLLECTION:PROGRAM: lab/tests, or lab/tests/NAME for
# one with a timeout of its own (rows_test; vm/kselftest-list.sh), which the runner must name so.
list=$build/guest/kselftest/kselftest-list.txt
entry_of() {
	local e
	e=$(awk -F: -v p="$1" '$2 == p { print; exit }' "$list")
	[[ -n $e ]] || { echo "tests/ci/kselftest.sh: $1 is not in $list" >&2; exit 1; }
	echo "$e"
}
for p in fuzz_test access_test madvise_test cow_test "${skips[@]%%|*}"; do entry_of "$p" >/dev/null; done
# Grouped by collection: 6.1's runner finds collections with uniq, unsorted, and would run one twice
# around another.
tests=()
while read -r e; do tests+=(-t "$e"); done < <(for p in "${skips[@]%%|*}" fuzz_test access_test; do
	entry_of "$p"; done | sort -s -t: -k1,1)
rc=0
VM_SMP=1 VM_EDU=0 VM_KMODS=none "$top/vm/boot" --name kselftest-bare --out "$work/bare.out" -- \
	sh -c "/kselftest/run_kselftest.sh ${tests[*]} >\"\$LAB_OUT\" 2>&1" >"$work/bare.log" 2>&1 || rc=$?
out=$(tr -d '\r' <"$work/bare.out" | sed '/^@@lab-dmesg-begin/,$d')
printf '%s\n' "$out" >"$work/runner.out"
# The runner prints one TAP document per collection (rows_test's is its own, for its timeout), and
# kunit.py parse reads one document: each parsed, the counts summed.
rm -f "$work"/runner.doc*
csplit -s -z -f "$work/runner.doc" "$work/runner.out" '/^TAP version/' '{*}'
: >"$work/kunit.out"
for doc in "$work"/runner.doc*; do
	grep -q '^TAP version' "$doc" || continue
	"$py" "$ksrc/tools/testing/kunit/kunit.py" parse "$doc" >>"$work/kunit.out" 2>&1 || true
done
summary=$(grep -o 'Testing complete.*' "$work/kunit.out" | awk '
	{ docs++; for (i = 1; i <= NF; i++) if ($i ~ /^(Ran|passed:|failed:|skipped:|crashed:|errors:)$/) n[$i] += $(i + 1) }
	END { if (docs) printf "%d documents: ran %d, passed %d, failed %d, skipped %d, crashed %d, errors %d",
		docs, n["Ran"], n["passed:"], n["failed:"], n["skipped:"], n["crashed:"], n["errors:"] }' || true)
echo "# kunit.py parse: ${summary:-nothing}"
ok=0
[[ $rc == 0 && $summary == "2 documents: ran 7, passed 2, failed 0, skipped 5, crashed 0, errors 0" ]] &&
	[[ $(grep -c '^TAP version' "$work/runner.out") == 2 ]] && ok=1
verdict "the tree's runner ran the collection's programs on the bare machine and kunit.py parsed them" \
	"$ok" "$([[ $ok == 1 ]] || echo "boot status $rc; see $work/bare.log, $work/runner.out, $work/kunit.out")"
for s in "${skips[@]}"; do
	prog=${s%%|*} why=${s#*|}
	e=$(entry_of "$prog")
	ok=0
	grep -qE "^ok [0-9]+ selftests: ${e%%:*}: $prog # SKIP\$" <<<"$out" &&
		grep -qF "# 1..0 # SKIP $why" <<<"$out" && ok=1
	verdict "$prog is a kselftest skip of ${e%%:*} saying: $why" $ok
done
grep -qE '^# ok [0-9]+ ([^ ]+ )?# SKIP a race of 2 CPUs, 1 online' <<<"$out" &&
	grep -qE "^ok [0-9]+ selftests: $(entry_of fuzz_test | sed 's/:/: /')\$" <<<"$out" && ok=1 || ok=0
verdict "fuzz_test's processes racing at the driver skip on one CPU, saying so" "$ok"
grep -qE "^ok [0-9]+ selftests: $(entry_of access_test | sed 's/:/: /')\$" <<<"$out" &&
	grep -q '^# ok 1 global.node_is_a_char_device_open_to_all$' <<<"$out" && ok=1 || ok=0
verdict "access_test passes with pindma.ko loaded from the collection" "$ok"

# make kselftest-install's copy, from elsewhere.
make -C "$top" --no-print-directory kselftest-install DESTDIR="$work/install" >"$work/install.log" 2>&1
truncate -s 200M "$work/install.img"
/sbin/mke2fs -q -F -t ext4 -d "$work/install" "$work/install.img"
rc=0
VM_KMODS=none "$top/vm/boot" --name kselftest-install --out "$work/install.out" --disk "$work/install.img" -- \
	sh -c "mv /lab /lab-away && /mnt/disk/run_kselftest.sh -t $(entry_of madvise_test) -t $(entry_of access_test) -t $(entry_of cow_test) >\"\$LAB_OUT\" 2>&1" \
	>"$work/install-boot.log" 2>&1 || rc=$?
tr -d '\r' <"$work/install.out" | sed '/^@@lab-dmesg-begin/,$d' >"$work/install-runner.out"
"$py" "$ksrc/tools/testing/kunit/kunit.py" parse "$work/install-runner.out" >"$work/install-kunit.out" 2>&1 || true
summary=$(grep -o 'Testing complete.*' "$work/install-kunit.out" || true)
echo "# kunit.py parse: ${summary:-nothing}"
ok=0
[[ $rc == 0 && $summary == "Testing complete. Ran 3 tests: passed: 3" ]] && ok=1
verdict "make kselftest-install's copy runs from where it was copied, the module and helpers its own" \
	"$ok" "$([[ $ok == 1 ]] || echo "boot status $rc; see $work/install-boot.log, $work/install-runner.out")"

((failed == 0))
