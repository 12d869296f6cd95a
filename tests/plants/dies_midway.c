// SPDX-License-Identifier: GPL-2.0
/* Plant: reports one of its two planned cases, then dies by SIGSEGV. */
#include <stdio.h>

int main(void)
{
	printf("TAP version 13\n1..2\nok 1 first\n");
	fflush(stdout);
	*(volatile int *)0 = 1;
	return 0;
}
