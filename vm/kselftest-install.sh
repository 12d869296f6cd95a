#!/usr/bin/env bash
# make kselftest-install DESTDIR=DIR: the lab's in-guest programs as a kselftest collection, laid out
# as the kernel tree's kselftest_install.sh (make -C tools/testing/selftests install) lays one out:
#   DIR/run_kselftest.sh, DIR/kselftest/     the tree's own runner (copied from the tree, as built)
#   DIR/kselftest-list.txt                   the programs, COLLECTION:NAME: lab/tests, and
#                                            lab/tests/NAME for one with a timeout of its own
#   DIR/lab/tests/                           the programs, and settings (the runner's timeout);
#                                            lab/tests/NAME/ (vm/kselftest-list.sh)
#   DIR/lab/bin, demo, guest, modules/, ...  what they need: helpers, demos, scripts, pindma.ko,
#                                            kernel.env, and the pages rows_test checks
# It is the guest's own install (vm/guest.mk), copied: $BUILD/guest/kselftest and $BUILD/guest/lab,
# without make bench's programs. DIR/run_kselftest.sh then runs it on a machine booted with the
# kernel it was built for; a program that needs what the collection cannot bring (a disk, the edu
# device, two CPUs) skips, saying so; pindma.ko is loaded by the first program that needs it.
set -euo pipefail
# shellcheck source=vm/lib.sh
. "$(dirname "$0")/lib.sh"
dest=${1:-}
[[ -n $dest ]] || die "make kselftest-install needs DESTDIR=DIR"
stage=$LAB_BUILD/guest
[[ -f $stage/kselftest/kselftest-list.txt && -d $stage/lab/tests ]] ||
	die "no kselftest install in $stage: run make guest (or make kselftest-install, which does)"
mkdir -p "$dest"
rm -rf "${dest:?}/kselftest" "${dest:?}/lab"
cp -a "$stage/kselftest/." "$dest/"
mkdir "$dest/lab"
tar -C "$stage/lab" --exclude=./bench -cf - . | tar -C "$dest/lab" -xf -
echo "kselftest-install: $(wc -l <"$dest/kselftest-list.txt") programs in $(cut -d: -f1 "$dest/kselftest-list.txt" | uniq | paste -sd' ') in $dest; run $dest/run_kselftest.sh"
