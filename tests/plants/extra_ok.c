// SPDX-License-Identifier: GPL-2.0
/* Plant: plans one case and reports two passed. */
#include <stdio.h>

int main(void)
{
	printf("TAP version 13\n1..1\nok 1 planned\nok 2 unplanned\n");
	return 0;
}
