// SPDX-License-Identifier: GPL-2.0
/*
 * Playing the vmsplice and io_uring rows. One page of anonymous memory is handed to the kernel:
 * vmsplice() puts it into a pipe without copying (FOLL_GET), io_uring registers it as a fixed
 * buffer (FOLL_PIN | FOLL_LONGTERM) and WRITE_FIXED copies it into a pipe on request. A control
 * first shows the holder reading the page itself: the parent writes after handing it over, and the
 * pipe carries that write. Then the same with a fork in between (the child alive, told what to do
 * over the lab's parent/child pipes): does the pipe carry the parent's write, or the pre-fork bytes?
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab.h"
#include "row.h"

#define TAG 16

static const char PREFORK[TAG] = "pre-fork bytes";
static const char PARENT[TAG] = "parent wrote";
static const char CONTROL[TAG] = "control bytes";

struct child_report {
	uint64_t pfn;
	int pfn_errno;
	bool has_range;
};

/* The child: its PFN and whether it has the range, then it waits until the parent is done. */
static int child_main(struct lab_child *c, void *arg)
{
	struct child_report r = { 0 };
	const char *page = arg;

	r.has_range = lab_maps_covers(0, page);
	r.pfn_errno = lab_pfn_read(page, &r.pfn) ? errno : 0;
	if (lab_child_report(c, &r, sizeof(r)))
		return 1;
	return lab_child_wait(c) < 0;
}

/* What the holder hands to the pipe: vmsplice() the page, or WRITE_FIXED from the buffer. */
struct holder {
	int pipe[2];
	struct io_uring ring;
	bool ring_up;
	char *page;
	int (*give)(struct holder *h);	/* hand the page's first TAG bytes to the pipe */
};

static int vmsplice_give(struct holder *h)
{
	struct iovec iov = { .iov_base = h->page, .iov_len = TAG };

	return vmsplice(h->pipe[1], &iov, 1, 0) == TAG ? 0 : -1;
}

static int ring_give(struct holder *h)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&h->ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return errno = EBUSY, -1;
	io_uring_prep_write_fixed(sqe, h->pipe[1], h->page, TAG, 0, 0);
	ret = io_uring_submit_and_wait(&h->ring, 1);
	if (ret < 0)
		return errno = -ret, -1;
	ret = io_uring_wait_cqe(&h->ring, &cqe);
	if (ret < 0)
		return errno = -ret, -1;
	ret = cqe->res;
	io_uring_cqe_seen(&h->ring, cqe);
	if (ret != TAG)
		return errno = ret < 0 ? -ret : EIO, -1;
	return 0;
}

/* What the pipe carries now. */
static int take(struct holder *h, char *out)
{
	return read(h->pipe[0], out, TAG) == TAG ? 0 : -1;
}

/*
 * The play both families share: control, fork, parent write, what the pipe carries. For vmsplice
 * the page is handed over (the pipe takes its reference) before each write; the ring holds it since
 * registration and reads it when asked, after each write.
 */
static int play_holder(const struct row *r, struct record *rec, struct holder *h, bool *control,
		       bool *sees_parent, bool *prefork, uint64_t *par_before, uint64_t *par_after,
		       uint64_t *child_fork, bool *child_has_range)
{
	struct lab_child child = { .pid = -1, .to_child = { -1, -1 }, .to_parent = { -1, -1 } };
	bool splice = h->give == vmsplice_give;
	struct child_report cr;
	char got[TAG];
	int ret = -1;

	/* The control: written after the holder has the page, carried all the same. */
	if (splice && h->give(h))
		return row_fail(rec, "vmsplice (control)");
	memcpy(h->page, CONTROL, TAG);
	if ((!splice && h->give(h)) || take(h, got))
		return row_fail(rec, "carrying the control through the pipe");
	*control = !memcmp(got, CONTROL, TAG);

	memcpy(h->page, PREFORK, TAG);
	if (splice && h->give(h))
		return row_fail(rec, "vmsplice");
	errno = 0;
	if (lab_pfn_read(h->page, par_before) || !*par_before)
		return row_fail(rec, "the parent's page is not present");
	if (r->fork) {
		if (lab_child_start(&child, child_main, h->page))
			return row_fail(rec, "fork");
		if (lab_child_read(&child, &cr, sizeof(cr))) {
			row_fail(rec, "the child's report after the fork");
			goto out;
		}
		if (cr.pfn_errno) {
			errno = cr.pfn_errno;
			row_fail(rec, "reading the child's PFN from pagemap");
			goto out;
		}
		*child_fork = cr.pfn;
		*child_has_range = cr.has_range;
	}
	/* The parent writes, with the child alive: the copy-on-write fault, if the page is shared. */
	memcpy(h->page, PARENT, TAG);
	errno = 0;
	if (lab_pfn_read(h->page, par_after) || !*par_after) {
		row_fail(rec, "the parent's page after the write is not present");
		goto out;
	}
	if ((!splice && h->give(h)) || take(h, got)) {
		row_fail(rec, "reading what the pipe carries");
		goto out;
	}
	*sees_parent = !memcmp(got, PARENT, TAG);
	*prefork = !memcmp(got, PREFORK, TAG);
	if (child.pid > 0 && row_child_end(rec, &child, 'x', 0))
		goto out;
	ret = 0;
out:
	lab_child_end(&child);
	return ret;
}

static int setup(const struct row *r, struct record *rec, struct holder *h)
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

static void teardown(struct holder *h)
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
	struct vmsplice_obs *o = &rec->vmsplice;
	struct holder h = { .give = vmsplice_give, .page = MAP_FAILED };
	int ret;

	(void)opts;
	ret = setup(r, rec, &h);
	if (!ret)
		ret = play_holder(r, rec, &h, &o->control_live, &o->pipe_sees_parent,
				  &o->pipe_has_prefork, &o->par_before, &o->par_after,
				  &o->child_fork, &o->child_has_range);
	teardown(&h);
	return ret;
}

int play_iouring(const struct row *r, const struct play_opts *opts, struct record *rec)
{
	struct iouring_obs *o = &rec->iouring;
	struct holder h = { .give = ring_give, .page = MAP_FAILED };
	struct iovec iov;
	int ret;

	(void)opts;
	ret = setup(r, rec, &h);
	if (!ret) {
		ret = io_uring_queue_init(4, &h.ring, 0);
		if (ret)
			ret = (errno = -ret, row_fail(rec, "io_uring_queue_init"));
		else
			h.ring_up = true;
	}
	if (!ret) {
		/* Registered before the fork: io_uring pins it (FOLL_PIN | FOLL_LONGTERM). */
		iov.iov_base = h.page;
		iov.iov_len = LAB_PAGE;
		ret = io_uring_register_buffers(&h.ring, &iov, 1);
		if (ret)
			ret = (errno = -ret, row_fail(rec, "io_uring_register_buffers"));
	}
	if (!ret)
		ret = play_holder(r, rec, &h, &o->control_moved, &o->ring_sees_parent,
				  &o->ring_has_prefork, &o->par_before, &o->par_after,
				  &o->child_fork, &o->child_has_range);
	teardown(&h);
	return ret;
}
