#!/bin/sh
# shellcheck shell=dash
# The kernel's own COW suite (tools/testing/selftests/mm/cow.c, built by vm/guest.mk) in the guest, twice:
#   1. as it is: each of its cases is one case here; a skip, fail or XFAIL passes only when
#      tests/cow-known.txt lists it for this kernel with that verdict and a reason (then it is a SKIP here),
#      and a listed case that passes is reported;
#   2. with vm.fork_share_pinned=1: one more case, passing when exactly the "fork() with an iouring fixed
#      buffer" cases (a longterm pin held across fork) flip from pass to fail, on every page type that ran.
#      On a kernel whose series lacks kernel-patches/.../0002 (/lab/kernel.env) that case is a SKIP.
# The guest gets swap (a swap file on the lab's disk) and 2 MiB hugetlb pages first, so the swapped-out
# and hugetlb variants run.
set -eu
cow=/lab/bin/cow
known=/lab/tests/cow-known.txt
switch=/proc/sys/vm/fork_share_pinned
pinned_fork="fork() with an iouring fixed buffer"
kver=$(uname -r | cut -d. -f1,2)
tmp=/tmp/cow.$$
mkdir -p "$tmp"

swapfile=/mnt/disk/cow.swap
if ! grep -q "^$swapfile " /proc/swaps; then
	# Made once on the disk image (64 MiB at the slow disk's 8 MiB/s), kept for later boots.
	[ -f "$swapfile" ] || { dd if=/dev/zero of="$swapfile.tmp" bs=1M count=64 2>/dev/null &&
		chmod 600 "$swapfile.tmp" && mkswap "$swapfile.tmp" >/dev/null && mv "$swapfile.tmp" "$swapfile"; }
	swapon "$swapfile"
fi
has_switch=0
grep -q '^LAB_SERIES_PATCHES=.*0002-' /lab/kernel.env 2>/dev/null && has_switch=1
# One page per hugetlb case and one for the copy its child or a COW makes; spare ones for the rest.
echo 16 >/proc/sys/vm/nr_hugepages

# Runs cow.c with the switch at $1; writes "verdict<TAB>case" per result, cow.c's output in $tmp/out.$1.
# A case is the "[RUN]" line before its result; verdicts: pass, fail, skip, xfail.
run_cow() {
	# Each run on empty swap: within one suite run, swap was seen 47 MiB full after two runs
	# (not in a run of cow.c alone), and a swapped-out case skips when its pages cannot go out.
	swapoff "$swapfile" && swapon "$swapfile"
	[ "$has_switch" = 0 ] || echo "$1" >"$switch"
	rc=0
	"$cow" >"$tmp/out.$1" 2>&1 || rc=$?
	[ "$has_switch" = 0 ] || echo 0 >"$switch"
	awk -v why_file="$tmp/why.$1" '
		/^# \[RUN\] / { sub(/^# \[RUN\] /, ""); name = $0; next }
		/^ok [0-9]+ .*# SKIP/ {
			print "skip\t" name
			why = $0; sub(/.*# SKIP */, "", why); print name "\t" why >why_file
			next
		}
		/^ok [0-9]+ .*# XFAIL/ { print "xfail\t" name; next }
		/^ok [0-9]+/ { print "pass\t" name; next }
		/^not ok [0-9]+/ { print "fail\t" name; next }
	' "$tmp/out.$1" >"$tmp/v.$1"
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tmp/out.$1" | head -1)
	echo "${planned:-0} $rc" >"$tmp/plan.$1"
}

note=""
run_cow 0
if [ "$has_switch" = 1 ]; then
	run_cow 1
	# A case that passed without the switch and skipped with it was not judged, and cow.c skips
	# when MADV_PAGEOUT did not swap its pages out (it happened once for a whole series of
	# swapped-out cases in one suite run): the switch-on run is played once more, and what it
	# then leaves unjudged fails below.
	if paste "$tmp/v.0" "$tmp/v.1" | awk -F '\t' '$1 == "pass" && $3 == "skip" { f = 1 } END { exit !f }'; then
		note="# switch on: cases skipped that passed without it ($(awk 'NR > 1 { print $4 " kB swap used" }' /proc/swaps | head -1)); ran it again"
		run_cow 1
	fi
fi
cases=$(wc -l <"$tmp/v.0")
echo "TAP version 13"
echo "1..$((cases + 1))"
[ -z "$note" ] || echo "$note"

# Part 1: each case against the known list.
n=0
while IFS="$(printf '\t')" read -r verdict name; do
	n=$((n + 1))
	entry=$(awk -F ' [|] ' -v k="$kver" -v c="$name" '$1 == k && $3 == c' "$known")
	if [ "$verdict" = pass ]; then
		echo "ok $n $name"
		[ -z "$entry" ] || echo "# $name: listed in cow-known.txt for $kver but passed"
	elif [ -n "$entry" ] && [ "$(echo "$entry" | awk -F ' [|] ' '{ print $2 }')" = "$verdict" ]; then
		echo "ok $n $name # SKIP known $verdict: $(echo "$entry" | awk -F ' [|] ' '{ print $4 }')"
	else
		echo "# cow.c: $verdict, not listed for $kver in cow-known.txt with that verdict"
		echo "not ok $n $name"
	fi
done <"$tmp/v.0"

# Part 2: the switch flips exactly the pinned-fork cases that passed without it, and nothing else.
n=$((n + 1))
if [ "$has_switch" = 0 ]; then
	echo "ok $n fork_share_pinned flips exactly the longterm-pinned fork cases # SKIP this kernel lacks kernel-patches/$kver/0002"
	rm -rf "$tmp"
	exit 0
fi
bad=0
read -r planned rc <"$tmp/plan.0"
[ "$planned" -eq "$cases" ] || { echo "# cow.c planned $planned cases, reported $cases (rc $rc)"; bad=1; }
if [ "$(cut -f2 "$tmp/v.0")" != "$(cut -f2 "$tmp/v.1")" ]; then
	echo "# the two runs did not run the same cases"
	bad=1
fi
flipped=0
paste "$tmp/v.0" "$tmp/v.1" >"$tmp/both"
while IFS="$(printf '\t')" read -r v0 name v1 _; do
	case $name in "$pinned_fork ..."*) pinned=1 ;; *) pinned=0 ;; esac
	if [ "$pinned" = 1 ] && [ "$v0" = pass ]; then
		if [ "$v1" = fail ]; then
			flipped=$((flipped + 1))
		else
			echo "# switch on, still $v1: $name"
			bad=1
		fi
	elif [ "$v0" != "$v1" ]; then
		why=$(awk -F '\t' -v c="$name" '$1 == c { print "; cow.c: " $2; exit }' "$tmp/why.1" 2>/dev/null)
		echo "# switch on, changed $v0 -> $v1: $name$why"
		bad=1
	fi
done <"$tmp/both"
for type in "with base page" "with THP" "with PTE-mapped THP" "with hugetlb"; do
	grep -q "^fail	$pinned_fork \.\.\. $type" "$tmp/v.1" || {
		echo "# switch on, no failing $pinned_fork case $type"
		bad=1
	}
done
echo "# switch on: $flipped pinned-fork cases flipped to fail"
if [ "$bad" = 0 ]; then
	echo "ok $n fork_share_pinned flips exactly the longterm-pinned fork cases"
else
	echo "not ok $n fork_share_pinned flips exactly the longterm-pinned fork cases"
fi
rm -rf "$tmp"
