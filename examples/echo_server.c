// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * echo_server - an event-driven libxnic server for many clients.
 *
 *   echo_server -d DEV [-n CLIENTS]
 *
 * One thread, one epoll set, two descriptors: the CM listener (connection
 * requests and disconnects) and one CQ shared by every client's QP (its
 * completion channel, armed before each sleep). Each client gets a QP of
 * its own with RECV_DEPTH receive buffers posted; every SEND that arrives
 * is answered with a SEND of the same bytes, upper-cased, from a send
 * buffer of the same slot. A client that disconnects (or dies: the kernel
 * tells us with a DREQ) has its QP destroyed and its slot reused. With -n,
 * the server exits 0 after CLIENTS connections have ended.
 *
 * Clients: echo_client (this directory). Build:
 *   cc echo_server.c $(pkg-config --cflags --libs libxnic)
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <xnic.h>

#include "opt_num.h"

#define SERVICE		0xec40
#define MAX_CLIENTS	64
#define RECV_DEPTH	8
#define MSG_MAX		256

/* wr_id: client slot in the upper bits, buffer in the lower ones. */
#define WR_ID(slot, buf)	((uint64_t)(slot) << 16 | (buf))
#define WR_SLOT(id)		((unsigned int)((id) >> 16))
#define WR_BUF(id)		((unsigned int)((id) & 0xffff))
#define SEND_BUF		RECV_DEPTH	/* buffer index of a reply */

struct client {
	struct xnic_qp *qp;
	uint32_t cm_id;		/* to match its disconnect */
	uint32_t node;
	unsigned long msgs;
};

struct server {
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_mr *mr;
	struct xnic_cm_listener *l;
	/* per slot: RECV_DEPTH receive buffers and one send buffer */
	uint8_t (*bufs)[RECV_DEPTH + 1][MSG_MAX];
	struct client c[MAX_CLIENTS];
	unsigned int ended;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "echo_server: %s: %s\n", what, xnic_strerror(err));
	exit(1);
}

static struct xnic_sge buf_sge(struct server *s, unsigned int slot,
			       unsigned int buf, uint32_t len)
{
	return (struct xnic_sge){ .addr = (uintptr_t)s->bufs[slot][buf],
				  .length = len, .lkey = s->mr->lkey };
}

static int post_recv(struct server *s, unsigned int slot, unsigned int buf)
{
	struct xnic_sge sge = buf_sge(s, slot, buf, MSG_MAX);

	return xnic_post_recv(s->c[slot].qp, &sge, 1, WR_ID(slot, buf));
}

static void drop_client(struct server *s, unsigned int slot)
{
	struct client *c = &s->c[slot];

	if (!c->qp)
		return;
	printf("client %u (node %u): %lu messages, gone\n", slot, c->node,
	       c->msgs);
	xnic_destroy_qp(c->qp);	/* flushed completions are discarded */
	memset(c, 0, sizeof(*c));
	s->ended++;
}

static void accept_client(struct server *s, struct xnic_cm_req *req)
{
	/*
	 * Rings twice the buffers we keep posted: a slot comes free when the
	 * kernel's consumer index passes it, which may be a little after its
	 * completion is visible, so a repost from the completion handler
	 * never finds the ring full (xnic_post_recv()).
	 */
	struct xnic_qp_cap cap = { .max_send_wr = 2 * RECV_DEPTH,
				   .max_recv_wr = 2 * RECV_DEPTH };
	unsigned int slot, k;
	struct client *c;
	int err;

	for (slot = 0; slot < MAX_CLIENTS && s->c[slot].qp; slot++)
		;
	if (slot == MAX_CLIENTS) {
		xnic_cm_reject(req, NULL, 0);	/* busy */
		return;
	}
	c = &s->c[slot];
	err = xnic_create_qp(s->pd, s->cq, s->cq, &cap, &c->qp);
	if (err)
		die("xnic_create_qp", err);
	for (k = 0; k < RECV_DEPTH; k++)
		if ((err = post_recv(s, slot, k)))
			die("xnic_post_recv", err);
	err = xnic_cm_accept(req, c->qp, NULL, 0, 5000);
	if (err) {
		fprintf(stderr, "accept from node %u: %s\n", req->remote_node,
			xnic_strerror(err));
		xnic_destroy_qp(c->qp);
		c->qp = NULL;
		return;
	}
	c->cm_id = req->id;
	c->node = req->remote_node;
	printf("client %u: node %u connected\n", slot, c->node);
}

/* The listener is readable: take every request and every disconnect. */
static void on_listener(struct server *s)
{
	struct xnic_cm_disconnect d;
	struct xnic_cm_req req;
	unsigned int slot;

	while (!xnic_cm_get_request(s->l, &req, 0))
		accept_client(s, &req);
	while (!xnic_cm_get_disconnect(s->l, &d, 0))
		for (slot = 0; slot < MAX_CLIENTS; slot++)
			if (s->c[slot].qp && s->c[slot].cm_id == d.id)
				drop_client(s, slot);
}

