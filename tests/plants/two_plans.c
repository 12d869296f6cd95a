// SPDX-License-Identifier: GPL-2.0
/* Plant: a second plan line after the first case. */
#include <stdio.h>

int main(void)
{
	printf("TAP version 13\n1..2\nok 1 first\n1..2\nok 2 second\n");
	return 0;
}
