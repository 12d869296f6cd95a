// SPDX-License-Identifier: GPL-2.0
/*
 * edu_mask_check: edu DMA into pinned pages that lie beyond the device's address width, through
 * the DMA API with the mask pindma was loaded with (dma_bits). Such a page can only be reached
 * through a bounce buffer (swiotlb) below the device's limit; a driver whose mask is wider than
 * the device lets the device clamp the address and move another page's bytes.
 *
 *   edu_mask_check BITS [--read-only]
 *
 * BITS is the device's address width. Of a 256-page buffer, up to 4 pages beyond it are used:
 * the device reads 1000 bytes at an odd offset of each (DMA_READ) and, unless --read-only, writes
 * 1000 bytes at another (DMA_WRITE); the bytes must match and the rest of the page stay as it
 * was. --read-only is for a driver whose mask is wrong: a clamped device write would land in a
 * stranger's page. Prints each page's PFN and "edu_mask_check: N of M transfers right"; exits 0
 * when all were, 1 when any was wrong, 2 when no page lies beyond BITS (nothing to judge), 3
 * when a call failed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lab.h"
#include "pindma_lib.h"

#define NPAGES 256
#define MAXUSED 4
#define LEN 1000
#define READ_OFF 123
#define WRITE_OFF 2001

static unsigned char pattern(unsigned int page, unsigned int i)
{
	return (unsigned char)(i * 31 + page * 7 + 1);
}

/* 0 when right, 1 when wrong, 3 when the call failed. */
static int transfer(int fd, uint32_t h, char *buf, unsigned int page, bool write)
{
	uint32_t engine = PINDMA_ENGINE_EDU;
	char *p = buf + (size_t)page * LAB_PAGE;
	unsigned char got[LEN], src[LEN];
	int ret;

	for (unsigned int i = 0; i < LAB_PAGE; i++)
		p[i] = (char)pattern(page, i);
	if (!write) {
		memset(got, 0, sizeof(got));
		ret = pindma_dma(fd, PINDMA_IOC_DMA_READ, h, (uint64_t)page * LAB_PAGE + READ_OFF,
				 got, LEN, &engine);
		if (ret) {
			fprintf(stderr, "edu_mask_check: DMA_READ of page %u: %s\n", page,
				strerror(-ret));
			return 3;
		}
		return memcmp(got, p + READ_OFF, LEN) ? 1 : 0;
	}
	for (unsigned int i = 0; i < LEN; i++)
		src[i] = (unsigned char)~pattern(page, i);
	ret = pindma_dma(fd, PINDMA_IOC_DMA_WRITE, h, (uint64_t)page * LAB_PAGE + WRITE_OFF, src,
			 LEN, &engine);
	if (ret) {
		fprintf(stderr, "edu_mask_check: DMA_WRITE of page %u: %s\n", page, strerror(-ret));
		return 3;
	}
	for (unsigned int i = 0; i < LAB_PAGE; i++) {
		bool inside = i >= WRITE_OFF && i < WRITE_OFF + LEN;
		unsigned char want = inside ? src[i - WRITE_OFF] : pattern(page, i);

		if ((unsigned char)p[i] != want)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int bits = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 10) : 0;
	bool read_only = argc > 2 && !strcmp(argv[2], "--read-only");
	unsigned int used = 0, right = 0, total = 0;
	int fd, ret, worst = 0;
	uint64_t pfn;
	uint32_t h;
	char *buf;

	if (bits < 12 || bits > 63 || (argc > 2 && !read_only) || argc > 3) {
		fprintf(stderr, "usage: edu_mask_check BITS [--read-only]\n");
		return 3;
	}
	fd = pindma_open();
	buf = mmap(NULL, NPAGES * LAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (fd < 0 || buf == MAP_FAILED) {
		fprintf(stderr, "edu_mask_check: open /dev/pindma or mmap failed\n");
		return 3;
	}
	memset(buf, 1, NPAGES * LAB_PAGE);
	ret = pindma_pin(fd, buf, NPAGES * LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE,
			 &h);
	if (ret) {
		fprintf(stderr, "edu_mask_check: PIN: %s\n", strerror(-ret));
		return 3;
	}
	for (unsigned int page = 0; page < NPAGES && used < MAXUSED; page++) {
		if (lab_pfn_read(buf + (size_t)page * LAB_PAGE, &pfn) || !pfn) {
			fprintf(stderr, "edu_mask_check: no PFN for page %u\n", page);
			return 3;
		}
		if (pfn < 1ULL << (bits - 12))
			continue;
		used++;
		for (int write = 0; write <= !read_only; write++) {
			ret = transfer(fd, h, buf, page, write);
			printf("page %u pfn %#llx (beyond %u bits): device %s %s\n", page,
			       (unsigned long long)pfn, bits, write ? "writes" : "reads",
			       ret == 0 ? "right" : ret == 1 ? "WRONG" : "failed");
			total++;
			right += !ret;
			if (ret > worst)
				worst = ret;
		}
	}
	if (!used) {
		printf("edu_mask_check: no pinned page lies beyond %u bits: nothing judged\n", bits);
		return 2;
	}
	printf("edu_mask_check: %u of %u transfers right\n", right, total);
	return worst;
}
