// SPDX-License-Identifier: GPL-2.0
/*
 * The child's side of DONTFORK. A program pins a buffer for a device (RDMA, a GPU), then forks
 * workers (PyTorch's DataLoader) that touch it. uccl-project/uccl#895: the workers crash, because
 * the buffers they inherited were MADV_DONTFORK'd; ROCm/rocm-systems#356 dropped MADV_DONTFORK
 * from libhsakmt's pinned host memory (hipHostMalloc) for the same crash, and mapped it
 * MAP_SHARED. The rows pin one page with pindma (PIN_LONGTERM: FOLL_PIN | FOLL_LONGTERM, as
 * ib_umem and the GPU drivers pin) and let a child read and write it, with the range plain
 * private anonymous memory (the control), MADV_DONTFORK, MAP_SHARED anonymous, or
 * MADV_WIPEONFORK. A family in one file: its observations, its play, then its verdict, checks,
 * table and why.
 *
 * Each side is seen from outside the code under test. The parent's: the driver's CPU engine reads
 * and writes the page the pin holds (the kernel's mapping of it), and the driver and pagemap give
 * its PFN. The child's: what it read and its PFNs (pagemap) come over a pipe, and how it ended is
 * its wait status, so a SIGSEGV is the kernel's word. What decided it is the range's VmFlags in
 * the parent's smaps before the fork: dc (VM_DONTCOPY), sh (VM_SHARED), wf (VM_WIPEONFORK).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"
#include "row.h"

struct child_obs {
	uint64_t drv_before, par_before;	/* the pinned page, by the driver and by pagemap */
	uint64_t drv_after, par_after;		/* the same after the parent's and device's write */
	uint64_t child_fork;	/* the child's PFN right after the fork, untouched (0: none) */
	uint64_t child_touch;	/* ... once it read and wrote the range */
	bool control_moved;	/* before the fork the device's write reached the parent's page */
	bool dev_sees_parent;	/* after the fork, the device reads the parent's write */
	bool parent_sees_dev;	/* ... and the parent reads the device's */
	bool device_reads_own;	/* the device reads back what it wrote */
	bool dev_sees_child;	/* the device reads what the child wrote */
	bool child_has_range;	/* the child's maps cover the page */
	bool child_segv;	/* the child was killed by SIGSEGV (its wait status) */
	/*
	 * What the child read where the parent wrote after the fork, and where the device did:
	 * pre-fork, parent, device, child, zero or other; "-": nothing (it read nothing)
	 */
	char child_at_parent[12];
	char child_at_device[12];
	char vma_flags[12];	/* which of dc, sh, wf the parent's VmFlags (smaps) had at fork */
	uint32_t engine;	/* PINDMA_ENGINE_* that served, by the driver's reply */
};

#define OFF_PARENT 0	/* where the parent writes after the fork */
#define OFF_DEVICE 256	/* where the device writes after the fork */
#define OFF_CHILD 512	/* where the child writes */
#define OFF_CONTROL 768	/* where the device writes before the fork */
#define TAG 16

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char DEVICE[TAG] = "device wrote";
static const char CHILD[TAG] = "child wrote";
static const char CONTROL[TAG] = "device control";

/* The child's first look, right after the fork, before it touches the range. */
struct first_look {
	uint64_t pfn;
	int pfn_errno;
	bool has_range;
};

/* What it read once it touched the range, and its page after writing it. */
struct touch_report {
	char at_parent[TAG], at_device[TAG];
	uint64_t pfn;
	int pfn_errno;
};

