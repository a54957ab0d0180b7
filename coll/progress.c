// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - the progress engine: reaping the CQ (arrivals, credits,
 * write completions), reposting receives, posting writes and credits,
 * and breaking a failed communicator (request.c runs the wait loop).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "priv.h"

#define XNIC_COLL_POLL_BATCH	32

static const char *const xnic_coll_kind_names[] = {
	"reduce-scatter", "copy", "credit", "barrier",
};

/* A receive: data landed in a slot, a credit, or a barrier message. */
static int xnic_coll_recv(struct xnic_comm *c, const struct xnic_cqe *e)
{
	struct xnic_coll_peer *p;
	struct xnic_coll_chan_rx *rx;
	struct xnic_coll_chan_tx *tx;
	struct xnic_coll_imm d;
	unsigned int s;
	uint64_t n;
	int peer;

	if (e->wr_id >= (uint64_t)c->nranks || (int)e->wr_id == c->rank)
		return xnic_coll_seterr(c, -EPROTO,
					"receive completion with a foreign wr_id %" PRIu64,
					(uint64_t)e->wr_id);
	peer = (int)e->wr_id;
	p = &c->peers[peer];
	p->owed_recvs++;
	if (e->opcode != XNIC_WC_RECV_RDMA_WITH_IMM ||
	    !(e->flags & XNIC_CQE_F_IMM))
		return xnic_coll_seterr(c, -EPROTO,
					"rank %d sent a %s without immediate data",
					peer, xnic_wc_opcode_str(e->opcode));
	xnic_coll_imm_decode(ntohl(e->imm_data), &d);
	if (d.sender != ((unsigned int)peer & 0xffU))
		return xnic_coll_seterr(c, -EPROTO,
					"message on rank %d's QP claims to come from rank %u",
					peer, d.sender);
	c->progress = true;
	switch (d.kind) {
	case XNIC_COLL_K_RS:
	case XNIC_COLL_K_COPY:
		rx = &p->rx[d.kind == XNIC_COLL_K_RS ? XNIC_COLL_CH_RS :
						       XNIC_COLL_CH_COPY];
		if (rx->arrived - rx->consumed >= c->lay.slots)
			return xnic_coll_seterr(c, -EPROTO,
						"rank %d overran our %s inbox",
						peer, xnic_coll_kind_names[d.kind]);
		s = (unsigned int)(rx->arrived % c->lay.slots);
		rx->imm[s] = ntohl(e->imm_data);
		rx->len[s] = e->byte_len;
		rx->arrived++;
		return 0;
	case XNIC_COLL_K_CREDIT:
		tx = &p->tx[d.channel];
		n = xnic_coll_credit_update(tx->credit, d.count, tx->posted);
		if (n == (uint64_t)-1)
			return xnic_coll_seterr(c, -EPROTO,
						"rank %d credited %u %s messages, we posted %" PRIu64,
						peer, d.count,
						xnic_coll_kind_names[d.channel],
						tx->posted);
		tx->credit = n;
		return 0;
	default:	/* XNIC_COLL_K_CTRL */
		if (p->ctrl_arrived - p->ctrl_consumed >= XNIC_COLL_CTRL_RING)
			return xnic_coll_seterr(c, -EPROTO,
						"rank %d is too many barriers ahead",
						peer);
		p->ctrl_imm[p->ctrl_arrived % XNIC_COLL_CTRL_RING] =
			ntohl(e->imm_data);
		p->ctrl_arrived++;
		return 0;
	}
}

/* A signaled write completed: free its outbox slot, if it has one. */
static int xnic_coll_sent(struct xnic_comm *c, const struct xnic_cqe *e)
{
	unsigned int kind = XNIC_COLL_WRID_KIND(e->wr_id);
	unsigned int peer = XNIC_COLL_WRID_PEER(e->wr_id);
	unsigned int slot = XNIC_COLL_WRID_SLOT(e->wr_id);
	uint32_t bytes = XNIC_COLL_WRID_BYTES(e->wr_id);

	if (peer >= (unsigned int)c->nranks || (int)peer == c->rank ||
	    slot >= c->lay.slots || !c->outstanding || bytes > c->inflight)
		goto bad;
	if (kind == XNIC_COLL_K_RS) {
		struct xnic_coll_chan_tx *tx = &c->peers[peer].tx[XNIC_COLL_CH_RS];

		if (tx->done >= tx->posted || tx->done % c->lay.slots != slot)
			goto bad;
		tx->done++;
	} else if (kind == XNIC_COLL_K_COPY) {
		if (!c->ag_ref[slot])
			goto bad;
		c->ag_ref[slot]--;
	} else if (kind != XNIC_COLL_K_CTRL) {
		goto bad;
	}
	c->outstanding--;
	c->inflight -= bytes;
	c->progress = true;
	return 0;
bad:
	return xnic_coll_seterr(c, -EPROTO,
				"unexpected send completion (wr_id %#" PRIx64 ")",
				(uint64_t)e->wr_id);
}

