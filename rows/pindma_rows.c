// SPDX-License-Identifier: GPL-2.0
/*
 * The pindma family described: the verdict from what the device, the parent and the child saw and
 * from the PFNs, what those observations must show for the verdict and the stage, and the table.
 * Playing is pindma_play.c.
 */
#include <errno.h>
#include <string.h>

#include "lab.h"
#include "pindma.h"
#include "pindma_lib.h"
#include "pindma_obs.h"
#include "why.h"

int pindma_row_pfn(struct record *rec, const char *page, uint64_t *pfn, const char *who)
{
	errno = 0;
	if (lab_pfn_read(page, pfn))
		return row_fail(rec, "reading the %s PFN from pagemap", who);
	if (!*pfn)
		return row_fail(rec, "the %s page is not present", who);
	return 0;
}

int pindma_row_query(struct record *rec, int fd, uint32_t handle, uint64_t *pfn)
{
	int ret = pindma_query(fd, handle, 0, pfn);

	if (ret)
		return errno = -ret, row_fail(rec, "PINDMA_IOC_QUERY");
	if (!*pfn)
		return errno = 0, row_fail(rec, "PINDMA_IOC_QUERY reported PFN 0 for a pinned page");
	return 0;
}

const char *pindma_device_unproven(bool control_moved, bool device_reads_own, uint64_t drv_after,
				   uint64_t par_after)
{
	if (!control_moved)
		return "the control transfer before the fork did not reach the parent's page";
	if (!device_reads_own)
		return "the device did not read back what it wrote";
	if (!drv_after || !par_after)
		return "a PFN was not read";
	return NULL;
}

static const char *pindma_verdict(const struct record *rec, char *why, size_t n)
{
	const struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
	const char *unproven;

	if (!rec->row->pindma.mode) {
		/* mlock() only: the parent kept its page, or the locked page went to the child. */
		if (!o->par_before || !o->par_after)
			return snprintf(why, n, "the parent's page was not present"), NULL;
		if (o->par_after == o->par_before)
			return "COHERENT";
		if (o->child_fork == o->par_before)
			return "ORPHANED";
		snprintf(why, n, "the parent moved to %llx, but the child had %llx, not %llx",
			 (unsigned long long)o->par_after, (unsigned long long)o->child_fork,
			 (unsigned long long)o->par_before);
		return NULL;
	}
	/* A device row: the device must be seen moving bytes, and the PFNs must say the same. */
	unproven = pindma_device_unproven(o->control_moved, o->device_reads_own, o->drv_after,
					  o->par_after);
	if (unproven)
		return snprintf(why, n, "%s", unproven), NULL;
	/* A re-pin row's parent wrote nothing for the device to read: the device's write decides. */
	if (rec->row->pindma.repin_ro) {
		if (o->device_write_seen && o->drv_after == o->par_after)
			return "COHERENT";
		if (!o->device_write_seen && o->drv_after != o->par_after)
			return "ORPHANED";
		snprintf(why, n, "dev->par %d, driver %llx, parent %llx disagree",
			 o->device_write_seen, (unsigned long long)o->drv_after,
			 (unsigned long long)o->par_after);
		return NULL;
	}
	if (o->device_write_seen && o->parent_write_seen && o->drv_after == o->par_after)
		return "COHERENT";
	if (!o->device_write_seen && !o->parent_write_seen && o->drv_after != o->par_after)
		return "ORPHANED";
	snprintf(why, n, "dev->par %d, par->dev %d, driver %llx, parent %llx disagree",
		 o->device_write_seen, o->parent_write_seen, (unsigned long long)o->drv_after,
		 (unsigned long long)o->par_after);
	return NULL;
}

static unsigned int why_checks(const struct record *rec, struct check *c);

/*
 * What the child was given, by the stage the row sets: the range's VmFlags, the child's range and
 * page, and what it reads at the end.
 */
