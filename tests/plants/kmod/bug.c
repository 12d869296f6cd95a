// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a BUG(), the kernel's own: skb_put() past the end of a socket
 * buffer, which skb_over_panic() reports ("kernel BUG at net/core/skbuff.c") before the loading
 * task is killed: the plant took when its function is in that report's trace.
 */
#include <linux/module.h>
#include <linux/skbuff.h>

static int __init plant_bug_init(void)
{
	struct sk_buff *skb = alloc_skb(64, GFP_KERNEL);

	if (!skb)
		return -ENOMEM;
	pr_info("dontfork-lab plant: putting %lu bytes into a buffer of %d\n",
		2 * PAGE_SIZE, skb_tailroom(skb));
	skb_put(skb, 2 * PAGE_SIZE);
	kfree_skb(skb);
	return 0;
}
module_init(plant_bug_init);

MODULE_DESCRIPTION("dontfork-lab plant: a kernel BUG at load");
MODULE_LICENSE("GPL");
