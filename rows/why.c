// SPDX-License-Identifier: GPL-2.0
/* The kernel's view of a pin row (why.h). */
#include "why.h"

bool rows_why;

void why_step(struct record *rec, enum step step, uint64_t device, uint64_t parent,
	      uint64_t child)
{
	(void)rec; (void)step; (void)device; (void)parent; (void)child;
}

void why_fork_begin(struct record *rec)
{
	(void)rec;
}

void why_fork_end(struct record *rec, uint64_t par_before, uint64_t child_fork,
		  uint64_t par_after)
{
	(void)rec; (void)par_before; (void)child_fork; (void)par_after;
}

void why_print(FILE *f, const struct record *rec)
{
	(void)f; (void)rec;
}

void why_print_only(FILE *f, const struct record *rec)
{
	(void)f; (void)rec;
}
