// SPDX-License-Identifier: GPL-2.0
/*
 * dontfork_demo: the pindma rows. A driver holds one page (get_user_pages or a longterm pin, or
 * the page is only mlock()ed), the process forks, the parent writes, the device writes and reads;
 * what each party saw, the PFNs, and the verdict derived from them beside this kernel's expected
 * one, with the article's three pictures and, under them, why: the page state and the copies the
 * kernel made, from the kernel itself (rows/why.c). Options and exit status: rows/main.c.
 */
#include "row.h"

int main(int argc, char **argv)
{
	return rows_main(argc, argv, "dontfork_demo");
}
