// SPDX-License-Identifier: GPL-2.0
/*
 * Playing the vmsplice and io_uring rows, two holders (holder.c). One page of anonymous
 * memory is handed to the kernel: vmsplice() puts it into a pipe without copying (FOLL_GET),
 * io_uring registers it as a fixed buffer (FOLL_PIN | FOLL_LONGTERM) and WRITE_FIXED copies it into
 * a pipe on request. What the pipe then carries is what the holder held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "consumers_obs.h"
#include "lab.h"

/* What the holder hands to the pipe: vmsplice() the page, or WRITE_FIXED from the buffer. */
struct consumer {
	int pipe[2];
	struct io_uring ring;
	bool ring_up;
	char *page;
};

static int vmsplice_give(void *ctx)
{
	struct consumer *h = ctx;
	struct iovec iov = { .iov_base = h->page, .iov_len = HOLDER_TAG };

	return vmsplice(h->pipe[1], &iov, 1, 0) == HOLDER_TAG ? 0 : -1;
}

static int ring_give(void *ctx)
{
	struct consumer *h = ctx;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return errno = EBUSY, -1;
	io_uring_prep_write_fixed(sqe, h->pipe[1], h->page, HOLDER_TAG, 0, 0);
	ret = io_uring_submit_and_wait(&h->ring, 1);
	if (ret < 0)
		return errno = -ret, -1;
	ret = io_uring_wait_cqe(&h->ring, &cqe);
	if (ret < 0)
		return errno = -ret, -1;
	ret = cqe->res;
	io_uring_cqe_seen(&h->ring, cqe);
	if (ret != HOLDER_TAG)
		return errno = ret < 0 ? -ret : EIO, -1;
	return 0;
}

/* What the pipe carries now. */
static int take(void *ctx, char *out)
{
	struct consumer *h = ctx;

	return read(h->pipe[0], out, HOLDER_TAG) == HOLDER_TAG ? 0 : -1;
}

static int setup(const struct row *r, struct record *rec, struct consumer *h)
{
	h->pipe[0] = h->pipe[1] = -1;
	h->page = mmap(NULL, LAB_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->page == MAP_FAILED)
		return row_fail(rec, "mmap");
	memset(h->page, 0, LAB_PAGE);
	if (r->dontfork && madvise(h->page, LAB_PAGE, MADV_DONTFORK))
		return row_fail(rec, "MADV_DONTFORK");
	if (pipe2(h->pipe, O_CLOEXEC))
		return row_fail(rec, "pipe");
	return 0;
}

static void teardown(struct consumer *h)
{
	if (h->ring_up)
		io_uring_queue_exit(&h->ring);
	for (int i = 0; i < 2; i++)
		if (h->pipe[i] >= 0)
			close(h->pipe[i]);
	if (h->page != MAP_FAILED)
		munmap(h->page, LAB_PAGE);
}

int play_vmsplice(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct vmsplice_obs *o = ROW_OBS(rec, struct vmsplice_obs);
	struct consumer c = { .page = MAP_FAILED };
	struct holder h = { .hands_over = true, .give = vmsplice_give, .take = take, .ctx = &c };
	const struct holder_seen seen = {
		&o->control_live, &o->pipe_sees_parent, &o->pipe_has_prefork, &o->par_before,
		&o->par_after, &o->child_fork, &o->child_has_range,
	};
	int ret;

	(void)opts;
	ret = setup(r, rec, &c);
	h.page = c.page;
	if (!ret)
		ret = play_holder(r, rec, &h, &seen);
	teardown(&c);
	return ret;
}

int play_iouring(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct iouring_obs *o = ROW_OBS(rec, struct iouring_obs);
	struct consumer c = { .page = MAP_FAILED };
	struct holder h = { .give = ring_give, .take = take, .ctx = &c };
	const struct holder_seen seen = {
		&o->control_moved, &o->ring_sees_parent, &o->ring_has_prefork, &o->par_before,
		&o->par_after, &o->child_fork, &o->child_has_range,
	};
	struct iovec iov;
	int ret;

	(void)opts;
	ret = setup(r, rec, &c);
	h.page = c.page;
	if (!ret) {
		ret = io_uring_queue_init(4, &c.ring, 0);
		if (ret)
			ret = (errno = -ret, row_fail(rec, "io_uring_queue_init"));
		else
			c.ring_up = true;
	}
	if (!ret) {
		/* Registered before the fork: io_uring pins it (FOLL_PIN | FOLL_LONGTERM). */
		iov.iov_base = c.page;
		iov.iov_len = LAB_PAGE;
		ret = io_uring_register_buffers(&c.ring, &iov, 1);
		if (ret)
			ret = (errno = -ret, row_fail(rec, "io_uring_register_buffers"));
	}
	if (!ret)
		ret = play_holder(r, rec, &h, &seen);
	teardown(&c);
	return ret;
}
