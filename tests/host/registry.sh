#!/usr/bin/env bash
# The registries kept honest. The kernels': every kernel named by a folder kernel-patches/<version>/
# has what kernel-patches/README.md's "adding a kernel" asks for, so that adding one cannot go half
# done (the guest-side half, the expectation table of each kernel in rows/expect.c, is rows_test's).
# The families': a new family is one file and one line of ROW_FAMILIES (docs/lab.md, "adding a
# family"): in a scratch copy of the row layer, a toy family in rows/toy.c with its line, a demo
# and a machine of its own, is listed by vm/registry.c for the build (its demo, its test program,
# its machine), and its demo, compiled from demo/demo.c under its name (LAB_DEMO, as vm/guest.mk
# does, here against the host's headers) with the row layer, plays it and says how guest/demo
# shows it (--families, --runs: they print, nothing is played). A family whose play needs a file
# or a library of its own also needs its demo's link line in vm/guest.mk; the toy needs none. No
# boot.
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
checks+=("ci|ci" "checklist|checklist" "family|registry" "family|demo")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The toy family: one file, one line.
toy_family() {
	cp -r "$top/rows" "$top/liblab" "$top/demo" "$scratch/"
	mkdir -p "$scratch/vm" "$scratch/uapi" "$scratch/o"
	cp "$top/vm/registry.c" "$scratch/vm/"
	cp "$top/drivers/pindma/uapi/"*.h "$scratch/uapi/"
	cat >"$scratch/rows/toy.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
#include "row.h"

struct toy_obs {
	bool moved;
};

int play_toy(const struct row *r, const struct play_opts *o, struct record *rec)
{
	(void)r, (void)o;
	ROW_OBS(rec, struct toy_obs)->moved = true;
	return 0;
}

static const char *toy_verdict(const struct record *rec, char *why, size_t n)
{
	(void)why, (void)n;
	return ROW_OBS(rec, struct toy_obs)->moved ? "COHERENT" : NULL;
}

static unsigned int toy_checks(const struct record *rec, struct check *c)
{
	(void)rec, (void)c;
	return 0;
}

static void toy_header(FILE *f)
{
	fprintf(f, "toy\n");
}

static void toy_line(FILE *f, unsigned int i, const struct record *rec)
{
	fprintf(f, "%u %s\n", i, rec->observed);
}

static const struct field toy_fields[] = {
	OBS_FIELD(toy_obs, F_BOOL, moved),
	{ NULL },
};

const struct row_family family_toy = {
	.name = "toy",
	.title = "a toy holder",
	.device = "toy",
	.fields = toy_fields,
	.play = play_toy,
	.verdict = toy_verdict,
	.checks = toy_checks,
	.table_header = toy_header,
	.table_line = toy_line,
};
EOF
	# The line, after the registry's last.
	line=$(grep -nE '^[[:space:]]X\([A-Z0-9_]+, [a-z0-9_]+, [a-z0-9_]+, "[^"]*"\)$' "$scratch/rows/row.h" | cut -d: -f1)
	[[ -n $line ]] || return 1
	sed -i "${line}s/\$/ \\\\\n\tX(TOY, toy, toy_demo, \"--toy-machine\")/" "$scratch/rows/row.h"
	local cc=(gcc -Wall -Wextra -Werror -fno-strict-aliasing -I"$scratch/liblab" -I"$scratch/rows" -I"$scratch/uapi")
	"${cc[@]}" -o "$scratch/registry" "$scratch/vm/registry.c" || return 1
	local f
	for f in "$scratch"/rows/*.c "$scratch"/liblab/*.c; do
		[[ $f != *_play.c ]] || continue
		"${cc[@]}" -c -o "$scratch/o/$(basename "$(dirname "$f")")-$(basename "$f" .c).o" "$f" || return 1
	done
	ar rcs "$scratch/librows.a" "$scratch"/o/rows-*.o
	ar rcs "$scratch/liblab.a" "$scratch"/o/liblab-*.o
	"${cc[@]}" -DLAB_DEMO='"toy_demo"' -o "$scratch/toy_demo" "$scratch/demo/demo.c" \
		"$scratch/librows.a" "$scratch/liblab.a" -ljson-c
}
toy_built=0
toy_family >"$scratch/build.log" 2>&1 && toy_built=1
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
	registry)
		desc="a family of one file and one line: vm/registry.c lists its demo, its machine and its test program for the build"
		if [[ $toy_built != 1 ]]; then
			why="the toy family did not build: $(tail -3 "$scratch/build.log" | tr '\n' '|')"
		else
			"$scratch/registry" demos | tail -1 | grep -qx toy_demo || why+="demos: not toy_demo last; "
			"$scratch/registry" machines | grep -qx 'toy toy_demo --toy-machine' || why+="machines: no toy line; "
			"$scratch/registry" mk | grep -qE '^REGISTRY_DEMOS :=.* toy_demo$' || why+="mk: no toy_demo; "
			"$scratch/registry" mk | grep -qE '^REGISTRY_MACHINE_TESTS :=.* toy_rows_test( |$)' ||
				why+="mk: no toy_rows_test; "
		fi
		;;
	demo)
		desc="a family of one file and one line: its demo, built from demo/demo.c, plays it and says how guest/demo shows it"
		if [[ $toy_built != 1 ]]; then
			why="the toy family did not build: $(tail -3 "$scratch/build.log" | tr '\n' '|')"
		else
			got=$("$scratch/toy_demo" --families 2>&1 || true)
			[[ $got == toy ]] || why+="--families says '$got', not toy; "
			got=$("$scratch/toy_demo" --runs 2>&1 || true)
			[[ $got == $'toy_demo: a toy holder\t' ]] || why+="--runs says '$got'; "
		fi
		;;
	esac
	if [[ -z $why ]]; then
		echo "ok $n $desc"
	else
		echo "# $why"
		echo "not ok $n $desc"
	fi
done
