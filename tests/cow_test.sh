#!/bin/sh
# shellcheck shell=dash
# The kernel's own COW suite (tools/testing/selftests/mm/cow.c, built by vm/guest.mk) in the guest, twice:
#   1. as it is: each of its cases is one case here. A pass passes; a skip is a skip (with cow.c's
#      reason), which the skip budget (tests/skips/) must list; a fail or XFAIL passes only when
#      tests/cow-known.txt lists it for this kernel with that verdict and a reason (then an XFAIL here).
#      A listed case that passes fails on the lab's own kernels, as the skip budget does, so that the
#      list can only shrink; a user's tree (KERNEL_SRC) only reports it. One more case: cow.c ran its whole plan and exited
#      with the status its own results call for (a crash halfway, or no bin/cow, fails it).
#   2. with vm.fork_share_pinned=1: one more case, passing when exactly the "fork() with an iouring fixed
#      buffer" cases (a longterm pin held across fork) flip from pass to fail, on every page type that ran.
#      A user's tree (KERNEL_SRC) without kernel-patches/.../0002 skips it; the lab's own kernels carry
#      their whole series, so there it fails.
# The guest gets swap (a swap file on the lab's disk) and 2 MiB hugetlb pages first, so the swapped-out
# and hugetlb variants run. The lab's files are found from this script's folder (/lab/tests in the
# guest, DESTDIR/lab/tests in a kselftest collection).
set -eu
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
cow=${COW:-$root/bin/cow}
known=${COW_KNOWN:-$root/tests/cow-known.txt}
# LAB_SWITCH: the fork switch's file (liblab/lab.h, its home).
# shellcheck source=/dev/null # made by the build (vm/guest.mk)
. "$root/guest/lab.sh"
switch=$LAB_SWITCH
pinned_fork="fork() with an iouring fixed buffer"
kver=$(uname -r | cut -d. -f1,2)
kernel=$(sed -n 's/^LAB_KERNEL=//p' "${LAB_KERNEL_ENV:-$root/kernel.env}" 2>/dev/null)
tmp=/tmp/cow.$$
mkdir -p "$tmp"
# Fields of the verdict files: a separator no case name holds, and not a blank, which read would
# fold when a field is empty.
us=$(printf '\037')

swapfile=/mnt/disk/cow.swap
# The swap file's disk is the lab's scratch disk (vm/boot mounts /dev/vda there); a kselftest collection
# run elsewhere may have none: the whole program is a kselftest skip, saying so (in the lab's own run
# no skip budget lists it, so there it fails).
if ! grep -q ' /mnt/disk ' /proc/mounts; then
	echo "TAP version 13"
	echo "1..0 # SKIP no scratch disk on /mnt/disk for the swap file: the lab's own run attaches one (make test)"
	exit 4
fi
if ! grep -q "^$swapfile " /proc/swaps; then
	# Made once on the disk image (64 MiB at the slow disk's 8 MiB/s), kept for later boots. Written
	# with O_DIRECT, a MiB a wait: through the page cache, mkswap's fsync() wrote the file out beside
	# the periodic flusher (both in ext4_writepages), 54 s on the debug kernel's 1 MiB/s disk, and
	# the hung-task detector (30 s) reported mkswap.
	[ -f "$swapfile" ] || { dd if=/dev/zero of="$swapfile.tmp" bs=1M count=64 oflag=direct 2>/dev/null &&
		chmod 600 "$swapfile.tmp" && mkswap "$swapfile.tmp" >/dev/null && mv "$swapfile.tmp" "$swapfile"; }
	swapon "$swapfile"
fi
has_switch=0
grep -q '^LAB_SERIES_PATCHES=.*0002-' "${LAB_KERNEL_ENV:-$root/kernel.env}" 2>/dev/null && has_switch=1
# One page per hugetlb case and one for the copy its child or a COW makes; spare ones for the rest.
echo 16 >/proc/sys/vm/nr_hugepages

