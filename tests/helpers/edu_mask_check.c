// SPDX-License-Identifier: GPL-2.0
/*
 * edu_mask_check: edu DMA into pinned pages that lie beyond the device's address width, and into
 * pages within it, through the DMA API with the mask pindma was loaded with (dma_bits). A page
 * beyond the width can only be reached through a bounce buffer (swiotlb) below the device's
 * limit; without one, pindma must refuse the transfer (ENXIO) rather than reach the DMA API's
 * overflow warning; a driver whose mask is wider than the device lets the device clamp the
 * address and move another page's bytes.
 *
 *   edu_mask_check BITS [--read-only | --no-bounce]
 *
 * BITS is the device's address width. Anonymous memory is touched until up to 4 pages beyond
 * BITS and up to 4 within it are found (by pagemap), each pinned alone; for each, the device
 * reads 999 bytes at an odd offset (DMA_READ) and, unless --read-only, writes 1000 bytes at
 * another (DMA_WRITE). A transfer is right when the bytes match, the rest of the page stays as it
 * was, and what the kernel and the device report shows the device moved them (transfer()),
 * refused when pindma answers ENXIO and the device moved nothing. --read-only is for a driver whose mask is wrong:
 * a clamped device write would land in a stranger's page. Expected: every transfer right, or
 * with --no-bounce, every transfer beyond BITS refused and every one within it right.
 * Prints each transfer and "edu_mask_check: beyond N bits: ..., within: ..."; exits 0 when all
 * went as expected, 1 when any did not, 2 when no page lies beyond BITS (nothing to judge), 3
 * when the setup failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"

#define MAXUSED 4
/* How much memory may be touched looking for pages: a 2 GiB guest keeps enough to run. */
#define REGION (1024UL << 20)
/*
 * How much is touched looking for pages within the width once those beyond are found: the pages
 * within are a control where the allocator hands them out; where it does not (all RAM beyond,
 * or the width 12), touching the whole REGION for them took seconds of each boot.
 */
#define WITHIN_SEARCH (256UL << 20)
#define CHUNK 1024	/* pages touched, then looked up in pagemap, at a time */
#define LEN 1000
/* A read one byte shorter: edu's count register tells a read's last transfer from a write's. */
#define READ_LEN (LEN - 1)
#define READ_OFF 123
#define WRITE_OFF 2001
/* The address in edu's own space of its DMA buffer (QEMU's edu: 0x40000, 4 KiB). */
#define EDU_BUF 0x40000

enum outcome { RIGHT, WRONG, REFUSED, FAILED, NOUTCOMES };

static const char *const outcome_names[] = { "right", "WRONG", "refused (ENXIO)", "FAILED" };

static unsigned char pattern(uint64_t pfn, unsigned int i)
{
	return (unsigned char)(i * 31 + pfn * 7 + 1);
}

/*
 * The evidence of what the device did, none of it the driver's word: the kernel's count of edu's
 * interrupts (one per transfer), the swiotlb_bounced events of a tracefs instance of this
 * program's (the DMA API's own report of a bounce), and edu's destination register.
 */
static char trace[128];
static unsigned int mask_bits;	/* pindma's dma_bits: a page beyond them must bounce */

/* The bounces traced since the last call, and whether one was for phys (its dev_addr). */
static unsigned int bounces(uint64_t phys, bool *seen)
{
	char path[160], line[512], *p;
	unsigned int n = 0;
	FILE *f;

	*seen = false;
	snprintf(path, sizeof(path), "%s/trace", trace);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		p = strstr(line, "swiotlb_bounced:");
		if (!p)
			continue;
		n++;
		p = strstr(p, "dev_addr=");
		*seen |= p && strtoull(p + 9, NULL, 16) == phys;
	}
	if (f)
		fclose(f);
	/* Cleared for the next transfer. */
	f = fopen(path, "w");
	if (f)
		fclose(f);
	return n;
}

static enum outcome transfer_once(int fd, uint32_t h, char *p, uint64_t pfn, bool write)
{
	uint32_t engine = PINDMA_ENGINE_EDU;
	unsigned char got[LEN], src[LEN];
	int ret;

