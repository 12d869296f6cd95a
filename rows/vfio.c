// SPDX-License-Identifier: GPL-2.0
/*
 * The VFIO family: a user-space driver, as DPDK, SPDK and QEMU are. The page is mapped for the
 * device with VFIO_IOMMU_MAP_DMA, which VFIO's type1 IOMMU backend pins (FOLL_PIN |
 * FOLL_LONGTERM) for as long as the mapping lasts; the program drives QEMU's edu device itself
 * through its BAR, and edu's DMA goes through the IOMMU to the page the mapping pinned. A holder
 * (holder.h): what edu's DMA carries after the parent's write shows whether device and parent still
 * share the page. The kernel's FOLL_PIN counters, not the program, say that the map pinned it, and
 * the page's zone, that it pinned it long-term: the machine has a Movable zone, and the page is
 * one of it until the map moves it out.
 * Playing is vfio_play.c.
 */
#include "holder.h"

static const char *vfio_verdict(const struct record *rec, char *why, size_t n)
{
	const struct vfio_obs *o = &rec->vfio;

	return holder_verdict(o->control_moved, o->dev_sees_parent, o->dev_has_prefork,
			      o->par_before, o->par_after, o->child_fork, why, n);
}

/* A FOLL_PIN pin makes fork copy for the child, unless the switch says share. */
static unsigned int vfio_checks(const struct record *rec, struct check *c)
{
	const struct vfio_obs *o = &rec->vfio;
	unsigned int k = holder_checks(rec, c, o->child_has_range, o->par_before, o->par_after,
				       o->child_fork, rec->row->fork_switch == SWITCH_ON);

	CHECK(o->map_pins == 1, "VFIO_IOMMU_MAP_DMA held the page with one FOLL_PIN pin (the "
	      "kernel's vmstat: %lld)", (long long)o->map_pins);
	CHECK(o->unmap_pins == 1, "its unmap released that pin (the kernel's vmstat: %lld)",
	      (long long)o->unmap_pins);
	CHECK(o->movable_before && !o->movable_after, "the map moved the page out of ZONE_MOVABLE "
	      "first, as a long-term pin must (in it before: %d, after: %d)", o->movable_before,
	      o->movable_after);
	return k;
}

static void vfio_header(FILE *f)
{
	holder_header(f, "edu reads");
}

static void vfio_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct vfio_obs *o = &rec->vfio;

	holder_line(f, i, rec, o->control_moved, o->dev_sees_parent, o->dev_has_prefork,
		    o->par_before, o->par_after, o->child_fork);
}

#pragma weak play_vfio

static const struct field vfio_fields[] = {
	OBS_FIELD(vfio, F_U64, par_before), OBS_FIELD(vfio, F_U64, par_after),
	OBS_FIELD(vfio, F_U64, child_fork), OBS_FIELD(vfio, F_BOOL, control_moved),
	OBS_FIELD(vfio, F_BOOL, dev_sees_parent), OBS_FIELD(vfio, F_BOOL, dev_has_prefork),
	OBS_FIELD(vfio, F_BOOL, child_has_range), OBS_FIELD(vfio, F_I64, map_pins),
	OBS_FIELD(vfio, F_I64, unmap_pins), OBS_FIELD(vfio, F_BOOL, movable_before),
	OBS_FIELD(vfio, F_BOOL, movable_after),
	{ NULL },
};

const struct row_family family_vfio = {
	.name = "vfio",
	.device = "vfio-edu",
	.fields = vfio_fields,
	.play = play_vfio,
	.verdict = vfio_verdict,
	.checks = vfio_checks,
	.table_header = vfio_header,
	.table_line = vfio_line,
	.boot_option = "--iommu",
	.own_test = "vfio_rows_test",
};