static unsigned int stage_checks(const struct record *rec, struct check *c)
{
	const struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
	const struct row *r = rec->row;
	bool without = r->dontfork && !r->dofork;
	bool alive = r->child != CHILD_EXITS, shared = r->mem == MEM_SHARED;
	char flags[sizeof(o->vma_flags) + 1];
	unsigned int k = 0;

	/* The kernel's own VmFlags for the range (smaps) are the stage the row claims. */
	snprintf(flags, sizeof(flags), "%s%s%s", without ? " dc" : "", shared ? " sh" : "",
		 r->wipeonfork ? " wf" : "");
	CHECK(!strcmp(o->vma_flags, flags + !!flags[0]), "the range's VmFlags of dc, sh, wf are "
	      "\"%s\" (\"%s\")", flags + !!flags[0], o->vma_flags);
	if (without) {
		CHECK(!o->child_has_range && !o->child_fork,
		      "the child has no such range (MADV_DONTFORK)");
		if (alive)
			CHECK(!strcmp(o->child_sees, "SIGSEGV"), "touching it killed the child");
	} else if (r->wipeonfork) {
		CHECK(o->child_has_range && !o->child_fork,
		      "the child has the range, with no page in it (MADV_WIPEONFORK)");
		if (alive)
			CHECK(!strcmp(o->child_sees, "zero"), "the child reads zeroes where the parent "
			      "wrote");
	} else if (shared) {
		/* vma_needs_copy(): a mapping with no anon_vma has its page tables filled by faults. */
		CHECK(o->child_has_range && !o->child_fork, "the child has the range, its page table "
		      "not copied (a shared mapping)");
		if (alive)
			CHECK(o->child_after == o->drv_before, "touching it, the child mapped the "
			      "driver's very page");
	} else {
		CHECK(o->child_has_range && o->child_fork, "the child has the page after fork");
	}
	if (r->child == CHILD_EXITS)
		CHECK(!strcmp(o->child_sees, "exited"), "the child exited before the parent wrote");
	/*
	 * Never a leak from the parent into the child, whatever the verdict, but through memory
	 * both map by design (MAP_SHARED): there the child reads the parent's write.
	 */
	if (alive && shared)
		CHECK(!strcmp(o->child_sees, "parent"), "the child reads the parent's write (one page "
		      "for both)");
	else if (alive && !without && !r->wipeonfork)
		CHECK(o->child_prefork, "the child still reads the pre-fork bytes where the parent "
		      "wrote");
	if (r->mem == MEM_THP || r->mem == MEM_HUGETLB)
		CHECK(r->mem == MEM_THP ? o->thp : o->hugetlb, "the page was part of a %s",
		      r->mem == MEM_THP ? "THP" : "hugetlb page");
	return k;
}

