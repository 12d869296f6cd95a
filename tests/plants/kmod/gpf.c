// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh: a general protection fault, a read of a non-canonical address
 * (the list poison), which the kernel reports ("general protection fault") before it kills the
 * loading task: the plant took when the report names its function as the faulting RIP.
 */
#include <linux/compiler.h>
#include <linux/module.h>
#include <linux/poison.h>

/* Not instrumented: KASAN (debug flavour) would check the address's shadow and fault there. */
static noinline __no_sanitize_address unsigned long plant_gpf_read(const unsigned long *p)
{
	return READ_ONCE(*p);
}

static int __init plant_gpf_init(void)
{
	const unsigned long *p = LIST_POISON1;

	OPTIMIZER_HIDE_VAR(p);
	pr_info("dontfork-lab plant: read the list poison: %lu\n", plant_gpf_read(p));
	return 0;
}
module_init(plant_gpf_init);

MODULE_DESCRIPTION("dontfork-lab plant: a general protection fault at load");
MODULE_LICENSE("GPL");
