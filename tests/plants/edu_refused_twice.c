// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh (the planted pindma's boot): the edu engine asked twice to read a
 * page beyond the device's 28 address bits, in a guest where swiotlb cannot bounce it, which
 * pindma must refuse each time (ENXIO). The planted pindma returns from that refusal with its edu
 * lock held, so the second call waits for the lock for ever, killably: a wait the kernel's
 * hung-task detector skips, which guest/run-tests' timeout must name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lab.h"
#include "pindma_lib.h"

#define BITS 28
/* As much as edu_mask_check may touch: the debug kernel hands out low pages first. */
#define PAGES ((1024UL << 20) / LAB_PAGE)
#define CHUNK 1024

int main(void)
{
	char *region = mmap(NULL, PAGES * LAB_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = pindma_open(), pagemap = open("/proc/self/pagemap", O_RDONLY), n, failed = 0;
	uint64_t pfn = 0;
	unsigned long i;
	char *page = NULL;
	uint32_t h = 0;
	char out[64];

	printf("TAP version 13\n1..2\n");
	if (fd < 0 || pagemap < 0 || region == MAP_FAILED) {
		printf("Bail out! no /dev/pindma, pagemap or memory: %s\n", strerror(errno));
		return 1;
	}
	/* Most of a 2 GiB guest's RAM lies beyond 256 MiB: a chunk touched, then read in pagemap. */
	for (i = 0; i < PAGES && !(pfn >> (BITS - 12)); i += CHUNK) {
		static uint64_t entries[CHUNK];
		unsigned int j;

		for (j = 0; j < CHUNK; j++)
			region[(i + j) * LAB_PAGE] = 1;
		if (pread(pagemap, entries, sizeof(entries), (uintptr_t)(region + i * LAB_PAGE) /
			  LAB_PAGE * sizeof(entries[0])) != sizeof(entries)) {
			printf("Bail out! pagemap: %s\n", strerror(errno));
			return 1;
		}
		for (j = 0; j < CHUNK && !(pfn >> (BITS - 12)); j++)
			pfn = entries[j] & ((1ULL << 55) - 1);
		page = region + (i + j - 1) * LAB_PAGE;
	}
	if (!(pfn >> (BITS - 12))) {
		printf("Bail out! no page beyond %d bits among %lu\n", BITS, PAGES);
		return 1;
	}
	if (pindma_pin(fd, page, LAB_PAGE, PINDMA_MODE_PIN_LONGTERM, PINDMA_PIN_WRITE, &h) ||
	    pindma_query(fd, h, 0, &pfn) || !(pfn >> (BITS - 12))) {
		printf("Bail out! PIN or QUERY failed, or the page moved within %d bits\n", BITS);
		return 1;
	}
	printf("# page pfn %#llx, beyond %d bits\n", (unsigned long long)pfn, BITS);
	for (n = 1; n <= 2; n++) {
		uint32_t engine = PINDMA_ENGINE_EDU;
		int ret = pindma_dma(fd, PINDMA_IOC_DMA_READ, h, 0, out, sizeof(out), &engine);

		printf("%s %d the edu engine refuses it (ENXIO), call %d: %s\n",
		       ret == -ENXIO ? "ok" : "not ok", n, n, strerror(-ret));
		fflush(stdout);
		failed |= ret != -ENXIO;
	}
	return failed;
}
