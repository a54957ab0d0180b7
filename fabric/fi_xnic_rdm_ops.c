// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The FI_EP_RDM endpoint's operations (fi_msg(3), fi_tagged(3),
 * fi_endpoint(3)): sends, receives with FI_PEEK/FI_CLAIM/FI_DISCARD,
 * fi_cancel, on the protocol of fi_xnic_rdm_proto.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fi_xnic_rdm.h"

static int xnic_post_errno(int err)
{
	return err == -EAGAIN ? -FI_EAGAIN : fi_xnic_err(err);
}

/* ------------------------------ sends ------------------------------- */

/*
 * Send @len bytes at @buf as an RTS (rendezvous): a large message, or one
 * without an eager credit. The peer READs the buffer, registered or from
 * the cache; an FI_INJECT send's buffer is the caller's again at return,
 * so the peer READs a registered copy (@r->payload).
 */
static int xnic_send_rts(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_conn *c,
			 struct fi_xnic_rdm_req *r, struct fi_xnic_rdm_hdr *h,
			 const void *buf, size_t len)
{
	struct fi_xnic_rdm_rts rts;
	int err;

	if (r->flags & FI_INJECT) {
		r->payload = malloc(len);
		if (!r->payload)
			return -FI_ENOMEM;
		memcpy(r->payload, buf, len);
		buf = r->payload;
	}
	err = xnic_mr_cache_get(ep->domain->mr_cache, (void *)buf, len,
				XNIC_ACCESS_REMOTE_READ, &r->mr);
	if (err)
		return err;
	r->type = FI_XNIC_RDM_REQ_RTS;
	r->id = ++ep->next_id;
	h->op = FI_XNIC_RDM_RTS;
	rts = (struct fi_xnic_rdm_rts){
		.len = len,
		.addr = (uintptr_t)buf,
		.rkey = r->mr->rkey,
		.id = r->id,
	};
	/* Unsignaled: the FIN completes it (or the QP's failure). */
	return fi_xnic_rdm_send_inline(c, h, sizeof(*h), &rts, sizeof(rts), 0);
}

static ssize_t xnic_rdm_send(struct fi_xnic_rdm_ep *ep, const void *buf,
			     size_t len, fi_addr_t dest, uint64_t tag,
			     uint64_t data, uint64_t flags, void *context)
{
	struct fi_xnic_rdm_hdr h = {
		.op = FI_XNIC_RDM_EAGER_OP,
		.flags = ((flags & FI_TAGGED) ? FI_XNIC_RDM_F_TAGGED : 0) |
			 ((flags & FI_REMOTE_CQ_DATA) ? FI_XNIC_RDM_F_DATA : 0),
		.data = (uint32_t)data,
		.tag = tag,
	};
	struct fi_xnic_rdm_req *r = NULL;
	struct fi_xnic_rdm_conn *c;
	bool want, inl, eager;
	int err;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (len && !buf)
		return -FI_EINVAL;
	if (len > ep->domain->lim.attr.max_msg_size)
		return -FI_EMSGSIZE;
	if ((flags & FI_INJECT) && len > FI_XNIC_RDM_EAGER)
		return -FI_EMSGSIZE;
	if (data > UINT32_MAX)
		return -FI_EINVAL;	/* cq_data_size is 4 */
	want = !(flags & FI_INJECT) &&
	       (!ep->tx_selective || (flags & FI_COMPLETION));
	pthread_mutex_lock(&ep->lock);
	err = fi_xnic_rdm_conn_get(ep, dest, &c);
	if (err)
		goto out;
	if (!c) {			/* to ourselves */
		struct fi_xnic_rdm_req me = {
			.flags = (flags & (FI_TAGGED | FI_MSG | FI_INJECT |
					   FI_COMPLETION)) | FI_SEND,
			.context = context,
		};

		fi_xnic_rdm_arrived(ep, NULL, &h, NULL, buf, len);
		fi_xnic_rdm_complete(ep, &me, 0, 0, 0);
		goto out;
	}
	/*
	 * Progress (fi_cq_read's) gives back bounce buffers, eager credits
	 * and SQ room: here only when one is short, so that a small send
	 * does not poll the CQ again on its way out.
	 */
	if (!ep->ntxfree || !c->credit || !xnic_sq_space(c->qp)) {
		fi_xnic_rdm_progress(ep);
		/*
		 * Which may have found the connection failed, retired it and
		 * destroyed its QP: the send goes on its replacement.
		 */
		if (c->dead) {
			err = fi_xnic_rdm_conn_get(ep, dest, &c);
			if (err)
				goto out;
		}
	}
	inl = XNIC_HDR + len <= c->qp->max_inline;
	eager = inl || (len <= FI_XNIC_RDM_EAGER && c->credit);
	if (want || !inl) {
		r = fi_xnic_rdm_req_new(ep, FI_XNIC_RDM_REQ_SEND);
		err = -FI_ENOMEM;
		if (!r)
			goto out;
		r->flags = (flags & (FI_TAGGED | FI_MSG | FI_INJECT |
				     FI_COMPLETION)) | FI_SEND;
		r->context = context;
		r->conn = c;
	}
	if (inl) {
		err = fi_xnic_rdm_send_inline(c, &h, sizeof(h), buf, len,
					      (uintptr_t)r);
	} else if (eager) {
		struct xnic_sge sg;
		char *tb;

		err = -FI_EAGAIN;
		if (!ep->ntxfree)
			goto out;
		h.flags |= FI_XNIC_RDM_F_CREDIT;
		r->txbuf = ep->txfree[--ep->ntxfree];
		tb = (char *)ep->txmem + (size_t)r->txbuf * FI_XNIC_RDM_BUF;
		memcpy(tb, &h, sizeof(h));
		memcpy(tb + sizeof(h), buf, len);
		sg.addr = (uintptr_t)tb;
		sg.length = (uint32_t)(sizeof(h) + len);
		sg.lkey = ep->txmr->lkey;
		err = xnic_post_send(c->qp, &sg, 1, (uintptr_t)r,
				     XNIC_WQE_F_SIGNALED);
		if (!err)
			c->credit--;
	} else {
		err = xnic_send_rts(ep, c, r, &h, buf, len);
	}
	if (!err && r)
		fi_xnic_rdm_inflight_add(ep, r);
out:
	if (err && r)
		fi_xnic_rdm_req_free(ep, r);
	pthread_mutex_unlock(&ep->lock);
	return err ? xnic_post_errno(err) : 0;
}

