#!/usr/bin/env bash
# repro/repro.c builds outside the lab, as its header tells a user to build it: plain
# `cc repro.c -libverbs -Wall -Wextra -Werror` in a folder holding that file alone, no lab header,
# library or flag, against rdma-core as the distribution installs it (vm/deps.sh: libibverbs-dev),
# and the program it makes loads libibverbs dynamically, its providers with it. The folder's
# isolation is seen holding: the same file asking for a lab header does not build there. No boot:
# tests/repro_test.c plays the program in the guest. Prints TAP.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

build() { # folder: cc there, as the header says; the compiler's output in folder/cc.out
	(cd "$1" && cc repro.c -libverbs -Wall -Wextra -Werror -o repro) >"$1/cc.out" 2>&1
}

echo "TAP version 13"
echo "1..3"
mkdir "$dir/alone" "$dir/plant"
cp "$top/repro/repro.c" "$dir/alone/"
if build "$dir/alone"; then
	echo "ok 1 cc repro.c -libverbs -Wall -Wextra -Werror, in a folder holding nothing else"
else
	sed 's/^/# /' "$dir/alone/cc.out"
	echo "not ok 1 cc repro.c -libverbs -Wall -Wextra -Werror, in a folder holding nothing else"
fi
if [[ -x $dir/alone/repro ]] && readelf -d "$dir/alone/repro" | grep -q 'NEEDED.*\[libibverbs\.so'; then
	echo "ok 2 the program loads libibverbs dynamically"
else
	echo "# no NEEDED libibverbs in $(readelf -d "$dir/alone/repro" 2>&1 | grep -c NEEDED) NEEDED entries"
	echo "not ok 2 the program loads libibverbs dynamically"
fi
{ echo '#include "lab.h"'; cat "$top/repro/repro.c"; } >"$dir/plant/repro.c"
if build "$dir/plant"; then
	echo "# a copy including lab.h built there: the folder is not the lab's outside"
	echo "not ok 3 a copy that needs a lab header does not build there"
else
	echo "ok 3 a copy that needs a lab header does not build there"
fi
