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
#include <stdio.h>
#include <string.h>

#include "row.h"

static const char *const demos[] = {
#define DEMO(id, name, demo, machine) #demo,
	ROW_FAMILIES(DEMO)
};

/* Whether demos[i] is the first line to name its demo. */
static int first(unsigned int i)
{
	for (unsigned int j = 0; j < i; j++)
		if (!strcmp(demos[j], demos[i]))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";

	if (!strcmp(what, "machines")) {
#define MACHINE(id, name, demo, machine) \
	if ((machine)[0]) \
		printf("%s %s %s\n", #name, #demo, machine);
		ROW_FAMILIES(MACHINE)
	} else if (!strcmp(what, "demos")) {
		for (unsigned int i = 0; i < FAM_COUNT; i++)
			if (first(i))
				printf("%s\n", demos[i]);
	} else if (!strcmp(what, "mk")) {
		printf("REGISTRY_DEMOS :=");
		for (unsigned int i = 0; i < FAM_COUNT; i++)
			if (first(i))
				printf(" %s", demos[i]);
		printf("\nREGISTRY_MACHINE_TESTS :=");
#define MACHINE_TEST(id, name, demo, machine) \
	if ((machine)[0]) \
		printf(" %s_rows_test", #name);
		ROW_FAMILIES(MACHINE_TEST)
		printf("\n");
	} else {
		fprintf(stderr, "usage: %s machines|demos|mk\n", argv[0]);
		return 2;
	}
	return 0;
}
