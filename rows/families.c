// SPDX-License-Identifier: GPL-2.0
/*
 * The family registry, made from ROW_FAMILIES (row.h): each entry is defined in its family file.
 * Apart from rows.c, so that the row table builds alone: make bisect reads the rows' names on the
 * host (vm/row-names.c) before it builds anything.
 */
#include "row.h"

#define FAMILY_DECLARE(id, name) extern const struct row_family family_##name;
ROW_FAMILIES(FAMILY_DECLARE)

#define FAMILY_ENTRY(id, name) [FAM_##id] = &family_##name,
const struct row_family *const families[FAM_COUNT] = { ROW_FAMILIES(FAMILY_ENTRY) };
