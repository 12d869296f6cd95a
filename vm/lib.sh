# Shared settings for the vm/ scripts; sourced, not run.
# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this file

LAB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The kernel trees are large and regenerable: they live in a cache folder outside the repository.
LAB_CACHE=${DONTFORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dontfork-lab}
# The kernel: Debian's linux-source-$KERNEL (6.1, the default, or 6.12) with kernel-patches/$KERNEL/.
# Each kernel and flavour (normal, debug, gdb) gets its own tree, and its own build folder: build/ for
# 6.1, build/6.12/ for 6.12, with debug/ or gdb/ below either.
LAB_KERNEL=${KERNEL:-6.1}
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
	[[ $LAB_KERNEL == 6.1 ]] || LAB_BUILD+=/$LAB_KERNEL
fi
[[ $LAB_FLAVOUR == normal ]] || LAB_BUILD+=/$LAB_FLAVOUR
LAB_BUILD=${BUILD:-$LAB_BUILD}
LAB_KTREE=$LAB_BUILD/linux
LAB_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-$LAB_KERNEL.tar.xz}
# The lab's Python: Debian's, whose packages vm/deps.sh installs (python3-jsonschema), named by its
# path, not found on PATH: a version manager's shim first on PATH (pyenv's) cost 80 ms of CPU at
# each start, against 16 ms, and make test starts Python about a hundred times (two per boot).
LAB_PYTHON=${LAB_PYTHON:-/usr/bin/python3}
# The lab's disk for make test and make demo writes at 8 MiB/s (QEMU's throttling), so that I/O stays
# in flight long enough to be seen: an emulated disk otherwise completes a write as it is submitted.
# The debug kernel (KASAN under TCG) takes about as long to submit 8 MiB as the disk to write it, and
# a test then found nothing left in flight to wait for: slower there.
LAB_SLOW_DISK=throttling.bps-write=$((8 << 20))
# 2 MiB/s was not enough for the fadvise rows when the host was busy: 1 MiB/s there.
[[ $LAB_FLAVOUR == normal ]] || LAB_SLOW_DISK=throttling.bps-write=$((1 << 20))
# The fadvise tests' own disk (tests/run-all's io guest, and the plant of 0001's len-0 bug) writes at
# 4 MiB/s: 8 MiB then stays in flight for 2 s, not 1 (at 2 MiB/s fadvise_test took 83 s, not 22).
# Beside the plants' and the other guests' boots, a guest once stalled until the last pages of 8 MiB
# at 8 MiB/s were written, between a call and the page states read after it: what the call left in
# flight was no longer seen (the len-0 plant stayed green). The debug kernel's 1 MiB/s is slower.
LAB_SLOWER_DISK=throttling.bps-write=$((4 << 20))
[[ $LAB_FLAVOUR == normal ]] || LAB_SLOWER_DISK=$LAB_SLOW_DISK
# The O_DIRECT rows' disk: read-only, found by its serial, reads at 1 MiB/s so that a read of 1 MiB
# stays in flight for about a second.
LAB_ODIRECT_DISK=serial=odirect,readonly=on,throttling.bps-read=$((1 << 20))
# The same image again for the 2009 report's rows (eight page-sized reads sharing pages): four reads a
# second, so that each read stays in flight while the process forks and the next reader takes its pages.
LAB_ODIRECT_IOPS_DISK=serial=odirect-iops,readonly=on,throttling.iops-read=4
# The debug kernel forks several times slower: at four reads a second the readers were all done before
# a fork came in a read's window (odirect-multi rows "could not run", seen with the forking thread
# before 2b2d239): one there.
[[ $LAB_FLAVOUR == normal ]] || LAB_ODIRECT_IOPS_DISK=serial=odirect-iops,readonly=on,throttling.iops-read=1

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
# The build folder of registry kernel $1 (the default kernel's is build/ itself).
lab_build_of() {
	if [[ $1 == 6.1 ]]; then echo "$LAB_TOP/build"; else echo "$LAB_TOP/build/$1"; fi
}

# The guest kernel's command line, for vm/run and make lava's jobs: $1 the edu device's DMA address
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
	# No BSD (legacy) ptys: nothing in the guest opens one, and creating 256 pairs took 80 ms of each
	# boot.
	append+=" pty.legacy_count=0"
	# no_timer_check: at boot, check_timer() waits up to 40e9/HZ TSC cycles for more than 4 timer ticks
	# (under TCG the TSC runs at the host's rate: about 60 ms here, 250 Hz at 2.6 GHz), tries its other
	# routings, and panics when none gets them. Under TCG a tick needs QEMU's main loop, which a loaded
	# host can hold off that long: CI's user-tree guest panicked so ("IO-APIC + timer doesn't work!",
	# at 0.048 s by the guest's clock, which counts those very ticks then). QEMU's timer is not broken,
	# and none of the lab's checks rests on that test. Its first routing is kept; were that one dead
	# too, the guest would hang until vm/run's timeout instead of panicking.
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
