// SPDX-License-Identifier: GPL-2.0
/*
 * odirect_demo: the fork/copy-on-write bug as databases met it. A thread's O_DIRECT read is
 * in flight (the lab's "odirect" disk reads at 1 MiB/s) while the process forks and the
 * parent writes next to the read's last bytes. Per row: reads in flight at the fork, the
 * read's last page's PFN for the parent (before -> after) and the child, the bytes of the
 * read the parent never sees, whether the child got them, and the verdict observed beside
 * the one expected for this kernel (liblab/expect.c).
 * Exit status: 0 all as expected, 1 a mismatch, 2 a row could not run.
 */
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "odirect.h"

int main(void)
{
	unsigned int mismatched = 0, failed = 0;

	printf("odirect_demo on Linux %s (expectations: the %s table); a 1 MiB - 2 KiB O_DIRECT read "
	       "of the odirect disk (1 MiB/s), PFNs of its last page in hex\n",
	       lab_kernel_release(), lab_expect_table());
	printf("%-2s %-21s %-9s %-19s %-9s %-13s %-10s %-9s %s\n", "#", "row", "in flight",
	       "parent pfn", "child pfn", "bytes missing", "child got", "observed", "expected");
	for (unsigned int i = 0; i < n_odirect_rows; i++) {
		const struct odirect_row *row = &odirect_rows[i];
		const char *want = lab_expect(row->name);
		struct odirect_obs o;
		bool ok = odirect_run(row, &o), match = ok && want && !strcmp(o.verdict, want);
		char child[20] = "-";

		if (row->fork)
			snprintf(child, sizeof(child), "%llx", (unsigned long long)o.pfn_child);
		printf("%-2u %-21s %-9ld %7llx->%-10llx %-9s %-13ld %-10s %-9s %s%s\n", i + 1,
		       row->name, o.inflight, (unsigned long long)o.pfn_before,
		       (unsigned long long)o.pfn_after, child, o.missing,
		       row->fork ? (o.child_has_data ? "yes" : "no") : "-",
		       ok ? o.verdict : "ERROR", want ? want : "(none)", match ? "" : " MISMATCH");
		if (!ok) {
			printf("   could not run: %s\n", o.error);
			failed++;
		} else if (!match) {
			mismatched++;
		}
	}
	printf("\nnotes:\n");
	for (unsigned int i = 0; i < n_odirect_rows; i++)
		printf("%2u %s: %s; %s\n", i + 1, odirect_rows[i].name, odirect_rows[i].title,
		       odirect_rows[i].note);
	printf("\n%u rows: %u as expected, %u mismatched, %u could not run\n", n_odirect_rows,
	       n_odirect_rows - mismatched - failed, mismatched, failed);
	return failed ? 2 : mismatched ? 1 : 0;
}
