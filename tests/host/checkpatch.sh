#!/usr/bin/env bash
# The kernel under test's series, each patch through its own tree's scripts/checkpatch.pl --strict,
# read each way checkpatch reads a patch: from stdin (--no-tree); as a file from the top of the kernel
# tree, how a patch is checked before it is sent; as a file from the lab's clone, where git tracks
# it, so that checkpatch checks it as a source file (its git ls-files test) and a blank context line
# written " " or the "-- " signature line would be trailing whitespace; and as a file where no git
# is, where the commit ids a message names cannot be looked up. Each reading must say 0 errors,
# 0 warnings, 0 checks. The same readings of a copy with one trailing blank planted on an added line
# must each report it, so that a checkpatch that checks nothing cannot pass. Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
tree=$(readlink -f "$build/linux")
kernel=$(sed -n 's/^LAB_KERNEL=//p' "$build/kernel.env")
echo "TAP version 13"
if [[ $kernel == src ]]; then
	echo "1..1"
	echo "ok 1 the lab's series # SKIP a user's tree (KERNEL_SRC) has no series of the lab's"
	exit 0
fi
cp=$tree/scripts/checkpatch.pl
[[ -x $cp ]] || { echo "checkpatch.sh: no $cp: build the lab's kernel first" >&2; exit 1; }
mapfile -t patches < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$top/kernel-patches/$kernel/series")
readings=(stdin tree clone nogit)
echo "1..$(((${#patches[@]} + 1) * ${#readings[@]}))"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# read HOW FILE [GITDIR]: checkpatch's summary line and what it reported, HOW the reading; GITDIR,
# a clone whose git tracks FILE (the clone reading).
read_patch() {
	local how=$1 file=$2 gitdir=${3:-$top}
	case $how in
	stdin) (cd "$top" && "$cp" --strict --no-tree - <"$file") ;;
	tree) (cd "$tree" && "$cp" --strict "$file") ;;
	clone) (cd "$gitdir" && "$cp" --strict "${file#"$gitdir"/}") ;;
	nogit) (cd "$scratch/nogit" && "$cp" --strict "$file") ;;
	esac
}
mkdir -p "$scratch/nogit" "$scratch/plant"
n=0
for p in "${patches[@]}"; do
	file=$top/kernel-patches/$kernel/$p
	for how in "${readings[@]}"; do
		n=$((n + 1))
		out=$(read_patch "$how" "$file" 2>&1 || true)
		if grep -q '^total: 0 errors, 0 warnings, 0 checks, ' <<<"$out"; then
			echo "ok $n $kernel/$p: checkpatch --strict, read $how"
		else
			grep -E '^(ERROR|WARNING|CHECK|total)' <<<"$out" | sed 's/^/# /' || echo "# $out" | head -5
			echo "not ok $n $kernel/$p: checkpatch --strict, read $how"
		fi
	done
done

# The plant: the last patch with a blank after its first added line, in a git repository of its
# own for the clone reading.
last=${patches[${#patches[@]} - 1]}
planted=$scratch/plant/$last
awk '!done && /^\+[^+]/ && past { $0 = $0 " "; done = 1 } /^---$/ { past = 1 } { print }' \
	"$top/kernel-patches/$kernel/$last" >"$planted"
git -C "$scratch/plant" init -q && git -C "$scratch/plant" add "$last"
for how in "${readings[@]}"; do
	n=$((n + 1))
	out=$(read_patch "$how" "$planted" "$scratch/plant" 2>&1 || true)
	# Exactly one: the plant's (the patch itself is clean in every reading, above).
	if ! cmp -s "$planted" "$top/kernel-patches/$kernel/$last" &&
		[[ $(grep -c '^ERROR: trailing whitespace' <<<"$out") == 1 ]]; then
		echo "ok $n a trailing blank planted in $kernel/$last is reported, read $how"
	else
		grep -E '^(ERROR|WARNING|CHECK|total)' <<<"$out" | sed 's/^/# /' || true
		echo "not ok $n a trailing blank planted in $kernel/$last is reported, read $how"
	fi
done
