#!/usr/bin/env bash
# CI: make bisect on a small history made on top of a user's tree (.ci/run's git checkout of the
# registry's newest kernel's Debian source), on a branch of its own that is never checked out there:
#   U  an unrelated change (a comment in mm/madvise.c)
#   B  a change that does not build (lib/ctype.c)
#   F  the fix of B
#   R  one hunk of the 5.9 fix reverted: GUP no longer marks the mm as having pinned, so
#      folio_needs_cow_for_dma() says no and fork() shares a maybe-pinned page with the child again
#   X  another unrelated change (a comment in Documentation/)
# and, on a side branch, S (a WARN where GUP pins long-term) then X2 (no WARN, R's hunk reverted).
# Bisecting row pin (a PIN_LONGTERM pin, COHERENT since 5.9) from the base to X must name R, with
# pin's record on both sides, after skipping B (git bisect tests it first: the halfway commit);
# every step after the first must be an incremental build. Stopped with SIGINT while it builds (as
# Ctrl-C stops it), it must stop cleanly, and run again it must resume from the steps it finished.
# Before that, each bad input must be refused before anything is built: an unknown row, GOOD not
# an ancestor of BAD, a tree older than 6.1, a bisect in progress in the tree; and after it, GOOD
# and BAD giving the same verdict (from the kept steps). The tree's HEAD, work files and bisect
# state must be as they were after every run. Bisecting from the base to X2 must stop at S, saying
# the kernel failed there (a splat is neither verdict).
#   tests/ci/bisect.sh USER_TREE
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=vm/lib.sh
. "$top/vm/lib.sh"
tree=$(cd "${1:?usage: tests/ci/bisect.sh USER_TREE}" && pwd -P)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
	echo "bisect test: FAIL: $*" >&2
	exit 1
}
g() { git -C "$tree" -c user.name=ci -c user.email=ci@localhost "$@"; }