/**
 * xnic_coll_gone_check() - fail when the active collective needs a peer
 *	that is gone
 * @c: communicator with c->gone set
 * @q: the active request
 * Return: 0, or -ECONNRESET (message set, naming the rank).
 */
int xnic_coll_gone_check(struct xnic_comm *c, struct xnic_coll_req *q)
{
	int k, r;

	for (k = -1; k < c->nranks; k++) {
		r = k < 0 ? c->first_gone : k;
		if (!c->peers[r].gone || !q->w->needs(c, q, r))
			continue;
		return xnic_coll_seterr(c, -ECONNRESET,
					"%s: rank %d (node %u) is gone: it disconnected (its process exited or was killed, or it destroyed its communicator, or a collective failed there)",
					q->name, r, c->peers[r].node);
	}
	return 0;
}

/*
 * A failed completion. A flushed one on the QP of a peer that
 * disconnected only marks that peer gone: what already arrived
 * from it stays valid (its DREQ acknowledged it), and the collective
 * fails only if it still needs that peer (request.c).
 */
static int xnic_coll_cqe_error(struct xnic_comm *c, const struct xnic_cqe *e)
{
	bool recv = e->opcode & XNIC_WC_RECV;
	unsigned int peer;
	uint32_t bytes;

	peer = recv ? (unsigned int)e->wr_id : XNIC_COLL_WRID_PEER(e->wr_id);
	if (peer >= (unsigned int)c->nranks || (int)peer == c->rank)
		return xnic_coll_seterr(c, -EIO,
					"%s completion on QP %u: %s (status %u)",
					xnic_wc_opcode_str(e->opcode), e->qp_num,
					xnic_wc_status_str(e->status),
					e->status);
	if (e->status == XNIC_WC_WR_FLUSH_ERR &&
	    xnic_qp_err_reason(c->peers[peer].qp) == XNIC_QP_ERR_DISCONNECTED) {
		if (!c->peers[peer].gone) {
			if (!c->gone++)
				c->first_gone = (int)peer;
			c->peers[peer].gone = true;
		}
		bytes = XNIC_COLL_WRID_BYTES(e->wr_id);
		if (!recv && XNIC_COLL_WRID_KIND(e->wr_id) != XNIC_COLL_K_CREDIT &&
		    c->outstanding) {
			c->outstanding--;
			c->inflight -= bytes < c->inflight ? bytes : c->inflight;
		}
		c->progress = true;
		return 0;
	}
	return xnic_coll_seterr(c, -EIO, "%s %s rank %u (node %u): %s (status %u)",
				xnic_wc_opcode_str(e->opcode),
				recv ? "from" : "to", peer,
				c->peers[peer].node,
				xnic_wc_status_str(e->status), e->status);
}

/*
 * Give back receive WQEs. A slot comes free only once the kernel has
 * published its RQ consumer index, a little after the completion; what
 * does not fit now is retried on the next loop, and only when many are
 * owed is that worth a short sleep instead of waiting for the next
 * completion.
 */
static int xnic_coll_repost(struct xnic_comm *c, struct xnic_coll_peer *p,
			    int peer)
{
	int err;

	while (p->owed_recvs) {
		err = xnic_post_recv(p->qp, NULL, 0, (uint64_t)peer);
		if (err == -EAGAIN) {
			if (p->owed_recvs > XNIC_COLL_RQ_DEPTH / 2)
				c->need_poll = true;
			return 0;
		}
		if (err)
			return xnic_coll_seterr(c, err,
						"reposting a receive for rank %d: %s",
						peer, xnic_strerror(err));
		p->owed_recvs--;
	}
	return 0;
}

