// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA netlink, asked directly: what `rdma system show` prints, as the kernel's attributes rather
 * than the tool's words. A kernel before 5.13 has no copy-on-fork attribute, which the rdma tool
 * and rdma-core both read as off: so does this.
 */
#include "lab.h"

#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int lab_rdma_copy_on_fork(void)
{
	struct {
		struct nlmsghdr h;
		char attrs[512];
	} msg = { .h = {
		.nlmsg_len = NLMSG_LENGTH(0),
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET),
		.nlmsg_flags = NLM_F_REQUEST,
		.nlmsg_seq = 1,
	} };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA), ret = -1;
	struct nlattr *a;
	ssize_t n;
	int left;

	if (fd < 0)
		return -1;
	if (sendto(fd, &msg.h, msg.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		goto out;
	n = recv(fd, &msg, sizeof(msg), 0);
	if (n < (ssize_t)NLMSG_LENGTH(0) || !NLMSG_OK(&msg.h, n)) {
		errno = n < 0 ? errno : EPROTO;
		goto out;
	}
	if (msg.h.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&msg.h);

		errno = msg.h.nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? -e->error : EPROTO;
		goto out;
	}
	/* The attributes follow the header, each padded to NLA_ALIGNTO. */
	a = NLMSG_DATA(&msg.h);
	left = msg.h.nlmsg_len - NLMSG_LENGTH(0);
	ret = 0;
	while (left >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		if ((a->nla_type & NLA_TYPE_MASK) == RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK &&
		    a->nla_len >= NLA_HDRLEN + 1) {
			ret = !!*((unsigned char *)a + NLA_HDRLEN);
			break;
		}
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
out:
	close(fd);
	return ret;
}
