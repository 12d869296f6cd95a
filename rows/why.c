// SPDX-License-Identifier: GPL-2.0
/*
 * Why a pin row ends as it does, from the kernel itself: recorded here, said by why_print.c.
 *
 * The page state: at each step, for the page of each party (the device's, from PINDMA_IOC_QUERY;
 * the parent's and the child's, from pagemap), what pindma's root-only debugfs file reports
 * (drivers/pindma/pagestate.c): refcount, map count (6.1 the page's, 6.12 the folio's), pin count,
 * maybe DMA-pinned, PageAnonExclusive.
 * It is read by PFN without a reference, as /proc/kpagecount is, so reading does not move what the
 * copy-on-write decisions look at.
 *
 * The copies: from the fork to the end of the device's transfer, the kernel's own tracing, in an
 * instance of tracefs of the row's own: the mm_page_alloc tracepoint, filtered to the parent's pid,
 * with a stack trace per event, and a kprobe event on the function that takes a hugetlb page from the
 * pool. Each PFN change the row observed is matched with the allocation of that PFN (hugetlb: the
 * pool's event of the same kind); the stack says where (fork, or a fault) and which function made
 * the copy, the first of the era's copy functions it holds (rows/expect.c). A function the build
 * inlined cannot appear in a stack: the record says so. A PFN change the trace does not explain is
 * said too, never guessed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab.h"
#include "why.h"

#define TRACEFS "/sys/kernel/tracing"

static char instance[128];	/* this process's tracefs instance, while a fork is traced */

static void note(struct record *rec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct record *rec, const char *fmt, ...)
{
	size_t n = strlen(rec->why_note);
	va_list ap;

	if (n && n < sizeof(rec->why_note) - 2) {
		rec->why_note[n++] = ';';
		rec->why_note[n++] = ' ';
		rec->why_note[n] = 0;
	}
	va_start(ap, fmt);
	vsnprintf(rec->why_note + n, sizeof(rec->why_note) - n, fmt, ap);
	va_end(ap);
}

void why_step(struct record *rec, enum step step, uint64_t device, uint64_t parent,
	      uint64_t child)
{
	const uint64_t pfn[NPARTIES] = { device, parent, child };
	struct lab_page_state st;

	rec->why = true;
	for (int p = 0; p < NPARTIES; p++) {
		struct page_state *s = &rec->page_state[step][p];

		if (!pfn[p])
			continue;
		if (lab_page_state(pfn[p], &st)) {
			if (!(rec->why_lacks & WHY_LACKS_STATE))
				note(rec, "page state not read: %s", strerror(errno));
			rec->why_lacks |= WHY_LACKS_STATE;
			continue;
		}
		*s = (struct page_state){
			.valid = true, .pfn = pfn[p], .refcount = st.refcount,
			.page_mapcount = st.page_mapcount, .folio_mapcount = st.folio_mapcount,
			.pincount = st.pincount,
			.maybe_pinned = st.maybe_pinned, .anon_exclusive = st.anon_exclusive,
		};
	}
}

static int trace_write(const char *file, const char *value)
{
	char path[sizeof(instance) + 160];

	snprintf(path, sizeof(path), "%s/%s", instance, file);
	return lab_write_str(path, value);
}

/* A kprobe event (lab_<fn>) on the hugetlb pool's allocator; kprobe events are defined globally. */
static void define_probe(const char *fn)
{
	char def[128];
	int fd;

	/*
	 * A jump-optimized kprobe's stack trace ends in its trampoline (seen on the debug kernel,
	 * whose probe at alloc_huge_page+0 is not an ftrace site): the frames that say which copy
	 * this is are lost. The int3 path unwinds through the exception frame.
	 */
	lab_write_str("/proc/sys/debug/kprobes-optimization", "0");
	snprintf(def, sizeof(def), "p:lab/%s %s\n", fn, fn);
	fd = open(TRACEFS "/kprobe_events", O_WRONLY | O_APPEND);
	if (fd < 0)
		return;
	/* Defined already (EEXIST) is as good. */
	if (write(fd, def, strlen(def)) < 0 && errno != EEXIST)
		errno = 0;
	close(fd);
}