static int child_main(struct lab_child *c, void *arg)
{
	char *page = arg;
	struct first_look look = { 0 };
	struct touch_report t = { 0 };

	look.has_range = lab_maps_covers(0, page);
	look.pfn_errno = lab_pfn_read(page, &look.pfn) ? errno : 0;
	if (lab_child_report(c, &look, sizeof(look)) || lab_child_wait(c) < 0)
		return 1;
	/* A DataLoader worker touching its inherited buffer: SIGSEGV here without the range. */
	memcpy(t.at_parent, page + OFF_PARENT, TAG);
	memcpy(t.at_device, page + OFF_DEVICE, TAG);
	memcpy(page + OFF_CHILD, CHILD, TAG);
	t.pfn_errno = lab_pfn_read(page, &t.pfn) ? errno : 0;
	if (lab_child_report(c, &t, sizeof(t)))
		return 1;
	/* Alive until the device has read what it wrote. */
	return lab_child_wait(c) < 0;
}

static void classify(char *out, size_t n, const char *bytes)
{
	static const struct {
		const char *tag, *name;
	} tags[] = {
		{ PREFORK, "pre-fork" }, { PARENT, "parent" }, { DEVICE, "device" },
		{ CHILD, "child" },
	};
	bool zero = true;

	for (unsigned int i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (!memcmp(bytes, tags[i].tag, TAG)) {
			snprintf(out, n, "%s", tags[i].name);
			return;
		}
	for (int i = 0; i < TAG; i++)
		zero &= !bytes[i];
	snprintf(out, n, "%s", zero ? "zero" : "other");
}

/* Which of the VmFlags that decide what fork gives the child the range has, by the kernel. */
static void vma_flags(char *o, size_t n, const char *page)
{
	static const char *const decide[] = { "dc", "sh", "wf" };

	o[0] = 0;
	for (unsigned int i = 0; i < sizeof(decide) / sizeof(decide[0]); i++)
		if (lab_has_vmflag(page, decide[i]))
			snprintf(o + strlen(o), n - strlen(o), "%s%s", o[0] ? " " : "", decide[i]);
}

static int dma(struct record *rec, int fd, unsigned long req, uint32_t handle, uint64_t off,
	       void *buf, uint64_t len, uint32_t *engine)
{
	int ret;

	*engine = PINDMA_ENGINE_CPU;
	ret = pindma_dma(fd, req, handle, off, buf, len, engine);
	if (ret)
		return errno = -ret, row_fail(rec, "device %s", req == PINDMA_IOC_DMA_WRITE ?
					      "write" : "read");
	return 0;
}

static int pfn_of(struct record *rec, const char *page, uint64_t *pfn, const char *who)
{
	errno = 0;
	if (lab_pfn_read(page, pfn))
		return row_fail(rec, "reading the %s PFN from pagemap", who);
	if (!*pfn)
		return row_fail(rec, "the %s page is not present", who);
	return 0;
}

static int query(struct record *rec, int fd, uint32_t handle, uint64_t *pfn)
{
	int ret = pindma_query(fd, handle, 0, pfn);

	if (ret)
		return errno = -ret, row_fail(rec, "PINDMA_IOC_QUERY");
	return 0;
}

/* After the fork: the parent and the device write, the child touches, the device reads. */
static int after_fork(struct record *rec, int fd, uint32_t handle, char *page,
		      struct lab_child *child)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	struct first_look look;
	struct touch_report t;
	char seen[OFF_CHILD + TAG], how[48];
	bool reported;
	int status;

	if (lab_child_read(child, &look, sizeof(look)))
		return row_fail(rec, "the child's first look after the fork");
	if (look.pfn_errno)
		return errno = look.pfn_errno, row_fail(rec, "the child's PFN after the fork");
	o->child_fork = look.pfn;
	o->child_has_range = look.has_range;

	memcpy(page + OFF_PARENT, PARENT, TAG);
	if (dma(rec, fd, PINDMA_IOC_DMA_WRITE, handle, OFF_DEVICE, (void *)DEVICE, TAG, &o->engine))
		return -1;
	if (lab_child_go(child, 'r'))
		return row_fail(rec, "telling the child to touch the range");
	/* No report: the child died touching the range, which its wait status tells. */
	reported = !lab_child_read(child, &t, sizeof(t));
	if (reported) {
		if (t.pfn_errno)
			return errno = t.pfn_errno, row_fail(rec, "the child's PFN after touching");
		o->child_touch = t.pfn;
		classify(o->child_at_parent, sizeof(o->child_at_parent), t.at_parent);
		classify(o->child_at_device, sizeof(o->child_at_device), t.at_device);
	}
	/* The device reads the parent's, its own and the child's bytes in one transfer. */
	if (dma(rec, fd, PINDMA_IOC_DMA_READ, handle, 0, seen, sizeof(seen), &o->engine))
		return -1;
	o->dev_sees_parent = !memcmp(seen + OFF_PARENT, PARENT, TAG);
	o->device_reads_own = !memcmp(seen + OFF_DEVICE, DEVICE, TAG);
	o->dev_sees_child = !memcmp(seen + OFF_CHILD, CHILD, TAG);
	o->parent_sees_dev = !memcmp(page + OFF_DEVICE, DEVICE, TAG);
	if (pfn_of(rec, page, &o->par_after, "parent's") ||
	    query(rec, fd, handle, &o->drv_after))
		return -1;
	if (reported && lab_child_go(child, 'x'))
		return row_fail(rec, "telling the child to exit");
	status = lab_child_reap(child);
	if (status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV && !reported) {
		o->child_segv = true;
		return 0;
	}
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) || !reported) {
		errno = 0;
		return row_fail(rec, "the child %s%s", lab_wait_status(status, how, sizeof(how)),
				reported ? "" : " without its report");
	}
	return 0;
}

