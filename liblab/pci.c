// SPDX-License-Identifier: GPL-2.0
/* Finding a PCI device (the edu device) in sysfs. */
#include "lab.h"

#include <dirent.h>
#include <stdio.h>

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
