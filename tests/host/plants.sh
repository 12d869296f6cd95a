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
# WRITE_WAIT without 0001's len-0 fix, on a kernel whose generic_fadvise() turns "to the end" into
# endbyte -1 (6.1; 6.12's already says LLONG_MAX there, so the fix changes nothing to plant against).
# A user's tree (KERNEL_SRC) is built out of tree and has no lab series: nothing to plant against.
tree=$(readlink -f "$build/linux")
if [[ ! -f $tree/mm/fadvise.c ]]; then
	echo "# the len-0 plant needs the lab's own tree with kernel-patches/ applied; $tree is a build directory"
elif grep -q 'endbyte = -1;' "$tree/mm/fadvise.c" && grep -q 'endbyte = LLONG_MAX;' "$tree/mm/fadvise.c"; then
	cases+=("fadvise_len0|WRITE_WAIT built without 0001's len-0 fix|WRITE_WAIT (len 0) returned with")
fi
# The kernel for that plant: the lab's tree with the fix's two lines taken out, so that only
# mm/fadvise.o and the link are redone; then vm/build-kernel.sh puts the tree back (it is no longer
# what .lab-built names, so the next build would do so anyway).
plant_kernel() {
	local ok=0
	rm -f "$tree/.lab-built"
	sed -i '/if (endbyte < 0)$/{N;/endbyte = LLONG_MAX;/d}' "$tree/mm/fadvise.c"
	if ! grep -q 'endbyte = LLONG_MAX;' "$tree/mm/fadvise.c" &&
		make -C "$tree" ARCH=x86_64 -j"$(nproc)" bzImage >"$plants/kernel.log" 2>&1; then
		cp "$tree/arch/x86/boot/bzImage" "$plants/bzImage-no-len0-fix"
		ok=1
	fi
	"$top/vm/build-kernel.sh" >>"$plants/kernel.log" 2>&1 ||
		{ cat "$plants/kernel.log" >&2; echo "plants.sh: putting the kernel tree back failed" >&2; exit 1; }
	[[ $ok == 1 ]] || { cat "$plants/kernel.log" >&2; echo "plants.sh: building the planted kernel failed" >&2; exit 1; }
}
# The runners are the same on both kernels; the debug kernel (slow to boot) adds only kmemleak's plant.
if [[ $kmemleak == 1 ]]; then
	cases=("leak|an object the kernel leaks during the suite (kmemleak)|not ok 2 kmemleak_after_suite")
else
	echo "# the kmemleak plant runs on the debug kernel (make test FLAVOUR=debug)"
fi
echo "TAP version 13"
echo "1..${#cases[@]}"
n=0
for c in "${cases[@]}"; do
	IFS='|' read -r plant what message <<<"$c"
	n=$((n + 1))
	out=$plants/$plant.out
	args=()
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
		plant_kernel
		export VM_KERNEL=$plants/bzImage-no-len0-fix
		args=(--disk "$build/disk.img,slow" -- /lab/tests/run
			fadvise:file.write_wait_len_0_returns_with_none_in_flight)
		;;
	query) args=(-- su -s /bin/sh -c '/lab/demo/dontfork_demo --only pin' nobody) ;;
	pagemap) args=(-- su -s /bin/sh -c '/lab/demo/dontfork_demo --only mlock' nobody) ;;
	leak)
		args=(--add "$plants/kmod/plant_leak.ko:/lab/plants/plant_leak.ko" --
			sh -c 'insmod /lab/plants/plant_leak.ko && exec /lab/tests/run madvise_test')
		;;
	*) args=(--add "$plants/${plant}_test:/lab/tests/${plant}_test" -- /lab/tests/run "$plant") ;;
	esac
	rc=0
	"$top/vm/run" --name "plant-$plant" "${args[@]}" >"$out" 2>&1 || rc=$?
	unset VM_KERNEL
	if [[ $rc != 0 ]] && grep -qF -- "$message" "$out"; then
		echo "ok $n $what turns the run red"
	else
		echo "# status $rc; expected a failure saying '$message'; see $out"
		echo "not ok $n $what turns the run red"
	fi
done