int play_child(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct child_obs *o = ROW_OBS(rec, struct child_obs);
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	int flags = (r->mem == MEM_SHARED ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
	uint32_t handle = 0;
	char *page;
	int fd, ret = -1, unpinned;

	(void)opts;
	snprintf(o->child_at_parent, sizeof(o->child_at_parent), "-");
	snprintf(o->child_at_device, sizeof(o->child_at_device), "-");
	fd = pindma_open();
	if (fd < 0)
		return errno = -fd, row_fail(rec, "open /dev/pindma (is pindma.ko loaded?)");
	page = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (page == MAP_FAILED) {
		row_fail(rec, "mmap");
		goto out_fd;
	}
	memset(page, 0, LAB_PAGE);
	memcpy(page + OFF_PARENT, PREFORK, TAG);
	memcpy(page + OFF_DEVICE, PREFORK, TAG);
	memcpy(page + OFF_CHILD, PREFORK, TAG);
	errno = 0;
	if (r->dontfork && madvise(page, LAB_PAGE, MADV_DONTFORK)) {
		row_fail(rec, "MADV_DONTFORK");
		goto out;
	}
	if (r->wipeonfork && madvise(page, LAB_PAGE, MADV_WIPEONFORK)) {
		row_fail(rec, "MADV_WIPEONFORK");
		goto out;
	}
	vma_flags(o->vma_flags, sizeof(o->vma_flags), page);
	ret = pindma_pin(fd, page, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &handle);
	if (ret) {
		errno = -ret;
		ret = row_fail(rec, "pin");
		goto out;
	}
	ret = -1;
	if (query(rec, fd, handle, &o->drv_before))
		goto out;
	/* The control: the device reaches the page the parent sees, or nothing else means much. */
	if (dma(rec, fd, PINDMA_IOC_DMA_WRITE, handle, OFF_CONTROL, (void *)CONTROL, TAG,
		&o->engine))
		goto out;
	o->control_moved = !memcmp(page + OFF_CONTROL, CONTROL, TAG);
	if (pfn_of(rec, page, &o->par_before, "parent's"))
		goto out;
	if (lab_child_start(&child, child_main, page)) {
		row_fail(rec, "fork");
		goto out;
	}
	ret = after_fork(rec, fd, handle, page, &child);
out:
	lab_child_end(&child);
	if (handle) {
		unpinned = pindma_unpin(fd, handle);
		if (unpinned && !ret) {
			errno = -unpinned;
			ret = row_fail(rec, "unpin");
		}
	}
	if (page != MAP_FAILED)
		munmap(page, LAB_PAGE);
out_fd:
	close(fd);
	return ret;
}

/*
 * The parent's side first: the device and the parent must still share the pinned page (COHERENT
 * in the pindma rows' words), or it is ORPHANED whatever the child saw. Then the child's side, in
 * one word each: SIGSEGV (the kernel killed it touching the range), SHARED (it reads the parent's
 * and the device's writes, and the device reads its own), ZEROES, or PRE-FORK (it reads what was
 * there at the fork, and the device never sees its write).
 */
static const char *child_verdict(const struct record *rec, char *why, size_t n)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	bool coherent, orphaned;

	if (!o->control_moved)
		return snprintf(why, n, "the control transfer before the fork did not reach the "
			       "parent's page"), NULL;
	if (!o->device_reads_own)
		return snprintf(why, n, "the device did not read back what it wrote"), NULL;
	if (!o->drv_after || !o->par_after)
		return snprintf(why, n, "a PFN was not read"), NULL;
	coherent = o->dev_sees_parent && o->parent_sees_dev && o->drv_after == o->par_after;
	orphaned = !o->dev_sees_parent && !o->parent_sees_dev && o->drv_after != o->par_after;
	if (orphaned)
		return "ORPHANED";
	if (!coherent)
		return snprintf(why, n, "dev->par %d, par->dev %d, driver %llx, parent %llx "
				"disagree", o->parent_sees_dev, o->dev_sees_parent,
				(unsigned long long)o->drv_after, (unsigned long long)o->par_after),
		       NULL;
	if (o->child_segv && !strcmp(o->child_at_parent, "-"))
		return "SIGSEGV";
	if (!strcmp(o->child_at_parent, "parent") && !strcmp(o->child_at_device, "device") &&
	    o->dev_sees_child)
		return "SHARED";
	if (!strcmp(o->child_at_parent, "zero") && !strcmp(o->child_at_device, "zero") &&
	    !o->dev_sees_child)
		return "ZEROES";
	if (!strcmp(o->child_at_parent, "pre-fork") && !strcmp(o->child_at_device, "pre-fork") &&
	    !o->dev_sees_child)
		return "PRE-FORK";
	snprintf(why, n, "the child read %s and %s, SIGSEGV %d, the device read its write %d",
		 o->child_at_parent, o->child_at_device, o->child_segv, o->dev_sees_child);
	return NULL;
}

