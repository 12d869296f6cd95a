# The host tests' shared pieces (tests/host/, tests/ci/): sourced, not run.
# shellcheck shell=bash disable=SC2034 # the variables are the sourcing script's

# verdict DESCRIPTION OK [DIAGNOSTIC]: one TAP result, numbered on from n, OK 1 for ok; a not ok
# counts in failed.
n=0
failed=0
verdict() {
	n=$((n + 1))
	[[ -z ${3:-} ]] || echo "# $3"
	if [[ $2 == 1 ]]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		failed=$((failed + 1))
	fi
}

# The source of a built kernel tree: the tree itself, or the user's tree it was built from out of
# tree.
ksrc_of() {
	if [[ -f $1/source/Makefile ]]; then echo "$1/source"; else echo "$1"; fi
}

# The source of the kernel a build folder's guests boot (its linux link).
build_ksrc() {
	ksrc_of "$(readlink -f "$1/linux")"
}

# fresh_dir DIR: DIR emptied (made if missing), and printed.
fresh_dir() {
	rm -rf "$1"
	mkdir -p "$1"
	echo "$1"
}

# kselftest_setup NAME: the kselftest checks' setting (top set by the caller): the lab's Python (py),
# the build folder (build), the source of the kernel its guests boot (ksrc), and build/NAME emptied
# for their files (work).
kselftest_setup() {
	py=${LAB_PYTHON:-/usr/bin/python3}
	build=${BUILD:-$top/build}
	ksrc=$(build_ksrc "$build")
	work=$(fresh_dir "$build/$1")
}