void why_fork_begin(struct record *rec)
{
	const struct era_rules *rules = expect_rules();
	char filter[64], trigger[80], path[128];

	rec->why = true;
	if (!rules) {
		rec->why_lacks |= WHY_LACKS_COPIES;
		note(rec, "no rules for this kernel: copies not traced");
		return;
	}
	snprintf(instance, sizeof(instance), TRACEFS "/instances/lab-%d", getpid());
	if (mkdir(instance, 0700) && errno != EEXIST) {
		rec->why_lacks |= WHY_LACKS_COPIES;
		note(rec, "copies not traced: %s: %s", instance, strerror(errno));
		instance[0] = 0;
		return;
	}
	define_probe(rules->hugetlb_alloc_fn);
	snprintf(filter, sizeof(filter), "common_pid == %d", getpid());
	snprintf(trigger, sizeof(trigger), "stacktrace if %s", filter);
	if (trace_write("events/kmem/mm_page_alloc/filter", filter) ||
	    trace_write("events/kmem/mm_page_alloc/trigger", trigger) ||
	    trace_write("events/kmem/mm_page_alloc/enable", "1")) {
		rec->why_lacks |= WHY_LACKS_COPIES;
		note(rec, "copies not traced: mm_page_alloc: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "events/lab/%s/trigger", rules->hugetlb_alloc_fn);
	if (trace_write(path, trigger)) {
		rec->why_lacks |= WHY_LACKS_HUGETLB_POOL;
		note(rec, "hugetlb pool not traced: no kprobe on %s", rules->hugetlb_alloc_fn);
	}
	snprintf(path, sizeof(path), "events/lab/%s/enable", rules->hugetlb_alloc_fn);
	trace_write(path, "1");
	trace_write("tracing_on", "1");
}

/* One event of the trace: a page allocation (pfn, or 0 for the hugetlb pool's) and its stack. */
struct event {
	uint64_t pfn;
	bool hugetlb;
	char frames[24][48];
	int n;
};

static bool has_frame(const struct event *e, const char *fn)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->frames[i], fn))
			return true;
	return false;
}

/* The first of the blank-separated functions that the stack holds, or NULL. */
static const char *first_of(const struct event *e, const char *fns, char *out, size_t n)
{
	char list[256], *tok, *save;

	snprintf(list, sizeof(list), "%s", fns);
	for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (has_frame(e, tok)) {
			snprintf(out, n, "%s", tok);
			return out;
		}
	return NULL;
}

static int read_events(struct event *ev, int max)
{
	char path[sizeof(instance) + 8], line[256];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", instance);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p, fn[48];

		if (line[0] == '#')
			continue;
		p = strstr(line, "mm_page_alloc: ");
		if (p || strstr(line, ": (")) {
			if (n + 1 >= max)
				break;
			n++;
			memset(&ev[n], 0, sizeof(ev[n]));
			p = p ? strstr(p, "pfn=0x") : NULL;
			if (p)
				ev[n].pfn = strtoull(p + 6, NULL, 16);
			else
				ev[n].hugetlb = true;
			continue;
		}
		if (n >= 0 && sscanf(line, " => %47s", fn) == 1 && ev[n].n < 24) {
			/* "copy_pte_range+0x1c4/0x5e0" or "copy_pte_range": the name only. */
			fn[strcspn(fn, "+.")] = 0;
			snprintf(ev[n].frames[ev[n].n++], sizeof(ev[n].frames[0]), "%s", fn);
		}
	}
	fclose(f);
	return n + 1;
}

static void stop_tracing(void)
{
	const struct era_rules *rules = expect_rules();
	char path[128];

	trace_write("tracing_on", "0");
	trace_write("events/kmem/mm_page_alloc/enable", "0");
	trace_write("events/kmem/mm_page_alloc/trigger", "!stacktrace");
	snprintf(path, sizeof(path), "events/lab/%s/enable", rules->hugetlb_alloc_fn);
	trace_write(path, "0");
}

/*
 * The era's copy functions that this build inlined (a static function the compiler inlined is no
 * symbol of the running kernel), found once per process: /proc/kallsyms is long.
 */
