// SPDX-License-Identifier: GPL-2.0
/*
 * The family registry: one entry per family, each defined in its family file (rows/<family>.c).
 * Apart from rows.c, so that the row table builds alone: make bisect reads the rows' names on the
 * host (vm/row-names.c) before it builds anything.
 */
#include "row.h"

extern const struct row_family family_pindma, family_vmsplice, family_iouring, family_odirect,
	family_verbs, family_fadvise;

const struct row_family *const families[FAM_COUNT] = {
	[FAM_PINDMA] = &family_pindma, [FAM_VMSPLICE] = &family_vmsplice,
	[FAM_IOURING] = &family_iouring, [FAM_ODIRECT] = &family_odirect,
	[FAM_VERBS] = &family_verbs, [FAM_FADVISE] = &family_fadvise,
};
