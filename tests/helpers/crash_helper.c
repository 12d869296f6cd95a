// SPDX-License-Identifier: GPL-2.0
/*
 * crash_helper: the guest half of tests/host/crash_durability.sh.
 *
 *   crash_helper write   overwrite two preallocated, fsynced files; run WRITE_WAIT,
 *                        ASYNC_WRITE, WRITE_WAIT on the first only; then cut the power at
 *                        once (no sync, no unmount): a write to QEMU's isa-debug-exit
 *                        port, which the host test adds, ends QEMU where it stands, so the
 *                        writes it still holds (the slow disk's queue) are lost too. A
 *                        guest reset would not do: QEMU drains every queued request, its
 *                        throttling lifted, before it stops, so a WRITE_WAIT that did not
 *                        wait would still find its data on disk.
 *   crash_helper check   after the next boot, print how many pages of each file hold
 *                        the new bytes, as "data N/M" and "control N/M"
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "lab.h"

#define SIZE (4 * 1024 * 1024)
#define PAGE 4096
#define OLD 'o'
#define NEW 'N'
/* tests/host/crash_durability.sh: -device isa-debug-exit,iobase=0xf4; QEMU exits with 2v + 1. */
#define POWER_PORT 0xf4
#define POWER_CUT 0x2a

static const char *const files[] = { "/mnt/disk/crash.data", "/mnt/disk/crash.control" };

static int fill(int fd, char c)
{
	static char buf[SIZE];

	memset(buf, c, SIZE);
	return pwrite(fd, buf, SIZE, 0) == SIZE ? 0 : -1;
}

/*
 * A line on vm/boot's data channel (LAB_OUT, the second serial port), out of the guest before this
 * returns: tcdrain() waits until the UART has sent the last byte, so a power cut right after loses
 * none of it (through stdout it went to the tty, and the UART sent it later or, cut first, never).
 */
static int say(const char *line)
{
	const char *out = getenv("LAB_OUT");
	int fd = out && *out ? open(out, O_WRONLY | O_NOCTTY) : -1;
	ssize_t n = fd < 0 ? -1 : write(fd, line, strlen(line));
	int drained = fd < 0 ? -1 : tcdrain(fd);

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(line) && !drained ? 0 : -1;
}

/* Returns only when the port write did not end the machine. */
static int power_cut(void)
{
	unsigned char v = POWER_CUT;
	int fd = open("/dev/port", O_WRONLY);

	if (fd < 0 || pwrite(fd, &v, 1, POWER_PORT) != 1)
		perror("/dev/port (CONFIG_DEVPORT)");
	else
		fprintf(stderr, "crash_helper: no isa-debug-exit at %#x\n", POWER_PORT);
	return 2;
}

static int do_write(void)
{
	int fd[2], dirty, writeback;
	char line[128], *map;

	/* Nothing but the calls under test may write the data out before the reset. */
	if (lab_quiet_writeback(true))
		return perror("stopping the flusher"), 2;
	for (int i = 0; i < 2; i++) {
		fd[i] = open(files[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd[i] < 0 || fill(fd[i], OLD) || fsync(fd[i]))
			return perror(files[i]), 2;
	}
	sync();
	for (int i = 0; i < 2; i++)
		if (fill(fd[i], NEW))
			return perror(files[i]), 2;
	if (posix_fadvise(fd[0], 0, SIZE, LINUX_FADV_WRITE_WAIT) ||
	    posix_fadvise(fd[0], 0, SIZE, LINUX_FADV_ASYNC_WRITE) ||
	    posix_fadvise(fd[0], 0, SIZE, LINUX_FADV_WRITE_WAIT))
		return perror("posix_fadvise"), 2;
	/*
	 * What the kernel says of the pages at once, before the cut: a WRITE_WAIT that waited left
	 * none dirty or under writeback. Read here, right after the call, this does not depend on
	 * how soon the cut follows (a busy host once let the disk finish before it).
	 */
	map = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fd[0], 0);
	if (map == MAP_FAILED || lab_page_states(map, 0, SIZE / PAGE, &dirty, &writeback))
		return perror("reading the page states"), 2;
	snprintf(line, sizeof(line), "crash_helper: after wait-write-wait %d pages dirty, %d under "
		 "writeback\n", dirty, writeback);
	if (say(line))
		return perror("LAB_OUT"), 2;
	/* The line is the proof that the calls returned before the cut. */
	if (say("crash_helper: data written with wait-write-wait, control only dirtied; "
		"cutting the power\n"))
		return perror("LAB_OUT"), 2;
	return power_cut();
}

static int do_check(void)
{
	static char buf[SIZE];

	for (int i = 0; i < 2; i++) {
		int fd = open(files[i], O_RDONLY), pages = 0;

		if (fd < 0 || pread(fd, buf, SIZE, 0) != SIZE)
			return perror(files[i]), 2;
		for (int p = 0; p < SIZE / PAGE; p++)
			pages += buf[p * PAGE] == NEW && buf[p * PAGE + PAGE - 1] == NEW;
		printf("%s %d/%d\n", i ? "control" : "data", pages, SIZE / PAGE);
		close(fd);
		unlink(files[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "write"))
		return do_write();
	if (argc == 2 && !strcmp(argv[1], "check"))
		return do_check();
	fprintf(stderr, "usage: crash_helper write|check\n");
	return 2;
}
