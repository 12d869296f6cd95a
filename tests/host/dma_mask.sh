#!/usr/bin/env bash
# pindma's DMA mask (module parameter dma_bits, default 28 as QEMU's edu) against the device's
# own width. Six cases in five boots, side by side (VM_SLOTS), judged in this order:
#  1. the edu device and pindma at 28 bits, in a guest with only 256 MiB of its RAM below 4 GiB
#     (QEMU's max-ram-below-4g): RAM above 4 GiB turns swiotlb on, and its pool, allocated below
#     4 GiB, lands below 256 MiB where the device reaches. Pages beyond 28 bits (by pagemap) must
#     reach the device through it with every byte right, both ways (edu_mask_check).
#  2. the runner's default, as make test boots: both at 64 bits, any page reached directly (there
#     the pages may all lie below 256 MiB, so any page is judged: BITS 12).
#  3. both at 28 bits in the plain 2 GiB guest, where x86 leaves swiotlb off: nothing can bounce a
#     page beyond 28 bits, so pindma must refuse those transfers (ENXIO) before the DMA API warns
#     of an overflow, and still move pages within 28 bits right; the console must stay clean.
#  4. the edu device at 28 bits but pindma asked for 64: the device would clamp addresses into
#     other RAM, so pindma must refuse to drive it, saying why, at load. The boot of 3: the guest
#     loads pindma at 64 bits first, then again at 28 (a boot less: 3 CPU-seconds of make test).
#  5. both at 28 bits in a 5 GiB guest: swiotlb is on, but its pool, below 4 GiB, lies beyond 28
#     bits, where swiotlb_map() would warn of an overflow: pindma must refuse as in 3.
#  6. as 4, with swiotlb=force: every streaming mapping bounces, so the width probe's own page
#     (taken coherent below 16 MiB) must not be one: pindma must refuse at load as in 4, with no
#     WARNING from a probe mapping beyond reach.
# Prints TAP. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
# Nothing here uses RDMA: the boots load only the lab's modules (vm/boot).
export VM_KMODS=lab
run=("$top/vm/boot" --timeout "${VM_TIMEOUT:-300}")
# shellcheck disable=SC2016 # expanded in the guest
guest='echo "dma_bits $(cat /sys/module/pindma/parameters/dma_bits)"
dmesg | grep "software IO TLB: mapped" || echo "no swiotlb"
dmesg | grep "pindma 0000"
/lab/bin/edu_mask_check'
summary_re='edu_mask_check: beyond [0-9]+ bits: .*'

echo "TAP version 13"
echo "1..6"

# The five boots side by side (each its own guest, no disk; vm/boot's VM_SLOTS bounds how many run
# at once), then judged in order: boot NAME VAR=VALUE... -- GUEST_COMMAND starts one; booted NAME
# waits for it and sets rc to its status.
declare -A pid=()
boot() {
	local name=$1
	shift
	local envs=()
	while [[ $1 != -- ]]; do
		envs+=("$1")
		shift
	done
	shift
	# What the guest command prints (and the whole kernel log, at its end) on the data channel,
	# which the console's kernel messages never interleave; vm/boot's reasons in NAME.fails.
	# shellcheck disable=SC2016 # $LAB_OUT is the guest shell's
	env "${envs[@]}" "${run[@]}" --name "$name" --out "$build/logs/$name.data" \
		--fails "$build/logs/$name.fails" -- sh -c "{ $1
} >\"\$LAB_OUT\" 2>&1" >/dev/null 2>&1 &
	pid[$name]=$!
}
booted() {
	rc=0
	wait "${pid[$1]}" || rc=$?
}

# fails NAME: vm/boot's reasons for the run named NAME, as TAP comments.
fails() {
	tr '\0' '\n' <"$build/logs/$1.fails" 2>/dev/null | head -5 | sed 's/^/# /' || true
}

