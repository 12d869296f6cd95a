// SPDX-License-Identifier: GPL-2.0
/*
 * The VFIO family: a user-space driver, as DPDK, SPDK and QEMU are. The page is mapped for the
 * device with VFIO_IOMMU_MAP_DMA, which VFIO's type1 IOMMU backend pins (FOLL_PIN |
 * FOLL_LONGTERM) for as long as the mapping lasts; the program drives QEMU's edu device itself
 * through its BAR, and edu's DMA goes through the IOMMU to the page the mapping pinned. A holder
 * (holder.h): what edu's DMA carries after the parent's write shows whether device and parent still
 * share the page. The kernel's FOLL_PIN counters, not the program, say that the map pinned it, and
 * the page's zone, that it pinned it long-term: the machine has a Movable zone, and the page is
 * one of it until the map moves it out. A family in one file: its observations, its play, then its
 * verdict, checks and table.
 *
 * The play: the guest (vm/boot --iommu) has QEMU's intel-iommu, which puts edu in an IOMMU group of
 * its own; the play binds it to vfio-pci, sets up a type1 container, maps the row's page (the
 * holder's) and a page it reads back at IOVAs of its own (VFIO_IOMMU_MAP_DMA: type1 pins both), and
 * drives edu's DMA through its BAR: the page's first bytes into edu's buffer, then from there into
 * the read-back page. What arrives there is what the device read. edu's registers: 0x80 source,
 * 0x88 destination, 0x90 count, 0x98 command (bit 0 start, cleared when done; bit 1 towards RAM),
 * its buffer at 0x40000.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "holder.h"
#include "lab.h"

struct vfio_obs {
	uint64_t par_before, par_after, child_fork;
	bool control_moved;	/* before the fork, edu's DMA through the IOMMU carried the page */
	bool dev_sees_parent;	/* after the fork, edu's DMA carried the parent's write */
	bool dev_has_prefork;	/* ... or the pre-fork bytes */
	bool child_has_range;
	int64_t map_pins;	/* FOLL_PIN pins that VFIO_IOMMU_MAP_DMA of the page took, and */
	int64_t unmap_pins;	/* ... that its unmap released (the kernel's vmstat counters) */
	bool movable_before;	/* the page was in ZONE_MOVABLE before the map (pagemap, zoneinfo) */
	bool movable_after;	/* ... and after it: a long-term pin moves it out first */
};

#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_COUNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_DMA_START	1
#define EDU_DMA_TO_RAM	2
#define EDU_BUF		0x40000
/* The IOVAs of the row's page and of the read-back page. */
#define IOVA_PAGE	0x100000
#define IOVA_BACK	0x200000
/* Fresh pages among which the row's page is one of the Movable zone. */
#define PICK_PAGES	256
/* edu moves its bytes on a 100 ms timer of the guest's clock; this bounds a wait that hangs. */
#define DMA_WAIT_MS	10000

struct vfio {
	int container, group, device;
	volatile uint8_t *bar;
	size_t bar_size;
	off_t cfg;		/* the config region's offset in the device's file; 0: none */
	char *page, *back;
	bool page_mapped, back_mapped;
};

/* edu bound to vfio-pci (binding it if no driver has it); its sysfs folder in dev. */
static int bind_edu(struct record *rec, char *dev, size_t size)
{
	char path[PATH_MAX], link[PATH_MAX];
	const char *bdf;
	ssize_t n;

	errno = 0;
	if (!lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, size))
		return row_fail(rec, "no edu PCI device");
	bdf = strrchr(dev, '/') + 1;
	snprintf(path, sizeof(path), "%s/driver", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0) {
		snprintf(path, sizeof(path), "%s/driver_override", dev);
		if (lab_write_str(path, "vfio-pci") ||
		    lab_write_str("/sys/bus/pci/drivers_probe", bdf))
			return row_fail(rec, "binding edu %s to vfio-pci", bdf);
		snprintf(path, sizeof(path), "%s/driver", dev);
		n = readlink(path, link, sizeof(link) - 1);
	}
	if (n < 0)
		return row_fail(rec, "edu %s has no driver after binding it to vfio-pci", bdf);
	link[n] = 0;
	errno = 0;
	if (strcmp(strrchr(link, '/') + 1, "vfio-pci"))
		return row_fail(rec, "edu %s is bound to %s, not vfio-pci", bdf,
				strrchr(link, '/') + 1);
	return 0;
}

