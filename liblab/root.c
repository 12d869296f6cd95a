// SPDX-License-Identifier: GPL-2.0
/*
 * Where the lab's files are: the folder above the running program's own.
 */
#include "lab.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *lab_root(void)
{
	static char root[PATH_MAX];
	ssize_t n;

	if (root[0])
		return root;
	n = readlink("/proc/self/exe", root, sizeof(root) - 1);
	if (n <= 0) {
		snprintf(root, sizeof(root), "/lab");
		return root;
	}
	root[n] = 0;
	/* The program's folder, then the one above it. */
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(root, '/');

		if (slash)
			*slash = 0;
	}
	if (!root[0])
		snprintf(root, sizeof(root), "/");
	return root;
}

const char *lab_path(char *buf, size_t n, const char *rel)
{
	snprintf(buf, n, "%s/%s", lab_root(), rel);
	return buf;
}
