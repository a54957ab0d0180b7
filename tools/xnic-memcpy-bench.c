// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-memcpy-bench - single-thread memcpy bandwidth, the yardstick of
 * `make bench` for what moving bytes costs on this (virtual) CPU.
 *
 *   xnic-memcpy-bench [-s BYTES] [-n ROUNDS]
 *
 * Copies a BYTES buffer (default 64 MiB; up to 1T, suffix K, M or G
 * allowed) to another ROUNDS times (default 20) after one untimed warm-up
 * copy, and prints
 *   memcpy <bytes> bytes x <rounds>: <GB/s> GB/s (<MB/s> MB/s)
 * with GB = 10^9 bytes and MB = 2^20 bytes (perftest's MB/sec).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "xnic_tool.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t size = 64UL << 20;
	unsigned long rounds = 20, r;
	volatile uint8_t sink = 0;
	uint8_t *src, *dst;
	double t0, t1, bps;
	int c;

	while ((c = getopt(argc, argv, "s:n:h")) != -1) {
		switch (c) {
		case 's':
			size = xnic_tool_num(2, "-s", optarg, 1, 1ULL << 40,
					     true);
			break;
		case 'n':
			rounds = xnic_tool_num(2, "-n", optarg, 1, UINT32_MAX,
					       false);
			break;
		default:
			fprintf(c == 'h' ? stdout : stderr,
				"usage: %s [-s BYTES] [-n ROUNDS]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind != argc)
		xnic_tool_die(2, "unexpected argument '%s'", argv[optind]);
	src = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	dst = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (src == MAP_FAILED || dst == MAP_FAILED) {
		perror("xnic-memcpy-bench: mmap");
		return 1;
	}
	memset(src, 0x5a, size);
	memcpy(dst, src, size);		/* warm-up: fault in, fill caches */
	t0 = now_s();
	for (r = 0; r < rounds; r++) {
		src[r % size] = (uint8_t)r;	/* not a copy of a copy */
		memcpy(dst, src, size);
		sink ^= dst[(r * 4093) % size];
	}
	t1 = now_s();
	bps = (double)size * (double)rounds / (t1 - t0);
	printf("memcpy %zu bytes x %lu: %.3f GB/s (%.1f MB/s)\n", size, rounds,
	       bps / 1e9, bps / 1048576.0);
	(void)sink;
	return 0;
}
