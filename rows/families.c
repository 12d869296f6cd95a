// SPDX-License-Identifier: GPL-2.0
/*
 * The family registry, made from ROW_FAMILIES (row.h): each entry is defined in its family file.
 * Apart from rows.c, so that the row table builds alone: make bisect reads the rows' names on the
 * host (vm/row-names.c) before it builds anything.
 */
#include <string.h>

#include "row.h"

#define FAMILY_DECLARE(id, name, demo, machine) extern const struct row_family family_##name;
ROW_FAMILIES(FAMILY_DECLARE)

#define FAMILY_ENTRY(id, name, demo, machine) [FAM_##id] = &family_##name,
const struct row_family *const families[FAM_COUNT] = { ROW_FAMILIES(FAMILY_ENTRY) };

#define FAMILY_DEMO(id, name, demo, machine) [FAM_##id] = #demo,
const char *const family_demo[FAM_COUNT] = { ROW_FAMILIES(FAMILY_DEMO) };

#define FAMILY_MACHINE(id, name, demo, machine) [FAM_##id] = machine,
const char *const family_machine[FAM_COUNT] = { ROW_FAMILIES(FAMILY_MACHINE) };

unsigned int families_of_demo(const char *demo)
{
	unsigned int mask = 0;

	for (unsigned int f = 0; f < FAM_COUNT; f++)
		if (!strcmp(family_demo[f], demo))
			mask |= 1u << f;
	return mask;
}
