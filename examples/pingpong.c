// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pingpong - a CM-connected ping-pong with libxnic, then a verified READ.
 *
 *   pingpong -d DEV                  server: listens on service 0x5050
 *   pingpong -d DEV -c NODE [-i N]   client: connects to NODE's server
 *
 * Each side registers a 1 MiB buffer and tells the other its address and
 * rkey in the CM's private data. The client then does N round trips: a
 * 4 KiB RDMA WRITE with immediate data into the server's buffer, answered
 * by the same from the server (a WRITE with immediate consumes a receive
 * posted by the target and completes there with its imm_data). Last, the
 * client READs the server's whole buffer, which the server filled with a
 * pattern, and checks every byte. The client disconnects; the server sees
 * the disconnect and exits. Exit status 0 when everything checked out.
 *
 * Build: cc pingpong.c $(pkg-config --cflags --libs libxnic)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xnic.h>

#include "opt_num.h"

#define SERVICE		0x5050
#define BUF_SIZE	(1 << 20)
#define MSG_SIZE	4096
#define TIMEOUT_MS	10000

/* What each side tells the other in the CM's private data. */
struct peer_mr {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

struct side {
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	struct xnic_mr *mr;
	uint8_t *buf;
	struct peer_mr peer;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "pingpong: %s: %s\n", what, xnic_strerror(err));
	exit(1);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void setup(struct side *s, const char *dev)
{
	int err;

	err = xnic_open(dev, &s->ctx);
	if (err)
		die(dev, err);
	err = xnic_alloc_pd(s->ctx, &s->pd);
	if (err)
		die("xnic_alloc_pd", err);
	s->buf = aligned_alloc(4096, BUF_SIZE);
	if (!s->buf)
		die("aligned_alloc", -ENOMEM);
	memset(s->buf, 0, BUF_SIZE);
	err = xnic_reg_mr(s->pd, s->buf, BUF_SIZE, XNIC_ACCESS_LOCAL_WRITE |
			  XNIC_ACCESS_REMOTE_WRITE | XNIC_ACCESS_REMOTE_READ,
			  &s->mr);
	if (err)
		die("xnic_reg_mr", err);
	/* Room for every completion that can be outstanding: 2 SQ + 1 RQ. */
	err = xnic_create_cq(s->ctx, 16, &s->cq);
	if (err)
		die("xnic_create_cq", err);
	err = xnic_create_qp(s->pd, s->cq, s->cq, NULL, &s->qp);
	if (err)
		die("xnic_create_qp", err);
}

static void teardown(struct side *s)
{
	xnic_close(s->ctx);	/* destroys the QP, CQ, MR and PD too */
	free(s->buf);
}

/* Wait for one completion; a failed one is fatal. */
static struct xnic_cqe reap(struct side *s)
{
	struct xnic_cqe c;
	int n, err;

	while (!(n = xnic_poll_cq(s->cq, &c, 1))) {
		err = xnic_cq_wait(s->cq, TIMEOUT_MS);
		if (err)
			die("waiting for a completion", err);
	}
	if (n < 0)
		die("xnic_poll_cq", n);
	if (c.status != XNIC_WC_SUCCESS) {
		fprintf(stderr, "pingpong: %s completion %llu: %s (QP: %s)\n",
			xnic_wc_opcode_str(c.opcode),
			(unsigned long long)c.wr_id,
			xnic_wc_status_str(c.status),
			xnic_qp_err_str(xnic_qp_err_reason(s->qp)));
		exit(1);
	}
	return c;
}

static void post_recv(struct side *s)
{
	/* A WRITE with immediate needs a receive; it scatters nothing. */
	int err = xnic_post_recv(s->qp, NULL, 0, 0);

	if (err)
		die("xnic_post_recv", err);
}

/* WRITE MSG_SIZE bytes at @off of our buffer to the same place there. */
static void write_imm(struct side *s, size_t off, uint32_t seq)
{
	struct xnic_sge sge = {
		.addr = (uintptr_t)(s->buf + off), .length = MSG_SIZE,
		.lkey = s->mr->lkey,
	};
	int err;

	err = xnic_post_wr(s->qp, &(struct xnic_wr){
		.opcode = XNIC_WR_RDMA_WRITE_WITH_IMM,
		.sg = &sge, .nsge = 1,
		.remote_addr = s->peer.addr + off, .rkey = s->peer.rkey,
		.imm = htonl(seq),
		.wr_id = seq, .flags = XNIC_WQE_F_SIGNALED,
	});
	if (err)
		die("xnic_post_wr", err);
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 31 + seed + (i >> 12));
}