/* ----------------------------- receives ----------------------------- */

/*
 * Where unexpected message @u came from: an application may insert its
 * sender into the AV only after the message arrived (Open MPI adds peers
 * on first use), so a source not known then is looked up again.
 */
static fi_addr_t xnic_unexp_src(struct fi_xnic_rdm_ep *ep,
				struct fi_xnic_rdm_req *u)
{
	if (u->addr == FI_ADDR_NOTAVAIL)
		u->addr = fi_xnic_rdm_src(ep, u->conn);
	return u->addr;
}

/* Drop unexpected message @u (FI_DISCARD): its sender's send completes. */
static void xnic_discard(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *u)
{
	if (u->type == FI_XNIC_RDM_REQ_RTS)
		fi_xnic_rdm_send_fin(ep, u->conn, u->id);
	fi_xnic_rdm_consumed(ep, u);
	fi_xnic_rdm_req_free(ep, u);
}

/* FI_PEEK (with FI_CLAIM, FI_DISCARD) of an unexpected message. */
static void xnic_peek(struct fi_xnic_rdm_ep *ep, struct fi_xnic_rdm_req *r,
		      bool tagged, uint64_t flags)
{
	struct fi_xnic_rdm_queue *q = &ep->unexp[tagged];
	struct fi_xnic_rdm_req *u, *prev = NULL;

	for (u = q->head; u; prev = u, u = u->next)
		if (!u->claim && fi_xnic_rdm_match(r, xnic_unexp_src(ep, u), u->tag))
			break;
	if (!u) {
		fi_xnic_rdm_complete(ep, r, FI_ENOMSG, 0, 0);
		return;
	}
	r->addr = u->addr;
	r->tag = u->tag;
	r->data = u->data;
	r->buf = NULL;		/* nothing is copied: len is reported */
	r->len = r->size = u->len;
	r->flags |= u->flags & FI_REMOTE_CQ_DATA;
	if (flags & FI_CLAIM)
		u->claim = r->context;
	fi_xnic_rdm_complete(ep, r, 0, 0, 0);
	if (flags & FI_DISCARD) {
		fi_xnic_rdm_queue_del(q, prev, u);
		xnic_discard(ep, u);
	}
}

