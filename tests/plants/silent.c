// SPDX-License-Identifier: GPL-2.0
/* Plant: exits 0 and reports nothing. */
int main(void)
{
	return 0;
}
