// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The FI_EP_RDM protocol (fi_xnic_rdm.h describes it): requests, user
 * completions, the eager and rendezvous messages, matching what arrives,
 * and progress (reaping the endpoint's CQ). Everything runs under the
 * endpoint's lock; user completions go to the bound CQ's software ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fi_xnic_rdm.h"

#define XNIC_RTS_LEN	(XNIC_HDR + sizeof(struct fi_xnic_rdm_rts))

/* ----------------------------- requests ----------------------------- */

/* A zeroed request of @type: a spare one, or a new one (NULL: no memory). */
struct fi_xnic_rdm_req *fi_xnic_rdm_req_new(struct fi_xnic_rdm_ep *ep,
					    uint8_t type)
{
	struct fi_xnic_rdm_req *r = ep->spare;

	if (r) {
		ep->spare = r->next;
		ep->nspare--;
		memset(r, 0, sizeof(*r));
	} else {
		r = calloc(1, sizeof(*r));
	}
	if (r) {
		r->kind = FI_XNIC_RDM_K_OP;
		r->type = type;
		r->txbuf = -1;
	}
	return r;
}

void fi_xnic_rdm_inflight_add(struct fi_xnic_rdm_ep *ep,
			      struct fi_xnic_rdm_req *r)
{
	r->iprev = NULL;
	r->inext = ep->inflight;
	if (ep->inflight)
		ep->inflight->iprev = r;
	ep->inflight = r;
}

static void xnic_inflight_del(struct fi_xnic_rdm_ep *ep,
			      struct fi_xnic_rdm_req *r)
{
	if (r->iprev)
		r->iprev->inext = r->inext;
	else if (ep->inflight == r)
		ep->inflight = r->inext;
	if (r->inext)
		r->inext->iprev = r->iprev;
	r->iprev = r->inext = NULL;
}

void fi_xnic_rdm_req_free(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *r)
{
	if (r->mr)
		xnic_mr_cache_put(ep->domain->mr_cache, r->mr);
	if (r->txbuf >= 0)
		ep->txfree[ep->ntxfree++] = r->txbuf;
	free(r->payload);
	if (ep->nspare < FI_XNIC_RDM_SPARE) {
		r->next = ep->spare;
		ep->spare = r;
		ep->nspare++;
	} else {
		free(r);
	}
}

/* Free the spare requests (the endpoint is being closed). */
void fi_xnic_rdm_spare_free(struct fi_xnic_rdm_ep *ep)
{
	while (ep->spare) {
		struct fi_xnic_rdm_req *r = ep->spare;

		ep->spare = r->next;
		free(r);
	}
	ep->nspare = 0;
}

/**
 * fi_xnic_rdm_flush() - free every request the QPs still hold
 * @ep: endpoint being closed (no completion is reported)
 */
void fi_xnic_rdm_flush(struct fi_xnic_rdm_ep *ep)
{
	while (ep->inflight) {
		struct fi_xnic_rdm_req *r = ep->inflight;

		xnic_inflight_del(ep, r);
		fi_xnic_rdm_req_free(ep, r);
	}
}

void fi_xnic_rdm_queue_add(struct fi_xnic_rdm_queue *q,
			   struct fi_xnic_rdm_req *r)
{
	r->next = NULL;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
}

void fi_xnic_rdm_queue_del(struct fi_xnic_rdm_queue *q,
			   struct fi_xnic_rdm_req *prev,
			   struct fi_xnic_rdm_req *r)
{
	if (prev)
		prev->next = r->next;
	else
		q->head = r->next;
	if (q->tail == r)
		q->tail = prev;
	r->next = NULL;
}

/* --------------------------- completions ---------------------------- */

static int xnic_status_err(unsigned int status)
{
	switch (status) {
	case XNIC_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case XNIC_WC_RETRY_EXC_ERR:
	case XNIC_WC_RNR_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	case XNIC_WC_REM_ACCESS_ERR:
	case XNIC_WC_LOC_PROT_ERR:
		return FI_EACCES;
	default:
		return FI_EIO;
	}
}

/*
 * Report @r to the user: @err 0 (success), or a positive FI_ errno with
 * @prov_errno (an xnic completion status or 0) and @olen truncated bytes.
 */
void fi_xnic_rdm_complete(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *r,
			  int err, int prov_errno, size_t olen)
{
	bool rx = r->flags & FI_RECV;
	struct fi_xnic_cq *cq = rx ? ep->rx_cq : ep->tx_cq;
	bool selective = rx ? ep->rx_selective : ep->tx_selective;
	struct fi_cq_tagged_entry e = {
		.op_context = r->context,
		.flags = r->flags & (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV |
				     FI_REMOTE_CQ_DATA),
	};

	if (!err && ((r->flags & FI_INJECT) ||
		     (selective && !(r->flags & FI_COMPLETION))))
		return;
	if (rx) {
		e.len = r->len < r->size ? r->len : r->size;
		e.buf = e.len ? r->buf : NULL;
		e.data = r->data;
		e.tag = (r->flags & FI_TAGGED) ? r->tag : 0;
	}
	if (fi_xnic_cq_put(cq, &e, rx ? r->addr : FI_ADDR_NOTAVAIL, err,
			   prov_errno, olen))
		XNIC_WARN(FI_LOG_CQ, "no memory for a completion: lost\n");
}

/* ----------------------------- posting ------------------------------ */

/* An inline SEND of @n pieces (at most max_inline bytes in all). */
int fi_xnic_rdm_send_inline(struct fi_xnic_rdm_conn *c, const void *a,
			    size_t alen, const void *b, size_t blen,
			    uint64_t wr_id)
{
	struct xnic_sge sg[2] = {
		{ .addr = (uintptr_t)a, .length = (uint32_t)alen },
		{ .addr = (uintptr_t)b, .length = (uint32_t)blen },
	};

	return xnic_post_send(c->qp, sg, blen ? 2 : 1, wr_id,
			      XNIC_WQE_F_INLINE |
			      (wr_id ? XNIC_WQE_F_SIGNALED : 0));
}

/* Queue @r on @c until its SQ has room (xnic_pend_run()). */
static void xnic_pend(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
		      struct fi_xnic_rdm_req *r)
{
	if (!c->pend.head)
		ep->npend++;
	fi_xnic_rdm_queue_add(&c->pend, r);
}

/* A control message (FIN or CREDIT, its request type @type) with @val. */
static int xnic_post_ctl(struct fi_xnic_rdm_conn *c, int type, uint64_t val)
{
	struct fi_xnic_rdm_hdr h = {
		.op = type == FI_XNIC_RDM_REQ_FIN ? FI_XNIC_RDM_FIN :
						    FI_XNIC_RDM_CREDIT,
		.tag = val,
	};

	return fi_xnic_rdm_send_inline(c, &h, sizeof(h), NULL, 0, 0);
}

/* Send a control message; queued if the SQ is full (a lost one hangs). */
static void xnic_send_ctl(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
			  int type, uint64_t val)
{
	struct fi_xnic_rdm_req *f;
	int err = -EAGAIN;

	if (c->dead)
		return;
	if (!c->pend.head)
		err = xnic_post_ctl(c, type, val);
	if (err != -EAGAIN) {
		if (err)
			XNIC_WARN(FI_LOG_EP_DATA, "FIN/CREDIT to node %u: %s\n",
				  c->node, xnic_strerror(err));
		return;
	}
	f = fi_xnic_rdm_req_new(ep, type);
	if (!f) {
		XNIC_WARN(FI_LOG_EP_DATA,
			  "no memory: FIN/CREDIT to node %u lost\n", c->node);
		return;
	}
	f->conn = c;
	f->id = val;
	fi_xnic_rdm_inflight_add(ep, f);
	xnic_pend(ep, c, f);
}

/* The FIN that completes the peer's RTS send @id. */
void fi_xnic_rdm_send_fin(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
			  uint64_t id)
{
	xnic_send_ctl(ep, c, FI_XNIC_RDM_REQ_FIN, id);
}

/*
 * An EAGER message of @c's peer that took a credit was consumed: return
 * the credits once half of them are (a CREDIT message).
 */
static void xnic_credit_owe(struct fi_xnic_rdm_ep *ep,
			    struct fi_xnic_rdm_conn *c)
{
	if (++c->owed < FI_XNIC_RDM_CREDITS / 2)
		return;
	xnic_send_ctl(ep, c, FI_XNIC_RDM_REQ_CREDIT, c->owed);
	c->owed = 0;
}

/**
 * fi_xnic_rdm_consumed() - an unexpected message leaves the queue
 * @ep: its endpoint
 * @u: the message (matched, claimed or discarded), freed by the caller
 *
 * Returns its eager credit to the peer (xnic_credit_owe()).
 */
void fi_xnic_rdm_consumed(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *u)
{
	if (u->credit)
		xnic_credit_owe(ep, u->conn);
}

/* Post the READ of @r (buffer registered, raddr and rkey set). */
static int xnic_post_read_req(struct fi_xnic_rdm_req *r)
{
	struct xnic_sge sg = {
		.addr = (uintptr_t)r->buf,
		.length = (uint32_t)(r->len < r->size ? r->len : r->size),
		.lkey = r->mr->lkey,
	};

	return xnic_post_read(r->conn->qp, &sg, 1, r->raddr, r->rkey,
			      (uintptr_t)r, XNIC_WQE_F_SIGNALED);
}

static void xnic_copy_out(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *r,
			  const void *payload, uint64_t len)
{
	size_t n = len < r->size ? (size_t)len : r->size;

	if (n)
		memcpy(r->buf, payload, n);
	r->len = len;
	if (len > r->size)
		fi_xnic_rdm_complete(ep, r, FI_ETRUNC, 0, (size_t)(len - r->size));
	else
		fi_xnic_rdm_complete(ep, r, 0, 0, 0);
}

/*
 * A receive @r matched an RTS of @len bytes at @raddr/@rkey on @c: READ it
 * into the receive's buffer; the completion finishes it. Takes @r.
 */
static void xnic_start_read(struct fi_xnic_rdm_ep *ep,
			    struct fi_xnic_rdm_req *r,
			    struct fi_xnic_rdm_conn *c, uint64_t len,
			    uint64_t raddr, uint32_t rkey, uint64_t id)
{
	size_t n = len < r->size ? (size_t)len : r->size;
	int err = 0;

	r->type = FI_XNIC_RDM_REQ_READ;
	r->conn = c;
	r->len = len;
	r->id = id;
	r->raddr = raddr;
	r->rkey = rkey;
	if (!n) {
		fi_xnic_rdm_send_fin(ep, c, id);
		fi_xnic_rdm_complete(ep, r, FI_ETRUNC, 0, (size_t)len);
		fi_xnic_rdm_req_free(ep, r);
		return;
	}
	if (c->dead)
		err = -ECONNRESET;
	if (!err)
		err = xnic_mr_cache_get(ep->domain->mr_cache, r->buf, n,
					XNIC_ACCESS_LOCAL_WRITE, &r->mr);
	if (!err) {
		err = c->pend.head ? -EAGAIN : xnic_post_read_req(r);
		if (err == -EAGAIN) {
			xnic_pend(ep, c, r);
			err = 0;
		}
	}
	if (err) {
		XNIC_WARN(FI_LOG_EP_DATA, "READ of %zu bytes: %s\n", n,
			  xnic_strerror(err));
		fi_xnic_rdm_send_fin(ep, c, id);
		fi_xnic_rdm_complete(ep, r, FI_EIO, 0, 0);
		fi_xnic_rdm_req_free(ep, r);
		return;
	}
	fi_xnic_rdm_inflight_add(ep, r);
}

/* Post what waits in the connections' pend queues, in order. */
static void xnic_pend_run(struct fi_xnic_rdm_ep *ep)
{
	struct fi_xnic_rdm_conn *c;

	for (c = ep->conns; c && ep->npend; c = c->next) {
		struct fi_xnic_rdm_req *r;
		int err = 0;

		if (!c->pend.head)	/* not counted in npend */
			continue;
		while ((r = c->pend.head) && !c->dead) {
			err = r->type == FI_XNIC_RDM_REQ_READ ?
			      xnic_post_read_req(r) :
			      xnic_post_ctl(c, r->type, r->id);
			if (err == -EAGAIN)
				break;
			fi_xnic_rdm_queue_del(&c->pend, NULL, r);
			if (r->type != FI_XNIC_RDM_REQ_READ || err) {
				xnic_inflight_del(ep, r);
				if (err && r->type == FI_XNIC_RDM_REQ_READ)
					fi_xnic_rdm_complete(ep, r, FI_EIO, 0, 0);
				fi_xnic_rdm_req_free(ep, r);
			}
		}
		if (!c->pend.head && err != -EAGAIN) {
			ep->npend--;
		} else if (c->dead) {	/* the QP's failure fails them */
			while ((r = c->pend.head)) {
				fi_xnic_rdm_queue_del(&c->pend, NULL, r);
				xnic_inflight_del(ep, r);
				if (r->type == FI_XNIC_RDM_REQ_READ)
					fi_xnic_rdm_complete(ep, r,
							     FI_ECONNRESET,
							     0, 0);
				fi_xnic_rdm_req_free(ep, r);
			}
			ep->npend--;
		}
	}
}

/* The READ of @r completed (status @status). */
static void xnic_read_done(struct fi_xnic_rdm_ep *ep,
			   struct fi_xnic_rdm_req *r, unsigned int status)
{
	xnic_inflight_del(ep, r);
	fi_xnic_rdm_send_fin(ep, r->conn, r->id);
	if (status != XNIC_WC_SUCCESS)
		fi_xnic_rdm_complete(ep, r, xnic_status_err(status), (int)status, 0);
	else if (r->len > r->size)
		fi_xnic_rdm_complete(ep, r, FI_ETRUNC, 0, (size_t)(r->len - r->size));
	else
		fi_xnic_rdm_complete(ep, r, 0, 0, 0);
	fi_xnic_rdm_req_free(ep, r);
}

/* Deliver the unexpected message @u into the receive @r; frees @u. */
void fi_xnic_rdm_deliver(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *r,
			 struct fi_xnic_rdm_req *u)
{
	r->addr = u->addr;
	r->tag = u->tag;
	r->data = u->data;
	r->flags |= u->flags & FI_REMOTE_CQ_DATA;
	if (u->type == FI_XNIC_RDM_REQ_RTS) {
		xnic_start_read(ep, r, u->conn, u->len, u->raddr, u->rkey,
				u->id);
	} else {
		xnic_copy_out(ep, r, u->payload, u->len);
		fi_xnic_rdm_req_free(ep, r);
	}
	fi_xnic_rdm_consumed(ep, u);
	fi_xnic_rdm_req_free(ep, u);
}

bool fi_xnic_rdm_match(const struct fi_xnic_rdm_req *r, fi_addr_t src,
		       uint64_t tag)
{
	if (r->addr != FI_ADDR_UNSPEC && r->addr != src)
		return false;
	if ((r->flags & FI_TAGGED) && ((r->tag ^ tag) & ~r->ignore))
		return false;
	return true;
}

/* The first posted receive of queue @q matching (@src, @tag), dequeued. */
static struct fi_xnic_rdm_req *xnic_take_posted(struct fi_xnic_rdm_queue *q,
						fi_addr_t src, uint64_t tag)
{
	struct fi_xnic_rdm_req *r, *prev = NULL;

	for (r = q->head; r; prev = r, r = r->next) {
		if (fi_xnic_rdm_match(r, src, tag)) {
			fi_xnic_rdm_queue_del(q, prev, r);
			return r;
		}
	}
	return NULL;
}

fi_addr_t fi_xnic_rdm_src(struct fi_xnic_rdm_ep *ep,
			  struct fi_xnic_rdm_conn *c)
{
	if (!c)
		return fi_xnic_av_find(ep->av, fi_xnic_addr_node(&ep->addr),
				       fi_xnic_addr_port(&ep->addr));
	fi_xnic_rdm_av_sync(ep);		/* removed since? */
	if (c->peer == FI_ADDR_NOTAVAIL)	/* inserted since? */
		c->peer = fi_xnic_av_find(ep->av, c->node, c->port);
	return c->peer;
}

/*
 * An EAGER message or an RTS arrived from @c (NULL: this endpoint sent
 * it to itself): match it or queue it as unexpected.
 */
void fi_xnic_rdm_arrived(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
			 const struct fi_xnic_rdm_hdr *h,
			 const struct fi_xnic_rdm_rts *rts,
			 const void *payload, uint64_t len)
{
	bool tagged = h->flags & FI_XNIC_RDM_F_TAGGED;
	fi_addr_t src = fi_xnic_rdm_src(ep, c);
	struct fi_xnic_rdm_req *r, *u;

	r = xnic_take_posted(&ep->posted[tagged], src, h->tag);
	if (r) {
		r->addr = src;
		r->tag = h->tag;
		r->data = h->data;
		if (h->flags & FI_XNIC_RDM_F_DATA)
			r->flags |= FI_REMOTE_CQ_DATA;
		if (rts) {
			xnic_start_read(ep, r, c, rts->len, rts->addr,
					rts->rkey, rts->id);
		} else {
			xnic_copy_out(ep, r, payload, len);
			fi_xnic_rdm_req_free(ep, r);
			if (c && (h->flags & FI_XNIC_RDM_F_CREDIT))
				xnic_credit_owe(ep, c);
		}
		return;
	}
	u = fi_xnic_rdm_req_new(ep, rts ? FI_XNIC_RDM_REQ_RTS :
					  FI_XNIC_RDM_REQ_UNEXP);
	if (u && !rts && len) {
		u->payload = malloc((size_t)len);
		if (u->payload)
			memcpy(u->payload, payload, (size_t)len);
	}
	if (!u || (!rts && len && !u->payload)) {
		XNIC_WARN(FI_LOG_EP_DATA, "no memory: message dropped\n");
		if (rts)
			fi_xnic_rdm_send_fin(ep, c, rts->id);
		free(u);
		return;
	}
	u->flags = (tagged ? FI_TAGGED : FI_MSG) | FI_RECV |
		   ((h->flags & FI_XNIC_RDM_F_DATA) ? FI_REMOTE_CQ_DATA : 0);
	u->conn = c;
	u->credit = c && !rts && (h->flags & FI_XNIC_RDM_F_CREDIT);
	u->addr = src;
	u->tag = h->tag;
	u->data = h->data;
	u->len = rts ? rts->len : len;
	if (rts) {
		u->raddr = rts->addr;
		u->rkey = rts->rkey;
		u->id = rts->id;
	}
	fi_xnic_rdm_queue_add(&ep->unexp[tagged], u);
}

/* The FIN of RTS send @id arrived on @c. */
static void xnic_fin(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
		     uint64_t id)
{
	struct fi_xnic_rdm_req *r;

	for (r = ep->inflight; r; r = r->inext) {
		if (r->type == FI_XNIC_RDM_REQ_RTS && r->conn == c &&
		    r->id == id) {
			xnic_inflight_del(ep, r);
			fi_xnic_rdm_complete(ep, r, 0, 0, 0);
			fi_xnic_rdm_req_free(ep, r);
			return;
		}
	}
	ep->bad_hdr++;		/* names no send of ours */
}

/*
 * Give bounce buffer @b back to @c's RQ, or keep it for later when the RQ
 * is full (-EAGAIN: modules before 9d06734 gave an RQ entry back only
 * after its CQE was visible).
 */
static void xnic_repost(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
			struct fi_xnic_rdm_rxbuf *b)
{
	struct xnic_sge sg = {
		.addr = (uintptr_t)b->buf,
		.length = FI_XNIC_RDM_BUF,
		.lkey = c->mr->lkey,
	};
	int err;

	if (c->dead)
		return;
	err = c->nrepost ? -EAGAIN : xnic_post_recv(c->qp, &sg, 1,
						     (uintptr_t)b);
	if (err == -EAGAIN) {
		if (!c->nrepost++)
			ep->nrepost++;
		c->repost[c->nrepost - 1] = b;
	} else if (err) {
		XNIC_WARN(FI_LOG_EP_DATA, "node %u: RQ post: %s\n", c->node,
			  xnic_strerror(err));
		c->dead = true;
	}
}

/* Post the buffers xnic_repost() kept, in order, while there is room. */
static void xnic_repost_pending(struct fi_xnic_rdm_ep *ep)
{
	struct fi_xnic_rdm_conn *c;
	unsigned int i;

	for (c = ep->conns; c && ep->nrepost; c = c->next) {
		if (!c->nrepost)
			continue;
		for (i = 0; i < c->nrepost && !c->dead; i++) {
			struct xnic_sge sg = {
				.addr = (uintptr_t)c->repost[i]->buf,
				.length = FI_XNIC_RDM_BUF,
				.lkey = c->mr->lkey,
			};

			if (xnic_post_recv(c->qp, &sg, 1,
					   (uintptr_t)c->repost[i]))
				break;
		}
		if (c->dead)
			i = c->nrepost;
		memmove(c->repost, c->repost + i,
			(c->nrepost - i) * sizeof(c->repost[0]));
		c->nrepost -= i;
		if (!c->nrepost)
			ep->nrepost--;
	}
}

/* A message in bounce buffer @b of @byte_len bytes. */
static void xnic_rx(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_rxbuf *b,
		    uint32_t byte_len)
{
	const struct fi_xnic_rdm_hdr *h = b->buf;
	struct fi_xnic_rdm_conn *c = b->conn;

	if (byte_len < XNIC_HDR) {
		ep->bad_hdr++;
	} else if (h->op == FI_XNIC_RDM_FIN) {
		xnic_fin(ep, c, h->tag);
	} else if (h->op == FI_XNIC_RDM_CREDIT) {
		c->credit = h->tag < FI_XNIC_RDM_CREDITS - c->credit ?
			    c->credit + (unsigned int)h->tag :
			    FI_XNIC_RDM_CREDITS;
	} else if (h->op == FI_XNIC_RDM_EAGER_OP) {
		fi_xnic_rdm_arrived(ep, c, h, NULL, h + 1, byte_len - XNIC_HDR);
	} else if (h->op == FI_XNIC_RDM_RTS && byte_len == XNIC_RTS_LEN) {
		struct fi_xnic_rdm_rts rts;

		memcpy(&rts, h + 1, sizeof(rts));
		if (rts.len <= ep->domain->lim.attr.max_msg_size)
			fi_xnic_rdm_arrived(ep, c, h, &rts, NULL, 0);
		else
			ep->bad_hdr++;
	} else {
		ep->bad_hdr++;
	}
	xnic_repost(ep, c, b);
}

/* @c's QP failed: the sends waiting for a FIN on it fail too. */
void fi_xnic_rdm_conn_failed(struct fi_xnic_rdm_ep *ep,
			     struct fi_xnic_rdm_conn *c, unsigned int status)
{
	struct fi_xnic_rdm_req *r, *n;

	if (c->dead && status == XNIC_WC_WR_FLUSH_ERR)
		return;
	if (!c->dead)
		XNIC_WARN(FI_LOG_EP_DATA, "node %u port %u: QP failed: %s\n",
			  c->node, c->port, xnic_wc_status_str(status));
	c->dead = true;
	for (r = ep->inflight; r; r = n) {
		n = r->inext;
		if (r->type != FI_XNIC_RDM_REQ_RTS || r->conn != c)
			continue;
		xnic_inflight_del(ep, r);
		fi_xnic_rdm_complete(ep, r, xnic_status_err(status), (int)status, 0);
		fi_xnic_rdm_req_free(ep, r);
	}
	/*
	 * Replaced now, not at the next send to the peer: a peer that went
	 * away for good would keep its QP, buffers and CQ entries for ever.
	 */
	if (c->state == FI_XNIC_RDM_READY)
		fi_xnic_rdm_conn_retire(ep, c);
}

static struct fi_xnic_rdm_conn *xnic_conn_by_qpn(struct fi_xnic_rdm_ep *ep,
						 uint32_t qpn)
{
	struct fi_xnic_rdm_conn *c;

	for (c = ep->conns; c; c = c->next)
		if (c->qp && c->qp->qpn == qpn)
			return c;
	return NULL;
}

static void xnic_cqe(struct fi_xnic_rdm_ep *ep, const struct xnic_cqe *e)
{
	struct fi_xnic_rdm_req *r = (void *)(uintptr_t)e->wr_id;
	struct fi_xnic_rdm_conn *c;

	if (!r) {		/* an unsignaled FIN, RTS or inline send */
		c = xnic_conn_by_qpn(ep, e->qp_num);
		if (c && e->status != XNIC_WC_SUCCESS)
			fi_xnic_rdm_conn_failed(ep, c, e->status);
		return;
	}
	if (r->kind == FI_XNIC_RDM_K_RXBUF) {
		struct fi_xnic_rdm_rxbuf *b = (void *)r;

		if (e->status == XNIC_WC_SUCCESS)
			xnic_rx(ep, b, e->byte_len);
		else
			fi_xnic_rdm_conn_failed(ep, b->conn, e->status);
		return;
	}
	if (e->status != XNIC_WC_SUCCESS)
		fi_xnic_rdm_conn_failed(ep, r->conn, e->status);
	if (r->type == FI_XNIC_RDM_REQ_READ) {
		xnic_read_done(ep, r, e->status);
		return;
	}
	/* An eager send. */
	xnic_inflight_del(ep, r);
	if (e->status != XNIC_WC_SUCCESS)
		fi_xnic_rdm_complete(ep, r, xnic_status_err(e->status),
				     (int)e->status, 0);
	else
		fi_xnic_rdm_complete(ep, r, 0, 0, 0);
	fi_xnic_rdm_req_free(ep, r);
}

/**
 * fi_xnic_rdm_progress() - reap the endpoint's completions
 * @ep: endpoint, its lock held
 */
void fi_xnic_rdm_progress(struct fi_xnic_rdm_ep *ep)
{
	struct xnic_cqe cqes[16];
	int n, i;

	if (!ep->xcq)
		return;
	if (ep->nrepost)
		xnic_repost_pending(ep);
	if (ep->npend)
		xnic_pend_run(ep);
	do {
		n = xnic_poll_cq(ep->xcq, cqes, 16);
		if (n < 0) {
			XNIC_WARN(FI_LOG_CQ, "RDM CQ: %s\n", xnic_strerror(n));
			return;
		}
		for (i = 0; i < n; i++)
			xnic_cqe(ep, &cqes[i]);
	} while (n == 16);
	if (ep->nstale)		/* the CQ was empty: see fi_xnic_rdm_reap() */
		fi_xnic_rdm_reap(ep);
}

