// SPDX-License-Identifier: GPL-2.0
/*
 * What the guest knows of its kernel, from one place: kernel.env beside the lab's programs
 * (/lab/kernel.env in the guest), written by vm/build-kernel.sh from the kernel registry
 * (kernel-patches/<name>/) and the tree it built.
 */
#include "lab.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	bool read;
	bool found;
	char name[32];		/* LAB_KERNEL: the registry name, or "src" for a user's tree */
	char version[64];	/* LAB_VERSION: make kernelversion */
	char registry[128];	/* LAB_REGISTRY: the kernels of kernel-patches/, oldest first */
	char patches[1024];	/* LAB_SERIES_PATCHES: the patch files applied, by name */
} env;

static void read_env(void)
{
	char line[sizeof(env.patches)], path[PATH_MAX];
	FILE *f;

	if (env.read)
		return;
	env.read = true;
	snprintf(env.name, sizeof(env.name), "?");
	/* LAB_KERNEL_ENV: another file, for a plant of a kernel without part of its series. */
	f = fopen(getenv("LAB_KERNEL_ENV") ? getenv("LAB_KERNEL_ENV") :
		  lab_path(path, sizeof(path), "kernel.env"), "r");
	if (!f)
		return;
	env.found = true;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "LAB_KERNEL=%31s", env.name) == 1)
			continue;
		if (sscanf(line, "LAB_VERSION=%63s", env.version) == 1)
			continue;
		if (sscanf(line, "LAB_REGISTRY=\"%127[^\"]", env.registry) == 1)
			continue;
		if (!strncmp(line, "LAB_SERIES_PATCHES=", 19) &&
		    strlen(line + 19) + 3 <= sizeof(env.patches))
			sprintf(env.patches, " %s ", line + 19);
	}
	fclose(f);
	for (char *p = env.patches; *p; p++)
		if (*p == '"')
			*p = ' ';
}

const char *lab_kernel_name(void)
{
	read_env();
	return env.name;
}

const char *lab_kernel_version(void)
{
	read_env();
	return env.version;
}

const char *lab_kernel_registry(void)
{
	size_t n;

	read_env();
	n = strlen(env.registry);
	while (n && env.registry[n - 1] == ' ')
		env.registry[--n] = 0;
	return env.registry;
}

bool lab_is_user_tree(void)
{
	read_env();
	return !strcmp(env.name, "src");
}

const char *lab_lacks_patch(const char *number)
{
	static char why[160];
	char word[16];

	read_env();
	if (!env.found)
		return "no /lab/kernel.env: which patches this kernel has is unknown";
	/* A patch file's name starts with its number and a dash. */
	snprintf(word, sizeof(word), " %s-", number);
	if (strstr(env.patches, word))
		return NULL;
	if (lab_is_user_tree())
		snprintf(why, sizeof(why),
			 "this kernel lacks kernel-patches/*/%s (KERNEL_SRC: the lab does not patch it)",
			 number);
	else
		snprintf(why, sizeof(why), "this kernel lacks kernel-patches/%s/%s", env.name, number);
	return why;
}

bool lab_kernel_debug_vm(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, ' ');

		found = name && !strcmp(name + 1, "dump_mm\n");
	}
	if (f)
		fclose(f);
	return found;
}
