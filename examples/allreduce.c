// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * allreduce - the smallest complete program of libxniccoll: NRANKS
 * processes, one xnic device each, sum a float vector.
 *
 *   allreduce -d DEV -r RANK -n NRANKS [-p PORT] [-c COUNT]
 *
 * Ranks find each other through a TCP bootstrap on 127.0.0.1:PORT (all
 * ranks on one host; xnic_bootstrap_cm() needs no IP at all). Rank r
 * contributes x[i] = (r + 1) * (i % 1000); every rank checks that it got
 * sum over r of (r + 1) * (i % 1000), element by element. Exit status 0
 * when every element is right. Build:
 *   cc allreduce.c $(pkg-config --cflags --libs libxniccoll)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <xnic_coll.h>

#include "opt_num.h"

int main(int argc, char **argv)
{
	struct xnic_comm_cfg cfg = { .rank = -1 };
	struct xnic_bootstrap *bs = NULL;
	struct xnic_comm *comm;
	long port = 18515, count = 1000003, i;
	float *x, want;
	int opt, err, bad = 0;

	while ((opt = getopt(argc, argv, "d:r:n:p:c:")) != -1) {
		switch (opt) {
		case 'd':
			cfg.device = optarg;
			break;
		case 'r':
			cfg.rank = (int)opt_num(argv[0], opt, optarg, 0,
						XNIC_COLL_MAX_RANKS - 1);
			break;
		case 'n':
			cfg.nranks = (int)opt_num(argv[0], opt, optarg, 1,
						  XNIC_COLL_MAX_RANKS);
			break;
		case 'p':
			port = opt_num(argv[0], opt, optarg, 1, 65535);
			break;
		case 'c':
			count = opt_num(argv[0], opt, optarg, 0, 1L << 30);
			break;
		default:
			cfg.device = NULL;
		}
	}
	if (!cfg.device || cfg.rank < 0 || cfg.nranks < 1 ||
	    cfg.rank >= cfg.nranks || optind < argc) {
		fprintf(stderr, "usage: %s -d DEV -r RANK -n NRANKS [-p PORT] [-c COUNT]\n",
			argv[0]);
		return 2;
	}
	x = malloc((size_t)count * sizeof(*x) + 1);
	if (!x)
		return 1;
	for (i = 0; i < count; i++)
		x[i] = (float)((cfg.rank + 1) * (i % 1000));

	err = xnic_bootstrap_tcp(cfg.rank, cfg.nranks, NULL, (uint16_t)port,
				 30000, &bs);
	if (err) {
		fprintf(stderr, "rank %d: bootstrap: %s\n", cfg.rank,
			xnic_comm_strerror(NULL));
		return 1;
	}
	cfg.bootstrap = bs;
	err = xnic_comm_init(&comm, &cfg);
	if (err) {
		fprintf(stderr, "rank %d: %s\n", cfg.rank,
			xnic_comm_strerror(NULL));
		return 1;
	}
	/* In place: x becomes the sum over every rank. */
	err = xnic_allreduce(comm, x, x, (size_t)count, XNIC_COLL_FLOAT32,
			     XNIC_COLL_SUM);
	if (err) {
		fprintf(stderr, "rank %d: %s\n", cfg.rank,
			xnic_comm_strerror(comm));
		return 1;
	}
	for (i = 0; i < count; i++) {
		want = (float)(cfg.nranks * (cfg.nranks + 1) / 2 * (i % 1000));
		if (x[i] != want && !bad++)
			fprintf(stderr, "rank %d: x[%ld] = %g, want %g\n",
				cfg.rank, i, x[i], want);
	}
	xnic_barrier(comm);
	xnic_comm_destroy(comm);
	xnic_bootstrap_close(bs);
	free(x);
	if (!bad)
		printf("rank %d: %ld sums of %d ranks checked\n", cfg.rank,
		       count, cfg.nranks);
	return bad ? 1 : 0;
}
