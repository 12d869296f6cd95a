// SPDX-License-Identifier: GPL-2.0
/* Finding a PCI device (the edu device) in sysfs, and what the kernel and the device say of edu. */
#include "lab.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned int read_hex(const char *dir, const char *name)
{
	char path[512];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%x", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

bool lab_pci_find(unsigned int vendor, unsigned int device, char *path, size_t size)
{
	const char *base = "/sys/bus/pci/devices";
	struct dirent *d;
	bool found = false;
	DIR *dir = opendir(base);

	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, size, "%s/%s", base, d->d_name);
		found = read_hex(path, "vendor") == vendor && read_hex(path, "device") == device;
	}
	closedir(dir);
	return found;
}

/*
 * The kernel's count of the edu device's interrupts: its MSI vectors (msi_irqs/ in sysfs), their
 * rows of /proc/interrupts summed over the CPUs. pindma has edu raise one at the end of every
 * transfer, so the count moves only when the device has moved bytes, whatever the driver says.
 */
long long lab_edu_irqs(void)
{
	char dev[256], path[300], line[1024];
	long long total = -1;
	struct dirent *d;
	DIR *dir;
	FILE *f;

	if (!lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)))
		return -1;
	snprintf(path, sizeof(path), "%s/msi_irqs", dev);
	dir = opendir(path);
	if (!dir)
		return -1;
	f = fopen("/proc/interrupts", "r");
	while (f && (d = readdir(dir))) {
		char *p, *end;

		if (d->d_name[0] == '.')
			continue;
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			p = line + strspn(line, " ");
			if (strncmp(p, d->d_name, strlen(d->d_name)) || p[strlen(d->d_name)] != ':')
				continue;
			total = total < 0 ? 0 : total;
			/* The per-CPU counts, up to the first word that is not a number. */
			for (p += strlen(d->d_name) + 1;; p = end) {
				long long n = strtoll(p, &end, 10);

				if (end == p)
					break;
				total += n;
			}
		}
	}
	if (f)
		fclose(f);
	closedir(dir);
	return total;
}

/* edu's DMA registers, read from its BAR through sysfs (resource0), not through the driver. */
int lab_edu_dma_regs(uint64_t *src, uint64_t *dst, uint64_t *count)
{
	char dev[256], path[300];
	volatile uint64_t *regs;
	int fd;

	if (!lab_pci_find(LAB_EDU_VENDOR, LAB_EDU_DEVICE, dev, sizeof(dev)))
		return -1;
	snprintf(path, sizeof(path), "%s/resource0", dev);
	fd = open(path, O_RDONLY | O_SYNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	regs = mmap(NULL, LAB_PAGE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (regs == MAP_FAILED)
		return -1;
	*src = regs[0x80 / 8];
	*dst = regs[0x88 / 8];
	*count = regs[0x90 / 8];
	munmap((void *)regs, LAB_PAGE);
	return 0;
}
