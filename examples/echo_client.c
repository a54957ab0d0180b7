// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * echo_client - the client of echo_server: connects, sends N messages of
 * SEND, checks each reply (the message upper-cased), disconnects.
 *
 *   echo_client -d DEV -c SERVER_NODE [-m MESSAGES]
 *
 * Exit status 0 when every reply was right. Build:
 *   cc echo_client.c $(pkg-config --cflags --libs libxnic)
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xnic.h>

#include "opt_num.h"

#define SERVICE		0xec40
#define MSG_MAX		256
#define TIMEOUT_MS	10000

static void die(const char *what, int err)
{
	fprintf(stderr, "echo_client: %s: %s\n", what, xnic_strerror(err));
	exit(1);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static char msg[MSG_MAX], reply[MSG_MAX];
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	struct xnic_mr *mr_msg, *mr_reply;
	struct xnic_cm_reply rep;
	struct xnic_sge sge;
	struct xnic_cqe e;
	const char *dev = NULL;
	long node = -1, msgs = 10, k;
	long long end;
	size_t i, len;
	int opt, n, err;

	while ((opt = getopt(argc, argv, "d:c:m:")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'c')
			node = opt_num(argv[0], opt, optarg, 0, 65534);
		else if (opt == 'm')
			msgs = opt_num(argv[0], opt, optarg, 0, 100000000);
		else
			node = -1, optind = argc;
	}
	if (!dev || node < 0 || optind < argc) {
		fprintf(stderr, "usage: %s -d DEV -c SERVER_NODE [-m N]\n",
			argv[0]);
		return 2;
	}
	if ((err = xnic_open(dev, &ctx)) || (err = xnic_alloc_pd(ctx, &pd)))
		die(dev, err);
	if ((err = xnic_reg_mr(pd, msg, sizeof(msg), XNIC_ACCESS_LOCAL_WRITE,
			       &mr_msg)) ||
	    (err = xnic_reg_mr(pd, reply, sizeof(reply),
			       XNIC_ACCESS_LOCAL_WRITE, &mr_reply)))
		die("xnic_reg_mr", err);
	if ((err = xnic_create_cq(ctx, 16, &cq)) ||
	    (err = xnic_create_qp(pd, cq, cq, NULL, &qp)))
		die("creating the CQ and QP", err);

	/* Retry while the server is not up yet or not known yet. */
	end = now_ms() + TIMEOUT_MS;
	do {
		err = xnic_cm_connect(ctx, qp, (uint32_t)node, SERVICE, NULL, 0,
				      2000, &rep);
	} while ((err == -ECONNREFUSED || err == -EHOSTUNREACH ||
		  err == -ETIMEDOUT) && now_ms() < end && !usleep(100000));
	if (err == -ECONNREFUSED)
		fprintf(stderr, "echo_client: %s\n",
			xnic_cm_reject_str(rep.reject_reason));
	if (err)
		die("xnic_cm_connect", err);

	for (k = 0; k < msgs; k++) {
		sge = (struct xnic_sge){ .addr = (uintptr_t)reply,
					 .length = sizeof(reply),
					 .lkey = mr_reply->lkey };
		if ((err = xnic_post_recv(qp, &sge, 1, 1)))
			die("xnic_post_recv", err);
		len = (size_t)snprintf(msg, sizeof(msg),
				       "message %ld from pid %d", k, getpid());
		sge = (struct xnic_sge){ .addr = (uintptr_t)msg,
					 .length = (uint32_t)len,
					 .lkey = mr_msg->lkey };
		err = xnic_post_wr(qp, &(struct xnic_wr){
			.opcode = XNIC_WR_SEND, .sg = &sge, .nsge = 1,
			.wr_id = 2, .flags = XNIC_WQE_F_SIGNALED,
		});
		if (err)
			die("xnic_post_wr", err);
		/* Two completions: our SEND and the reply's RECV. */
		for (i = 0; i < 2; i++) {
			while (!(n = xnic_poll_cq(cq, &e, 1)))
				if ((err = xnic_cq_wait(cq, TIMEOUT_MS)))
					die("waiting for the reply", err);
			if (n < 0)
				die("xnic_poll_cq", n);
			if (e.status != XNIC_WC_SUCCESS) {
				fprintf(stderr, "echo_client: %s: %s\n",
					xnic_wc_opcode_str(e.opcode),
					xnic_wc_status_str(e.status));
				return 1;
			}
			if (e.opcode == XNIC_WC_RECV && e.byte_len != len) {
				fprintf(stderr, "echo_client: reply of %u bytes to %zu\n",
					e.byte_len, len);
				return 1;
			}
		}
		for (i = 0; i < len; i++)
			if (reply[i] != toupper((unsigned char)msg[i]))
				break;
		if (i != len) {
			fprintf(stderr, "echo_client: bad reply to '%s'\n", msg);
			return 1;
		}
	}
	printf("echo_client %d: %ld replies checked\n", getpid(), msgs);
	xnic_cm_disconnect(qp);
	xnic_close(ctx);
	return 0;
}
