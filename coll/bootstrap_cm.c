// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - the fabric bootstrap: no TCP, no IP. Rank 0 listens on a
 * service id with the xnic connection manager (Documentation/cm.rst);
 * every other rank connects one RC QP of its own to (node of rank 0,
 * service id), saying who it is in the CM private data. An all-gather is
 * a star over these QPs: every rank SENDs its blob to rank 0, which
 * SENDs the concatenation back to everyone.
 *
 * The bootstrap has its own device context, PD, CQ, QPs and one
 * registered buffer (grown when an all-gather needs more), separate from
 * the communicator's. A receive is posted before the matching SEND can
 * leave, and a SEND that arrives before it is posted is retried by the
 * transport (RNR, retried for ever), so the ranks need no other
 * synchronisation. Every wait is bounded by the caller's timeout; after a
 * failed all-gather the bootstrap is broken and says so.
 *
 * Messages (little-endian): CM private data {magic, rank, nranks}, and
 * every SEND starts with struct xnic_bs_cm_hdr.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "priv.h"

#define XNIC_BS_CM_MAGIC	0x58424346U	/* "XBCF" */
#define XNIC_BS_CM_MAX_ALL	(64U << 20)	/* bytes of one all-gather */
#define XNIC_BS_CM_RETRY_US	50000		/* rank 0 not listening yet */
#define XNIC_BS_CM_SEND_BIT	(1ULL << 32)	/* wr_id of a SEND */

/* Private data of a CM REQ: who is connecting. */
struct xnic_bs_cm_hello {
	uint32_t magic;
	uint32_t rank;
	uint32_t nranks;
};

/* Head of every bootstrap SEND. */
struct xnic_bs_cm_hdr {
	uint32_t magic;
	uint32_t seq;		/* all-gathers so far, this one included */
	uint32_t rank;		/* sender */
	uint32_t len;		/* bytes after the header */
};

#define XNIC_BS_CM_H	sizeof(struct xnic_bs_cm_hdr)

/**
 * struct xnic_bs_cm - the CM bootstrap
 * @bs: the generic part
 * @rank: our rank
 * @nranks: number of ranks
 * @ctx: our own context on the device
 * @pd: its protection domain
 * @cq: completions of every bootstrap QP
 * @qp: rank 0: QP to rank r at @qp[r] (@qp[0] unused); others: @qp[0]
 *	to rank 0
 * @buf: message buffer, @size bytes, registered as @mr
 * @size: bytes of @buf
 * @mr: its registration
 * @seq: all-gathers started
 * @broken: 0, or the error that broke the bootstrap
 */
struct xnic_bs_cm {
	struct xnic_bootstrap bs;
	int rank;
	int nranks;
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_qp **qp;
	char *buf;
	size_t size;
	struct xnic_mr *mr;
	uint32_t seq;
	int broken;
};

static uint64_t xnic_bs_cm_end(int timeout_ms)
{
	return xnic_coll_now_ns() +
	       (uint64_t)(timeout_ms > 0 ? timeout_ms : XNIC_COLL_DEF_TIMEOUT) *
	       1000000ULL;
}

static int xnic_bs_cm_ms_left(uint64_t end)
{
	uint64_t t = xnic_coll_now_ns();

	return t >= end ? 0 : (int)((end - t + 999999) / 1000000);
}

/* Make @buf hold @need bytes; only called with no work posted. */
static int xnic_bs_cm_buf(struct xnic_bs_cm *t, size_t need)
{
	char *buf;
	int err;

	if (need <= t->size)
		return 0;
	if (t->mr) {
		err = xnic_dereg_mr(t->mr);
		if (err)
			return xnic_coll_seterr(NULL, err,
						"bootstrap: deregistering its buffer: %s",
						xnic_strerror(err));
		t->mr = NULL;
	}
	free(t->buf);
	t->size = 0;
	buf = malloc(need);
	t->buf = buf;
	if (!buf)
		return xnic_coll_seterr(NULL, -ENOMEM, "bootstrap: out of memory");
	err = xnic_reg_mr(t->pd, buf, need, XNIC_ACCESS_LOCAL_WRITE, &t->mr);
	if (err)
		return xnic_coll_seterr(NULL, err,
					"bootstrap: registering %zu bytes: %s",
					need, xnic_strerror(err));
	t->size = need;
	return 0;
}

