// SPDX-License-Identifier: GPL-2.0
/* The kernel's kmalloc caches, object by object, from /proc/slabinfo. */
#include "lab.h"

#include <stdio.h>
#include <string.h>

int lab_kmalloc_slabs(struct lab_slabs *s)
{
	char line[512], name[sizeof(s->cache[0].name)];
	long active;
	FILE *f = fopen("/proc/slabinfo", "r");

	s->n = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* kmalloc-96, kmalloc-cg-96, kmalloc-rnd-03-96, dma-kmalloc-96: every kmalloc cache. */
		if (sscanf(line, "%39s %ld", name, &active) != 2 || !strstr(name, "kmalloc-"))
			continue;
		if (s->n == LAB_SLABS_MAX)
			break;
		strcpy(s->cache[s->n].name, name);
		s->cache[s->n++].active = active;
	}
	fclose(f);
	return s->n ? 0 : -1;
}

long lab_kmalloc_growth(const struct lab_slabs *before, const struct lab_slabs *after,
			const char **name)
{
	long most = 0;

	*name = "no kmalloc cache";
	for (int i = 0; i < after->n; i++) {
		long was = 0;

		for (int j = 0; j < before->n; j++)
			if (!strcmp(before->cache[j].name, after->cache[i].name))
				was = before->cache[j].active;
		if (after->cache[i].active - was > most) {
			most = after->cache[i].active - was;
			*name = after->cache[i].name;
		}
	}
	return most;
}