# cow.c on one CPU: MADV_PAGEOUT drains only its own CPU's batch of pages not yet on the LRU, and
# a page cow.c had faulted in on the other CPU stayed in that batch, could not be isolated and was
# not swapped out, so cow.c skipped a swapped-out case in one of its two runs and not in the other
# (seen on the debug kernel: "MADV_PAGEOUT did not work, is swap enabled?").
pin=""
! command -v taskset >/dev/null || pin="taskset -c 0"

# Runs cow.c with the switch at $1 into $tmp/*.$2: "verdict<US>case<US>reason" per result (verdicts:
# pass, fail, skip, xfail; a case is the "[RUN]" line before its result), cow.c's output, and
# "planned reported status" of the run.
run_cow() {
	# Each run on empty swap: within one suite run, swap was seen 47 MiB full after two runs
	# (not in a run of cow.c alone), and a swapped-out case skips when its pages cannot go out.
	swapoff "$swapfile" && swapon "$swapfile"
	[ "$has_switch" = 0 ] || echo "$1" >"$switch"
	rc=0
	if [ -x "$cow" ]; then
		$pin "$cow" >"$tmp/out.$2" 2>&1 || rc=$?
	else
		echo "# no $cow" >"$tmp/out.$2"
		rc=127
	fi
	[ "$has_switch" = 0 ] || echo 0 >"$switch"
	awk -v OFS="$us" '
		/^# \[RUN\] / { sub(/^# \[RUN\] /, ""); name = $0; next }
		/^ok [0-9]+ .*# SKIP/ { why = $0; sub(/.*# SKIP */, "", why); print "skip", name, why; next }
		/^ok [0-9]+ .*# XFAIL/ { print "xfail", name, ""; next }
		/^ok [0-9]+/ { print "pass", name, ""; next }
		/^not ok [0-9]+/ { print "fail", name, ""; next }
	' "$tmp/out.$2" >"$tmp/v.$2"
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tmp/out.$2" | head -1)
	echo "${planned:--} $(wc -l <"$tmp/v.$2") $rc" >"$tmp/plan.$2"
}

# cow.c's own plan and status: every planned case reported, and exit 0 unless one failed (1).
whole_run() { # run-id
	read -r planned reported rc <"$tmp/plan.$1"
	fails=$(grep -c '^fail' "$tmp/v.$1" || true)
	want=0
	[ "$fails" = 0 ] || want=1
	if [ "$planned" = "$reported" ] && [ "$rc" = "$want" ]; then
		return 0
	fi
	echo "# cow.c ($1): planned ${planned}, reported $reported, exited $rc (its results call for $want)"
	return 1
}

run_cow 0 plain
note=""
if [ "$has_switch" = 1 ]; then
	run_cow 1 on
	# A case that passed without the switch and skipped with it was not judged, and cow.c skips
	# when MADV_PAGEOUT did not swap its pages out (it happened once for a whole series of
	# swapped-out cases in one suite run): the switch-on run is played once more, and only those
	# cases take the replay's verdict; everything else, the first run's unexpected failures among
	# them, stays as the first run saw it.
	if paste -d "$us" "$tmp/v.plain" "$tmp/v.on" | awk -F "$us" '$1 == "pass" && $4 == "skip" { f = 1 } END { exit !f }'; then
		note="# switch on: cases skipped that passed without it ($(awk 'NR > 1 { print $4 " kB swap used" }' /proc/swaps | head -1)); ran it again"
		run_cow 1 again
		paste -d "$us" "$tmp/v.plain" "$tmp/v.on" "$tmp/v.again" | awk -F "$us" -v OFS="$us" '
			$1 == "pass" && $4 == "skip" && $5 == $2 { print $7, $8, $9; next }
			{ print $4, $5, $6 }' >"$tmp/v.merged"
		mv "$tmp/v.merged" "$tmp/v.on"
	fi
