// SPDX-License-Identifier: GPL-2.0
/*
 * Plant for tests/host/plants.sh (debug flavour: PROVE_LOCKING): two mutexes taken in one order,
 * then in the other, which lockdep reports ("possible circular locking dependency") though no
 * deadlock happens. Loading then succeeds.
 */
#include <linux/module.h>
#include <linux/mutex.h>

static DEFINE_MUTEX(plant_a);
static DEFINE_MUTEX(plant_b);

static int __init plant_lockdep_init(void)
{
	mutex_lock(&plant_a);
	mutex_lock(&plant_b);
	mutex_unlock(&plant_b);
	mutex_unlock(&plant_a);

	mutex_lock(&plant_b);
	mutex_lock(&plant_a);
	mutex_unlock(&plant_a);
	mutex_unlock(&plant_b);
	return 0;
}
module_init(plant_lockdep_init);

MODULE_DESCRIPTION("dontfork-lab plant: a lock inversion at load");
MODULE_LICENSE("GPL");
