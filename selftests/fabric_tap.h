/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fabric_tap.h - TAP output of the libfabric test programs (one process
 * each): CHECK prints "ok N - ..." or "not ok N - ..." and counts; MUST
 * bails out when a set-up call returns a negative FI_ errno; now_ms()
 * reads CLOCK_MONOTONIC in milliseconds.
 */
#ifndef FABRIC_TAP_H
#define FABRIC_TAP_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <rdma/fi_errno.h>

static int num, failed;

#define CHECK(cond, ...) do {						\
	num++;								\
	if (cond) {							\
		printf("ok %d - ", num);				\
	} else {							\
		failed++;						\
		printf("not ok %d - ", num);				\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
	fflush(stdout);							\
} while (0)

#define MUST(call) do {							\
	int _r = (int)(call);						\
	if (_r < 0) {							\
		printf("Bail out! %s: %d (%s)\n", #call, _r,		\
		       fi_strerror(-_r));				\
		exit(1);						\
	}								\
} while (0)

static inline long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

#endif /* FABRIC_TAP_H */