	for (unsigned int i = 0; i < LAB_PAGE; i++)
		p[i] = (char)pattern(pfn, i);
	if (!write) {
		memset(got, 0, sizeof(got));
		ret = pindma_dma(fd, PINDMA_IOC_DMA_READ, h, READ_OFF, got, READ_LEN, &engine);
		if (ret)
			return ret == -ENXIO ? REFUSED :
			       (fprintf(stderr, "edu_mask_check: DMA_READ: %s\n", strerror(-ret)), FAILED);
		return memcmp(got, p + READ_OFF, READ_LEN) ? WRONG : RIGHT;
	}
	for (unsigned int i = 0; i < LEN; i++)
		src[i] = (unsigned char)~pattern(pfn, i);
	ret = pindma_dma(fd, PINDMA_IOC_DMA_WRITE, h, WRITE_OFF, src, LEN, &engine);
	/* A refused or failed write must not have touched the page either. */
	for (unsigned int i = 0; i < LAB_PAGE; i++) {
		bool inside = !ret && i >= WRITE_OFF && i < WRITE_OFF + LEN;
		unsigned char want = inside ? src[i - WRITE_OFF] : pattern(pfn, i);

		if ((unsigned char)p[i] != want)
			return WRONG;
	}
	if (ret)
		return ret == -ENXIO ? REFUSED :
		       (fprintf(stderr, "edu_mask_check: DMA_WRITE: %s\n", strerror(-ret)), FAILED);
	return RIGHT;
}

/*
 * A transfer the device made: two interrupts (to its buffer and back), bounced when the page lies
 * beyond pindma's dma_bits, and edu's registers holding the second: READ_LEN bytes out of its
 * buffer after a device read (the page went into the buffer first; the second goes to the
 * kernel's end of the copy, not to the page), a device write otherwise aimed at the page itself
 * (edu's destination register). A refused one: refused before the device moved anything.
 */
static enum outcome transfer(int fd, uint32_t h, char *p, uint64_t pfn, bool write)
{
	uint64_t phys = pfn * LAB_PAGE + (write ? WRITE_OFF : READ_OFF), src = 0, dst = 0, count = 0;
	long long irqs = lab_edu_irqs(), made;
	enum outcome o;
	bool bounced;

	bounces(0, &bounced);
	o = transfer_once(fd, h, p, pfn, write);
	made = lab_edu_irqs() - irqs;
	bounces(phys, &bounced);
	if (o == REFUSED && made) {
		fprintf(stderr, "edu_mask_check: refused after %lld edu interrupts\n", made);
		return WRONG;
	}
	if (o != RIGHT)
		return o;
	if (irqs < 0 || made != 2) {
		fprintf(stderr, "edu_mask_check: right bytes, but the kernel counted %lld edu "
			"interrupts, not 2: the device did not move them\n", irqs < 0 ? -1 : made);
		return WRONG;
	}
	if (pfn >> (mask_bits - 12) && !bounced) {
		fprintf(stderr, "edu_mask_check: right bytes beyond %u bits, but no swiotlb bounce "
			"of %#llx was traced\n", mask_bits, (unsigned long long)phys);
		return WRONG;
	}
	if (!write && (lab_edu_dma_regs(&src, &dst, &count) || src != EDU_BUF ||
		       count != READ_LEN || dst >> 12 == pfn)) {
		fprintf(stderr, "edu_mask_check: right bytes read, but edu's last transfer moved %llu "
			"bytes from %#llx to %#llx, not %u out of its buffer: the device did not read "
			"them\n", (unsigned long long)count, (unsigned long long)src,
			(unsigned long long)dst, READ_LEN);
		return WRONG;
	}
	if (write && !(pfn >> (mask_bits - 12)) && !bounced &&
	    (lab_edu_dma_regs(&src, &dst, &count) || dst != phys)) {
		fprintf(stderr, "edu_mask_check: right bytes, but edu's last destination is %#llx, "
			"not the page's %#llx\n", (unsigned long long)dst, (unsigned long long)phys);
		return WRONG;
	}
	return o;
}

struct found {
	char *page[MAXUSED];
	unsigned int n;
};

/*
 * Touch memory until MAXUSED pages beyond bits, and as many within, are found (or REGION is, or
 * WITHIN_SEARCH more than it took to find those beyond).
 */
