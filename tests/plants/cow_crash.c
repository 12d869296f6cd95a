// SPDX-License-Identifier: GPL-2.0
/* Plant: a cow.c that plans ten cases, reports three, and dies by SIGSEGV. */
#include <stdio.h>

int main(void)
{
	printf("TAP version 13\n1..10\n");
	for (int i = 1; i <= 3; i++)
		printf("# [RUN] case %d ... with base page\nok %d No leak from parent into child\n", i, i);
	fflush(stdout);
	*(volatile int *)0 = 1;
	return 0;
}