static int map_dma(struct vfio *v, void *vaddr, uint64_t iova)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map),
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr = (uintptr_t)vaddr,
		.iova = iova,
		.size = LAB_PAGE,
	};

	return ioctl(v->container, VFIO_IOMMU_MAP_DMA, &map);
}

/* type1v2 answers an unmap of nothing with success and a size of 0: the size must be the page. */
static int unmap_dma(struct vfio *v, uint64_t iova)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz = sizeof(unmap),
		.iova = iova,
		.size = LAB_PAGE,
	};

	if (ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &unmap))
		return -1;
	return unmap.size == LAB_PAGE ? 0 : (errno = ENOENT, -1);
}

/* edu's bus mastering, on or off, through the config region. */
static int bus_master(struct vfio *v, bool on)
{
	uint16_t cmd;

	if (pread(v->device, &cmd, sizeof(cmd), v->cfg + PCI_COMMAND) != sizeof(cmd))
		return -1;
	cmd = on ? cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER : cmd & ~PCI_COMMAND_MASTER;
	return pwrite(v->device, &cmd, sizeof(cmd), v->cfg + PCI_COMMAND) == sizeof(cmd) ? 0 : -1;
}

/* Whether the kernel registered an IOMMU (/sys/class/iommu has an entry). */
static bool has_iommu(void)
{
	DIR *d = opendir("/sys/class/iommu");
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d)))
		found = e->d_name[0] != '.';
	if (d)
		closedir(d);
	return found;
}

/* What a machine lacks for these rows (the family's lacks_machine), or NULL. */
static const char *vfio_lacks_machine(void)
{
	char dev[256];

	if (!has_iommu())
		return "this machine has no IOMMU (make test boots one: vm/boot --iommu)";
	if (!lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)))
		return "this machine has no edu PCI device (the lab's QEMU has one)";
	return NULL;
}

/* The container, the group and the device; edu's BAR mapped, its bus mastering on. */
static int open_vfio(struct record *rec, struct vfio *v)
{
	char dev[256], path[PATH_MAX], link[PATH_MAX];
	struct vfio_group_status status = { .argsz = sizeof(status) };
	struct vfio_region_info bar = { .argsz = sizeof(bar), .index = VFIO_PCI_BAR0_REGION_INDEX };
	struct vfio_region_info cfg = { .argsz = sizeof(cfg), .index = VFIO_PCI_CONFIG_REGION_INDEX };
	const char *lacks = vfio_lacks_machine();
	ssize_t n;

	if (lacks) {
		errno = 0;
		return row_fail(rec, "%s", lacks);
	}
	if (bind_edu(rec, dev, sizeof(dev)))
		return -1;
	snprintf(path, sizeof(path), "%s/iommu_group", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return row_fail(rec, "edu's IOMMU group");
	link[n] = 0;
	snprintf(path, sizeof(path), "/dev/vfio/%s", strrchr(link, '/') + 1);
	v->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (v->container < 0)
		return row_fail(rec, "opening /dev/vfio/vfio");
	if (ioctl(v->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION ||
	    ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) != 1)
		return row_fail(rec, "VFIO without the type1v2 IOMMU");
	v->group = open(path, O_RDWR | O_CLOEXEC);
	if (v->group < 0)
		return row_fail(rec, "opening %s", path);
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &status))
		return row_fail(rec, "VFIO_GROUP_GET_STATUS");
	errno = 0;
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE))
		return row_fail(rec, "edu's IOMMU group is not viable (a device in it has a driver)");
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) ||
	    ioctl(v->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		return row_fail(rec, "setting up the type1v2 container");
	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, strrchr(dev, '/') + 1);
	if (v->device < 0)
		return row_fail(rec, "VFIO_GROUP_GET_DEVICE_FD");
	if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &bar) ||
	    ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &cfg))
		return row_fail(rec, "edu's regions");
	v->bar = mmap(NULL, bar.size, PROT_READ | PROT_WRITE, MAP_SHARED, v->device, bar.offset);
	if (v->bar == MAP_FAILED)
		return row_fail(rec, "mapping edu's BAR 0");
	v->bar_size = bar.size;
	v->cfg = cfg.offset;
	/* Without bus mastering QEMU drops the device's DMA. */
	if (bus_master(v, true))
		return row_fail(rec, "turning edu's bus mastering on");
	return 0;
}