# check N NAME: judge the data of the run named NAME (its status in $rc) for dma_bits N; prints
# what the guest printed, and the reasons of a failure, as TAP comments.
check() {
	local bits=$1 log=$build/logs/$2.data end ok=1 summary
	summary=$(grep -aoE "$summary_re" "$log" | tail -1 || true)
	grep -aq "^dma_bits $bits" "$log" || { echo "# pindma did not load with dma_bits=$bits"; ok=0; }
	if [[ $rc != 0 ]]; then
		echo "# the guest failed with status $rc"
		fails "$2"
		ok=0
	fi
	[[ -n $summary ]] || { echo "# edu_mask_check judged nothing"; ok=0; }
	# The driver asked the device whether it drives the width it was given.
	grep -aqE 'pindma .*the device drives address bit [0-9]+' "$log" || { echo "# no width probe"; ok=0; }
	if [[ $2 == dma-mask-28 ]]; then
		# The pool's last byte must be one a 28-bit device reaches, or nothing bounced there.
		end=$(grep -aoE 'software IO TLB: mapped \[mem 0x[0-9a-f]+-0x[0-9a-f]+\]' "$log" |
			sed -E 's/.*-0x([0-9a-f]+)\]/\1/' | head -1)
		if [[ -z $end ]] || (($((16#$end)) >= 1 << 28)); then
			echo "# swiotlb's pool is not below 256 MiB (ends at 0x${end:-?})"
			ok=0
		fi
		grep -aq 'swiotlb bounces within reach' "$log" || { echo "# pindma sees no bounce"; ok=0; }
	fi
	grep -a 'edu_mask_check\|^page \|no swiotlb\|pindma 0000\|splat\|WARNING' "$log" | sed 's/^/# /' || true
	[[ $ok == 1 ]]
}

tap() {
	if "$@"; then echo "ok $n $what"; else echo "not ok $n $what"; fi
}

# shellcheck disable=SC2016 # expanded in the guest
too_wide_cmd='
	echo "dma_bits $(cat /sys/module/pindma/parameters/dma_bits)"
	if ls /sys/bus/pci/drivers/pindma | grep -q "^0000:"; then
		echo "edu bound"
		/lab/bin/edu_mask_check 28 --read-only
	else
		echo "edu not bound"
	fi'
boot dma-mask-28 VM_EDU_DMA_BITS=28 VM_QEMU_ARGS="-machine pc,max-ram-below-4g=256M" -- "$guest 28"
boot dma-mask-64 -- "$guest 12"
# 4, then 3: pindma at load asked for 64 bits, then loaded again at 28.
boot dma-mask-28-no-swiotlb VM_EDU_DMA_BITS=28 VM_APPEND="pindma.dma_bits=64" -- "$too_wide_cmd
rmmod pindma && insmod /lab/modules/pindma.ko dma_bits=28 || echo 'pindma not loaded again'
$guest 28 --no-bounce"
boot dma-mask-28-pool-beyond VM_MEM=5120 VM_EDU_DMA_BITS=28 -- "$guest 28 --no-bounce"
boot dma-mask-too-wide-forced VM_EDU_DMA_BITS=28 VM_APPEND="pindma.dma_bits=64 swiotlb=force" -- "$too_wide_cmd"

n=1 what="a 28-bit edu reaches pages beyond 28 bits through swiotlb, every byte right"
booted dma-mask-28
tap check 28 dma-mask-28

n=2 what="the runner's 64-bit edu and pindma reach the same pages directly"
booted dma-mask-64
tap check 64 dma-mask-64

# Nothing to bounce through, for want of swiotlb (3) or of a pool within reach (5): pages beyond
# 28 bits must be refused and pages within moved right (edu_mask_check --no-bounce), and vm/boot
# fails on the DMA API's WARNING. Where the pages lie is the allocator's: in 3 pages within 28
# bits are found too, a control that the device moves bytes; in 5 they come from above 4 GiB.
no_bounce() {
	local name=$1 log=$build/logs/$1.data ok=1 end
	check 28 "$name" || ok=0
	if [[ $name == dma-mask-28-no-swiotlb ]]; then
		grep -aq '^no swiotlb' "$log" || { echo "# swiotlb is on: nothing to judge"; ok=0; }
		grep -aqE 'within: [1-9][0-9]* right' "$log" ||
			{ echo "# no transfer within 28 bits moved bytes: no control"; ok=0; }
	else
		end=$(grep -aoE 'software IO TLB: mapped \[mem 0x[0-9a-f]+-0x[0-9a-f]+\]' "$log" |
			sed -E 's/.*-0x([0-9a-f]+)\]/\1/' | head -1)
		if [[ -z $end ]] || (($((16#$end)) < 1 << 28)); then
			echo "# swiotlb's pool is not beyond 28 bits (ends at 0x${end:-?}): nothing to judge"
			ok=0
		fi
	fi
	grep -aq 'swiotlb cannot bounce for it' "$log" || { echo "# pindma sees a bounce"; ok=0; }
	grep -aqE 'beyond 28 bits: 0 right, [1-9][0-9]* refused' "$log" ||
		{ echo "# no transfer beyond 28 bits was refused"; ok=0; }
	[[ $ok == 1 ]]
}
n=3 what="without swiotlb, a 28-bit edu's transfers beyond 28 bits fail with ENXIO, no WARNING"
booted dma-mask-28-no-swiotlb
tap no_bounce dma-mask-28-no-swiotlb

# pindma wider than the device: the probe at load must refuse it. Should it not, the guest shows
# the harm with reads only (a clamped write would land in a stranger's page).
too_wide() {
	local log=$build/logs/$1.data ok=1
	if [[ $rc != 0 ]]; then
		echo "# the guest failed with status $rc"
		fails "$1"
		ok=0
	fi
	grep -aq '^dma_bits 64' "$log" || { echo "# pindma did not load with dma_bits=64"; ok=0; }
	grep -aq 'pindma .*dma_bits=64: the device drops address bit' "$log" ||
		{ echo "# no error saying why the device was refused"; ok=0; }
	grep -aq '^edu not bound' "$log" || { echo "# pindma drives the device"; ok=0; }
	grep -a 'pindma\|edu_mask_check\|^page \|edu \(not \)\?bound' "$log" | sed 's/^/# /' || true
	[[ $ok == 1 ]]
}
n=4 what="pindma refuses at load a dma_bits wider than the edu device drives"
tap too_wide dma-mask-28-no-swiotlb

n=5 what="with swiotlb's pool beyond 28 bits, a 28-bit edu's transfers there fail with ENXIO, no WARNING"
booted dma-mask-28-pool-beyond
tap no_bounce dma-mask-28-pool-beyond

n=6 what="with swiotlb=force, pindma still refuses at load a dma_bits wider than the edu drives"
booted dma-mask-too-wide-forced
tap too_wide dma-mask-too-wide-forced