/* What each stage must show of the child's range and pages, by the kernel's own interfaces. */
static unsigned int child_checks(const struct record *rec, struct check *c)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	const struct row *r = rec->row;
	bool shared = r->mem == MEM_SHARED;
	char flags[sizeof(o->vma_flags) + 1];
	unsigned int k = 0;

	snprintf(flags, sizeof(flags), "%s%s%s", r->dontfork ? " dc" : "", shared ? " sh" : "",
		 r->wipeonfork ? " wf" : "");
	CHECK(!strcmp(o->vma_flags, flags + !!flags[0]), "the range's VmFlags of dc, sh, wf are "
	      "\"%s\" (\"%s\")", flags + !!flags[0], o->vma_flags);
	CHECK(o->engine == PINDMA_ENGINE_CPU, "the driver says its CPU engine served the DMA");
	CHECK(o->drv_before == o->par_before, "the driver held the parent's page when pinned");
	CHECK(o->drv_after == o->drv_before, "the driver's page never changed");
	if (strcmp(rec->observed, "ORPHANED"))
		CHECK(o->par_after == o->par_before, "the parent kept its page");
	if (r->dontfork) {
		CHECK(!o->child_has_range && !o->child_fork,
		      "the child has no such range (VM_DONTCOPY)");
		CHECK(o->child_segv, "touching it, the child was killed by SIGSEGV");
	} else if (r->wipeonfork) {
		CHECK(o->child_has_range && !o->child_fork,
		      "the child has the range with no page in it (VM_WIPEONFORK)");
		CHECK(o->child_touch && o->child_touch != o->drv_before,
		      "touching it, the child got a page of its own");
		/* A page nobody but the child wrote: what it read there must be zeroes. */
		CHECK(!strcmp(o->child_at_parent, "zero") && !strcmp(o->child_at_device, "zero"),
		      "in that new page the child read zeroes (%s, %s)", o->child_at_parent,
		      o->child_at_device);
	} else if (shared) {
		/* vma_needs_copy(): no anon_vma, so faults fill the child's page table. */
		CHECK(o->child_has_range && !o->child_fork,
		      "the child has the range, its page table not copied (VM_SHARED)");
		CHECK(o->child_touch == o->drv_before,
		      "touching it, the child mapped the driver's very page");
		CHECK(!strcmp(o->child_at_parent, "parent") && !strcmp(o->child_at_device, "device"),
		      "in it the child read the parent's and the device's writes (%s, %s)",
		      o->child_at_parent, o->child_at_device);
	} else {
		CHECK(o->child_has_range && o->child_fork && o->child_fork != o->drv_before,
		      "fork gave the child a copy of the pinned page");
		CHECK(o->child_touch == o->child_fork, "touching it, the child kept fork's page");
		/* Unless fork shared the page after all (ORPHANED): then it reads the device's. */
		if (strcmp(rec->observed, "ORPHANED"))
			CHECK(!strcmp(o->child_at_parent, "pre-fork") &&
			      !strcmp(o->child_at_device, "pre-fork"),
			      "in its copy the child read the pre-fork bytes (%s, %s)",
			      o->child_at_parent, o->child_at_device);
	}
	CHECK(o->dev_sees_child == shared, "the device %s the child's write",
	      shared ? "reads" : "never reads");
	return k;
}