/* A transfer that timed out may still come: edu stops mastering the bus before the IOVAs go. */
static void close_vfio(struct vfio *v)
{
	if (v->device >= 0 && v->cfg)
		bus_master(v, false);
	if (v->page_mapped)
		unmap_dma(v, IOVA_PAGE);
	if (v->back_mapped)
		unmap_dma(v, IOVA_BACK);
	if (v->bar && v->bar != MAP_FAILED)
		munmap((void *)v->bar, v->bar_size);
	if (v->device >= 0)
		close(v->device);
	if (v->group >= 0)
		close(v->group);
	if (v->container >= 0)
		close(v->container);
	if (v->page != MAP_FAILED)
		munmap(v->page, LAB_PAGE);
	if (v->back != MAP_FAILED)
		munmap(v->back, LAB_PAGE);
}

static void reg_write(struct vfio *v, unsigned int reg, uint64_t value)
{
	*(volatile uint64_t *)(v->bar + reg) = value;
}

/* One edu transfer, waited for: edu clears the command's start bit when it is done. */
static int edu_dma(struct vfio *v, uint64_t src, uint64_t dst, uint64_t cmd)
{
	reg_write(v, EDU_DMA_SRC, src);
	reg_write(v, EDU_DMA_DST, dst);
	reg_write(v, EDU_DMA_COUNT, HOLDER_TAG);
	reg_write(v, EDU_DMA_CMD, cmd | EDU_DMA_START);
	for (int ms = 0; ms < DMA_WAIT_MS; ms++) {
		if (!(*(volatile uint64_t *)(v->bar + EDU_DMA_CMD) & EDU_DMA_START))
			return 0;
		usleep(1000);
	}
	errno = ETIMEDOUT;
	return -1;
}

/* edu reads the page through the IOMMU, then writes what it read into the read-back page. */
static int vfio_give(void *ctx)
{
	struct vfio *v = ctx;

	memset(v->back, 0, HOLDER_TAG);
	if (edu_dma(v, IOVA_PAGE, EDU_BUF, 0))
		return -1;
	return edu_dma(v, EDU_BUF, IOVA_BACK, EDU_DMA_TO_RAM);
}

static int vfio_take(void *ctx, char *out)
{
	struct vfio *v = ctx;

	memcpy(out, v->back, HOLDER_TAG);
	return 0;
}

/*
 * The row's page: a fresh one of the Movable zone, the rest of PICK_PAGES fresh pages let go. A
 * long-term pin must move it out first (check_and_migrate_movable_pages()).
 */
static char *movable_page(struct record *rec, uint64_t start, uint64_t end)
{
	char *pages = lab_map_anon(PICK_PAGES * LAB_PAGE), *page = MAP_FAILED;
	size_t len = PICK_PAGES * LAB_PAGE;

	if (pages == MAP_FAILED)
		return row_fail(rec, "mmap"), MAP_FAILED;
	for (int i = 0; i < PICK_PAGES && page == MAP_FAILED; i++) {
		uint64_t pfn = lab_pfn(pages + i * LAB_PAGE);

		if (pfn >= start && pfn < end)
			page = pages + i * LAB_PAGE;
	}
	if (page == MAP_FAILED) {
		munmap(pages, len);
		errno = 0;
		return row_fail(rec, "none of %d fresh pages in the Movable zone", PICK_PAGES),
		       MAP_FAILED;
	}
	if (page > pages)
		munmap(pages, page - pages);
	if (page + LAB_PAGE < pages + len)
		munmap(page + LAB_PAGE, pages + len - (page + LAB_PAGE));
	return page;
}

static bool in_zone(const void *page, uint64_t start, uint64_t end)
{
	uint64_t pfn = lab_pfn(page);

	return pfn >= start && pfn < end;
}