static int xnic_bs_cm_post_recv(struct xnic_bs_cm *t, int q, size_t off,
				size_t len, uint64_t wr_id)
{
	struct xnic_sge sge = {
		.addr = (uintptr_t)(t->buf + off),
		.length = (uint32_t)len,
		.lkey = t->mr->lkey,
	};
	int err = xnic_post_recv(t->qp[q], &sge, 1, wr_id);

	if (err)
		return xnic_coll_seterr(NULL, err,
					"bootstrap: posting a receive: %s",
					xnic_strerror(err));
	return 0;
}

/* SEND the header and @len bytes at @off + XNIC_BS_CM_H to QP @q. */
static int xnic_bs_cm_send(struct xnic_bs_cm *t, int q, size_t off,
			   size_t len, uint64_t wr_id)
{
	struct xnic_bs_cm_hdr *h = (struct xnic_bs_cm_hdr *)(t->buf + off);
	struct xnic_sge sge = {
		.addr = (uintptr_t)h,
		.length = (uint32_t)(XNIC_BS_CM_H + len),
		.lkey = t->mr->lkey,
	};
	int err;

	h->magic = htole32(XNIC_BS_CM_MAGIC);
	h->seq = htole32(t->seq);
	h->rank = htole32((uint32_t)t->rank);
	h->len = htole32((uint32_t)len);
	err = xnic_post_send(t->qp[q], &sge, 1, wr_id | XNIC_BS_CM_SEND_BIT,
			     XNIC_WQE_F_SIGNALED);
	if (err)
		return xnic_coll_seterr(NULL, err, "bootstrap: posting a send: %s",
					xnic_strerror(err));
	return 0;
}

/* Is the message at @off from rank @from, this all-gather, @len long? */
static int xnic_bs_cm_check(struct xnic_bs_cm *t, size_t off, uint32_t got,
			    int from, size_t len)
{
	const struct xnic_bs_cm_hdr *h = (const void *)(t->buf + off);

	if (got != XNIC_BS_CM_H + len || le32toh(h->magic) != XNIC_BS_CM_MAGIC ||
	    le32toh(h->seq) != t->seq || le32toh(h->rank) != (uint32_t)from ||
	    le32toh(h->len) != len)
		return xnic_coll_seterr(NULL, -EPROTO,
					"bootstrap: rank %d sent %u bytes (all-gather %u of %u bytes), we expected all-gather %u of %zu bytes",
					from, got, le32toh(h->seq), le32toh(h->len),
					t->seq, len);
	return 0;
}

/*
 * Reap @want completions by @end. Receives from QP q (wr_id q) are
 * checked to hold @rlen bytes after the header, at @roff + (q - @rbase) *
 * @rstride.
 */
static int xnic_bs_cm_reap(struct xnic_bs_cm *t, int want, uint64_t end,
			   size_t roff, size_t rstride, int rbase, size_t rlen)
{
	struct xnic_cqe cqe[16];
	int n, i, q, err;

	while (want > 0) {
		n = xnic_poll_cq(t->cq, cqe, 16);
		if (n < 0)
			return xnic_coll_seterr(NULL, n,
						"bootstrap: completion queue failed: %s",
						xnic_strerror(n));
		for (i = 0; i < n; i++, want--) {
			q = (int)(cqe[i].wr_id & 0xffffffffU);
			if (cqe[i].status != XNIC_WC_SUCCESS)
				return xnic_coll_seterr(NULL, -EIO,
							"bootstrap: %s rank %d failed: %s",
							cqe[i].wr_id & XNIC_BS_CM_SEND_BIT ?
							"send to" : "receive from",
							t->rank ? 0 : q,
							xnic_wc_status_str(cqe[i].status));
			if (cqe[i].wr_id & XNIC_BS_CM_SEND_BIT)
				continue;
			err = xnic_bs_cm_check(t, roff +
					       (size_t)(q - rbase) * rstride,
					       cqe[i].byte_len, t->rank ? 0 : q,
					       rlen);
			if (err)
				return err;
		}
		if (n || want <= 0)
			continue;
		if (!xnic_bs_cm_ms_left(end))
			return xnic_coll_seterr(NULL, -ETIMEDOUT,
						"bootstrap: timed out in an all-gather (%s)",
						t->rank ? "rank 0 did not answer" :
						"not every rank took part");
		err = xnic_cq_wait(t->cq, xnic_bs_cm_ms_left(end));
		if (err && err != -ETIMEDOUT && err != -EINTR)
			return xnic_coll_seterr(NULL, err,
						"bootstrap: waiting for completions: %s",
						xnic_strerror(err));
	}
	return 0;
}

