// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-idle-qps - create many idle QPs on an xnic device and keep them
 * until killed: the load of `make bench`'s "4096 idle QPs" latency run.
 *
 *   xnic-idle-qps -d xnic0 -n 4096 [-r NODE]
 *
 * Every QP has the smallest rings (one SQ and one RQ entry) and shares one
 * CQ. With -r NODE each is also connected (RESET -> RTS) to QP numbers of
 * node NODE that nobody uses, so the idle QPs are in the state a busy
 * application's would be in; they never post anything. Prints "READY N"
 * on stdout once all exist, then sleeps until SIGTERM/SIGINT, and closes
 * the device (which destroys them) on the way out.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xnic.h"
#include "xnic_tool.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-d DEV] [-n COUNT] [-r NODE]\n"
		"  -d DEV    xnic device (default xnic0)\n"
		"  -n COUNT  QPs to create (default 4096, at most %u)\n"
		"  -r NODE   connect each QP to a dummy QP of node NODE\n"
		"Prints READY COUNT when done, then waits for SIGTERM.\n",
		prog, XNIC_MAX_QP_PER_CTX);
}

int main(int argc, char **argv)
{
	struct xnic_qp_cap cap = {
		.max_send_wr = 1, .max_recv_wr = 1,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	const char *dev = "xnic0";
	unsigned long n = 4096, i;
	long node = -1;
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	struct sigaction sa;
	int c, err;

	while ((c = getopt(argc, argv, "d:n:r:h")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			n = xnic_tool_num(2, "-n", optarg, 1,
					  XNIC_MAX_QP_PER_CTX, false);
			break;
		case 'r':
			node = (long)xnic_tool_num(2, "-r", optarg, 0, 0xfffe,
						   false);
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind != argc)
		xnic_tool_die(2, "unexpected argument '%s'", argv[optind]);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	err = xnic_open(dev, &ctx);
	if (err) {
		fprintf(stderr, "xnic-idle-qps: %s: %s\n", dev,
			xnic_strerror(err));
		return 1;
	}
	err = xnic_alloc_pd(ctx, &pd);
	if (!err)
		err = xnic_create_cq(ctx, 16, &cq);
	for (i = 0; !err && i < n && !stop; i++) {
		struct xnic_qp_cap cp = cap;

		err = xnic_create_qp(pd, cq, cq, &cp, &qp);
		if (!err && node >= 0)
			err = xnic_connect_qp(qp, (uint32_t)node,
					      (uint32_t)(0x800000 + i),
					      (uint32_t)i, (uint32_t)i);
	}
	if (err) {
		fprintf(stderr, "xnic-idle-qps: QP %lu of %lu: %s\n", i, n,
			xnic_strerror(err));
		xnic_close(ctx);
		return 1;
	}
	printf("READY %lu\n", n);
	fflush(stdout);
	while (!stop)
		pause();
	xnic_close(ctx);
	return 0;
}