static void on_completion(struct server *s, const struct xnic_cqe *e)
{
	unsigned int slot = WR_SLOT(e->wr_id), buf = WR_BUF(e->wr_id), i;
	struct client *c = slot < MAX_CLIENTS ? &s->c[slot] : NULL;
	struct xnic_sge sge;
	uint8_t *in, *out;
	int err;

	if (!c || !c->qp || e->qp_num != c->qp->qpn)
		return;		/* a client already dropped */
	if (e->status != XNIC_WC_SUCCESS) {
		/* Flushed by a disconnect, or failed: the QP is done. */
		if (e->status != XNIC_WC_WR_FLUSH_ERR)
			fprintf(stderr, "client %u: %s\n", slot,
				xnic_wc_status_str(e->status));
		drop_client(s, slot);
		return;
	}
	if (e->opcode != XNIC_WC_RECV)
		return;		/* a reply went out */
	in = s->bufs[slot][buf];
	out = s->bufs[slot][SEND_BUF];
	for (i = 0; i < e->byte_len; i++)
		out[i] = (uint8_t)toupper(in[i]);
	c->msgs++;
	/* The client waits for each reply: one send at a time per slot. */
	sge = buf_sge(s, slot, SEND_BUF, e->byte_len);
	err = xnic_post_wr(c->qp, &(struct xnic_wr){
		.opcode = XNIC_WR_SEND, .sg = &sge, .nsge = 1,
		.wr_id = WR_ID(slot, SEND_BUF),
	});
	if (!err)
		err = post_recv(s, slot, buf);
	if (err) {
		fprintf(stderr, "client %u: %s\n", slot, xnic_strerror(err));
		drop_client(s, slot);
	}
}

static void on_cq(struct server *s)
{
	struct xnic_cqe e[16];
	int n, i;

	xnic_cq_read_events(s->cq);
	while ((n = xnic_poll_cq(s->cq, e, 16)) > 0)
		for (i = 0; i < n; i++)
			on_completion(s, &e[i]);
	if (n < 0)
		die("xnic_poll_cq", n);
	/* Arm, then look again: a completion may have come in between. */
	n = xnic_cq_arm(s->cq, 0);
	if (n)
		die("xnic_cq_arm", n);
	while ((n = xnic_poll_cq(s->cq, e, 16)) > 0)
		for (i = 0; i < n; i++)
			on_completion(s, &e[i]);
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[2];
	struct server s = { 0 };
	const char *dev = NULL;
	long want = -1;
	int ep, opt, n, i, err;

	while ((opt = getopt(argc, argv, "d:n:")) != -1) {
		if (opt == 'd')
			dev = optarg;
		else if (opt == 'n')
			want = opt_num(argv[0], opt, optarg, 1, 100000000);
		else
			dev = NULL, optind = argc;
	}
	if (!dev || optind < argc) {
		fprintf(stderr, "usage: %s -d DEV [-n CLIENTS]\n", argv[0]);
		return 2;
	}
	if ((err = xnic_open(dev, &s.ctx)) ||
	    (err = xnic_alloc_pd(s.ctx, &s.pd)))
		die(dev, err);
	s.bufs = calloc(MAX_CLIENTS, sizeof(*s.bufs));
	if (!s.bufs)
		die("calloc", -ENOMEM);
	err = xnic_reg_mr(s.pd, s.bufs, MAX_CLIENTS * sizeof(*s.bufs),
			  XNIC_ACCESS_LOCAL_WRITE, &s.mr);
	if (err)
		die("xnic_reg_mr", err);
	/* Every WQE of every QP can complete at once: no overflow. */
	err = xnic_create_cq(s.ctx, MAX_CLIENTS * 4 * RECV_DEPTH, &s.cq);
	if (err)
		die("xnic_create_cq", err);
	err = xnic_cm_listen(s.ctx, SERVICE, &s.l);
	if (err)
		die("xnic_cm_listen", err);

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1", -errno);
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 0 };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, xnic_cm_listener_fd(s.l), &ev))
		die("epoll_ctl", -errno);
	ev.data.u32 = 1;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, xnic_cq_fd(s.cq), &ev))
		die("epoll_ctl", -errno);
	if ((err = xnic_cq_arm(s.cq, 0)))
		die("xnic_cq_arm", err);
	printf("echo_server: node %u, service %#x\n",
	       xnic_ctx_info(s.ctx)->node_id, SERVICE);
	fflush(stdout);

	while (want < 0 || s.ended < (unsigned long)want) {
		n = epoll_wait(ep, evs, 2, -1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait", -errno);
		for (i = 0; i < n; i++) {
			if (evs[i].data.u32 == 0)
				on_listener(&s);
			else
				on_cq(&s);
		}
		fflush(stdout);
	}
	printf("echo_server: %u clients served\n", s.ended);
	close(ep);
	xnic_cm_unlisten(s.l);
	xnic_close(s.ctx);
	free(s.bufs);
	return 0;
}