/**
 * xnic_coll_poll() - reap every completion there is; repost the receives
 * @c: communicator
 * Return: 0 or a negative errno (message set).
 */
int xnic_coll_poll(struct xnic_comm *c)
{
	struct xnic_cqe e[XNIC_COLL_POLL_BATCH];
	int n, i, err, r;

	do {
		n = xnic_poll_cq(c->cq, e, XNIC_COLL_POLL_BATCH);
		if (n < 0)
			return xnic_coll_seterr(c, n, "polling the CQ: %s",
						xnic_strerror(n));
		for (i = 0; i < n; i++) {
			if (e[i].status != XNIC_WC_SUCCESS)
				err = xnic_coll_cqe_error(c, &e[i]);
			else if (e[i].opcode & XNIC_WC_RECV)
				err = xnic_coll_recv(c, &e[i]);
			else
				err = xnic_coll_sent(c, &e[i]);
			if (err)
				return err;
		}
	} while (n == XNIC_COLL_POLL_BATCH);
	for (r = 0; r < c->nranks; r++) {
		if (r == c->rank || !c->peers[r].owed_recvs ||
		    c->peers[r].gone)
			continue;
		err = xnic_coll_repost(c, &c->peers[r], r);
		if (err)
			return err;
	}
	return 0;
}

/**
 * xnic_coll_post() - post one RDMA WRITE WITH IMM to a peer
 * @c: communicator
 * @peer: the peer's rank
 * @kind: XNIC_COLL_K_*; all but CREDIT are signaled (xnic_coll_drain()
 *	waits for them: a barrier message cut off by a destroy would leave
 *	a peer waiting)
 * @lslot: local outbox slot, returned with the completion
 * @data: bytes to write (inside the scratch region), or NULL
 * @bytes: their length (0: a message with only the immediate)
 * @raddr: target address in the peer's scratch region
 * @imm: immediate, host order
 *
 * Return: 0; -EAGAIN when the SQ is full (need_poll is set: retry on a
 * later loop); another negative errno with the message set.
 */
int xnic_coll_post(struct xnic_comm *c, int peer, unsigned int kind,
		   unsigned int lslot, const void *data, uint32_t bytes,
		   uint64_t raddr, uint32_t imm)
{
	struct xnic_coll_peer *p = &c->peers[peer];
	struct xnic_sge sge = {
		.addr = (uintptr_t)data,
		.length = bytes,
		.lkey = c->mr->lkey,
	};
	bool sig = kind != XNIC_COLL_K_CREDIT;
	unsigned int flags = sig ? XNIC_WQE_F_SIGNALED : 0;
	int err;

	if (bytes && bytes <= c->max_inline)
		flags |= XNIC_WQE_F_INLINE;
	err = xnic_post_write_imm(p->qp, bytes ? &sge : NULL, bytes ? 1 : 0,
				  raddr, p->rkey, htonl(imm),
				  XNIC_COLL_WRID(kind, peer, lslot,
						 sig ? bytes : 0), flags);
	if (err == -EAGAIN) {
		c->need_poll = true;
		return -EAGAIN;
	}
	if (err)
		return xnic_coll_seterr(c, err, "posting a %s write to rank %d: %s",
					xnic_coll_kind_names[kind & 3], peer,
					xnic_strerror(err));
	if (sig) {
		c->outstanding++;
		c->inflight += bytes;
	}
	c->progress = true;
	return 0;
}

/**
 * xnic_coll_may_send() - whether the in-flight budget allows a write
 * @c: communicator
 * @bytes: its size
 *
 * The budget (max_inflight) bounds the data this rank has on the wire;
 * one write is always allowed, so a chunk larger than the budget still
 * goes. Completions come from the transport alone, never from another
 * rank's progress, so waiting for budget cannot deadlock.
 * Return: true when the write may be posted now.
 */
bool xnic_coll_may_send(struct xnic_comm *c, size_t bytes)
{
	return !c->inflight || c->inflight + bytes <= c->max_inflight;
}

/**
 * xnic_coll_flush_credits() - tell a peer which of its messages we used
 * @c: communicator
 * @peer: the peer's rank
 *
 * Sends one CREDIT per channel whose consumed count moved since the last
 * report. A full SQ leaves it for a later loop.
 * Return: 0 or a negative errno (message set).
 */
