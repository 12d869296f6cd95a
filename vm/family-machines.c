// SPDX-License-Identifier: GPL-2.0
/*
 * The families whose rows need a machine of their own, from the registry (rows/row.h's
 * ROW_FAMILIES), built and run on the host: a line each, "NAME DEMO OPTION...", the vm/boot
 * options of that machine. vm/guest.mk writes it to the guest's /lab/machines, which make demo,
 * make test (tests/run-all), docs/kernels and guest/demo read.
 */
#include <stdio.h>

#include "row.h"

#define MACHINE(id, name, demo, machine) \
	if ((machine)[0]) \
		printf("%s %s %s\n", #name, #demo, machine);

int main(void)
{
	ROW_FAMILIES(MACHINE)
	return 0;
}