static unsigned int pindma_checks(const struct record *rec, struct check *c)
{
	const struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
	const struct row *r = rec->row;
	bool orphaned = !strcmp(rec->observed, "ORPHANED");
	bool without = r->dontfork && !r->dofork, shared = r->mem == MEM_SHARED;
	unsigned int k = stage_checks(rec, c);

	/*
	 * What the kernel itself says. A row played for its "why" that could not read the page state
	 * (root and pindma's debugfs file) or trace the copies has nothing to explain its verdict
	 * with: that fails the row, it does not switch its checks off. The hugetlb pool's kprobe
	 * matters to hugetlb rows only.
	 */
	if (rec->why) {
		bool state = !(rec->why_lacks & WHY_LACKS_STATE);
		bool traced = !(rec->why_lacks & WHY_LACKS_COPIES) &&
			      (r->mem != MEM_HUGETLB || !(rec->why_lacks & WHY_LACKS_HUGETLB_POOL));

		CHECK(state, "the kernel's page state was read at every step");
		CHECK(traced, "the kernel's copies were traced");
		if (state && traced)
			k += why_checks(rec, c + k);
	}
	if (!r->pindma.mode) {
		if (orphaned)
			CHECK(o->child_fork == o->par_before, "the locked page went to the child");
		return k;
	}
	CHECK(o->drv_before == o->par_before, "the driver held the parent's page when pinned");
	if (r->pindma.repin_ro) {
		CHECK(o->repin == o->par_after, "the read-only re-pin holds the parent's page");
		CHECK(!o->parent_write_seen, "the parent wrote nothing the device could read");
	}
	if (strcmp(rec->device, "auto"))
		CHECK(!strcmp(rec->device, o->engine == PINDMA_ENGINE_EDU ? "edu" : "cpu"),
		      "the driver says the engine asked for served the DMA");
	/*
	 * That edu served, by what the driver does not write: the kernel counted one interrupt of
	 * edu's per transfer (the control, the write and the read, each two), and edu's own
	 * destination register holds the page pinned before the fork (pagemap's PFN).
	 */
	if (!strcmp(rec->device, "edu")) {
		CHECK(o->edu_irqs == 6, "the kernel counted 6 interrupts of edu's for its 6 transfers "
		      "(%lld)", (long long)o->edu_irqs);
		CHECK(o->edu_dst_pfn == o->par_before, "edu's destination register holds the pinned "
		      "page (%llx)", (unsigned long long)o->edu_dst_pfn);
	}
	CHECK(o->drv_after == o->drv_before, "the driver's page never changed");
	if (orphaned) {
		CHECK(o->drv_after == o->child_fork, "the driver's page is the one the child got");
		CHECK(o->par_after != o->par_before, "the parent moved to a new page");
		if (r->child == CHILD_READS_DEVICE)
			CHECK(!strcmp(o->child_sees, "device"), "the child reads the device's bytes "
			      "(the leak direction)");
	} else {
		CHECK(o->par_after == o->par_before, "the parent kept its page");
		if (!without && !r->wipeonfork && !shared)
			CHECK(o->child_fork != o->drv_before || r->child == CHILD_EXITS,
			      "a page shared at fork stayed the parent's only once the child left");
		if (r->child == CHILD_READS_DEVICE)
			CHECK(!strcmp(o->child_sees, "pre-fork"), "the child does not see the device");
	}
	return k;
}

static const struct copy *copy_at(const struct record *rec, bool at_fork)
{
	for (unsigned int i = 0; i < rec->n_copies; i++)
		if (!strcmp(rec->copies[i].at, "fork") == at_fork)
			return &rec->copies[i];
	return NULL;
}

/*
 * The kernel's own view (rows/why.c), where it was recorded: the copies its trace shows must be the
 * ones the PFNs and the verdict call for, and a GUP reference must show in the driver's refcount.
 */
static unsigned int why_checks(const struct record *rec, struct check *c)
{
	const struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
	const struct row *r = rec->row;
	const struct copy *fork = copy_at(rec, true), *fault = copy_at(rec, false);
	const struct page_state *drv = &rec->page_state[STEP_AFTER_FORK][PARTY_DEVICE];
	unsigned int k = 0;
	const char *name;

	for (int s = STEP_BEFORE_FORK; s < NSTEPS; s++)
		CHECK(rec->page_state[s][PARTY_PARENT].valid &&
		      (!r->pindma.mode || rec->page_state[s][PARTY_DEVICE].valid),
		      "the kernel reported the page state at every step");
	if (r->dontfork && !r->dofork) {
		CHECK(!rec->n_copies, "under MADV_DONTFORK the kernel's trace shows no copy");
	} else if (o->par_after != o->par_before && r->pindma.repin_ro) {
		CHECK(fault && !strcmp(fault->for_whom, "parent") && !strcmp(fault->at, "unshare") &&
		      fault->new_pfn == o->par_after,
		      "the kernel's trace shows the re-pin's unshare fault making the parent's new "
		      "page");
		CHECK(!fork, "and no copy at fork");
	} else if (o->par_after != o->par_before) {
		CHECK(fault && !strcmp(fault->for_whom, "parent") && fault->new_pfn == o->par_after,
		      "the kernel's trace shows the parent's write making its new page");
		CHECK(!fork, "and no copy at fork");
	} else if (o->child_fork && o->child_fork != o->par_before) {
		CHECK(fork && !strcmp(fork->for_whom, "child") && fork->new_pfn == o->child_fork,
		      "the kernel's trace shows fork making the child's page");
		CHECK(!fault, "and no copy for the parent");
	} else {
		CHECK(!rec->n_copies, "the kernel's trace shows no copy: no PFN moved");
	}
	/* A shared mapping's page has the page cache's reference besides its mappings'. */
	if (r->pindma.mode == PINDMA_MODE_GUP)
		CHECK(drv->valid && drv->refcount > why_mapcount(drv, &name) +
		      (r->mem == MEM_SHARED), "the driver's page has a refcount above its map count "
		      "%safter the fork (the GUP reference)",
		      r->mem == MEM_SHARED ? "and the page cache's " : "");
	return k;
}

