#!/usr/bin/env bash
# Every guard seen failing: plant each fault the lab's runners must catch and assert that the run
# turns red with the right message. The plants are small static programs (tests/plants/*.c) and
# files added to the guest for one boot with vm/run --add; nothing of the lab itself is changed.
# Prints TAP. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
plants=$build/plants
mkdir -p "$plants"
for src in "$top"/tests/plants/*.c; do
	bin=$plants/$(basename "$src" .c)_test
	[[ $bin -nt $src ]] || gcc -O2 -Wall -Wextra -Werror -static -o "$bin" "$src"
done
# The kernel plants (a WARN, a leak) are modules built against the lab's tree, in a copy under $build.
rm -rf "$plants/kmod"
cp -r "$top/tests/plants/kmod" "$plants/kmod"
make -s -C "$build/linux" M="$plants/kmod" modules >"$plants/kmod.log" 2>&1 ||
	{ cat "$plants/kmod.log" >&2; echo "plants.sh: building the plant modules failed" >&2; exit 1; }
kmemleak=0
grep -qx CONFIG_DEBUG_KMEMLEAK=y "$build/linux/.config" && kmemleak=1

cases=(
	"dies_midway|a program that dies by a signal after part of its plan|dies_midway_test: planned 2 cases, reported 1"
	"dies_after_all|a program that dies by a signal after its whole plan|dies_after_all_test: killed by signal 11"
	"extra_ok|a program that reports more cases than its plan|extra_ok_test: planned 1 cases, reported 2"
	"silent|a program that reports no case|silent_test: reported no test case"
	"missing|a program the build lists but the guest lacks|ghost_test is missing"
	"hang|a guest that hangs|timed out after 8s"
	"warn|a kernel WARN in the guest|kernel splat in the guest console"
	"query|a demo row whose PINDMA_IOC_QUERY fails (run as nobody)|could not run: PINDMA_IOC_QUERY"
	"pagemap|a demo row whose pagemap read fails (run as nobody)|could not run: reading the parent's PFN"
)
# Kernel plants: the lab's tree with one source file edited, so that only its object and the link
# are redone. 0001's commands are sync_file_range() calls in mm/fadvise.c; a user's tree
# (KERNEL_SRC) is built out of tree and has no lab series: nothing to plant against.
tree=$(readlink -f "$build/linux")
if [[ ! -f $tree/mm/fadvise.c ]]; then
	echo "# the kernel plants need the lab's own tree with kernel-patches/ applied; $tree is a build directory"
elif grep -q 'SYNC_FILE_RANGE_WAIT_AFTER' "$tree/mm/fadvise.c"; then
	# 0001 once passed len 0 on as end -1, which 6.1's file_fdatawait_range() takes as an empty
	# range; 6.12's waits to the end for it (no "end_byte < start_byte" return), so there the old
	# bug cannot be planted.
	if sed -n '/^static void __filemap_fdatawait_range/,/^}/p' "$tree/mm/filemap.c" |
		grep -q 'if (end_byte < start_byte)'; then
		cases+=("fadvise_len0|WRITE_WAIT taking len 0 as an empty range, as 0001 once did|WRITE_WAIT (len 0) returned with")
	fi
	cases+=("crash_write_wait|WRITE_WAIT returning 0 at once, in the crash test on the slow disk|not ok 2 every page written with wait-write-wait survived the power cut")
fi
# plant_kernel NAME FILE SED MARKER [GONE]: the tree with sed script SED applied to FILE, which must
# then hold MARKER (and no longer GONE), built as $plants/bzImage-NAME. The file is put back at once;
# the tree is rebuilt as the lab's on exit (vm/build-kernel.sh: .lab-built no longer names it, so the
# next build would do so anyway), once for all the plants.
planted=0
plant_kernel() {
	local name=$1 file=$tree/$2 ok=0
	planted=1
	rm -f "$tree/.lab-built"
	cp -p "$file" "$plants/$name.orig"
	sed -i "$3" "$file"
	if grep -qF -- "$4" "$file" && { [[ -z ${5:-} ]] || ! grep -qF -- "$5" "$file"; } &&
		make -C "$tree" ARCH=x86_64 -j"$(nproc)" bzImage >"$plants/kernel-$name.log" 2>&1; then
		cp "$tree/arch/x86/boot/bzImage" "$plants/bzImage-$name"
		ok=1
	fi
	cp "$plants/$name.orig" "$file"
	touch "$file"
	[[ $ok == 1 ]] || { cat "$plants/kernel-$name.log" >&2; echo "plants.sh: building the planted kernel $name failed" >&2; exit 1; }
}
restore_tree() {
	[[ $planted == 0 ]] || "$top/vm/build-kernel.sh" >>"$plants/kernel.log" 2>&1 ||
		{ cat "$plants/kernel.log" >&2; echo "plants.sh: putting the kernel tree back failed" >&2; exit 1; }
}
trap restore_tree EXIT
# The runners are the same on both kernels; the debug kernel (slow to boot) adds only kmemleak's plant.
if [[ $kmemleak == 1 ]]; then
	cases=("leak|an object the kernel leaks during the suite (kmemleak)|not ok 2 kmemleak_after_suite")
else
	echo "# the kmemleak plant runs on the debug kernel (make test FLAVOUR=debug)"
fi
# GUP-fast's DEBUG_VM check against a fork() that shares the page it has just pinned (0002 with the
# switch on): only a kernel with DEBUG_VM makes the check, so only the debug flavour has the plant.
if ! grep -qx CONFIG_DEBUG_VM=y "$build/linux/.config"; then
	echo "# the GUP-fast plant runs on the debug kernel (make test FLAVOUR=debug)"
elif [[ -f $tree/mm/gup.c ]] && grep -q 'if (pinned_pages_may_be_shared())' "$tree/mm/gup.c"; then
	cases+=("gup_fast_race|GUP-fast's window against fork() widened, without 0002's fix for it|kernel BUG at mm/gup.c")
fi
echo "TAP version 13"
echo "1..${#cases[@]}"
n=0
for c in "${cases[@]}"; do
	IFS='|' read -r plant what message <<<"$c"
	n=$((n + 1))
	out=$plants/$plant.out
	args=()
	run=("$top/vm/run" --name "plant-$plant")
	case $plant in
	missing)
		{ cat "$build/guest/lab/tests/manifest"; echo ghost_test; } >"$plants/manifest"
		args=(--add "$plants/manifest:/lab/tests/manifest" -- /lab/tests/run)
		# A full run, kept short: every program is shadowed by a non-executable file, which the
		# runner must report as missing too.
		while read -r p; do
			args=(--add "$plants/manifest:/lab/tests/$p" "${args[@]}")
		done <"$build/guest/lab/tests/manifest"
		;;
	hang) args=(--timeout 8 -- sleep 100) ;;
	warn) args=(--add "$plants/kmod/plant_warn.ko:/lab/plants/plant_warn.ko" -- insmod /lab/plants/plant_warn.ko) ;;
	fadvise_len0)
		plant_kernel "$plant" mm/fadvise.c '/advice == LINUX_FADV_WRITE_WAIT)$/{n;N;s/.*/\t\treturn file_fdatawait_range(file, offset, offset + len - 1); \/* plant *\//}' \
			'offset + len - 1); /* plant */'
		export VM_KERNEL=$plants/bzImage-$plant
		args=(--disk "$build/disk.img,slow" -- /lab/tests/run
			fadvise:file.write_wait_len_0_returns_with_none_in_flight)
		;;
	crash_write_wait)
		plant_kernel "$plant" mm/fadvise.c '/advice == LINUX_FADV_WRITE_WAIT)$/{n;N;s/.*/\t\treturn 0; \/* plant *\//}' \
			'return 0; /* plant */'
		export VM_KERNEL=$plants/bzImage-$plant
		run=(bash "$top/tests/host/crash_durability.sh")
		;;
	gup_fast_race)
		# The fix's two lines out of sanity_check_pinned_pages(), and a 20 ms sleep between GUP-fast's
		# write_protect_seq check and the check itself, where a fork() can now come in.
		plant_kernel "$plant" mm/gup.c '/if (pinned_pages_may_be_shared())$/{N;d};s/^\(\t*\)sanity_check_pinned_pages(pages, nr_pinned);/\1msleep(20); \/* plant *\/\n&/;s/^#include <linux\/sysctl.h>/&\n#include <linux\/delay.h>/' \
			'msleep(20); /* plant */' 'if (pinned_pages_may_be_shared())'
		export VM_KERNEL=$plants/bzImage-$plant
		args=(-- /lab/tests/run fork_pin_race)
		;;
	query) args=(-- su -s /bin/sh -c '/lab/demo/dontfork_demo --only gup' nobody) ;;
	pagemap) args=(-- su -s /bin/sh -c '/lab/demo/dontfork_demo --only mlock' nobody) ;;
	leak)
		args=(--add "$plants/kmod/plant_leak.ko:/lab/plants/plant_leak.ko" --
			sh -c 'insmod /lab/plants/plant_leak.ko && exec /lab/tests/run madvise_test')
		;;
	*) args=(--add "$plants/${plant}_test:/lab/tests/${plant}_test" -- /lab/tests/run "$plant") ;;
	esac
	rc=0
	"${run[@]}" "${args[@]}" >"$out" 2>&1 || rc=$?
	unset VM_KERNEL
	if [[ $rc != 0 ]] && grep -qF -- "$message" "$out"; then
		echo "ok $n $what turns the run red"
	else
		echo "# status $rc; expected a failure saying '$message'; see $out"
		echo "not ok $n $what turns the run red"
	fi
done