/*
 * Post a receive (FI_MSG or FI_TAGGED in @flags); with FI_PEEK look for
 * an unexpected message instead (FI_CLAIM: claim it for @context); with
 * FI_CLAIM alone take the message an FI_PEEK | FI_CLAIM of @context
 * claimed. Return: 0; -FI_EOPBADSTATE before fi_enable; -FI_EINVAL: no
 * @buf for @len, FI_CLAIM with a NULL @context, or nothing claimed by
 * @context; -FI_ENOMEM.
 */
static ssize_t xnic_rdm_recv(struct fi_xnic_rdm_ep *ep, void *buf, size_t len,
			     fi_addr_t src, uint64_t tag, uint64_t ignore,
			     uint64_t flags, void *context)
{
	bool tagged = flags & FI_TAGGED;
	struct fi_xnic_rdm_queue *q;
	struct fi_xnic_rdm_req *r, *u, *prev = NULL;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (len && !buf)
		return -FI_EINVAL;
	/*
	 * A claim is known by its context (fi_tagged(3): FI_CLAIM needs a
	 * struct fi_context); NULL is the claim of every unclaimed message.
	 */
	if ((flags & FI_CLAIM) && !context)
		return -FI_EINVAL;
	pthread_mutex_lock(&ep->lock);
	r = fi_xnic_rdm_req_new(ep, FI_XNIC_RDM_REQ_RECV);
	if (!r) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_ENOMEM;
	}
	r->flags = (flags & (FI_TAGGED | FI_MSG | FI_COMPLETION)) | FI_RECV;
	r->context = context;
	r->addr = ep->directed ? src : FI_ADDR_UNSPEC;
	r->tag = tag;
	r->ignore = ignore;
	r->buf = buf;
	r->size = len;
	q = &ep->unexp[tagged];
	/*
	 * A message still in the CQ is matched when progress reaches it,
	 * against the posted queue, in arrival order: a receive needs no
	 * progress first, but a peek must see what arrived.
	 */
	if (flags & FI_PEEK) {
		fi_xnic_rdm_progress(ep);
		xnic_peek(ep, r, tagged, flags);
		fi_xnic_rdm_req_free(ep, r);
		goto out;
	}
	for (u = q->head; u; prev = u, u = u->next) {
		if (flags & FI_CLAIM) {
			if (u->claim == context)
				break;
		} else if (!u->claim &&
			   fi_xnic_rdm_match(r, xnic_unexp_src(ep, u), u->tag)) {
			break;
		}
	}
	if (!u && (flags & FI_CLAIM)) {
		fi_xnic_rdm_req_free(ep, r);
		pthread_mutex_unlock(&ep->lock);
		return -FI_EINVAL;	/* nothing claimed by @context */
	}
	if (!u) {
		fi_xnic_rdm_queue_add(&ep->posted[tagged], r);
		goto out;
	}
	fi_xnic_rdm_queue_del(q, prev, u);
	if (flags & FI_DISCARD) {
		r->buf = NULL;
		r->len = r->size = u->len;
		fi_xnic_rdm_complete(ep, r, 0, 0, 0);
		xnic_discard(ep, u);
		fi_xnic_rdm_req_free(ep, r);
		goto out;
	}
	fi_xnic_rdm_deliver(ep, r, u);
out:
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

/* ------------------------------ ops ------------------------------ */

#define XNIC_RDM_EP(fid) container_of(fid, struct fi_xnic_rdm_ep, ep_fid)
/* The calls without flags take the endpoint's (fi_endpoint(3) op_flags). */
#define XNIC_TXF(fid)	(XNIC_RDM_EP(fid)->info->tx_attr->op_flags & \
			 FI_COMPLETION)
#define XNIC_RXF(fid)	(XNIC_RDM_EP(fid)->info->rx_attr->op_flags & \
			 FI_COMPLETION)
#define XNIC_RDM_TX_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
			   FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
			   FI_INJECT_COMPLETE | FI_MORE)

static int xnic_one_iov(const struct iovec *iov, void **desc, size_t count,
			void **buf, size_t *len)
{
	(void)desc;
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;	/* iov_limit is 1 */
	*buf = count ? iov[0].iov_base : NULL;
	*len = count ? iov[0].iov_len : 0;
	return 0;
}