# The history, with git's plumbing in an index of its own: the tree's index and files stay.
export GIT_INDEX_FILE=$work/index
commit() { # parent subject [path content-file]...
	local parent=$1 msg=$2 blob
	shift 2
	g read-tree "$parent"
	while (($#)); do
		blob=$(g hash-object -w "$2")
		g update-index --cacheinfo "100644,$blob,$1"
		shift 2
	done
	g commit-tree "$(g write-tree)" -p "$parent" -m "$msg"
}
base=$(g rev-parse HEAD)
g show "$base:mm/madvise.c" >"$work/madvise.c"
echo '/* An unrelated change: a comment. */' >>"$work/madvise.c"
U=$(commit "$base" "mm/madvise: a comment" mm/madvise.c "$work/madvise.c")
g show "$base:lib/ctype.c" >"$work/ctype.c"
echo 'this line does not build;' >>"$work/ctype.c"
B=$(commit "$U" "lib/ctype: a change that does not build" lib/ctype.c "$work/ctype.c")
g show "$base:lib/ctype.c" >"$work/ctype.c"
F=$(commit "$B" "lib/ctype: fix the build" lib/ctype.c "$work/ctype.c")
g show "$base:mm/gup.c" >"$work/gup.c.orig"
sed '/^\tif (flags & FOLL_PIN)$/{N;/\n\t\tmm_set_has_pinned_flag(&mm->flags);$/d}' \
	"$work/gup.c.orig" >"$work/gup.c"
# The revert must be exactly that hunk, or the test proves nothing.
[[ $(diff "$work/gup.c.orig" "$work/gup.c" | grep -c '^[<>]') == 2 ]] ||
	fail "mm/gup.c of $base has no 'if (flags & FOLL_PIN) mm_set_has_pinned_flag()' to revert"
R=$(commit "$F" "mm/gup: pin without marking the mm as having pinned (reverts a hunk of 5.9's fix)" \
	mm/gup.c "$work/gup.c")
g show "$base:Documentation/mm/index.rst" >"$work/index.rst"
echo '.. An unrelated change: a comment.' >>"$work/index.rst"
X=$(commit "$R" "Documentation/mm: a comment" Documentation/mm/index.rst "$work/index.rst")
# A tree older than the lab supports, on a side branch: its Makefile says 5.19.
g show "$base:Makefile" | sed 's/^VERSION = .*/VERSION = 5/; s/^PATCHLEVEL = .*/PATCHLEVEL = 19/' \
	>"$work/Makefile"
O=$(commit "$base" "Makefile: 5.19" Makefile "$work/Makefile")
O2=$(commit "$O" "Documentation/mm: a comment" Documentation/mm/index.rst "$work/index.rst")
# A kernel that splats where the row plays, on another side branch: S warns on every long-term pin,
# X2 drops the warning and reverts R's hunk.
sed 's/^\t\tmm_set_has_pinned_flag(&mm->flags);$/&\n\tWARN_ON_ONCE(flags \& FOLL_LONGTERM);/' \
	"$work/gup.c.orig" >"$work/gup-warn.c"
[[ $(diff "$work/gup.c.orig" "$work/gup-warn.c" | grep -c '^>') == 1 ]] || fail "no WARN planted in mm/gup.c"
S=$(commit "$base" "mm/gup: warn on a long-term pin" mm/gup.c "$work/gup-warn.c")
X2=$(commit "$S" "mm/gup: no warning; pin without marking the mm as having pinned" mm/gup.c "$work/gup.c")
unset GIT_INDEX_FILE
echo "bisect test: history base ${base:0:12} U ${U:0:12} B ${B:0:12} F ${F:0:12} R ${R:0:12} X ${X:0:12}"

# What must not change in the user's tree: HEAD, its files (ignored ones too), its bisect state.
state() {
	g rev-parse HEAD
	g status --porcelain --ignored
	local f
	for f in "$(g rev-parse --absolute-git-dir)"/BISECT_*; do
		[[ ! -e $f ]] || echo "${f##*/}"
	done
}
before=$(state)
untouched() {
	[[ $(state) == "$before" ]] || fail "$1 changed the user's tree: $(diff <(echo "$before") <(state) | head -5)"
}

run() { # name expected-status expected-message make-arguments...
	local name=$1 want=$2 msg=$3 rc=0
	shift 3
	make -C "$top" --no-print-directory bisect KERNEL_SRC="$tree" "$@" >"$work/$name.out" 2>&1 || rc=$?
	sed "s/^/  $name: /" "$work/$name.out"
	[[ $rc == "$want" ]] || fail "$name: exit status $rc, not $want"
	grep -qF -- "$msg" "$work/$name.out" || fail "$name: no '$msg' in its output"
	untouched "$name"
}
refused() { # name message make-arguments...: an error before anything is built
	run "$1" 2 "$2" "${@:3}"
	! grep -q ': building$' "$work/$1.out" || fail "$1: built something before refusing"
	echo "ok: $1 refused before any build"
}
refused unknown-row "ROW=no-such-row: no such row" GOOD="$base" BAD="$X" ROW=no-such-row
refused not-ancestor "is not an ancestor of BAD" GOOD="$X" BAD="$base" ROW=pin
refused too-old "is Linux 5.19; the lab supports 6.1 and later" GOOD="$O" BAD="$O2" ROW=pin
g bisect start >/dev/null
before=$(state)
refused user-bisecting "a git bisect is in progress in $tree" GOOD="$base" BAD="$X" ROW=pin
g bisect reset >/dev/null 2>&1
before=$(state)

# The bisect, stopped with SIGINT (to its whole process group, as a terminal's Ctrl-C) once the
# base has been played and the next commit's build is under way; then run again to the end.
steps=$LAB_CACHE/bisect/${tree##*/}-$(printf '%s' "$tree" | sha1sum | cut -c1-8)/steps/pin
rm -rf "$steps"
# In a process group of its own (job control), with SIGINT's default action whatever this script
# inherited (a script's background job ignores SIGINT, and exec keeps that): as a terminal's Ctrl-C
# finds a make bisect in the foreground.
set -m
"${LAB_PYTHON:-/usr/bin/python3}" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' make -C "$top" --no-print-directory bisect KERNEL_SRC="$tree" \
	GOOD="$base" BAD="$X" ROW=pin >"$work/stopped.out" 2>&1 &
pid=$!
set +m
t0=$SECONDS
# Stopped once Kbuild works on X (its build's second 'building bzImage' line, the base's first).
until [[ -f $steps/$base.json ]] && grep -q "^bisect: ${X:0:7}.*: building$" "$work/stopped.out" &&
	(($(grep -c 'kernel: building bzImage' "$work/stopped.out") >= 2)); do
	kill -0 "$pid" 2>/dev/null || { cat "$work/stopped.out"; fail "the bisect ended before it was stopped"; }
	((SECONDS - t0 < 3600)) || fail "the base was not played within an hour"
	sleep 1
done
kill -INT -- "-$pid"
rc=0
wait "$pid" || rc=$?
sed 's/^/  stopped: /' "$work/stopped.out"
((rc != 0)) || fail "stopped: exit status 0"
grep -q 'bisect: stopped; the steps finished so far are kept' "$work/stopped.out" ||
	fail "stopped: no word of stopping"
! grep -q 'first commit where' "$work/stopped.out" || fail "stopped: it ran to the end before the signal"
for ((i = 0; i < 20; i++)); do
	pgrep -g "$pid" >/dev/null || break
	sleep 0.5
done
! pgrep -g "$pid" -a || fail "stopped: processes of the bisect still run"
untouched stopped
echo "ok: stopped by SIGINT with status $rc, nothing left running"

run bisect 0 "first commit where pin is ORPHANED, not COHERENT" GOOD="$base" BAD="$X" ROW=pin
out=$work/bisect.out
grep -q "^bisect: ${base:0:7}.* (kept from an earlier run)$" "$out" ||
	fail "bisect: the base's step was not taken from the stopped run"
grep -qx "bisect:   $R (ORPHANED):" "$out" || fail "bisect: it did not name R, ${R:0:12}"
grep -qx "bisect:   its parent $F (COHERENT):" "$out" || fail "bisect: no record of R's parent F (COHERENT)"
grep -q "^bisect:     pin: observed ORPHANED, expected COHERENT" "$out" || fail "bisect: no record of pin on R"
grep -q "^bisect:     pin: observed COHERENT, expected COHERENT" "$out" || fail "bisect: no record of pin on F"
grep -q "^bisect: skipped ${B:0:7}.*: skip: does not build" "$out" ||
	fail "bisect: B was not skipped as not building"
echo "ok: named R, ${R:0:12}, with the records of both sides; B skipped"
# Every step after the stopped run's built incrementally.
compiled() { "${LAB_PYTHON:-/usr/bin/python3}" -c 'import json, sys; print(json.load(open(sys.argv[1]))["compiled"])' "$1"; }
# What the worktree's object folder compiled when it was built from nothing (vm/build-kernel.sh keeps
# it): the steps are held to a tenth of it.
wt=${steps%/steps/pin}/${tree##*/}
cold=$(<"$LAB_CACHE/src/${tree##*/}-$(printf '%s' "$wt" | sha1sum | cut -c1-8)/obj/.lab-cold-files")
for c in "$U" "$F" "$R" "$X"; do
	[[ -f $steps/$c.json ]] || continue
	n=$(compiled "$steps/$c.json")
	if [[ $n == None ]] || ((n * 10 >= cold)); then
		fail "the step of ${c:0:12} compiled $n files, a build from nothing $cold: not incremental"
	fi
	# U, F and R each change a .c file: a step that compiled nothing did not build them.
	[[ $c == "$X" ]] || ((n >= 1)) || fail "the step of ${c:0:12} compiled no file, though it changes one"
	echo "ok: ${c:0:12} compiled $n files (a build from nothing: $cold)"
done
refused same-verdict "GOOD and BAD both give ORPHANED" GOOD="$R" BAD="$X" ROW=pin
# The splat is a third answer: git bisect tests S first (the only commit between), and the bisect
# stops there, saying the kernel failed, naming the splat's class.
run third-answer 2 "the kernel failed there, neither COHERENT nor ORPHANED" GOOD="$base" BAD="$X2" ROW=pin
grep -qE "^bisect: stopped at ${S:0:7}[0-9a-f]* mm/gup: warn on a long-term pin:" "$work/third-answer.out" ||
	fail "third-answer: it did not stop at S, ${S:0:12}"
grep -q 'kernel splat in the guest.s log (classes: warn' "$work/third-answer.out" ||
	fail "third-answer: the splat's class is not named"
! grep -q 'first commit where' "$work/third-answer.out" || fail "third-answer: a splat was taken for a verdict"
echo "ok: a kernel that splats stops the bisect as a third answer"
echo "bisect test: all green"
