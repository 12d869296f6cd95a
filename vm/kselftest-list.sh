#!/usr/bin/env bash
# The lab's kselftest collection, as the tree's runner needs it to give each program its timeout.
# The runner (kselftest/runner.sh) reads one settings file per collection folder, so a program with
# a timeout of its own (timeout_PROGRAM=N in SETTINGS) gets a collection of its own, lab/tests/NAME
# (NAME: PROGRAM without _test): its settings say timeout=N, and its PROGRAM is a short script
# that runs the collection's (so that the program itself still finds the lab from
# /proc/self/exe, and a copy by any tool keeps working). Every other program is in lab/tests,
# whose settings are SETTINGS itself.
#   vm/kselftest-list.sh SETTINGS MANIFEST STAGE   writes STAGE/kselftest/kselftest-list.txt,
#                                                  STAGE/lab/tests/settings, STAGE/lab/tests/NAME/
set -euo pipefail
(($# == 3)) || { echo "usage: $0 SETTINGS MANIFEST STAGE" >&2; exit 2; }
settings=$1 manifest=$2 stage=$3
tests=$stage/lab/tests
declare -A own=()
# Every line a comment or NAME=SECONDS as the runner reads it: a line it would take otherwise (an
# indented or capitalised timeout_ line becomes a variable nothing reads) is refused here.
while IFS= read -r line; do
	[[ -z $line || $line == '#'* || $line =~ ^[a-z0-9_]+=[0-9]+$ ]] ||
		{ echo "$settings: '$line': not a comment nor NAME=SECONDS" >&2; exit 1; }
done <"$settings"
while IFS='=' read -r key value; do
	[[ $key == timeout_* ]] || continue
	prog=${key#timeout_}
	[[ $prog =~ ^[a-z0-9_]+_test$ && $value =~ ^[1-9][0-9]*$ ]] ||
		{ echo "$settings: $key=$value: not timeout_NAME_test=SECONDS" >&2; exit 1; }
	grep -qx "$prog" "$manifest" ||
		{ echo "$settings: $key names a program the manifest ($manifest) lacks" >&2; exit 1; }
	own[$prog]=$value
done < <(grep -v '^#' "$settings")

mkdir -p "$stage/kselftest" "$tests"
install -m 644 "$settings" "$tests/settings"
# The list grouped by collection, lab/tests first: 6.1's run_kselftest.sh finds the collections with
# uniq, unsorted, and would run lab/tests twice around a collection listed between its programs.
list=$stage/kselftest/kselftest-list.txt
: >"$list.tmp"
: >"$list.own"
while read -r prog; do
	[[ -n $prog ]] || continue
	if [[ -z ${own[$prog]:-} ]]; then
		echo "lab/tests:$prog" >>"$list.tmp"
		continue
	fi
	d=$tests/${prog%_test}
	[[ ! -e $d || -d $d ]] || { echo "$0: $d, $prog's own collection, is a file" >&2; exit 1; }
	mkdir -p "$d"
	printf '# %s, its own timeout (the lab'\''s tests/settings: timeout_%s)\ntimeout=%s\n' \
		"$prog" "$prog" "${own[$prog]}" >"$d/settings"
	# shellcheck disable=SC2016 # the script's own words
	printf '#!/bin/sh\n# %s in a collection of its own, for its timeout (vm/kselftest-list.sh)\nexec "$(dirname "$0")/../%s" "$@"\n' \
		"$prog" "$prog" >"$d/$prog"
	chmod 755 "$d/$prog"
	echo "lab/tests/${prog%_test}:$prog" >>"$list.own"
done <"$manifest"
cat "$list.own" >>"$list.tmp"
rm "$list.own"
mv "$list.tmp" "$list"
