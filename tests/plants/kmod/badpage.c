// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: pages freed with a flag the page allocator forbids at free
 * (PG_reserved, one of PAGE_FLAGS_CHECK_AT_FREE), which it reports ("BUG: Bad page state", "page
 * dumped because: PAGE_FLAGS_CHECK_AT_FREE flag(s) set") and keeps out of use. An order above
 * PAGE_ALLOC_COSTLY_ORDER: 6.1 checks smaller ones only when its per-CPU lists give them back,
 * after it has cleared their flags. 6.12 checks only with a page debugging or hardening option
 * on: the plant's boot has init_on_alloc=1, as distros' kernels do. Loading then succeeds.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/page-flags.h>

static int __init plant_badpage_init(void)
{
	const unsigned int order = PAGE_ALLOC_COSTLY_ORDER + 1;
	struct page *page = alloc_pages(GFP_KERNEL, order);

	if (!page)
		return -ENOMEM;
	SetPageReserved(page);
	__free_pages(page, order);
	return 0;
}
module_init(plant_badpage_init);

MODULE_DESCRIPTION("dontfork-lab plant: a bad page state at load");
MODULE_LICENSE("GPL");