int xnic_coll_flush_credits(struct xnic_comm *c, int peer)
{
	struct xnic_coll_peer *p = &c->peers[peer];
	unsigned int ch;
	int err;

	for (ch = 0; ch < 2; ch++) {
		struct xnic_coll_chan_rx *rx = &p->rx[ch];

		if (rx->consumed == rx->credited)
			continue;
		err = xnic_coll_post(c, peer, XNIC_COLL_K_CREDIT, 0, NULL, 0,
				     p->tx[ch].raddr,
				     xnic_coll_imm_credit((unsigned int)c->rank,
							  ch, rx->consumed));
		if (err == -EAGAIN)
			return 0;
		if (err)
			return err;
		rx->credited = rx->consumed;
	}
	return 0;
}

/**
 * xnic_coll_check_msg() - check that a message is the one expected
 * @c: communicator
 * @peer: its sender
 * @what: the collective, for the message
 * @kind: expected XNIC_COLL_K_*
 * @imm: its immediate, host order
 * @idx: expected chunk index (or barrier number)
 * @len: its byte length
 * @want_len: expected byte length
 *
 * A mismatch means the ranks do not run the same collectives with the
 * same arguments.
 * Return: 0 or -EPROTO (message set).
 */
int xnic_coll_check_msg(struct xnic_comm *c, int peer, const char *what,
			unsigned int kind, uint32_t imm, uint64_t idx,
			uint32_t len, uint32_t want_len)
{
	struct xnic_coll_imm d;

	xnic_coll_imm_decode(imm, &d);
	if (d.kind == kind && d.seq == (c->seq & XNIC_COLL_SEQ_MASK) &&
	    d.idx == (idx & XNIC_COLL_IDX_MASK) && len == want_len)
		return 0;
	return xnic_coll_seterr(c, -EPROTO,
				"%s: rank %d sent %s #%u of collective %u (%u bytes), expected %s #%u of collective %u (%u bytes): do all ranks make the same calls with the same arguments?",
				what, peer, xnic_coll_kind_names[d.kind], d.idx,
				d.seq, len, xnic_coll_kind_names[kind & 3],
				(unsigned int)(idx & XNIC_COLL_IDX_MASK),
				c->seq & XNIC_COLL_SEQ_MASK, want_len);
}

/**
 * xnic_coll_fail() - mark a communicator broken after a failed collective
 * @c: communicator
 * @err: the error (its message is already set)
 *
 * Later collectives return @err at once. Every QP goes to the error
 * state: the CM tells the peers (a DREQ), so they learn of the failure at
 * once rather than after their own timeout. Not when a peer is gone:
 * every other rank learns of that one from its own QP to it, and keeping
 * ours lets their errors name the rank that left first.
 * Return: @err.
 */
int xnic_coll_fail(struct xnic_comm *c, int err)
{
	int r;

	c->failed = err;
	if (c->gone)
		return err;
	for (r = 0; r < c->nranks; r++)
		if (r != c->rank && c->peers[r].qp)
			xnic_modify_qp_err(c->peers[r].qp);
	return err;
}

/**
 * xnic_coll_drain() - wait for our signaled writes still in flight
 * @c: communicator (healthy or not)
 *
 * Used before closing the device, so no write of ours is cut off midway.
 * Gives up after the timeout or when the CQ fails; errors are ignored.
 */
void xnic_coll_drain(struct xnic_comm *c)
{
	uint64_t end = xnic_coll_now_ns() +
		       (uint64_t)c->timeout_ms * 1000000ULL;
	struct xnic_cqe e[XNIC_COLL_POLL_BATCH];
	unsigned int kind;
	int n, i;

	while (c->outstanding && xnic_coll_now_ns() < end) {
		n = xnic_poll_cq(c->cq, e, XNIC_COLL_POLL_BATCH);
		if (n < 0)
			return;
		for (i = 0; i < n; i++) {
			kind = XNIC_COLL_WRID_KIND(e[i].wr_id);
			if (!(e[i].opcode & XNIC_WC_RECV) &&
			    kind != XNIC_COLL_K_CREDIT && c->outstanding)
				c->outstanding--;
		}
		if (!n && xnic_cq_wait(c->cq, 10) &&
		    xnic_coll_now_ns() >= end)
			return;
	}
}
