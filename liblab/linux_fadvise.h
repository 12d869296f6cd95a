/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT come from the lab kernel's patched
 * <linux/fadvise.h>; the POSIX_FADV_* values there clash with glibc's <fcntl.h>, which
 * defines them itself, so only the Linux ones are kept from the kernel header.
 */
#ifndef LAB_LINUX_FADVISE_H
#define LAB_LINUX_FADVISE_H

#include <linux/fadvise.h>
#undef POSIX_FADV_NORMAL
#undef POSIX_FADV_RANDOM
#undef POSIX_FADV_SEQUENTIAL
#undef POSIX_FADV_WILLNEED
#undef POSIX_FADV_DONTNEED
#undef POSIX_FADV_NOREUSE
#include <fcntl.h>

#endif
