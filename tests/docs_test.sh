#!/bin/sh
# shellcheck shell=dash
# The output blocks of README.md and docs/*.md (written by make docs) against what the programs print
# now, compared by format: numbers (PFNs, counts, times) and runs of blanks are masked, everything
# else (columns, row names, verdicts, wording) must match. A block generated on another kernel
# version is skipped with the reason: the pages show one kernel's run. So is every block on the debug
# kernel (kmemleak): the pages show the normal kernel's run, and under KASAN and TCG the debug kernel
# is too slow for the timing the fadvise rows show (its ASYNC_WRITE row read WRITTEN there).
set -eu
pages="/lab/README.md"
for p in /lab/docs/*.md; do [ -e "$p" ] && pages="$pages $p"; done
tmp=/tmp/docs-test
rm -rf "$tmp"
mkdir -p "$tmp"
release=$(uname -r)
series=$(echo "$release" | cut -d. -f1,2)

# A PFN may be all hex letters (ceea): a token of three or more of them counts as a number too (run
# twice, since neighbouring tokens share the blank between them).
hexword='s/(^|[[:space:]>])[a-f]{3,}([[:space:]]|$|-)/\1N\2/g'
mask() {
	sed -E -e "$hexword" -e "$hexword" -e 's/[0-9a-f]*[0-9][0-9a-f]*/N/g' -e 's/[[:space:]]+/ /g' \
		-e 's/ $//' "$1"
}

# name, kernel and the block itself, one file per marker
# shellcheck disable=SC2086 # a list of paths without blanks
awk -v dir="$tmp" '
	/^<!-- output: / {
		n = $3; sub(/,$/, "", n); k = $7
		i++; meta = dir "/" i ".meta"; print n " " k " " FILENAME > meta; close(meta)
		file = dir "/" i ".doc"; printf "" > file; want = 1; next
	}
	want && /^```/ { if (infence) { want = 0; infence = 0; close(file) } else infence = 1; next }
	want && infence { print > file }
' $pages

total=$(find "$tmp" -name '*.meta' | wc -l)
echo "TAP version 13"
echo "1..$total"
[ "$total" -gt 0 ] || exit 0
if [ -e /sys/kernel/debug/kmemleak ]; then
	i=0
	while [ "$i" -lt "$total" ]; do
		i=$((i + 1))
		read -r name kernel page <"$tmp/$i.meta"
		echo "ok $i $name in ${page#/lab/} # SKIP the pages show the normal kernel; this is the debug one"
	done
	exit 0
fi
names=$(cat "$tmp"/*.meta | awk '{ print $1 }' | sort -u)
# shellcheck disable=SC2086 # block names are single words
/lab/docs/capture $names >"$tmp/capture" 2>"$tmp/capture.err" || {
	sed 's/^/# /' "$tmp/capture.err"
	echo "# docs/capture failed"
}
i=0
while [ "$i" -lt "$total" ]; do
	i=$((i + 1))
	read -r name kernel page <"$tmp/$i.meta"
	what="$name in ${page#/lab/}"
	if [ "$(echo "$kernel" | cut -d. -f1,2)" != "$series" ]; then
		echo "ok $i $what # SKIP generated on Linux $kernel, this is $release"
		continue
	fi
	awk -v n="$name" '$0 == "@@docs-begin " n "@@" { on = 1; next } $0 == "@@docs-end " n "@@" { on = 0 } on' \
		"$tmp/capture" >"$tmp/$i.now"
	mask "$tmp/$i.doc" >"$tmp/$i.doc.masked"
	mask "$tmp/$i.now" >"$tmp/$i.now.masked"
	if [ -s "$tmp/$i.now" ] && cmp -s "$tmp/$i.doc.masked" "$tmp/$i.now.masked"; then
		echo "ok $i $what"
	else
		diff "$tmp/$i.doc.masked" "$tmp/$i.now.masked" | head -20 | sed 's/^/# /' || true
		echo "not ok $i $what: the page no longer shows the program's format (make docs)"
	fi
done
