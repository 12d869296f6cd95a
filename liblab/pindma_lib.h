/* SPDX-License-Identifier: GPL-2.0 */
/* Thin wrappers over the /dev/pindma ioctls (drivers/pindma/uapi/pindma.h): -errno on failure. */
#ifndef PINDMA_LIB_H
#define PINDMA_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lab.h"
#include "pindma.h"

static inline int pindma_open(void)
{
	int fd = open("/dev/pindma", O_RDWR | O_CLOEXEC);

	/* Not loaded: a kselftest collection run elsewhere carries the module (lab_load_module()). */
	if (fd < 0 && errno == ENOENT && !lab_load_module("pindma"))
		fd = open("/dev/pindma", O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static inline int pindma_call(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

/* Pin [addr, addr + len); on success *handle is set. */
static inline int pindma_pin(int fd, const void *addr, uint64_t len, uint32_t mode, uint32_t flags,
			     uint32_t *handle)
{
	struct pindma_pin p = { .addr = (uintptr_t)addr, .len = len, .mode = mode, .flags = flags };
	int ret = pindma_call(fd, PINDMA_IOC_PIN, &p);

	if (!ret)
		*handle = p.handle;
	return ret;
}

static inline int pindma_unpin(int fd, uint32_t handle)
{
	return pindma_call(fd, PINDMA_IOC_UNPIN, &handle);
}

/* The device writes len bytes of buf into the pinned range at offset; *engine in/out. */
static inline int pindma_dma(int fd, unsigned long req, uint32_t handle, uint64_t offset,
			     void *buf, uint64_t len, uint32_t *engine)
{
	struct pindma_dma d = { .handle = handle, .engine = *engine, .offset = offset,
				.len = len, .buf = (uintptr_t)buf };
	int ret = pindma_call(fd, req, &d);

	if (!ret)
		*engine = d.engine;
	return ret;
}

static inline int pindma_query(int fd, uint32_t handle, uint32_t index, uint64_t *pfn)
{
	struct pindma_query q = { .handle = handle, .index = index };
	int ret = pindma_call(fd, PINDMA_IOC_QUERY, &q);

	if (!ret)
		*pfn = q.pfn;
	return ret;
}

static inline const char *pindma_engine_name(uint32_t engine)
{
	switch (engine) {
	case PINDMA_ENGINE_CPU:
		return "cpu";
	case PINDMA_ENGINE_EDU:
		return "edu";
	default:
		return "auto";
	}
}

#endif
