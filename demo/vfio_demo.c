// SPDX-License-Identifier: GPL-2.0
/*
 * vfio_demo: the bug through a user-space driver, as DPDK, SPDK and QEMU drive devices: a page
 * mapped for QEMU's edu device with VFIO_IOMMU_MAP_DMA (type1 pins it, FOLL_PIN | FOLL_LONGTERM),
 * edu's DMA driven through its BAR, fork, a parent write. Needs a guest with an IOMMU (vm/boot
 * --iommu). Options and exit status: rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, "vfio_demo");
}