static int find_pages(char *region, unsigned int bits, struct found *beyond, struct found *within)
{
	static uint64_t entries[CHUNK];
	int pagemap = open("/proc/self/pagemap", O_RDONLY);

	if (pagemap < 0)
		return -1;
	size_t beyond_at = 0;

	for (size_t first = 0; first < REGION / LAB_PAGE; first += CHUNK) {
		char *chunk = region + first * LAB_PAGE;

		if (beyond->n == MAXUSED && !beyond_at)
			beyond_at = first;
		if (beyond->n == MAXUSED &&
		    (within->n == MAXUSED || first - beyond_at >= WITHIN_SEARCH / LAB_PAGE))
			break;
		for (unsigned int i = 0; i < CHUNK; i++)
			chunk[i * LAB_PAGE] = 1;
		if (pread(pagemap, entries, sizeof(entries), (uintptr_t)chunk / LAB_PAGE * 8) !=
		    sizeof(entries)) {
			close(pagemap);
			return -1;
		}
		for (unsigned int i = 0; i < CHUNK; i++) {
			uint64_t pfn = entries[i] & ((1ULL << 55) - 1);
			struct found *f = pfn >> (bits - 12) ? beyond : within;

			if (!(entries[i] >> 63) || !pfn) {
				close(pagemap);
				errno = EPERM;
				return -1;
			}
			if (f->n < MAXUSED)
				f->page[f->n++] = chunk + i * LAB_PAGE;
		}
	}
	close(pagemap);
	return 0;
}

/* Pin one page alone and move bytes both ways (or only read); tally the outcomes. */
static int judge(int fd, char *p, unsigned int bits, bool read_only, unsigned int tally[NOUTCOMES])
{
	uint64_t pfn;
	uint32_t h;
	int ret;

	ret = pindma_pin(fd, p, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h);
	if (ret) {
		fprintf(stderr, "edu_mask_check: PIN: %s\n", strerror(-ret));
		return -1;
	}
	/* The page's PFN by pagemap: pinned long-term, it may have been moved first. */
	pfn = lab_pfn(p);
	for (int write = 0; write <= !read_only; write++) {
		enum outcome o = transfer(fd, h, p, pfn, write);

		printf("page pfn %#llx (%s %u bits): device %s %s\n", (unsigned long long)pfn,
		       pfn >> (bits - 12) ? "beyond" : "within", bits, write ? "writes" : "reads",
		       outcome_names[o]);
		tally[o]++;
	}
	return pindma_unpin(fd, h) ? -1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int bits = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 10) : 0;
	bool read_only = argc > 2 && !strcmp(argv[2], "--read-only");
	bool no_bounce = argc > 2 && !strcmp(argv[2], "--no-bounce");
	unsigned int out[NOUTCOMES] = { 0 }, in[NOUTCOMES] = { 0 };
	struct found beyond = { 0 }, within = { 0 };
	bool as_expected;
	char *region;
	int fd;

	if (bits < 12 || bits > 63 || (argc > 2 && !read_only && !no_bounce) || argc > 3) {
		fprintf(stderr, "usage: edu_mask_check BITS [--read-only | --no-bounce]\n");
		return 3;
	}
	fd = pindma_open();
	mask_bits = lab_read_int("/sys/module/pindma/parameters/dma_bits");
	if (mask_bits < 12 || lab_trace_make(trace, sizeof(trace), "edu_mask_check") ||
	    lab_trace_set(trace, "events/swiotlb/swiotlb_bounced/enable", "1")) {
		fprintf(stderr, "edu_mask_check: pindma's dma_bits, or tracing swiotlb_bounced\n");
		return 3;
	}
	region = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fd < 0 || region == MAP_FAILED) {
		fprintf(stderr, "edu_mask_check: open /dev/pindma or mmap failed\n");
		return 3;
	}
	/* Small pages only: a THP's PFNs say nothing about the next page's. */
	madvise(region, REGION, MADV_NOHUGEPAGE);
	if (find_pages(region, bits, &beyond, &within)) {
		perror("edu_mask_check: reading pagemap");
		return 3;
	}
	for (unsigned int i = 0; i < beyond.n; i++)
		if (judge(fd, beyond.page[i], bits, read_only, out))
			return 3;
	for (unsigned int i = 0; i < within.n; i++)
		if (judge(fd, within.page[i], bits, read_only, in))
			return 3;
	lab_trace_remove(trace);
	printf("edu_mask_check: beyond %u bits: %u right, %u refused, %u wrong, %u failed; "
	       "within: %u right, %u refused, %u wrong, %u failed\n", bits, out[RIGHT],
	       out[REFUSED], out[WRONG], out[FAILED], in[RIGHT], in[REFUSED], in[WRONG], in[FAILED]);
	if (!beyond.n) {
		printf("edu_mask_check: no page lies beyond %u bits: nothing judged\n", bits);
		return 2;
	}
	as_expected = !out[WRONG] && !out[FAILED] && !in[WRONG] && !in[FAILED] && !in[REFUSED] &&
		      (no_bounce ? !out[RIGHT] : !out[REFUSED]);
	return as_expected ? 0 : 1;
}
