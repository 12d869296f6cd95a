# A gate where sanity_check_pinned_pages() has read "the switch was ever on" and not yet looked at
# the pages: it waits (20 s at most) for the switch to come on, then (2 s at most) for a fork() to
# share the first page pinned, and says so. A gate, not a sleep: however slow the guest, the first
# enable and the fork() that shares come inside the window, which fork_pin_race_test's first case
# races. Applied first by gup_fast_race.sed and gup_fast_gate.sed (their "after"), which call it.
/^static inline void sanity_check_pinned_pages(struct page \*\*pages,$/i\
/* plant: a fork() let in between "the switch was ever on" and the check */\
static void plant_gate(struct page **pages, unsigned long npages)\
{\
	unsigned long until = jiffies + 20 * HZ;\
\
	if (!npages || !PageAnon(pages[0]))\
		return;\
	while (!fork_shares_pinned_pages() && time_before(jiffies, until))\
		msleep(1);\
	until = jiffies + 2 * HZ;\
	while (PageAnonExclusive(pages[0]) && time_before(jiffies, until))\
		msleep(1);\
	if (!PageAnonExclusive(pages[0]))\
		pr_info("plant: a fork() shared the pinned page inside the window");\
}\

s/^#include <linux\/sysctl.h>/&\n#include <linux\/delay.h>/