static void child_header(FILE *f)
{
	fprintf(f, "PFNs in hex; par<>dev: the parent and the device read each other's writes "
		"after the fork;\nthe child's PFN right after the fork->after its touch, what it "
		"read where the parent and the\ndevice wrote, and whether the device read the "
		"child's write\n");
	fprintf(f, "%2s %-22s %-8s %-10s %-8s %-13s %-8s %-8s %-9s %-8s %-8s %-8s\n", "#",
		"row", "VmFlags", "pinned pfn", "par<>dev", "child pfn", "parent's", "device's",
		"dev<-chi", "observed", "expected", "status");
}

static void child_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	bool played = rec->observed[0];
	char drv[24] = "-", chi[40] = "-";

	if (played) {
		snprintf(drv, sizeof(drv), "%llx", (unsigned long long)o->drv_before);
		if (!o->child_has_range)
			snprintf(chi, sizeof(chi), "none");
		else
			snprintf(chi, sizeof(chi), "%llx->%llx", (unsigned long long)o->child_fork,
				 (unsigned long long)o->child_touch);
	}
	fprintf(f, "%2u %-22s %-8s %-10s %-8s %-13s %-8s %-8s %-9s %-8s %-8s %s\n", i,
		rec->row->name, played ? (o->vma_flags[0] ? o->vma_flags : "none") : "-", drv,
		played ? (o->dev_sees_parent && o->parent_sees_dev ? "yes" : "no") : "-", chi,
		played ? (o->child_segv ? "SIGSEGV" : o->child_at_parent) : "-",
		played ? (o->child_segv ? "SIGSEGV" : o->child_at_device) : "-",
		played ? (o->dev_sees_child ? "yes" : "no") : "-", played ? rec->observed : "-",
		rec->expected[0] ? rec->expected : "none", record_status_name(rec->status));
}

/*
 * The VMA flag that decided, from the parent's VmFlags before the fork, in the order dup_mmap()
 * asks: VM_DONTCOPY leaves the VMA out before anything else is looked at, VM_WIPEONFORK copies no
 * page table, and a VMA with neither goes to copy_page_range(), which for a shared one copies
 * nothing (vma_needs_copy(): no anon_vma) and for a private one copies each PTE, a maybe-pinned
 * anonymous page into a new page for the child.
 */
