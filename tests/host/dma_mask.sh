#!/usr/bin/env bash
# pindma's DMA mask (module parameter dma_bits, default 28 as QEMU's edu) against the device's
# own width. Boots the guest twice:
#  1. the edu device and pindma at 28 bits, in a guest with only 256 MiB of its RAM below 4 GiB
#     (QEMU's max-ram-below-4g): RAM above 4 GiB turns swiotlb on, and its pool, allocated below
#     4 GiB, lands below 256 MiB where the device reaches. Pages beyond 28 bits (by pagemap) must
#     reach the device through it with every byte right, both ways (edu_mask_check).
#  2. the runner's default, as make test boots: both at 64 bits, any page reached directly (there
#     the buffer's pages may all lie below 256 MiB, so any page is judged: BITS 12).
# Prints TAP. Needs the built lab (make guest).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$top/build}
run=("$top/vm/run" --timeout "${VM_TIMEOUT:-300}")
# shellcheck disable=SC2016 # expanded in the guest
guest='echo "dma_bits $(cat /sys/module/pindma/parameters/dma_bits)"
dmesg | grep "software IO TLB: mapped" || echo "no swiotlb"
/lab/bin/edu_mask_check'

echo "TAP version 13"
echo "1..2"

# check N NAME: judge the log of the run named NAME (its status in $rc) for dma_bits N.
check() {
	local bits=$1 log=$build/logs/$2.log end ok=1 summary
	summary=$(grep -aoE 'edu_mask_check: [0-9]+ of [0-9]+ transfers right' "$log" | tail -1 || true)
	grep -aq "^dma_bits $bits" "$log" || { echo "# pindma did not load with dma_bits=$bits"; ok=0; }
	[[ $rc == 0 ]] || { echo "# the guest failed with status $rc"; ok=0; }
	[[ -n $summary ]] || { echo "# edu_mask_check judged nothing"; ok=0; }
	if [[ $bits == 28 ]]; then
		# The pool's last byte must be one a 28-bit device reaches, or nothing bounced there.
		end=$(grep -aoE 'software IO TLB: mapped \[mem 0x[0-9a-f]+-0x[0-9a-f]+\]' "$log" |
			sed -E 's/.*-0x([0-9a-f]+)\]/\1/' | head -1)
		if [[ -z $end ]] || (($((16#$end)) >= 1 << 28)); then
			echo "# swiotlb's pool is not below 256 MiB (ends at 0x${end:-?})"
			ok=0
		fi
	fi
	grep -a 'edu_mask_check\|^page ' "$log" | sed 's/^/# /' || true
	[[ $ok == 1 ]]
}

rc=0
VM_EDU_DMA_BITS=28 VM_QEMU_ARGS="-machine pc,max-ram-below-4g=256M" \
	"${run[@]}" --name dma-mask-28 -- sh -c "$guest 28" >/dev/null 2>&1 || rc=$?
if check 28 dma-mask-28; then
	echo "ok 1 a 28-bit edu reaches pages beyond 28 bits through swiotlb, every byte right"
else
	echo "not ok 1 a 28-bit edu reaches pages beyond 28 bits through swiotlb, every byte right"
fi

rc=0
"${run[@]}" --name dma-mask-64 -- sh -c "$guest 12" >/dev/null 2>&1 || rc=$?
if check 64 dma-mask-64; then
	echo "ok 2 the runner's 64-bit edu and pindma reach the same pages directly"
else
	echo "not ok 2 the runner's 64-bit edu and pindma reach the same pages directly"
fi