static ssize_t xnic_msg_recv(struct fid_ep *ep, void *buf, size_t len,
			     void *desc, fi_addr_t src, void *context)
{
	(void)desc;
	return xnic_rdm_recv(XNIC_RDM_EP(ep), buf, len, src, 0, 0,
			     FI_MSG | XNIC_RXF(ep), context);
}

static ssize_t xnic_msg_recvv(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t src,
			      void *context)
{
	size_t len;
	void *buf;
	int err = xnic_one_iov(iov, desc, count, &buf, &len);

	return err ? err : xnic_msg_recv(ep, buf, len, NULL, src, context);
}

static ssize_t xnic_msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
				uint64_t flags)
{
	size_t len;
	void *buf;
	int err;

	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_MULTI_RECV))
		return -FI_EBADFLAGS;
	if (flags & FI_MULTI_RECV)
		return -FI_EOPNOTSUPP;
	err = xnic_one_iov(msg->msg_iov, msg->desc, msg->iov_count, &buf,
			   &len);
	if (err)
		return err;
	return xnic_rdm_recv(XNIC_RDM_EP(ep), buf, len, msg->addr, 0, 0,
			     FI_MSG | flags, msg->context);
}

static ssize_t xnic_msg_send(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, fi_addr_t dest, void *context)
{
	(void)desc;
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, 0, 0,
			     FI_MSG | XNIC_TXF(ep), context);
}

static ssize_t xnic_msg_sendv(struct fid_ep *ep, const struct iovec *iov,
			      void **desc, size_t count, fi_addr_t dest,
			      void *context)
{
	size_t len;
	void *buf;
	int err = xnic_one_iov(iov, desc, count, &buf, &len);

	return err ? err : xnic_msg_send(ep, buf, len, NULL, dest, context);
}

static ssize_t xnic_msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
				uint64_t flags)
{
	size_t len;
	void *buf;
	int err;

	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)XNIC_RDM_TX_FLAGS)
		return -FI_EBADFLAGS;
	err = xnic_one_iov(msg->msg_iov, msg->desc, msg->iov_count, &buf,
			   &len);
	if (err)
		return err;
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, msg->addr, 0,
			     msg->data, FI_MSG | flags, msg->context);
}

static ssize_t xnic_msg_inject(struct fid_ep *ep, const void *buf,
			       size_t len, fi_addr_t dest)
{
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, 0, 0,
			     FI_MSG | FI_INJECT, NULL);
}

static ssize_t xnic_msg_senddata(struct fid_ep *ep, const void *buf,
				 size_t len, void *desc, uint64_t data,
				 fi_addr_t dest, void *context)
{
	(void)desc;
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, 0, data,
			     FI_MSG | FI_REMOTE_CQ_DATA | XNIC_TXF(ep), context);
}

static ssize_t xnic_msg_injectdata(struct fid_ep *ep, const void *buf,
				   size_t len, uint64_t data, fi_addr_t dest)
{
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, 0, data,
			     FI_MSG | FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

struct fi_ops_msg fi_xnic_rdm_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = xnic_msg_recv,
	.recvv = xnic_msg_recvv,
	.recvmsg = xnic_msg_recvmsg,
	.send = xnic_msg_send,
	.sendv = xnic_msg_sendv,
	.sendmsg = xnic_msg_sendmsg,
	.inject = xnic_msg_inject,
	.senddata = xnic_msg_senddata,
	.injectdata = xnic_msg_injectdata,
};

static ssize_t xnic_t_recv(struct fid_ep *ep, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, void *context)
{
	(void)desc;
	return xnic_rdm_recv(XNIC_RDM_EP(ep), buf, len, src, tag, ignore,
			     FI_TAGGED | XNIC_RXF(ep), context);
}

static ssize_t xnic_t_recvv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context)
{
	size_t len;
	void *buf;
	int err = xnic_one_iov(iov, desc, count, &buf, &len);

	return err ? err : xnic_t_recv(ep, buf, len, NULL, src, tag, ignore,
				       context);
}

static ssize_t xnic_t_recvmsg(struct fid_ep *ep,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	size_t len;
	void *buf;
	int err;

	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_PEEK | FI_CLAIM |
				FI_DISCARD))
		return -FI_EBADFLAGS;
	err = xnic_one_iov(msg->msg_iov, msg->desc, msg->iov_count, &buf,
			   &len);
	if (err)
		return err;
	return xnic_rdm_recv(XNIC_RDM_EP(ep), buf, len, msg->addr, msg->tag,
			     msg->ignore, FI_TAGGED | flags, msg->context);
}

