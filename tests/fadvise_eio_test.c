// SPDX-License-Identifier: GPL-2.0
/*
 * LINUX_FADV_WRITE_WAIT's error path (kernel-patches/0001) on a disk that fails every write:
 * the raw virtio disk with serial "eio", behind QEMU's blkdebug (vm/blkdebug-fail-writes.conf).
 * Like fsync(), WRITE_WAIT reports a writeback error once per open file (errseq): EIO, then 0;
 * fsync() on the same file has nothing more to report, one on a file opened before the error
 * reports it once too. The guest must not crash or splat (vm/run judges the console).
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"

#define LEN (64 * 1024)

/* /dev/vdX of the disk whose serial is "eio", or "" when there is none. */
static void find_eio_disk(char *dev, size_t size)
{
	struct dirent *d;
	char path[300], serial[32];
	DIR *dir = opendir("/sys/block");

	dev[0] = 0;
	while (dir && (d = readdir(dir))) {
		FILE *f;

		if (strncmp(d->d_name, "vd", 2))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/serial", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(serial, sizeof(serial), f) && !strncmp(serial, "eio", 3))
			snprintf(dev, size, "/dev/%s", d->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
}

TEST(write_wait_reports_eio_once_per_file)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_WRITE_WAIT");
	static char buf[LEN];
	char dev[300];
	int fd, other;

	find_eio_disk(dev, sizeof(dev));
	ASSERT_NE(0, dev[0]) TH_LOG("no disk with serial eio (tests/run-all attaches it)");
	fd = open(dev, O_RDWR);
	ASSERT_LE(0, fd);
	other = open(dev, O_RDWR);	/* opened before the error: its own errseq cursor */
	ASSERT_LE(0, other);
	memset(buf, 'e', sizeof(buf));
	ASSERT_EQ(LEN, pwrite(fd, buf, LEN, 0)) TH_LOG("the write only dirties the page cache");

	/* Starting writeback succeeds; the error comes from the device, later. */
	EXPECT_EQ(0, posix_fadvise(fd, 0, LEN, LINUX_FADV_ASYNC_WRITE));
	EXPECT_EQ(EIO, posix_fadvise(fd, 0, 0, LINUX_FADV_WRITE_WAIT));
	EXPECT_EQ(0, posix_fadvise(fd, 0, 0, LINUX_FADV_WRITE_WAIT)) TH_LOG("reported twice");
	EXPECT_EQ(0, fsync(fd)) TH_LOG("fsync on the same file: %s", strerror(errno));

	EXPECT_EQ(-1, fsync(other));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ(0, fsync(other)) TH_LOG("the other file saw it twice");
	close(other);
	close(fd);
}

LAB_HARNESS_MAIN
