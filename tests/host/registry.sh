#!/usr/bin/env bash
# The kernel registry kept honest: every kernel named by a folder kernel-patches/<version>/ has what
# kernel-patches/README.md's "adding a kernel" asks for, so that adding one cannot go half done. No
# boot: the guest-side half (the expectation table of each kernel, in rows/expect.c) is rows_test's.
# Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=vm/lib.sh
. "$top/vm/lib.sh"
mapfile -t kernels < <(lab_kernels)

checks=()
for k in "${kernels[@]}"; do
	checks+=("$k|series" "$k|package" "$k|cow")
done
checks+=("ci|ci" "checklist|checklist")
echo "TAP version 13"
echo "1..${#checks[@]}"
n=0
for c in "${checks[@]}"; do
	IFS='|' read -r k what <<<"$c"
	n=$((n + 1))
	dir=$top/kernel-patches/$k
	why=""
	case $what in
	series)
		desc="$k: a series whose every patch exists, and every patch in it"
		if [[ ! -f $dir/series ]]; then
			why="no $dir/series"
		else
			listed=$(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$dir/series")
			for p in $listed; do [[ -f $dir/$p ]] || why+="series names $p, which is missing; "; done
			for f in "$dir"/*.patch; do
				[[ -e $f ]] || continue
				grep -qxF "${f##*/}" <<<"$listed" || why+="${f##*/} is not in the series; "
			done
		fi
		;;
	package)
		desc="$k: Debian has its source package, linux-source-$k (vm/deps.sh installs it)"
		apt-cache show "linux-source-$k" >/dev/null 2>&1 || why="apt-cache knows no linux-source-$k"
		;;
	cow)
		desc="$k: tests/cow-known.txt says what cow.c does not pass there"
		grep -q "^$k | " "$top/tests/cow-known.txt" || why="no line for $k"
		;;
	ci)
		desc="CI runs make test on every kernel of the registry"
		grep -q 'lab_kernels' "$top/.ci/run" || why=".ci/run does not take its kernels from the registry"
		;;
	checklist)
		desc="kernel-patches/README.md has the adding-a-kernel checklist"
		grep -q '^## Adding a kernel' "$top/kernel-patches/README.md" || why="no '## Adding a kernel' section"
		;;
	esac
	if [[ -z $why ]]; then
		echo "ok $n $desc"
	else
		echo "# $why"
		echo "not ok $n $desc"
	fi
done