static ssize_t xnic_t_send(struct fid_ep *ep, const void *buf, size_t len,
			   void *desc, fi_addr_t dest, uint64_t tag,
			   void *context)
{
	(void)desc;
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, tag, 0,
			     FI_TAGGED | XNIC_TXF(ep), context);
}

static ssize_t xnic_t_sendv(struct fid_ep *ep, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	size_t len;
	void *buf;
	int err = xnic_one_iov(iov, desc, count, &buf, &len);

	return err ? err : xnic_t_send(ep, buf, len, NULL, dest, tag, context);
}

static ssize_t xnic_t_sendmsg(struct fid_ep *ep,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	size_t len;
	void *buf;
	int err;

	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)XNIC_RDM_TX_FLAGS)
		return -FI_EBADFLAGS;
	err = xnic_one_iov(msg->msg_iov, msg->desc, msg->iov_count, &buf,
			   &len);
	if (err)
		return err;
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, msg->addr, msg->tag,
			     msg->data, FI_TAGGED | flags, msg->context);
}

static ssize_t xnic_t_inject(struct fid_ep *ep, const void *buf, size_t len,
			     fi_addr_t dest, uint64_t tag)
{
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, tag, 0,
			     FI_TAGGED | FI_INJECT, NULL);
}

static ssize_t xnic_t_senddata(struct fid_ep *ep, const void *buf,
			       size_t len, void *desc, uint64_t data,
			       fi_addr_t dest, uint64_t tag, void *context)
{
	(void)desc;
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, tag, data,
			     FI_TAGGED | FI_REMOTE_CQ_DATA | XNIC_TXF(ep),
			     context);
}

static ssize_t xnic_t_injectdata(struct fid_ep *ep, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag)
{
	return xnic_rdm_send(XNIC_RDM_EP(ep), buf, len, dest, tag, data,
			     FI_TAGGED | FI_INJECT | FI_REMOTE_CQ_DATA, NULL);
}

struct fi_ops_tagged fi_xnic_rdm_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = xnic_t_recv,
	.recvv = xnic_t_recvv,
	.recvmsg = xnic_t_recvmsg,
	.send = xnic_t_send,
	.sendv = xnic_t_sendv,
	.sendmsg = xnic_t_sendmsg,
	.inject = xnic_t_inject,
	.senddata = xnic_t_senddata,
	.injectdata = xnic_t_injectdata,
};

/* fi_cancel of a posted receive: it completes with FI_ECANCELED. */
static ssize_t xnic_rdm_cancel(fid_t fid, void *context)
{
	struct fi_xnic_rdm_ep *ep = container_of(fid, struct fi_xnic_rdm_ep,
						 ep_fid.fid);
	struct fi_xnic_rdm_req *r, *prev;
	ssize_t ret = -FI_ENOENT;
	int q;

	pthread_mutex_lock(&ep->lock);
	for (q = 0; q < 2 && ret; q++) {
		prev = NULL;
		for (r = ep->posted[q].head; r; prev = r, r = r->next) {
			if (r->context != context)
				continue;
			fi_xnic_rdm_queue_del(&ep->posted[q], prev, r);
			fi_xnic_rdm_complete(ep, r, FI_ECANCELED, 0, 0);
			fi_xnic_rdm_req_free(ep, r);
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ep->lock);
	return ret;
}

static ssize_t xnic_rdm_rx_size_left(struct fid_ep *ep)
{
	(void)ep;
	return 1024;	/* receives are a list: always room */
}

static ssize_t xnic_rdm_tx_size_left(struct fid_ep *ep_fid)
{
	struct fi_xnic_rdm_ep *ep = XNIC_RDM_EP(ep_fid);

	return ep->ntxfree;
}

struct fi_ops_ep fi_xnic_rdm_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = xnic_rdm_cancel,
	.getopt = fi_xnic_getopt,
	.setopt = fi_xnic_no_setopt,
	.tx_ctx = fi_xnic_no_tx_ctx,
	.rx_ctx = fi_xnic_no_rx_ctx,
	.rx_size_left = xnic_rdm_rx_size_left,
	.tx_size_left = xnic_rdm_tx_size_left,
};
