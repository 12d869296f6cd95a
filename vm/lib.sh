# Shared settings for the vm/ scripts; sourced, not run.
# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this file

LAB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The kernel trees are large and regenerable: they live in a cache folder outside the repository.
LAB_CACHE=${DONTFORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dontfork-lab}
# The kernel registry: a kernel is named by its folder kernel-patches/<version>/ (its series, its
# patches); deps, CI, the docs' kernels table and the guest's expectation table follow from it
# (kernel-patches/README.md: adding a kernel). Oldest first.
lab_kernels() {
	local d
	for d in "$LAB_TOP"/kernel-patches/*/; do
		d=${d%/}
		echo "${d##*/}"
	done | sort -V
}
# The default kernel is the registry's oldest; cow.c comes from its newest's source (vm/guest.mk).
LAB_KERNELS=$(lab_kernels)
LAB_DEFAULT_KERNEL=${LAB_KERNELS%%$'\n'*}
LAB_NEWEST_KERNEL=${LAB_KERNELS##*$'\n'}
# The build folder of registry kernel $1 (the default kernel's is build/ itself).
lab_build_of() {
	if [[ $1 == "$LAB_DEFAULT_KERNEL" ]]; then echo "$LAB_TOP/build"; else echo "$LAB_TOP/build/$1"; fi
}

# The kernel: Debian's linux-source-$KERNEL (a kernel of the registry, the default its oldest) with
# kernel-patches/$KERNEL/. Each kernel and flavour (normal, debug, gdb) gets its own tree, and its own
# build folder: build/ for the default kernel, build/<version>/ for another, with debug/ or gdb/
# below either.
LAB_KERNEL=${KERNEL:-$LAB_DEFAULT_KERNEL}
LAB_FLAVOUR=${FLAVOUR:-normal}
LAB_BUILD=$LAB_TOP/build
# Or a user's own tree (KERNEL_SRC=DIR, any tree >= 6.1): built out of tree (O=) into the cache, never
# written to, and not patched; its build folder is build/src-NAME-HASH (the same name as the Makefile's).
LAB_KSRC=""
if [[ -n ${KERNEL_SRC:-} ]]; then
	LAB_KSRC=$(cd "$KERNEL_SRC" 2>/dev/null && pwd -P) ||
		{ echo "${0##*/}: KERNEL_SRC=$KERNEL_SRC: no such directory" >&2; exit 1; }
	LAB_KERNEL=src
	LAB_BUILD+=/src-${LAB_KSRC##*/}-$(printf '%s' "$LAB_KSRC" | sha1sum | cut -c1-8)
else
	[[ $LAB_KERNEL == "$LAB_DEFAULT_KERNEL" ]] || LAB_BUILD+=/$LAB_KERNEL
fi
[[ $LAB_FLAVOUR == normal ]] || LAB_BUILD+=/$LAB_FLAVOUR
LAB_BUILD=${BUILD:-$LAB_BUILD}
# Kbuild takes no blank in a path, nor does the Makefile's reading of these.
for d in "$LAB_BUILD" "$LAB_CACHE"; do
	[[ $d != *[[:space:]]* ]] || { echo "${0##*/}: '$d': a folder of the lab's has a blank in its path" >&2; exit 1; }
done
LAB_KTREE=$LAB_BUILD/linux
LAB_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-$LAB_KERNEL.tar.xz}
# The lab's Python: Debian's, whose packages vm/deps.sh installs (python3-jsonschema), named by its
# path, not found on PATH: a version manager's shim first on PATH (pyenv's) cost 80 ms of CPU at
# each start, against 16 ms, and make test starts Python about a hundred times (two per boot).
LAB_PYTHON=${LAB_PYTHON:-/usr/bin/python3}
# The O_DIRECT rows' disk: read-only, found by its serial. The rows hold their reads in flight with
# a gate of their own over it (liblab/gate.c), not with a throttle: no host load outlasts a gate.
LAB_ODIRECT_DISK=serial=odirect,readonly=on

# The guest kernel's command line, for vm/boot and make lava's jobs: $1 the edu device's DMA address
# width, passed to pindma as dma_bits.
lab_kernel_append() {
	# acpi=noirq: PCI interrupts are routed by the PIRQ table, not by evaluating the ACPI _PRT method
	# at every device's enable. On the debug kernel that AML (each allocation recording a KASAN and a
	# kmemleak stack) kept the boot's initcalls in one RCU grace period for a minute (an RCU stall),
	# and under fault injection ACPICA's _PRT error path read freed memory (KASAN). ACPI stays on for
	# the HPET clock (vm/kernel.config).
	local append="console=ttyS0 panic=-1 loglevel=5 acpi=noirq pindma.dma_bits=$1"
	# tsc=unstable: the clock is the HPET's, as on two vCPUs, where the kernel takes the TSCs of this
	# CPU model (not Intel, no constant TSC) as unsynchronized. On one vCPU it kept the TSC, calibrated
	# against the PIT at boot; beside busy guests that calibration came out 8 times too slow, the
	# guest's time ran 8 times fast, and an RCU stall was reported at /init (seen: "PIT calibration
	# deviates from HPET: 331773 2598391"). udelay() keeps that calibration; nothing of the lab's times
	# itself by it (pindma polls against ktime).
	append+=" tsc=unstable"
	# No BSD (legacy) ptys: nothing in the guest opens one, and creating 256 pairs costs every boot.
	append+=" pty.legacy_count=0"
	# no_timer_check: at boot, check_timer() waits up to 40e9/HZ TSC cycles for more than 4 timer ticks
	# (under TCG the TSC runs at the host's rate: about 60 ms here, 250 Hz at 2.6 GHz), tries its other
	# routings, and panics when none gets them. Under TCG a tick needs QEMU's main loop, which a loaded
	# host can hold off that long: CI's user-tree guest panicked so ("IO-APIC + timer doesn't work!",
	# at 0.048 s by the guest's clock, which counts those very ticks then). QEMU's timer is not broken,
	# and none of the lab's checks rests on that test. Its first routing is kept; were that one dead
	# too, the guest would hang until vm/boot's timeout instead of panicking.
	append+=" no_timer_check"
	# The debug kernel (KASAN, lockdep) runs several times slower under TCG: its stack unwinding alone
	# kept a vCPU 22 s in one probe and the boot's initcalls 55 s, seen as soft lockups and RCU stalls
	# with the defaults (20 s, 21 s) when the host was busy. Three times those there; a real lockup
	# still reports.
	[[ $LAB_FLAVOUR == normal ]] || append+=" watchdog_thresh=30 rcupdate.rcu_cpu_stall_timeout=60"
	echo "$append"
}

die() {
	echo "${0##*/}: $*" >&2
	exit 1
}