static int xnic_bs_cm_gather(struct xnic_bs_cm *t, const void *mine,
			     void *all, size_t len, uint64_t end)
{
	size_t alen = len * (size_t)t->nranks, slot = XNIC_BS_CM_H + len;
	size_t peers = (size_t)t->nranks - 1, out;
	int r, err;

	if (t->rank) {
		/* [hdr mine][hdr all] */
		err = xnic_bs_cm_buf(t, slot + XNIC_BS_CM_H + alen);
		if (!err)
			err = xnic_bs_cm_post_recv(t, 0, slot,
						   XNIC_BS_CM_H + alen, 0);
		if (err)
			return err;
		memcpy(t->buf + XNIC_BS_CM_H, mine, len);
		err = xnic_bs_cm_send(t, 0, 0, len, 0);
		if (!err)
			err = xnic_bs_cm_reap(t, 2, end, slot, 0, 0, alen);
		if (!err)
			memcpy(all, t->buf + slot + XNIC_BS_CM_H, alen);
		return err;
	}
	/* [slot of rank 1 .. slot of rank n-1][hdr all] */
	out = peers * slot;
	err = xnic_bs_cm_buf(t, out + XNIC_BS_CM_H + alen);
	for (r = 1; !err && r < t->nranks; r++)
		err = xnic_bs_cm_post_recv(t, r, (size_t)(r - 1) * slot, slot,
					   (uint64_t)r);
	if (!err)
		err = xnic_bs_cm_reap(t, t->nranks - 1, end, 0, slot, 1, len);
	if (err)
		return err;
	memcpy(t->buf + out + XNIC_BS_CM_H, mine, len);
	for (r = 1; r < t->nranks; r++)
		memcpy(t->buf + out + XNIC_BS_CM_H + (size_t)r * len,
		       t->buf + (size_t)(r - 1) * slot + XNIC_BS_CM_H, len);
	for (r = 1; !err && r < t->nranks; r++)
		err = xnic_bs_cm_send(t, r, out, alen, (uint64_t)r);
	if (!err)
		err = xnic_bs_cm_reap(t, t->nranks - 1, end, 0, 0, 1, 0);
	if (!err)
		memcpy(all, t->buf + out + XNIC_BS_CM_H, alen);
	return err;
}

static int xnic_bs_cm_allgather(struct xnic_bootstrap *bs, const void *mine,
				void *all, size_t len, int timeout_ms)
{
	struct xnic_bs_cm *t = (struct xnic_bs_cm *)bs;
	int err;

	if (t->broken)
		return xnic_coll_seterr(NULL, t->broken,
					"bootstrap: broken by an earlier failure (%s)",
					strerror(-t->broken));
	if (!len || len > XNIC_BS_CM_MAX_ALL / (size_t)t->nranks)
		return xnic_coll_seterr(NULL, -EINVAL,
					"bootstrap: all-gather of %zu bytes per rank: must be 1..%zu",
					len, XNIC_BS_CM_MAX_ALL / (size_t)t->nranks);
	if (t->nranks == 1) {
		memcpy(all, mine, len);
		return 0;
	}
	t->seq++;
	err = xnic_bs_cm_gather(t, mine, all, len, xnic_bs_cm_end(timeout_ms));
	if (err)
		t->broken = err;	/* work may still be posted */
	return err;
}

static void xnic_bs_cm_close(struct xnic_bootstrap *bs)
{
	struct xnic_bs_cm *t = (struct xnic_bs_cm *)bs;
	int r;

	for (r = 0; t->qp && r < t->nranks; r++)
		if (t->qp[r])
			xnic_destroy_qp(t->qp[r]);
	if (t->mr)
		xnic_dereg_mr(t->mr);
	if (t->cq)
		xnic_destroy_cq(t->cq);
	if (t->pd)
		xnic_dealloc_pd(t->pd);
	if (t->ctx)
		xnic_close(t->ctx);
	free(t->buf);
	free(t->qp);
	free(t);
}