static int server(const char *dev)
{
	struct xnic_cm_listener *l;
	struct xnic_cm_disconnect d;
	struct xnic_cm_req req;
	struct peer_mr mine;
	struct side s = { 0 };
	struct xnic_cqe c;
	uint32_t seq;
	int err;

	setup(&s, dev);
	/* The pattern the client READs at the end; pings land at 0. */
	fill(s.buf + MSG_SIZE, BUF_SIZE - MSG_SIZE, 7);
	err = xnic_cm_listen(s.ctx, SERVICE, &l);
	if (err)
		die("xnic_cm_listen", err);
	printf("server: node %u listening on service %#x\n",
	       xnic_ctx_info(s.ctx)->node_id, SERVICE);
	fflush(stdout);
	err = xnic_cm_get_request(l, &req, -1);
	if (err)
		die("xnic_cm_get_request", err);
	if (req.private_len != sizeof(s.peer)) {
		xnic_cm_reject(&req, NULL, 0);
		die("request without an MR", -EPROTO);
	}
	memcpy(&s.peer, req.private_data, sizeof(s.peer));
	mine = (struct peer_mr){ .addr = (uintptr_t)s.buf,
				 .rkey = s.mr->rkey, .len = BUF_SIZE };
	post_recv(&s);	/* before accepting: the first ping may be quick */
	err = xnic_cm_accept(&req, s.qp, &mine, sizeof(mine), TIMEOUT_MS);
	if (err)
		die("xnic_cm_accept", err);

	/* Answer each ping with a pong of the same sequence number. */
	for (;;) {
		c = reap(&s);
		if (c.opcode != XNIC_WC_RECV_RDMA_WITH_IMM)
			continue;	/* our pong's send completion */
		seq = ntohl(c.imm_data);
		if (seq == 0)
			break;		/* the client is done */
		post_recv(&s);
		write_imm(&s, 0, seq);
	}
	err = xnic_cm_get_disconnect(l, &d, TIMEOUT_MS);
	if (err)
		die("waiting for the disconnect", err);
	printf("server: node %u disconnected\n", d.remote_node);
	xnic_cm_unlisten(l);
	teardown(&s);
	return 0;
}

static int client(const char *dev, uint32_t node, uint32_t iters)
{
	struct xnic_cm_reply rep;
	struct peer_mr mine;
	struct side s = { 0 };
	struct xnic_sge sge;
	struct xnic_cqe c;
	long long t0, end;
	uint8_t *want;
	uint32_t seq;
	int err;

	setup(&s, dev);
	mine = (struct peer_mr){ .addr = (uintptr_t)s.buf, .rkey = s.mr->rkey,
				 .len = BUF_SIZE };
	post_recv(&s);
	/*
	 * The server may not listen yet, and our device may not have
	 * learned its node yet (-EHOSTUNREACH): retry for a while.
	 */
	end = now_ms() + TIMEOUT_MS;
	for (;;) {
		err = xnic_cm_connect(s.ctx, s.qp, node, SERVICE, &mine,
				      sizeof(mine), 2000, &rep);
		if (!err || (err != -ECONNREFUSED && err != -EHOSTUNREACH &&
			     err != -ETIMEDOUT) || now_ms() > end)
			break;
		usleep(100000);
	}
	if (err == -ECONNREFUSED)
		fprintf(stderr, "pingpong: %s\n",
			xnic_cm_reject_str(rep.reject_reason));
	if (err)
		die("xnic_cm_connect", err);
	if (rep.private_len != sizeof(s.peer))
		die("reply without an MR", -EPROTO);
	memcpy(&s.peer, rep.private_data, sizeof(s.peer));

	t0 = now_ms();
	for (seq = 1; seq <= iters; seq++) {
		write_imm(&s, 0, seq);
		do
			c = reap(&s);
		while (c.opcode != XNIC_WC_RECV_RDMA_WITH_IMM);
		if (ntohl(c.imm_data) != seq) {
			fprintf(stderr, "pingpong: pong %u for ping %u\n",
				ntohl(c.imm_data), seq);
			return 1;
		}
		post_recv(&s);
	}
	printf("client: %u round trips of %d bytes, %.1f us each\n", iters,
	       MSG_SIZE, iters ? (now_ms() - t0) * 1000.0 / iters : 0.0);

	/* READ the server's pattern and check every byte. */
	memset(s.buf, 0, BUF_SIZE);
	sge = (struct xnic_sge){ .addr = (uintptr_t)(s.buf + MSG_SIZE),
				 .length = BUF_SIZE - MSG_SIZE,
				 .lkey = s.mr->lkey };
	err = xnic_post_wr(s.qp, &(struct xnic_wr){
		.opcode = XNIC_WR_RDMA_READ, .sg = &sge, .nsge = 1,
		.remote_addr = s.peer.addr + MSG_SIZE, .rkey = s.peer.rkey,
		.wr_id = 1000000, .flags = XNIC_WQE_F_SIGNALED,
	});
	if (err)
		die("posting the READ", err);
	do
		c = reap(&s);
	while (c.opcode != XNIC_WC_RDMA_READ);
	want = malloc(BUF_SIZE);
	if (!want)
		die("malloc", -ENOMEM);
	fill(want, BUF_SIZE - MSG_SIZE, 7);
	if (c.byte_len != BUF_SIZE - MSG_SIZE ||
	    memcmp(s.buf + MSG_SIZE, want, BUF_SIZE - MSG_SIZE)) {
		fprintf(stderr, "pingpong: READ data differ\n");
		return 1;
	}
	printf("client: READ of %d bytes verified\n", BUF_SIZE - MSG_SIZE);
	free(want);

	/* Sequence 0 says goodbye; then disconnect (DREQ to the server). */
	write_imm(&s, 0, 0);
	reap(&s);
	err = xnic_cm_disconnect(s.qp);
	if (err)
		die("xnic_cm_disconnect", err);
	teardown(&s);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	long node = -1, iters = 1000;
	int opt;

	while ((opt = getopt(argc, argv, "d:c:i:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'c':
			node = opt_num(argv[0], opt, optarg, 0, 65534);
			break;
		case 'i':
			iters = opt_num(argv[0], opt, optarg, 0, 100000000);
			break;
		default:
			goto usage;
		}
	}
	if (!dev || optind < argc)
		goto usage;
	return node < 0 ? server(dev) : client(dev, (uint32_t)node,
						 (uint32_t)iters);
usage:
	fprintf(stderr, "usage: %s -d DEV [-c SERVER_NODE [-i ITERATIONS]]\n",
		argv[0]);
	return 2;
}
