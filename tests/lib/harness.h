/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lab's tests use the kernel tree's own kselftest_harness.h (found through
 * -I<tree>/tools/testing/selftests). The 6.1 harness always runs every test; this
 * adds one thing, a test name argument, so that `make test T=file:name` runs one
 * case: tests whose "fixture.name" or "name" differs are unlinked before the run.
 */
#ifndef LAB_HARNESS_H
#define LAB_HARNESS_H

/*
 * The harness's TEST()/TEST_F() macros expand to functions with parameters a test
 * need not use; -Wextra would reject every test, so that one warning is off for
 * files built on the harness, and only that one.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
/*
 * 6.12's TEST_F() runs the fixture under vfork() and keeps its pid in a local that gcc
 * -O2 -Wextra calls "might be clobbered"; the harness never reads it after a longjmp. The
 * kernel builds its own selftests without -Wextra; here only that warning is off.
 */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"
#include "lab.h"

static inline int lab_harness_main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, *keep, **tail;
	char full[512];
	int found = 0;

	if (argc < 2)
		return test_harness_run(argc, argv);
	for (f = __fixture_list; f; f = f->next) {
		keep = NULL;
		tail = &keep;
		for (t = f->tests; t; t = t->next) {
			snprintf(full, sizeof(full), "%s.%s", f->name, t->name);
			if (strcmp(argv[1], t->name) && strcmp(argv[1], full))
				continue;
			*tail = t;
			tail = &t->next;
			found++;
		}
		/* t is NULL here: it ends the filtered list. */
		*tail = t;
		f->tests = keep;
	}
	if (!found) {
		fprintf(stderr, "no test named %s\n", argv[1]);
		return KSFT_FAIL;
	}
	return test_harness_run(argc, argv);
}

/* Skip the test when the kernel's series lacks the lab patch it needs (lab_lacks_patch()). */
#define LAB_NEEDS_PATCH(number, what) do { \
	const char *lab_why_ = lab_lacks_patch(number); \
	if (lab_why_) \
		SKIP(return, "%s: %s", lab_why_, what); \
} while (0)

#define LAB_HARNESS_MAIN \
	int main(int argc, char **argv) { return lab_harness_main(argc, argv); }

#endif
