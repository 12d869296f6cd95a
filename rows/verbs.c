// SPDX-License-Identifier: GPL-2.0
/*
 * The verbs family described: an MR registered on Soft-RoCE, the HCA's and the parent's view of it
 * after a fork and a parent write; or what rdma-core's fork support costs, as the outcome it gives.
 * Playing is verbs_play.c (linked only into verbs_demo, with libibverbs).
 */
#include <string.h>

#include "verbs_obs.h"

static const char *verbs_verdict(const struct record *rec, char *why, size_t n)
{
	const struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);

	if (rec->row->verbs.kind == VERBS_MR_SPLITS_VMAS && !strcmp(o->outcome, "all-ok")) {
		/* Every MR registered: the fork decides, from what the HCA and the parent saw. */
		if (!o->control_moved || !o->hca_reads_own)
			return snprintf(why, n, "the HCA's control write or read-back failed"), NULL;
		return o->hca_sees_parent && o->parent_sees_hca ? "all-ok" : "incoherent";
	}
	if (rec->row->verbs.kind != VERBS_HCA) {
		if (!o->outcome[0])
			return snprintf(why, n, "no outcome"), NULL;
		return o->outcome;
	}
	if (!o->control_moved)
		return snprintf(why, n, "the HCA's control write before the fork did not reach the "
			       "parent's page"), NULL;
	if (!o->hca_reads_own)
		return snprintf(why, n, "the HCA did not read back what it wrote"), NULL;
	if (o->hca_sees_parent && o->parent_sees_hca)
		return "COHERENT";
	if (!o->hca_sees_parent && !o->parent_sees_hca)
		return "ORPHANED";
	snprintf(why, n, "hca->par %d, par->hca %d disagree", o->parent_sees_hca, o->hca_sees_parent);
	return NULL;
}

/* What rdma-core and the kernel must say, from the row's stage alone. */
static unsigned int verbs_checks(const struct record *rec, struct check *c)
{
	const struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);
	const struct row *r = rec->row;
	bool on = r->fork_switch == SWITCH_ON, support = r->verbs.fork_init || r->verbs.fork_safe_env;
	/* rdma-core says UNNEEDED whenever the kernel reports copy-on-fork. */
	const char *status = !on ? "UNNEEDED" : support ? "ENABLED" : "DISABLED";
	unsigned int k = 0;

	CHECK(o->fork_switch == (on ? 1 : 0) || (o->fork_switch == -1 && !on),
	      "vm.fork_share_pinned was %d", on);
	CHECK(!strcmp(o->fork_status, status), "ibv_is_fork_initialized() says %s", status);
	CHECK(o->copy_on_fork == !on, "RDMA netlink says copy-on-fork %s (rdma system show)",
	      on ? "off" : "on");
	if (r->verbs.kind == VERBS_HCA) {
		/*
		 * The child's own pagemap says what fork gave it: nothing where rdma-core marked
		 * the MR MADV_DONTFORK (its fork support), a copy where fork copies the pinned page
		 * (the switch off), the pinned page itself, with the HCA's write in it, where the
		 * switch makes fork share it and the parent's write moved the parent away.
		 */
		if (support)
			CHECK(!o->child_pfn, "the child has no page where the MR is (MADV_DONTFORK)");
		else if (!on)
			CHECK(o->child_pfn && o->child_pfn != o->par_pfn_before &&
			      !o->child_sees_writes && o->par_pfn_after == o->par_pfn_before,
			      "the child has a copy; the parent and the HCA keep the pinned page");
		else
			CHECK(o->child_pfn && o->child_pfn == o->par_pfn_before &&
			      o->child_sees_writes && o->par_pfn_after != o->par_pfn_before,
			      "the child keeps the pinned page, with the HCA's write; the parent moved");
		return k;
	}
	if (!strcmp(rec->observed, "SIGSEGV"))
		CHECK(o->page_dc, "the page the child lacks is MADV_DONTFORK (VmFlags dc)");
	if (r->verbs.no_init)
		CHECK(!o->page_dc, "without fork support nothing is MADV_DONTFORK");
	if (r->verbs.kind != VERBS_MR_SPLITS_VMAS)
		return k;
	/*
	 * The kernel's own count says why registration stopped: a DONTFORK in the middle of a VMA
	 * splits it twice, and a split fails once the VMAs reach vm.max_map_count (split_vma()'s
	 * check, 6.1's mm/madvise.c and 6.12's mm/vma.c). The lab's kernels have no [vsyscall]
	 * (X86_VSYSCALL_EMULATION off), so /proc/self/maps counts exactly the process's VMAs.
	 */
	CHECK(o->max_map_count > 0 && o->vmas_before < o->max_map_count,
	      "the process's VMAs were below vm.max_map_count before the MRs");
	if (strcmp(o->outcome, "all-ok")) {
		/* One VMA for the first MR (at the mapping's start), two for each later one, and the
		 * first split of the one refused, which stays.
		 */
		CHECK(o->vmas == o->max_map_count && o->vmas == o->vmas_before + 2 * o->mrs,
		      "registration stopped with the process's VMAs at vm.max_map_count, two per MR");
		return k;
	}
	CHECK(r->verbs.no_init ? o->vmas == o->vmas_before : o->vmas > o->vmas_before,
	      r->verbs.no_init ? "without fork support no MR split the mapping" :
	      "with fork support the MRs split the mapping");
	/* As near the limit as the row with fork support, which these MRs would have passed. */
	CHECK(o->vmas_before + 2 * o->mrs > o->max_map_count,
	      "two VMAs per MR would have passed vm.max_map_count");
	/* The fork covered the page: the child has a page of its own there, and not the writes. */
	CHECK(o->child_pfn && o->child_pfn != o->par_pfn_before && !o->child_sees_writes &&
	      o->par_pfn_after == o->par_pfn_before,
	      "the child has a copy of the MR's page, the parent and the HCA keep theirs");
	return k;
}