static const struct xnic_bootstrap_ops xnic_bs_cm_ops = {
	.allgather = xnic_bs_cm_allgather,
	.close = xnic_bs_cm_close,
};

static int xnic_bs_cm_new_qp(struct xnic_bs_cm *t, struct xnic_qp **qpp)
{
	struct xnic_qp_cap cap = {
		.max_send_wr = 4, .max_recv_wr = 4,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	/* A message sent before its receive is posted waits (RNR). */
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY,
		.rnr_retry = XNIC_QP_RNR_INFINITE,
	};
	int err = xnic_create_qp_ex(t->pd, t->cq, t->cq, &cap, &attr, qpp);

	if (err)
		return xnic_coll_seterr(NULL, err, "bootstrap: creating a QP: %s",
					xnic_strerror(err));
	return 0;
}

/* Rank 0: accept every other rank on @service. */
static int xnic_bs_cm_accept(struct xnic_bs_cm *t, const uint32_t *nodes,
			     uint64_t service, uint64_t end)
{
	struct xnic_bs_cm_hello ack = { .magic = htole32(XNIC_BS_CM_MAGIC) };
	struct xnic_cm_listener *l = NULL;
	struct xnic_bs_cm_hello hello;
	struct xnic_cm_req req;
	int got = 0, r, err;

	err = xnic_cm_listen(t->ctx, service, &l);
	if (err)
		return xnic_coll_seterr(NULL, err,
					"bootstrap: listening on service %#llx: %s",
					(unsigned long long)service,
					xnic_strerror(err));
	while (got < t->nranks - 1) {
		if (!xnic_bs_cm_ms_left(end)) {
			err = xnic_coll_seterr(NULL, -ETIMEDOUT,
					       "bootstrap: only %d of %d ranks connected to service %#llx in time",
					       got + 1, t->nranks,
					       (unsigned long long)service);
			goto out;
		}
		err = xnic_cm_get_request(l, &req, xnic_bs_cm_ms_left(end));
		if (err == -ETIMEDOUT || err == -EINTR)
			continue;
		if (err) {
			xnic_coll_seterr(NULL, err,
					 "bootstrap: waiting for connections: %s",
					 xnic_strerror(err));
			goto out;
		}
		memset(&hello, 0, sizeof(hello));
		memcpy(&hello, req.private_data,
		       req.private_len < sizeof(hello) ? req.private_len :
		       sizeof(hello));
		r = (int)le32toh(hello.rank);
		if (req.private_len != sizeof(hello) ||
		    le32toh(hello.magic) != XNIC_BS_CM_MAGIC ||
		    le32toh(hello.nranks) != (uint32_t)t->nranks || r < 1 ||
		    r >= t->nranks || t->qp[r] || req.remote_node != nodes[r]) {
			/* Not ours, or a duplicate: refuse it and go on. */
			xnic_cm_reject(&req, NULL, 0);
			continue;
		}
		err = xnic_bs_cm_new_qp(t, &t->qp[r]);
		if (err)
			goto out;
		err = xnic_cm_accept(&req, t->qp[r], &ack, sizeof(ack),
				     xnic_bs_cm_ms_left(end) + 1);
		if (err) {
			/* The peer gave up: it retries with a new REQ. */
			xnic_destroy_qp(t->qp[r]);
			t->qp[r] = NULL;
			if (err == -ECONNREFUSED || err == -ETIMEDOUT ||
			    err == -ENOENT)
				continue;
			xnic_coll_seterr(NULL, err,
					 "bootstrap: accepting rank %d (node %u): %s",
					 r, req.remote_node, xnic_strerror(err));
			goto out;
		}
		got++;
	}
	err = 0;
out:
	xnic_cm_unlisten(l);
	return err;
}

