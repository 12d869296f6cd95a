// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's view of a pin row, said (why.h): under the row's picture, the recorded page state
 * and copies (why.c records them) in sentences that follow from them and from the rules of this
 * kernel's era (rows/expect.c), never from the row's name.
 */
#include <stdio.h>
#include <string.h>

#include "pindma_obs.h"
#include "why.h"

static char letter(uint64_t *seen, int *n, uint64_t pfn)
{
	int i;

	for (i = 0; i < *n && seen[i] != pfn; i++)
		;
	if (i == *n && *n < 8)
		seen[(*n)++] = pfn;
	return 'A' + i;
}

int64_t why_mapcount(const struct page_state *s, const char **name)
{
	if (s->page_mapcount >= 0) {
		*name = "page mapcount";
		return s->page_mapcount;
	}
	*name = "folio mapcount";
	return s->folio_mapcount;
}

static void state_words(FILE *f, const struct page_state *s, char l)
{
	const char *name;
	int64_t mapcount = why_mapcount(s, &name);

	fprintf(f, "page %c: refcount %lld, %s %lld, %s, %s", l, (long long)s->refcount, name,
		(long long)mapcount, s->maybe_pinned ? "maybe pinned" : "not pinned",
		s->anon_exclusive ? "exclusive" : "not exclusive");
	if (s->pincount >= 0)
		fprintf(f, ", pincount %lld", (long long)s->pincount);
}

/* What each VmFlag a pin row records (pindma_obs.vma_flags) makes fork give the child. */
static const struct {
	const char *flag, *says;
} vma_rules[] = {
	{ "dc", "VM_DONTCOPY (MADV_DONTFORK): fork leaves the range out of the child" },
	{ "sh", "VM_SHARED: fork copies no page table for it, the child's first touch maps the same "
		"page, and no write copies it" },
	{ "wf", "VM_WIPEONFORK (MADV_WIPEONFORK): fork gives the child the range with no page in "
		"it, and the parent's page stays its own" },
};

static void vma_words(FILE *f, const char *flags)
{
	char copy[16], *save, *t;

	snprintf(copy, sizeof(copy), "%s", flags);
	for (t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
		for (unsigned int i = 0; i < sizeof(vma_rules) / sizeof(vma_rules[0]); i++)
			if (!strcmp(t, vma_rules[i].flag))
				fprintf(f, "      the range's VmFlags has %s: %s\n", t, vma_rules[i].says);
}

/*
 * The lines under a pin row's picture. Every sentence follows from the recorded state and the
 * rule of this kernel's era (rows/expect.c), never from the row's name.
 */
void why_print(FILE *f, const struct record *rec)
{
	/*
	 * The era's rule and the build's note on inlining are the same for every row a program
	 * prints: each is said at the first row that needs it, not again under every picture.
	 */
	static const char *said_rule;
	static char said_note[sizeof(rec->why_note)];
	const struct era_rules *rules = expect_rules();
	const char *vmas = ROW_OBS(rec, struct pindma_obs)->vma_flags;
	const struct page_state *s;
	bool repin = rec->row->pindma.repin_ro;
	const char *rule;
	uint64_t seen[8];
	int n = 0, p;

	if (!rec->why)
		return;
	fprintf(f, "    why, from the kernel (%s rules):\n", rec->table);
	for (int step = STEP_BEFORE_FORK; step <= STEP_AFTER_FORK; step++) {
		s = &rec->page_state[step][PARTY_PARENT];
		if (!s->valid)
			continue;
		fprintf(f, "      %s: the parent's ", step == STEP_BEFORE_FORK ? "before the fork" :
			repin ? "before its re-pin" : "before its write");
		state_words(f, s, letter(seen, &n, s->pfn));
		fprintf(f, "\n");
	}
	vma_words(f, vmas);
	s = &rec->page_state[STEP_AFTER_FORK][PARTY_PARENT];
	p = PARTY_CHILD;
	if (s->valid && strstr(vmas, "sh")) {
		fprintf(f, "      page %c is a shared mapping's: the parent's write goes to it, "
			"whoever else maps or holds it\n", letter(seen, &n, s->pfn));
	} else if (s->valid && rules) {
		const struct page_state *c = &rec->page_state[STEP_AFTER_FORK][p];
		const struct page_state *d = &rec->page_state[STEP_AFTER_FORK][PARTY_DEVICE];
		bool huge = rec->row->mem == MEM_HUGETLB;
		const char *dname, *sname;
		int64_t dmap = why_mapcount(d, &dname), smap = why_mapcount(s, &sname);

		if (d->valid && d->pfn == s->pfn && d->refcount > dmap)
			fprintf(f, "      the device holds the parent's page: refcount %lld exceeds its "
				"%s %lld\n", (long long)d->refcount, dname, (long long)dmap);
		if (c->valid && c->pfn != s->pfn)
			fprintf(f, "      the child has its own page %c: %s\n",
				letter(seen, &n, c->pfn), rules->fork_copies_pinned);
		rule = huge ? rules->hugetlb_reuse : repin ? rules->unshare : rules->write_fault_reuse;
		if (rule != said_rule)
			fprintf(f, "      rule: %s\n", rule);
		said_rule = rule;
		if (huge)
			fprintf(f, "      page %c has %s %lld, so the parent's write %s\n",
				letter(seen, &n, s->pfn), sname, (long long)smap,
				smap == 1 ? "reuses it" : "copies it");
		else
			fprintf(f, "      page %c is %s, so the parent's %s %s\n",
				letter(seen, &n, s->pfn), s->anon_exclusive ? "exclusive" :
				s->refcount == 1 ? "not exclusive but referenced once" :
				"neither exclusive nor referenced once",
				repin ? "read-only pin" : "write",
				s->anon_exclusive ? (repin ? "pins it as it is" : "reuses it") :
				s->refcount == 1 ? "reuses it" :
				repin ? "takes the unshare fault, which copies it" : "copies it");
	}
	for (unsigned int i = 0; i < rec->n_copies; i++) {
		const struct copy *c = &rec->copies[i];

		fprintf(f, "      copy at %s for the %s by %s: page %c (%llx) -> page %c (%llx)\n",
			c->at, c->for_whom, c->by, letter(seen, &n, c->old_pfn),
			(unsigned long long)c->old_pfn, letter(seen, &n, c->new_pfn),
			(unsigned long long)c->new_pfn);
	}
	if (!rec->n_copies)
		fprintf(f, "      no copy: the kernel's trace shows none for these pages\n");
	if (rec->why_note[0] && strcmp(rec->why_note, said_note))
		fprintf(f, "      (%s)\n", rec->why_note);
	snprintf(said_note, sizeof(said_note), "%s", rec->why_note);
}

void why_print_only(FILE *f, const struct record *rec)
{
	fprintf(f, "%s on Linux %s: %s, %s (expected %s)\n", rec->row->name, rec->kernel,
		rec->row->title, rec->observed[0] ? rec->observed : record_status_words(rec->status),
		rec->expected[0] ? rec->expected : "none");
	why_print(f, rec);
}
