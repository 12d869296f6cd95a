// SPDX-License-Identifier: GPL-2.0
/*
 * What the family registry (rows/row.h's ROW_FAMILIES) tells the build and the guest's scripts,
 * built and run on the host; it prints what the registry says, nothing more.
 *   registry machines   a line per family whose rows need a machine of their own, "NAME DEMO
 *                       OPTION...", the vm/boot options of that machine: the guest's /lab/machines,
 *                       which make demo, make test (tests/run-all), docs/kernels and guest/demo read
 *   registry demos      the demos, a line each, in the registry's order: the guest's /lab/demos,
 *                       which guest/demo shows in that order
 *   registry mk         the same for vm/guest.mk, which includes it: the demos it builds
 *                       (demo/demo.c, once per demo) and the test programs of the families with
 *                       a machine of their own (NAME_rows_test: rows_test --machine NAME)
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "row.h"

static const struct {
	const char *name, *demo, *machine;
} lines[] = {
#define LINE(id, name, demo, machine) { #name, #demo, machine },
	ROW_FAMILIES(LINE)
#undef LINE
};

/* Whether line i is the first to name its demo. */
static bool first(unsigned int i)
{
	for (unsigned int j = 0; j < i; j++)
		if (!strcmp(lines[j].demo, lines[i].demo))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";

	if (!strcmp(what, "machines")) {
		for (unsigned int i = 0; i < FAM_COUNT; i++)
			if (lines[i].machine[0])
				printf("%s %s %s\n", lines[i].name, lines[i].demo, lines[i].machine);
	} else if (!strcmp(what, "demos")) {
		for (unsigned int i = 0; i < FAM_COUNT; i++)
			if (first(i))
				printf("%s\n", lines[i].demo);
	} else if (!strcmp(what, "mk")) {
		printf("REGISTRY_DEMOS :=");
		for (unsigned int i = 0; i < FAM_COUNT; i++)
			if (first(i))
				printf(" %s", lines[i].demo);
		printf("\nREGISTRY_MACHINE_TESTS :=");
		for (unsigned int i = 0; i < FAM_COUNT; i++)
			if (lines[i].machine[0])
				printf(" %s_rows_test", lines[i].name);
		printf("\n");
	} else {
		fprintf(stderr, "usage: %s machines|demos|mk\n", argv[0]);
		return 2;
	}
	return 0;
}
