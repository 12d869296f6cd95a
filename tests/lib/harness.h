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
/*
 * Everything the harness says goes to stdout, line-buffered, so that the runner reads a test's
 * diagnostics in order with its results: an expectation's failure before its case's result
 * (tests/ktap.py holds a case whose block shows one to failing, whatever SKIP() made of it).
 * Line buffering also keeps what a test's child prints before it _exit()s.
 */
#define TH_LOG_STREAM stdout
#include "kselftest_harness.h"
#include "lab.h"

/*
 * TH_LOG() prints its message after a "# file:line:test:" prefix, but a message of several lines
 * would put the rest at column 0, where a line such as "ok 3" would read as a result: every line
 * gets its "# ".
 */
#undef __TH_LOG
#define __TH_LOG(fmt, ...) \
	lab_th_log(__FILE__, __LINE__, _metadata->name, fmt, ##__VA_ARGS__)

static inline __attribute__((format(printf, 4, 5)))
void lab_th_log(const char *file, int line, const char *test, const char *fmt, ...)
{
	char msg[4096], *p = msg, *nl;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(TH_LOG_STREAM, "# %s:%d:%s:", file, line, test);
	while ((nl = strchr(p, '\n'))) {
		fprintf(TH_LOG_STREAM, "%.*s\n# ", (int)(nl - p), p);
		p = nl + 1;
	}
	fprintf(TH_LOG_STREAM, "%s\n", p);
	fflush(TH_LOG_STREAM);
}

static inline int lab_harness_main(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, *keep, **tail;
	char full[512];
	int found = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
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

/*
 * The lab patch a test needs (lab_lacks_patch()): a user's tree (KERNEL_SRC), which the lab does not
 * patch, skips the test saying why; on the lab's own kernels, which carry their whole series, a
 * missing patch fails it.
 */
#define LAB_NEEDS_PATCH(number, what) do { \
	const char *lab_why_ = lab_lacks_patch(number); \
	if (lab_why_ && lab_is_user_tree()) \
		SKIP(return, "%s: %s", lab_why_, what); \
	ASSERT_TRUE(!lab_why_) TH_LOG("%s: %s; the lab's own kernels carry their whole series", \
				      lab_why_, what); \
} while (0)

/*
 * A test that needs a part of the machine vm/boot gives the guest (a disk, the edu device, CPUs)
 * skips without it, saying what it needs: a kselftest collection run elsewhere (make
 * kselftest-install) may lack it. In the lab's own run no skip budget (tests/skips/) lists such a
 * skip, so there it fails. In a test's body, not in a fixture's setup (6.1's harness runs the
 * body after a skip there).
 */
#define LAB_NEEDS(have, fmt, ...) do { \
	if (!(have)) \
		SKIP(return, fmt, ##__VA_ARGS__); \
} while (0)

/*
 * A race between threads or processes needs CPUs to race on: on one, the non-preemptible kernel
 * interleaves them only where they sleep, and the test would pass having raced nothing. A skip,
 * saying so: make test gives these programs their own guest of two vCPUs (tests/run-all's race
 * guest), where no skip budget (tests/skips/) lists it, so it fails there; a kselftest collection
 * run elsewhere (make kselftest-install) may have one CPU.
 */
#define LAB_NEEDS_CPUS(n) \
	LAB_NEEDS(sysconf(_SC_NPROCESSORS_ONLN) >= (long)(n), "a race of %d CPUs, %ld online: " \
		  "the lab gives it two (vm/boot VM_SMP)", (n), sysconf(_SC_NPROCESSORS_ONLN))

#define LAB_HARNESS_MAIN \
	int main(int argc, char **argv) { return lab_harness_main(argc, argv); }

/*
 * A program whose every test needs a part of the machine vm/boot attaches (a disk, the edu device):
 * lacks() says what is missing, or NULL. When something is, the whole program is a kselftest skip
 * with that reason on its plan line (exit status KSFT_SKIP), as a kselftest collection run elsewhere
 * may lack it (make kselftest-install); in the lab's own run no skip budget (tests/skips/) lists
 * such a skip, so there it fails.
 */
#define LAB_HARNESS_MAIN_NEEDS(lacks) \
	int main(int argc, char **argv) \
	{ \
		const char *lab_why_ = (lacks)(); \
		if (lab_why_) { \
			printf("TAP version 13\n1..0 # SKIP %s\n", lab_why_); \
			return KSFT_SKIP; \
		} \
		return lab_harness_main(argc, argv); \
	}

#endif
