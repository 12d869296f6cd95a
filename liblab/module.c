// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's module, loaded by a program that finds it missing: in the guest /init loads it, and a
 * kselftest collection run elsewhere (make kselftest-install) carries it in lab/modules/, loaded by
 * the first program that needs it, as kselftests load the test modules they need. Its parameters
 * are the kernel command line's NAME.PARAM=VALUE words, as modprobe (and guest/init) pass them:
 * vm/boot gives pindma.dma_bits, the edu device's DMA address width.
 */
#include "lab.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The NAME.PARAM=VALUE words of /proc/cmdline, as "PARAM=VALUE ..." in params. */
static void cmdline_params(const char *name, char *params, size_t n)
{
	char line[4096], *word, *save;
	size_t len = strlen(name), used = 0;
	FILE *f = fopen("/proc/cmdline", "r");

	params[0] = 0;
	if (!f)
		return;
	if (fgets(line, sizeof(line), f))
		for (word = strtok_r(line, " \n", &save); word; word = strtok_r(NULL, " \n", &save))
			if (!strncmp(word, name, len) && word[len] == '.' && strchr(word, '=') &&
			    used + strlen(word + len + 1) + 2 < n)
				used += snprintf(params + used, n - used, "%s%s", used ? " " : "",
						 word + len + 1);
	fclose(f);
}

int lab_load_module(const char *name)
{
	char path[PATH_MAX + 64], params[1024];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/modules/%s.ko", lab_root(), name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	cmdline_params(name, params, sizeof(params));
	ret = syscall(SYS_finit_module, fd, params, 0);
	close(fd);
	return ret == 0 || errno == EEXIST ? 0 : -1;
}