static const char *mode_name(uint32_t mode)
{
	return mode == PINDMA_MODE_GUP ? "GUP" : mode == PINDMA_MODE_PIN_LONGTERM ? "PIN" : "mlock";
}

static const char *mem_name(enum memkind m)
{
	return m == MEM_THP ? "THP" : m == MEM_HUGETLB ? "huge" : m == MEM_SHARED ? "shm" : "page";
}

/* The PFNs a page went through, in hex, "before->after" ("-" where none was present). */
static void pfn_chain(char *buf, size_t n, const uint64_t *pfns, int count)
{
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < count && len < n; i++) {
		const char *arrow = i ? "->" : "";

		if (pfns[i])
			len += snprintf(buf + len, n - len, "%s%llx", arrow,
					(unsigned long long)pfns[i]);
		else
			len += snprintf(buf + len, n - len, "%s-", arrow);
	}
}

static void pindma_header(FILE *f)
{
	fprintf(f, "PFNs in hex, before->after the fork->after the parent's write\n");
	fprintf(f, "%2s %-34s %-5s %-4s %-8s %-8s %-8s %-13s %-20s %-13s %-9s %-8s %-8s\n", "#",
		"row", "mode", "mem", "DONTFORK", "dev->par", "par->dev", "driver pfn", "parent pfn",
		"child pfn", "child sees", "observed", "expected");
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

static void pindma_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
	const struct row *r = rec->row;
	char drv[48], par[64], chi[48];
	bool dev = r->pindma.mode != 0, played = rec->observed[0];

	pfn_chain(drv, sizeof(drv), (const uint64_t[]){ o->drv_before, o->drv_after }, 2);
	pfn_chain(par, sizeof(par), (const uint64_t[]){ o->par_before, o->par_fork, o->par_after }, 3);
	pfn_chain(chi, sizeof(chi), (const uint64_t[]){ o->child_fork, o->child_after }, 2);
	if (!o->child_has_range)
		snprintf(chi, sizeof(chi), "none");
	if (!played)
		fprintf(f, "%2u %-34s %-5s %-4s %-8s %-8s %-8s %-13s %-20s %-13s %-9s %-8s %-8s %s\n",
			i, r->name, mode_name(r->pindma.mode), mem_name(r->mem),
			r->dofork ? "then DO" : yes(r->dontfork), "-", "-", "-", "-", "-", "-",
			"-", rec->expected[0] ? rec->expected : "none",
			record_status_name(rec->status));
	else
		fprintf(f, "%2u %-34s %-5s %-4s %-8s %-8s %-8s %-13s %-20s %-13s %-9s %-8s %-8s %s\n",
			i, r->name, mode_name(r->pindma.mode), mem_name(r->mem),
			r->dofork ? "then DO" : yes(r->dontfork),
			dev ? yes(o->device_write_seen) : "-",
			dev && !r->pindma.repin_ro ? yes(o->parent_write_seen) : "-",
			dev ? drv : "-", par, chi, o->child_sees, rec->observed,
			rec->expected[0] ? rec->expected : "none", record_status_name(rec->status));
}

