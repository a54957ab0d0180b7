/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xt_harness.h - assertions and main() shared by the xnic kselftests built
 * on kselftest_harness.h and xnic_lib.h. Include after both.
 *
 * A test defines XT_TAG (a short name for its veth pair and devices) and
 * may define CANARY (the byte its untouched memory holds) before including
 * this file.
 */
#ifndef XT_HARNESS_H
#define XT_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define KiB		1024UL
#define MiB		(1024UL * 1024UL)

/* Bring up the environment; on failure log why and tear it down. */
#define ENV_UP(env) do { \
	int _e = xt_env_setup(env, XT_TAG); \
	if (_e) { \
		TH_LOG("environment: %s", xt_error()); \
		xt_env_teardown(env); \
	} \
	ASSERT_EQ(0, _e); \
} while (0)

#define CONN_UP(env, c, cqe, cap) do { \
	int _e = xt_conn_create(env, c, cqe, cap); \
	ASSERT_EQ(0, _e) TH_LOG("connection: %s", xt_error()); \
} while (0)

#define BUF_UP(dev, b, len, acc) do { \
	int _e = xt_buf_alloc(dev, b, len, acc); \
	ASSERT_EQ(0, _e) TH_LOG("buffer: %s", xt_error()); \
} while (0)

#define REAP(cq, cqe, ms) do { \
	int _e = xt_reap_one(cq, cqe, ms); \
	ASSERT_EQ(0, _e) TH_LOG("reap: %s", xt_error()); \
} while (0)

/* Assert that [p, p+len) still holds CANARY; name the first bad byte. */
#define ASSERT_CANARY(p, len, what) do { \
	ssize_t _d = xt_check_byte(p, len, CANARY); \
	ASSERT_EQ(-1, _d) TH_LOG("%s: byte %zd of %zu was overwritten (%#x)", \
				 what, _d, (size_t)(len), \
				 _d >= 0 ? (p)[_d] : 0); \
} while (0)

/*
 * Keep only the tests named by "-t NAME" options (as later versions of
 * kselftest_harness.h do; 6.1's runs every test). Exits 2 on a bad option
 * or a name no fixture has.
 */
static inline void xt_harness_filter(int argc, char **argv)
{
	struct __fixture_metadata *f;
	struct __test_metadata *t, *next;
	int opt, kept = 0;
	bool any = false;

	while ((opt = getopt(argc, argv, "t:")) != -1)
		if (opt == 't')
			any = true;
		else
			exit(2);
	if (!any)
		return;
	for (f = __fixture_list; f; f = f->next) {
		t = f->tests;
		f->tests = NULL;
		for (; t; t = next) {
			bool want = false;
			int k;

			next = t->next;
			for (k = 1; k + 1 < argc; k++)
				if (!strcmp(argv[k], "-t") &&
				    !strcmp(argv[k + 1], t->name))
					want = true;
			if (!want)
				continue;
			/* the harness's list: head->prev is the tail */
			t->next = NULL;
			if (!f->tests) {
				t->prev = t;
				f->tests = t;
			} else {
				t->prev = f->tests->prev;
				f->tests->prev->next = t;
				f->tests->prev = t;
			}
			kept++;
		}
	}
	if (!kept) {
		fprintf(stderr, "%s: no test of that name\n", argv[0]);
		exit(2);
	}
}

/*
 * main() of a VM test: skip (KSFT_SKIP) unless root with xnic.ko loaded or
 * loadable, else run the harness; "-t NAME" (repeatable) runs only the
 * named tests.
 */
static inline int xt_harness_main(int argc, char **argv)
{
	xt_harness_filter(argc, argv);
	if (geteuid() != 0) {
		printf("1..0 # SKIP must run as root (use tools/xnic-vm)\n");
		return KSFT_SKIP;
	}
	if (access("/sys/module/xnic", F_OK) && xt_sh("modprobe xnic")) {
		printf("1..0 # SKIP xnic.ko not loaded and not loadable\n");
		return KSFT_SKIP;
	}
	return test_harness_run(argc, argv);
}

#endif /* XT_HARNESS_H */
