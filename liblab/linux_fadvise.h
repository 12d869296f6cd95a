/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LINUX_FADV_ASYNC_WRITE and LINUX_FADV_WRITE_WAIT come from the lab kernel's patched
 * <linux/fadvise.h> (the kernel's word is the one that counts); the POSIX_FADV_* values there clash with glibc's <fcntl.h>, which
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

/*
 * A kernel built without kernel-patches/.../0001 (a KERNEL_SRC tree) lacks them: the programs still
 * build, with the patch's values, and what uses them is skipped at run time (LAB_NEEDS_PATCH), where
 * the kernel would answer EINVAL.
 */
#ifndef LINUX_FADV_ASYNC_WRITE
#define LINUX_FADV_ASYNC_WRITE 32
#endif
#ifndef LINUX_FADV_WRITE_WAIT
#define LINUX_FADV_WRITE_WAIT 33
#endif

#endif