int play_vfio(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct vfio_obs *o = ROW_OBS(rec, struct vfio_obs);
	struct vfio v = { .container = -1, .group = -1, .device = -1, .page = MAP_FAILED,
			  .back = MAP_FAILED };
	struct holder h = { .give = vfio_give, .take = vfio_take, .ctx = &v };
	const struct holder_seen seen = {
		&o->control_moved, &o->dev_sees_parent, &o->dev_has_prefork, &o->par_before,
		&o->par_after, &o->child_fork, &o->child_has_range,
	};
	uint64_t start, end;
	long pins;
	int ret = -1;

	(void)opts;
	if (lab_movable_zone(&start, &end)) {
		errno = 0;
		return row_fail(rec, "no Movable zone (vm/boot --iommu boots one)");
	}
	if (open_vfio(rec, &v))
		goto out;
	v.page = movable_page(rec, start, end);
	if (v.page == MAP_FAILED)
		goto out;
	v.back = lab_map_anon(LAB_PAGE);
	if (v.back == MAP_FAILED) {
		row_fail(rec, "mmap");
		goto out;
	}
	h.page = v.page;
	if (r->dontfork && madvise(v.page, LAB_PAGE, MADV_DONTFORK)) {
		row_fail(rec, "MADV_DONTFORK");
		goto out;
	}
	/* The read-back page stays out of the child, whatever the row: only the page is its stage. */
	if (madvise(v.back, LAB_PAGE, MADV_DONTFORK)) {
		row_fail(rec, "MADV_DONTFORK on the read-back page");
		goto out;
	}
	if (map_dma(&v, v.back, IOVA_BACK)) {
		row_fail(rec, "VFIO_IOMMU_MAP_DMA of the read-back page");
		goto out;
	}
	v.back_mapped = true;
	pins = lab_foll_pins();
	o->movable_before = in_zone(v.page, start, end);
	if (map_dma(&v, v.page, IOVA_PAGE)) {
		row_fail(rec, "VFIO_IOMMU_MAP_DMA");
		goto out;
	}
	v.page_mapped = true;
	o->map_pins = lab_foll_pins() - pins;
	o->movable_after = in_zone(v.page, start, end);
	if (play_holder(r, rec, &h, &seen))
		goto out;
	pins = lab_foll_pins();
	v.page_mapped = false;
	if (unmap_dma(&v, IOVA_PAGE)) {
		row_fail(rec, "VFIO_IOMMU_UNMAP_DMA");
		goto out;
	}
	o->unmap_pins = pins - lab_foll_pins();
	ret = 0;
out:
	close_vfio(&v);
	return ret;
}

static const char *vfio_verdict(const struct record *rec, char *why, size_t n)
{
	const struct vfio_obs *o = ROW_OBS(rec, struct vfio_obs);

	return holder_verdict(o->control_moved, o->dev_sees_parent, o->dev_has_prefork,
			      o->par_before, o->par_after, o->child_fork, why, n);
}

/* A FOLL_PIN pin makes fork copy for the child, unless the switch says share. */
static unsigned int vfio_checks(const struct record *rec, struct check *c)
{
	const struct vfio_obs *o = ROW_OBS(rec, struct vfio_obs);
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
	const struct vfio_obs *o = ROW_OBS(rec, struct vfio_obs);

	holder_line(f, i, rec, o->control_moved, o->dev_sees_parent, o->dev_has_prefork,
		    o->par_before, o->par_after, o->child_fork);
}

static const struct field vfio_fields[] = {
	OBS_FIELD(vfio_obs, F_U64, par_before), OBS_FIELD(vfio_obs, F_U64, par_after),
	OBS_FIELD(vfio_obs, F_U64, child_fork), OBS_FIELD(vfio_obs, F_BOOL, control_moved),
	OBS_FIELD(vfio_obs, F_BOOL, dev_sees_parent), OBS_FIELD(vfio_obs, F_BOOL, dev_has_prefork),
	OBS_FIELD(vfio_obs, F_BOOL, child_has_range), OBS_FIELD(vfio_obs, F_I64, map_pins),
	OBS_FIELD(vfio_obs, F_I64, unmap_pins), OBS_FIELD(vfio_obs, F_BOOL, movable_before),
	OBS_FIELD(vfio_obs, F_BOOL, movable_after),
	{ NULL },
};

const struct row_family family_vfio = {
	.name = "vfio",
	.title = "VFIO_IOMMU_MAP_DMA + fork, a user-space driver of the edu device",
	.device = "vfio-edu",
	.fields = vfio_fields,
	.play = play_vfio,
	.verdict = vfio_verdict,
	.checks = vfio_checks,
	.table_header = vfio_header,
	.table_line = vfio_line,
	.lacks_machine = vfio_lacks_machine,
};
