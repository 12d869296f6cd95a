#!/usr/bin/env bash
# make bisect's reading of git bisect's outcome (vm/bisect_row.py's bisect_left), from git's refs
# alone, on a history of its own (no kernel, no boot): A-B-C-D with A good and D bad. C good then
# leaves D alone: found. B and C skipped leaves D, C and B, any of which may be the first bad one.
# B skipped and C never tested leaves nothing named (git had more to test). Prints TAP.
set -euo pipefail
shopt -s inherit_errexit
top=$(cd "$(dirname "$0")/../.." && pwd)
py=${LAB_PYTHON:-/usr/bin/python3}
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
g() { git -C "$repo" -c user.name=lab -c user.email=lab@localhost "$@"; }
g init -q
for c in A B C D; do
	echo "$c" >"$repo/f"
	g add f
	g commit -q -m "$c"
	declare "$c=$(g rev-parse HEAD)"
done
# left STEPS...: after git bisect start D A and each step ("good C", "skip B"...), what
# bisect_left says: the bad commit, then the commits left, a line each.
left() {
	g bisect reset >/dev/null 2>&1 || true
	g bisect start "$D" "$A" >/dev/null
	local step
	for step in "$@"; do
		# shellcheck disable=SC2086 # a step is git bisect's words
		# (git bisect skip says non-zero once only skipped commits are left: its refs are set.)
		g bisect $step >/dev/null 2>&1 || true
	done
	LAB_CACHE=$repo "$py" -c 'import sys
sys.path.insert(0, sys.argv[1])
import bisect_row
first, left = bisect_row.bisect_left(sys.argv[2])
print(first)
print("\n".join(left))' "$top/vm" "$repo"
}
echo "TAP version 13"
echo "1..3"
n=0
check() { # WHAT GOT WANT
	n=$((n + 1))
	if [[ $2 == "$3" ]]; then
		echo "ok $n $1"
	else
		echo "# got: $(tr '\n' ' ' <<<"$2"); wanted: $(tr '\n' ' ' <<<"$3")"
		echo "not ok $n $1"
	fi
}
check "C good: D alone is left, the first bad commit" "$(left "good $C")" "$D"$'\n'"$D"
check "B and C skipped: D, C and B are left, any of them the first bad one" \
	"$(left "skip $B" "skip $C")" "$D"$'\n'"$D"$'\n'"$C"$'\n'"$B"
check "B skipped, C untested: nothing is named" "$(left "skip $B")" "$D"
