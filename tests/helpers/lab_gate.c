// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's gates from a shell (guest/init puts the scratch disk's file system on one, so that a
 * test can hold its write-out in flight; liblab/gate.c says what a gate is):
 *   lab_gate make NAME DISK [ro]   a gate over the whole of DISK; prints its device node
 *   lab_gate hold|release|remove NAME
 *   lab_gate state NAME            prints "held" or "open"
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lab.h"

int main(int argc, char **argv)
{
	struct lab_gate g;
	int ret;

	if (argc >= 4 && !strcmp(argv[1], "make")) {
		ret = lab_gate_disk(&g, argv[2], argv[3], argc > 4 && !strcmp(argv[4], "ro"));
		if (!ret)
			printf("%s\n", g.path);
	} else if (argc == 3 && !lab_gate_find(&g, argv[2])) {
		if (!strcmp(argv[1], "hold"))
			ret = lab_gate_hold(&g);
		else if (!strcmp(argv[1], "release"))
			ret = lab_gate_release(&g);
		else if (!strcmp(argv[1], "remove"))
			ret = lab_gate_remove(&g);
		else if (!strcmp(argv[1], "state") && (ret = lab_gate_held(&g)) >= 0)
			printf("%s\n", ret ? "held" : "open"), ret = 0;
		else
			ret = -1, errno = EINVAL;
	} else {
		fprintf(stderr, "usage: lab_gate make NAME DISK [ro] | hold|release|remove|state NAME\n");
		return 2;
	}
	if (ret)
		fprintf(stderr, "lab_gate %s %s: %s\n", argv[1], argv[2], strerror(errno));
	return ret ? 1 : 0;
}