static const char *inlined_fns(void)
{
	static char inlined[200];
	static bool done;
	const struct era_rules *rules = expect_rules();
	char fns[256], line[256], name[48], *tok[16], *save;
	bool there[16] = { false };
	int n = 0;
	FILE *f;

	if (done)
		return inlined;
	done = true;
	snprintf(fns, sizeof(fns), "%s %s", rules->fork_copy_fns, rules->fault_copy_fns);
	for (char *t = strtok_r(fns, " ", &save); t && n < 16; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %47s", name) == 1)
			for (int i = 0; i < n; i++)
				there[i] |= !strcmp(name, tok[i]);
	if (f)
		fclose(f);
	for (int i = 0; i < n; i++)
		if (!there[i])
			snprintf(inlined + strlen(inlined), sizeof(inlined) - strlen(inlined), "%s%s",
				 inlined[0] ? ", " : "", tok[i]);
	return inlined;
}

static void add_copy(struct record *rec, const char *at, const char *for_whom, const char *by,
		     uint64_t old_pfn, uint64_t new_pfn)
{
	struct copy *c;

	if (rec->n_copies == MAX_COPIES)
		return;
	c = &rec->copies[rec->n_copies++];
	snprintf(c->at, sizeof(c->at), "%s", at);
	snprintf(c->for_whom, sizeof(c->for_whom), "%s", for_whom);
	snprintf(c->by, sizeof(c->by), "%s", by);
	c->old_pfn = old_pfn;
	c->new_pfn = new_pfn;
}

/*
 * The copy that made new_pfn: a fork's (in dup_mmap) or a fault's. Returns whether the trace holds
 * one; a hugetlb copy is matched by its kind only, the pool's event carrying no PFN.
 */
static bool match(struct record *rec, const struct event *ev, int n, bool at_fork, uint64_t old_pfn,
		  uint64_t new_pfn, bool hugetlb)
{
	const struct era_rules *rules = expect_rules();
	const char *fns = at_fork ? rules->fork_copy_fns : rules->fault_copy_fns;
	char by[48];

	for (int i = n - 1; i >= 0; i--) {
		const struct event *e = &ev[i];
		bool fork_path = has_frame(e, "dup_mmap") || has_frame(e, "copy_page_range");
		bool gup = has_frame(e, "faultin_page") || has_frame(e, "__get_user_pages");

		if (fork_path != at_fork || e->hugetlb != hugetlb)
			continue;
		if (!hugetlb && e->pfn != new_pfn)
			continue;
		if (!first_of(e, fns, by, sizeof(by)))
			continue;
		add_copy(rec, at_fork ? "fork" : gup ? "unshare" : "write-fault",
			 at_fork ? "child" : "parent", by, old_pfn, new_pfn);
		return true;
	}
	return false;
}

void why_fork_end(struct record *rec, uint64_t par_before, uint64_t child_fork,
		  uint64_t par_after)
{
	static struct event ev[1024];
	bool hugetlb = rec->row->mem == MEM_HUGETLB;
	int n;

	if (!instance[0])
		return;
	stop_tracing();
	n = read_events(ev, sizeof(ev) / sizeof(ev[0]));
	if (n < 0) {
		rec->why_lacks |= WHY_LACKS_COPIES;
		note(rec, "the trace could not be read: %s", strerror(errno));
	} else {
		if (child_fork && child_fork != par_before &&
		    !match(rec, ev, n, true, par_before, child_fork, hugetlb))
			note(rec, "the trace shows no fork copy that made the child's %llx",
			     (unsigned long long)child_fork);
		if (par_after && par_after != par_before &&
		    !match(rec, ev, n, false, par_before, par_after, hugetlb))
			note(rec, "the trace shows no fault copy that made the parent's %llx",
			     (unsigned long long)par_after);
	}
	/* Say which of the era's copy functions this build inlined: no stack can name them. */
	if (inlined_fns()[0])
		note(rec, "inlined in this build, so a stack names their caller: %s", inlined_fns());
	rmdir(instance);
	instance[0] = 0;
}