static const struct {
	const char *flag, *says;
} deciders[] = {
	{ "dc", "VM_DONTCOPY (MADV_DONTFORK): dup_mmap() leaves the VMA out of the child, which "
		"has no such range: its touch is SIGSEGV" },
	{ "wf", "VM_WIPEONFORK (MADV_WIPEONFORK): dup_mmap() gives the child the VMA without its "
		"page table or anon_vma: its touch faults in a zeroed page of its own" },
	{ "sh", "VM_SHARED (MAP_SHARED): the child's VMA maps the same shmem object, no page table "
		"copied (vma_needs_copy()), no copy-on-write on either side: its touch maps the "
		"pinned page" },
};

static void child_why(FILE *f, const struct record *rec)
{
	const struct child_obs *o = ROW_OBS(rec, struct child_obs);
	const char *says = "a private anonymous VMA, whose PTEs fork copies; the page is maybe "
			   "DMA-pinned, so copy_present_pte() gives the child a copy of it (since "
			   "5.9), with the bytes it had at the fork";
	const char *flag = "none of dc, sh, wf";
	char padded[sizeof(o->vma_flags) + 2];

	fprintf(f, "%s on Linux %s: %s, %s (expected %s)\n", rec->row->name, rec->kernel,
		rec->row->title,
		rec->observed[0] ? rec->observed : record_status_words(rec->status),
		rec->expected[0] ? rec->expected : "none");
	if (!rec->observed[0])
		return;
	/* The first of them the range has decided: dup_mmap() asks in this order. */
	snprintf(padded, sizeof(padded), " %s ", o->vma_flags);
	for (unsigned int i = 0; i < sizeof(deciders) / sizeof(deciders[0]); i++) {
		char word[8];

		snprintf(word, sizeof(word), " %s ", deciders[i].flag);
		if (strstr(padded, word)) {
			flag = deciders[i].flag;
			says = deciders[i].says;
			break;
		}
	}
	fprintf(f, "    the range's VmFlags before the fork (smaps): %s\n",
		o->vma_flags[0] ? o->vma_flags : "none of dc, sh, wf");
	fprintf(f, "    decided by %s: %s\n", flag, says);
}

static const struct field child_fields[] = {
	OBS_FIELD(child_obs, F_U64, drv_before), OBS_FIELD(child_obs, F_U64, par_before),
	OBS_FIELD(child_obs, F_U64, drv_after), OBS_FIELD(child_obs, F_U64, par_after),
	OBS_FIELD(child_obs, F_U64, child_fork), OBS_FIELD(child_obs, F_U64, child_touch),
	OBS_FIELD(child_obs, F_BOOL, control_moved), OBS_FIELD(child_obs, F_BOOL, dev_sees_parent),
	OBS_FIELD(child_obs, F_BOOL, parent_sees_dev),
	OBS_FIELD(child_obs, F_BOOL, device_reads_own),
	OBS_FIELD(child_obs, F_BOOL, dev_sees_child), OBS_FIELD(child_obs, F_BOOL, child_has_range),
	OBS_FIELD(child_obs, F_BOOL, child_segv), OBS_FIELD(child_obs, F_STR, child_at_parent),
	OBS_FIELD(child_obs, F_STR, child_at_device), OBS_FIELD(child_obs, F_STR, vma_flags),
	OBS_FIELD(child_obs, F_U32, engine),
	{ NULL },
};

const struct row_family family_child = {
	.name = "child",
	.title = "the child's side of DONTFORK: a worker forked after the pin touches the range",
	.device = "pindma-cpu",
	.fields = child_fields,
	.play = play_child,
	.verdict = child_verdict,
	.checks = child_checks,
	.table_header = child_header,
	.table_line = child_line,
	.why = child_why,
};