fi
cases=$(wc -l <"$tmp/v.plain")
echo "TAP version 13"
echo "1..$((cases + 2))"
[ -z "$note" ] || echo "$note"

# Part 1: each case; fails and XFAILs against the known list, skips left to the skip budget.
n=0
while IFS="$us" read -r verdict name why; do
	n=$((n + 1))
	entry=$(awk -F ' [|] ' -v k="$kver" -v c="$name" '$1 == k && $3 == c' "$known")
	case $verdict in
	pass)
		if [ -z "$entry" ]; then
			echo "ok $n $name"
		elif [ "$kernel" = src ]; then
			echo "# $name: listed in cow-known.txt for $kver but passed"
			echo "ok $n $name"
		else
			echo "# $name: listed in cow-known.txt for $kver but passed: take it off the list"
			echo "not ok $n $name"
		fi
		;;
	skip)
		echo "ok $n $name # SKIP ${why:-cow.c gave no reason}"
		;;
	*)
		if [ -n "$entry" ] && [ "$(echo "$entry" | awk -F ' [|] ' '{ print $2 }')" = "$verdict" ]; then
			echo "ok $n $name # XFAIL known $verdict: $(echo "$entry" | awk -F ' [|] ' '{ print $4 }')"
		else
			echo "# cow.c: $verdict, not listed for $kver in cow-known.txt with that verdict"
			echo "not ok $n $name"
		fi
		;;
	esac
done <"$tmp/v.plain"
n=$((n + 1))
if whole_run plain; then
	echo "ok $n cow.c ran its whole plan and exited as its results call for"
else
	echo "not ok $n cow.c ran its whole plan and exited as its results call for"
fi

# Part 2: the switch flips exactly the pinned-fork cases that passed without it, and nothing else.
n=$((n + 1))
what="fork_share_pinned flips exactly the longterm-pinned fork cases"
if [ "$has_switch" = 0 ]; then
	if [ "$kernel" = src ]; then
		echo "ok $n $what # SKIP this kernel lacks kernel-patches/*/0002 (KERNEL_SRC: the lab does not patch it)"
	else
		echo "# this kernel lacks kernel-patches/$kernel/0002; the lab's own kernels carry their whole series"
		echo "not ok $n $what"
	fi
	rm -rf "$tmp"
	exit 0
fi
bad=0
whole_run on || bad=1
[ ! -f "$tmp/plan.again" ] || whole_run again || bad=1
if [ "$(cut -d "$us" -f2 "$tmp/v.plain")" != "$(cut -d "$us" -f2 "$tmp/v.on")" ]; then
	echo "# the two runs did not run the same cases"
	bad=1
fi
flipped=0
paste -d "$us" "$tmp/v.plain" "$tmp/v.on" >"$tmp/both"
while IFS="$us" read -r v0 name _ v1 _ why1; do
	case $name in "$pinned_fork ..."*) pinned=1 ;; *) pinned=0 ;; esac
	if [ "$pinned" = 1 ] && [ "$v0" = pass ]; then
		if [ "$v1" = fail ]; then
			flipped=$((flipped + 1))
		else
			echo "# switch on, still $v1: $name"
			bad=1
		fi
	elif [ "$v0" != "$v1" ]; then
		echo "# switch on, changed $v0 -> $v1: $name${why1:+; cow.c: $why1}"
		bad=1
	fi
done <"$tmp/both"
for type in "with base page" "with THP" "with PTE-mapped THP" "with hugetlb"; do
	grep -q "^fail$us$pinned_fork \.\.\. $type" "$tmp/v.on" || {
		echo "# switch on, no failing $pinned_fork case $type"
		bad=1
	}
done
echo "# switch on: $flipped pinned-fork cases flipped to fail"
if [ "$bad" = 0 ]; then
	echo "ok $n $what"
else
	echo "not ok $n $what"
fi
rm -rf "$tmp"