/* Other ranks: connect to rank 0, retrying while it does not listen yet. */
static int xnic_bs_cm_connect(struct xnic_bs_cm *t, uint32_t node0,
			      uint64_t service, uint64_t end)
{
	struct xnic_bs_cm_hello hello = {
		.magic = htole32(XNIC_BS_CM_MAGIC),
		.rank = htole32((uint32_t)t->rank),
		.nranks = htole32((uint32_t)t->nranks),
	};
	struct xnic_cm_reply rep;
	int ms, err;

	for (;;) {
		ms = xnic_bs_cm_ms_left(end);
		if (!ms)
			return xnic_coll_seterr(NULL, -ETIMEDOUT,
						"bootstrap: rank 0 (node %u) did not accept on service %#llx in time",
						node0, (unsigned long long)service);
		err = xnic_bs_cm_new_qp(t, &t->qp[0]);
		if (err)
			return err;
		memset(&rep, 0, sizeof(rep));
		err = xnic_cm_connect(t->ctx, t->qp[0], node0, service, &hello,
				      sizeof(hello), ms > 110000 ? 110000 : ms,
				      &rep);
		if (!err)
			break;
		xnic_destroy_qp(t->qp[0]);
		t->qp[0] = NULL;
		if (err == -ETIMEDOUT)
			continue;	/* the loop head decides */
		/* Rank 0's node is not in the peer table (yet): it may boot. */
		if (err == -EHOSTUNREACH) {
			usleep(XNIC_BS_CM_RETRY_US);
			continue;
		}
		if (err != -ECONNREFUSED ||
		    rep.reject_reason != XNIC_CM_REJ_NO_LISTENER)
			return xnic_coll_seterr(NULL, err,
						"bootstrap: connecting to rank 0 (node %u, service %#llx): %s%s",
						node0, (unsigned long long)service,
						xnic_strerror(err),
						err == -ECONNREFUSED ?
						" (rank 0 refused: wrong rank, node or number of ranks?)" :
						"");
		usleep(XNIC_BS_CM_RETRY_US);
	}
	if (rep.private_len != sizeof(hello) ||
	    le32toh(((struct xnic_bs_cm_hello *)rep.private_data)->magic) !=
	    XNIC_BS_CM_MAGIC)
		return xnic_coll_seterr(NULL, -EPROTO,
					"bootstrap: node %u service %#llx is not a bootstrap",
					node0, (unsigned long long)service);
	return 0;
}

int xnic_bootstrap_cm(int rank, int nranks, const char *device,
		      const uint32_t *nodes, uint64_t service, int timeout_ms,
		      struct xnic_bootstrap **bsp)
{
	uint64_t end = xnic_bs_cm_end(timeout_ms);
	struct xnic_bs_cm *t;
	int err;

	if (!bsp)
		return xnic_coll_seterr(NULL, -EINVAL, "bootstrap: no result pointer");
	*bsp = NULL;
	if (nranks < 1 || nranks > XNIC_COLL_MAX_RANKS || rank < 0 ||
	    rank >= nranks || !device || !nodes)
		return xnic_coll_seterr(NULL, -EINVAL,
					"bootstrap: bad rank %d, nranks %d, device or nodes",
					rank, nranks);
	t = calloc(1, sizeof(*t));
	if (t)
		t->qp = calloc((size_t)nranks, sizeof(*t->qp));
	if (!t || !t->qp) {
		free(t);
		return xnic_coll_seterr(NULL, -ENOMEM, "bootstrap: out of memory");
	}
	t->bs.ops = &xnic_bs_cm_ops;
	t->rank = rank;
	t->nranks = nranks;
	if (nranks == 1) {
		*bsp = &t->bs;
		return 0;
	}
	err = xnic_open(device, &t->ctx);
	if (err) {
		xnic_coll_seterr(NULL, err, "bootstrap: opening %s: %s", device,
				 xnic_strerror(err));
		goto fail;
	}
	if (xnic_ctx_info(t->ctx)->node_id != nodes[rank]) {
		err = xnic_coll_seterr(NULL, -EINVAL,
				       "bootstrap: %s is node %u, but rank %d should be node %u",
				       device, xnic_ctx_info(t->ctx)->node_id,
				       rank, nodes[rank]);
		goto fail;
	}
	err = xnic_alloc_pd(t->ctx, &t->pd);
	if (!err)
		err = xnic_create_cq(t->ctx, 2U * (unsigned int)nranks + 4,
				     &t->cq);
	if (err) {
		xnic_coll_seterr(NULL, err, "bootstrap: PD or CQ on %s: %s",
				 device, xnic_strerror(err));
		goto fail;
	}
	if (!rank)
		err = xnic_bs_cm_accept(t, nodes, service, end);
	else
		err = xnic_bs_cm_connect(t, nodes[0], service, end);
	if (err)
		goto fail;
	*bsp = &t->bs;
	return 0;
fail:
	xnic_bs_cm_close(&t->bs);
	return err;
}
