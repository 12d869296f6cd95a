// SPDX-License-Identifier: GPL-2.0
/*
 * LINUX_FADV_WRITE_WAIT's error path (kernel-patches/0001) on a disk that fails every write:
 * the raw virtio disk with serial "eio", behind QEMU's blkdebug (vm/blkdebug-fail-writes.conf).
 * Like sync_file_range(SYNC_FILE_RANGE_WAIT_AFTER), WRITE_WAIT reports a writeback error of the
 * whole file, wherever it happened, once per open file (the mapping's errseq, sampled at open):
 * EIO, then 0; fsync() on the same file has nothing more to report, one on a file opened before
 * the error reports it once too. The guest must not crash or splat (vm/boot judges the console).
 */
#define _GNU_SOURCE
#include "linux_fadvise.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "lab.h"

#define LEN (64 * 1024)
#define FAR (12 * 1024 * 1024)	/* in the 16 MiB disk, far from page 0 */

/* /dev/vdX of the disk whose serial is "eio", or "" when there is none. */
static void find_eio_disk(char *dev, size_t size)
{
	char name[32];

	dev[0] = 0;
	if (!lab_disk_by_serial("eio", name, sizeof(name)))
		snprintf(dev, size, "/dev/%s", name);
}

static const char *lacks_eio_disk(void)
{
	char dev[300];

	find_eio_disk(dev, sizeof(dev));
	return dev[0] ? NULL : "no disk with serial eio whose writes fail (QEMU blkdebug, "
		"vm/blkdebug-fail-writes.conf): the lab attaches one (tests/run-all)";
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

/*
 * The error is the file's, not the range's: a write that failed at 12 MiB is reported to a
 * WRITE_WAIT over page 0 alone, where nothing was written, and consumed by it. sync_file_range()
 * on a file opened before the error answers the same for page 0 (the oracle outside the patch).
 */
TEST(write_wait_on_page_0_reports_an_error_far_away)
{
	LAB_NEEDS_PATCH("0001", "LINUX_FADV_WRITE_WAIT");
	static char buf[LAB_PAGE];
	char dev[300];
	int fd, waiter, srf;

	find_eio_disk(dev, sizeof(dev));
	ASSERT_NE(0, dev[0]) TH_LOG("no disk with serial eio (tests/run-all attaches it)");
	fd = open(dev, O_RDWR);
	waiter = open(dev, O_RDWR);
	srf = open(dev, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_LE(0, waiter);
	ASSERT_LE(0, srf);
	memset(buf, 'f', sizeof(buf));
	ASSERT_EQ((ssize_t)LAB_PAGE, pwrite(fd, buf, LAB_PAGE, FAR));
	ASSERT_EQ(0, posix_fadvise(fd, FAR, LAB_PAGE, LINUX_FADV_ASYNC_WRITE));
	/* Waited for on a third file, whose report leaves fd's and srf's cursors alone. */
	ASSERT_EQ(-1, sync_file_range(waiter, FAR, LAB_PAGE, SYNC_FILE_RANGE_WAIT_AFTER))
		TH_LOG("the far write did not fail: is blkdebug under the disk?");
	ASSERT_EQ(EIO, errno);

	EXPECT_EQ(EIO, posix_fadvise(fd, 0, LAB_PAGE, LINUX_FADV_WRITE_WAIT))
		TH_LOG("WRITE_WAIT on page 0 did not report the error at %d", FAR);
	EXPECT_EQ(0, posix_fadvise(fd, 0, LAB_PAGE, LINUX_FADV_WRITE_WAIT)) TH_LOG("not consumed");
	EXPECT_EQ(-1, sync_file_range(srf, 0, LAB_PAGE, SYNC_FILE_RANGE_WAIT_AFTER));
	EXPECT_EQ(EIO, errno);
	close(srf);
	close(waiter);
	close(fd);
}

LAB_HARNESS_MAIN_NEEDS(lacks_eio_disk)
