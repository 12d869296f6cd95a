// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a hung task, which the kernel's hung-task detector reports
 * ("blocked for more than"): the loading task sleeps uninterruptibly for 8 s, four times the
 * timeout of the plant's boot (kernel.hung_task_timeout_secs=2). Loading then succeeds.
 */
#include <linux/delay.h>
#include <linux/module.h>

static int __init plant_hungtask_init(void)
{
	pr_info("dontfork-lab plant: sleeping uninterruptibly for 8 s\n");
	msleep(8000);
	return 0;
}
module_init(plant_hungtask_init);

MODULE_DESCRIPTION("dontfork-lab plant: a hung task at load");
MODULE_LICENSE("GPL");
