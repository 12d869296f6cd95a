/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pindma: the ioctl ABI of /dev/pindma, shared by the driver, the demo and the tests.
 *
 * A handle names one pinned range. Handles are unique module-wide and belong to the
 * open file and to the mm (address space) that pinned them: another file's handle,
 * one already unpinned, or one never issued gives ENOENT; a handle used through an
 * inherited file descriptor from another mm (a forked child) gives EPERM.
 */
#ifndef _UAPI_PINDMA_H
#define _UAPI_PINDMA_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * How the pages are held. GUP: get_user_pages(), FOLL_GET, the 2006-style
 * reference, for CAP_SYS_ADMIN only (EPERM otherwise). PIN_LONGTERM:
 * pin_user_pages(), FOLL_PIN | FOLL_LONGTERM, for anyone within their
 * RLIMIT_MEMLOCK, a page of a large folio (a THP) costing the whole folio; from
 * a user namespace other than the initial one, only with CAP_IPC_LOCK (EPERM).
 */
#define PINDMA_MODE_GUP		1
#define PINDMA_MODE_PIN_LONGTERM 2

/*
 * PIN flags. WRITE: the device may write the pages; not for a shared mapping
 * of a file that is written back (ext4, say; tmpfs and hugetlbfs are fine),
 * which is EOPNOTSUPP.
 */
#define PINDMA_PIN_WRITE	_BITUL(0)
#define PINDMA_PIN_FLAGS	PINDMA_PIN_WRITE

/* At most this many pages per handle (E2BIG beyond). */
#define PINDMA_MAX_PAGES	65536

/* At most this many handles per open file (ENOSPC beyond). */
#define PINDMA_MAX_HANDLES	4096

/*
 * A pin that would leave a small page it holds with a reference count above
 * this is refused (ETOOMANYREFS), nothing held: a FOLL_PIN of a small page adds
 * 1024 to it, so this is 16384 pins of one page, a 128th of where the count
 * overflows. A large folio's count grows by 1 a pin, and is not bounded here.
 */
#define PINDMA_MAX_PAGE_REFS	0x1000000	/* 2^24 */

/* DMA engines; a request names one, the reply says which one served it. */
#define PINDMA_ENGINE_AUTO	0	/* edu when bound, else CPU */
#define PINDMA_ENGINE_CPU	1	/* kmap_local_page() + memcpy */
/*
 * QEMU edu PCI device, real DMA: ENODEV when absent, ENXIO for a page that
 * neither it (dma_bits) nor a swiotlb bounce buffer reaches.
 */
#define PINDMA_ENGINE_EDU	2

struct pindma_pin {
	__u64 addr;	/* in: page-aligned user address */
	__u64 len;	/* in: bytes, > 0, rounded up to whole pages */
	__u32 mode;	/* in: PINDMA_MODE_* */
	__u32 flags;	/* in: PINDMA_PIN_* */
	__u32 handle;	/* out */
	__u32 npages;	/* out */
};

/*
 * DMA_WRITE: the device writes len bytes from buf into the pinned range at offset.
 * DMA_READ: the device reads len bytes of the pinned range at offset into buf.
 */
struct pindma_dma {
	__u32 handle;	/* in */
	__u32 engine;	/* in: PINDMA_ENGINE_*; out: the engine that served */
	__u64 offset;	/* in: byte offset into the pinned range */
	__u64 len;	/* in: bytes, > 0 */
	__u64 buf;	/* in: user buffer */
};

struct pindma_query {
	__u32 handle;	/* in */
	__u32 index;	/* in: page index in the pinned range */
	__u64 pfn;	/* out: page frame number of the held page */
};

/*
 * The counts are module-wide for CAP_SYS_ADMIN, and the file's own (its
 * handles, and the transfers done for its requests) for anyone else.
 */
struct pindma_info {
	__u32 edu_present;	/* an edu device is bound */
	__u32 max_pages;	/* PINDMA_MAX_PAGES */
	__u64 handles;		/* handles live */
	__u64 pages_held;	/* pages held (GUP + PIN_LONGTERM) */
	__u64 edu_transfers;	/* edu DMA transfers done since load (or open) */
};

#define PINDMA_IOC_MAGIC	0xd7
#define PINDMA_IOC_PIN		_IOWR(PINDMA_IOC_MAGIC, 1, struct pindma_pin)
#define PINDMA_IOC_UNPIN	_IOW(PINDMA_IOC_MAGIC, 2, __u32)
#define PINDMA_IOC_DMA_WRITE	_IOWR(PINDMA_IOC_MAGIC, 3, struct pindma_dma)
#define PINDMA_IOC_DMA_READ	_IOWR(PINDMA_IOC_MAGIC, 4, struct pindma_dma)
#define PINDMA_IOC_QUERY	_IOWR(PINDMA_IOC_MAGIC, 5, struct pindma_query)
#define PINDMA_IOC_INFO		_IOR(PINDMA_IOC_MAGIC, 6, struct pindma_info)

#endif /* _UAPI_PINDMA_H */