static void verbs_header(FILE *f)
{
	fprintf(f, "hca->par, par->hca: whether each saw the other's write after the fork (a cost row: "
		"its MR's size, or how many MRs, and whether its page is MADV_DONTFORK); netlink: "
		"`rdma system show`'s copy-on-fork\n");
	fprintf(f, "%2s %-40s %-6s %-15s %-15s %-7s %-10s %-10s %-8s %-8s\n", "#", "row", "switch",
		"fork support", "is_fork_init()", "netlink", "hca->par", "par->hca", "observed",
		"expected");
}

static const char *support(const struct row *r)
{
	return r->verbs.hugepages_safe_env ? "HUGEPAGES_SAFE" : r->verbs.fork_init ?
	       "ibv_fork_init" : r->verbs.fork_safe_env ? "RDMAV_FORK_SAFE" : "-";
}

static void verbs_line(FILE *f, unsigned int i, const struct record *rec)
{
	const struct verbs_obs *o = ROW_OBS(rec, struct verbs_obs);
	const struct row *r = rec->row;
	bool played = rec->observed[0];
	char a[24], b[24];

	if (r->verbs.kind == VERBS_HCA) {
		snprintf(a, sizeof(a), "%s", played ? o->parent_sees_hca ? "yes" : "no" : "-");
		snprintf(b, sizeof(b), "%s", played ? o->hca_sees_parent ? "yes" : "no" : "-");
	} else {
		snprintf(a, sizeof(a), "%s", played ? o->detail : "-");
		snprintf(b, sizeof(b), "%s", played ? o->page_dc ? "dc" : "-" : "-");
	}
	fprintf(f, "%2u %-40s %-6s %-15s %-15s %-7s %-10s %-10s %-8s %-8s %s\n", i, r->name,
		r->fork_switch == SWITCH_ON ? "on" : "off", support(r), played ? o->fork_status : "-",
		!played ? "-" : o->copy_on_fork == 0 ? "cof off" :
		o->copy_on_fork == 1 ? "cof on" : "?", a, b,
		played ? rec->observed : "-", rec->expected[0] ? rec->expected : "none",
		record_status_name(rec->status));
}

/* The play and verbs_play.c's child, NULL where this program does not link them (row.h). */
int verbs_row_child(const char *name);
#pragma weak play_verbs
#pragma weak verbs_row_child

static const struct field verbs_fields[] = {
	OBS_FIELD(verbs_obs, F_I64, fork_switch), OBS_FIELD(verbs_obs, F_STR, fork_status),
	OBS_FIELD(verbs_obs, F_I64, copy_on_fork), OBS_FIELD(verbs_obs, F_BOOL, control_moved),
	OBS_FIELD(verbs_obs, F_BOOL, hca_sees_parent), OBS_FIELD(verbs_obs, F_BOOL, parent_sees_hca),
	OBS_FIELD(verbs_obs, F_BOOL, hca_reads_own), OBS_FIELD(verbs_obs, F_STR, detail),
	OBS_FIELD(verbs_obs, F_BOOL, page_dc), OBS_FIELD(verbs_obs, F_STR, outcome),
	OBS_FIELD(verbs_obs, F_U64, par_pfn_before), OBS_FIELD(verbs_obs, F_U64, par_pfn_after),
	OBS_FIELD(verbs_obs, F_U64, child_pfn), OBS_FIELD(verbs_obs, F_BOOL, child_sees_writes),
	OBS_FIELD(verbs_obs, F_I64, max_map_count), OBS_FIELD(verbs_obs, F_I64, vmas_before),
	OBS_FIELD(verbs_obs, F_I64, vmas), OBS_FIELD(verbs_obs, F_I64, mrs),
	{ NULL },
};

const struct row_family family_verbs = {
	.name = "verbs",
	.title = "ibv_reg_mr + fork over Soft-RoCE (rxe0 on lo)",
	.device = "rxe",
	.fields = verbs_fields,
	.play = play_verbs,
	.reads_switch = true,
	.verdict = verbs_verdict,
	.checks = verbs_checks,
	.table_header = verbs_header,
	.table_line = verbs_line,
	.row_child = verbs_row_child,
};