/* The article's three pictures, drawn from the measured PFNs: pages lettered in the order seen. */
static void pindma_picture(FILE *f, const struct record *rec)
{
	const struct pindma_obs *o = ROW_OBS(rec, struct pindma_obs);
	const char *who[] = { "parent", "child ", "driver" };
	uint64_t stage[3][3] = {
		{ o->par_before, 0, o->drv_before },
		{ o->par_fork, o->child_fork, o->drv_before },
		{ o->par_after, o->child_after ? o->child_after : o->child_fork, o->drv_after },
	};
	uint64_t pages[9];
	int npages = 0;

	fprintf(f, "  %s: %s\n", rec->row->name, rec->row->title);
	fprintf(f, "    %-28s %-28s %s\n", "before fork", "after fork", "after the parent's write");
	for (int w = 0; w < 3; w++) {
		fprintf(f, "   ");
		for (int st = 0; st < 3; st++) {
			uint64_t pfn = stage[st][w];
			char cell[64];
			int p;

			for (p = 0; p < npages && pages[p] != pfn; p++)
				;
			if (pfn && p == npages)
				pages[npages++] = pfn;
			if (!pfn)
				snprintf(cell, sizeof(cell), "%s    (none)", who[w]);
			else
				snprintf(cell, sizeof(cell), "%s -> page %c (pfn %llx)", who[w], 'A' + p,
					 (unsigned long long)pfn);
			fprintf(f, st < 2 ? " %-28s" : " %s", cell);
		}
		fprintf(f, "\n");
	}
	why_print(f, rec);
}

/* The play, NULL where this program does not link it (row.h). */
#pragma weak play_pindma

static const struct field pindma_fields[] = {
	OBS_FIELD(pindma_obs, F_U64, drv_before), OBS_FIELD(pindma_obs, F_U64, par_before),
	OBS_FIELD(pindma_obs, F_U64, par_fork), OBS_FIELD(pindma_obs, F_U64, child_fork),
	OBS_FIELD(pindma_obs, F_U64, drv_after), OBS_FIELD(pindma_obs, F_U64, par_after),
	OBS_FIELD(pindma_obs, F_U64, child_after), OBS_FIELD(pindma_obs, F_U64, repin),
	OBS_FIELD(pindma_obs, F_BOOL, control_moved), OBS_FIELD(pindma_obs, F_BOOL, device_write_seen),
	OBS_FIELD(pindma_obs, F_BOOL, parent_write_seen), OBS_FIELD(pindma_obs, F_BOOL, device_reads_own),
	OBS_FIELD(pindma_obs, F_BOOL, child_has_range), OBS_FIELD(pindma_obs, F_BOOL, child_prefork),
	OBS_FIELD(pindma_obs, F_STR, child_sees), OBS_FIELD(pindma_obs, F_U32, engine),
	OBS_FIELD(pindma_obs, F_I64, edu_irqs), OBS_FIELD(pindma_obs, F_U64, edu_dst_pfn),
	OBS_FIELD(pindma_obs, F_BOOL, thp), OBS_FIELD(pindma_obs, F_BOOL, hugetlb),
	OBS_FIELD(pindma_obs, F_STR, vma_flags),
	{ NULL },
};

const struct row_family family_pindma = {
	.name = "pindma",
	.fields = pindma_fields,
	.play = play_pindma,
	.verdict = pindma_verdict,
	.checks = pindma_checks,
	.table_header = pindma_header,
	.table_line = pindma_line,
	.picture = pindma_picture,
	.why = why_print_only,
};
