// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - the collectives: all-reduce (direct reduce-scatter +
 * all-gather over the full mesh, pipelined in chunks; or hierarchical,
 * in three such phases), broadcast (the root's all-gather alone) and
 * barrier.
 *
 * A phase runs among a group of ranks (c->grp: all of them, our
 * appliance's, or the owners of our shard in each appliance) on a segment
 * of the vector, shared out among the group's members. All-reduce on rank
 * `me`, for every chunk c of every shard j of the group (priv.h describes
 * the channels):
 *  1. RS: copy our part of chunk c of shard j into our RS outbox for j
 *     and write it to j's RS inbox for us (j != me);
 *  2. reduce: once every peer's part of chunk c of our shard has landed,
 *     sum the parts in rank order into an AG outbox slot (freeing the
 *     RS inbox slots: credits) and copy the result into recvbuf;
 *  3. AG: write that slot to every peer's COPY inbox for us;
 *  4. copy each peer's reduced chunks out of our COPY inboxes into
 *     recvbuf as they land (credits again).
 * The steps run interleaved, as far as slots and credits allow, so the
 * chunks stream through all four at once.
 *
 * Hierarchical all-reduce (c->algo XNIC_COLL_ALGO_HIER), three phases:
 *  0. among our appliance's ranks, on the whole vector: steps 1-2 only;
 *     our shard's partial sum (our appliance's) lands in recvbuf;
 *  1. among the ranks that own the same shard in every appliance, on
 *     that shard: steps 1-4 on the partial sums; recvbuf's shard is then
 *     the total;
 *  2. among our appliance's ranks, on the whole vector: steps 3-4 only.
 * Each phase begins a new sequence number, so the immediates tell the
 * phases apart; channel counters run on across phases as across
 * collectives.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "priv.h"

static inline char *xnic_coll_at(struct xnic_comm *c, size_t off)
{
	return c->region + off;
}

static inline const char *xnic_coll_job_name(const struct xnic_coll_job *op)
{
	return op->bcast ? "broadcast" : "allreduce";
}

/* Whether our next RS part for peer @r may be posted now. */
static bool xnic_coll_rs_ready(struct xnic_comm *c, int r)
{
	struct xnic_coll_peer *p = &c->peers[r];
	struct xnic_coll_chan_tx *tx = &p->tx[XNIC_COLL_CH_RS];

	return p->rs_sent < c->nch[r] &&
	       tx->posted - tx->credit < c->lay.slots &&
	       tx->posted - tx->done < c->lay.slots;
}

/* Whether our next produced chunk may be posted to peer @r now. */
static bool xnic_coll_ag_ready(struct xnic_comm *c, struct xnic_coll_job *op,
			       int r)
{
	struct xnic_coll_peer *p = &c->peers[r];
	struct xnic_coll_chan_tx *tx = &p->tx[XNIC_COLL_CH_COPY];

	return p->cp_sent < op->produced &&
	       tx->posted - tx->credit < c->lay.slots;
}

/*
 * The peer to post to next on channel @ch (XNIC_COLL_CH_RS: parts,
 * XNIC_COLL_CH_COPY: produced chunks), among those ready for it and not
 * marked @full (SQ full): the least served so far, lowest chunk index
 * first, ties in rank order after ours. Return: its rank, or -1.
 */
static int xnic_coll_pick(struct xnic_comm *c, struct xnic_coll_job *op,
			  unsigned int ch, const bool *full)
{
	size_t sent, best_sent = 0;
	int k, r, best = -1;
	bool ready;

	for (k = 1; k < c->ngrp; k++) {
		r = c->grp[(c->gi + k) % c->ngrp];
		if (full[r])
			continue;
		if (ch == XNIC_COLL_CH_RS) {
			ready = xnic_coll_rs_ready(c, r);
			sent = c->peers[r].rs_sent;
		} else {
			ready = xnic_coll_ag_ready(c, op, r);
			sent = c->peers[r].cp_sent;
		}
		if (ready && (best < 0 || sent < best_sent)) {
			best = r;
			best_sent = sent;
		}
	}
	return best;
}

/*
 * Step 1: post RS parts while slots and budget allow, lowest chunk index
 * first (ties in rank order after ours), so that chunk c of every shard
 * leaves before chunk c + 1 of any: the owners can all reduce at once.
 */
static int xnic_coll_rs_send(struct xnic_comm *c, struct xnic_coll_job *op)
{
	bool full[XNIC_COLL_MAX_RANKS] = { false };
	unsigned int slots = c->lay.slots, s;
	struct xnic_coll_chan_tx *tx;
	struct xnic_coll_peer *p;
	int best, err;
	size_t n;
	char *dst;

	for (;;) {
		best = xnic_coll_pick(c, op, XNIC_COLL_CH_RS, full);
		if (best < 0)
			return 0;
		p = &c->peers[best];
		tx = &p->tx[XNIC_COLL_CH_RS];
		s = (unsigned int)(tx->posted % slots);
		n = xnic_coll_chunk_len(c->len[best], op->ce, p->rs_sent);
		if (!xnic_coll_may_send(c, n * op->esize))
			return 0;
		dst = xnic_coll_at(c, xnic_coll_off_rs_out(&c->lay, p->pi, s));
		memcpy(dst, op->src + (c->off[best] + p->rs_sent * op->ce) *
		       op->esize, n * op->esize);
		err = xnic_coll_post(c, best, XNIC_COLL_K_RS, s, dst,
				     (uint32_t)(n * op->esize),
				     tx->raddr + (uint64_t)s * c->lay.chunk,
				     xnic_coll_imm_data(XNIC_COLL_K_RS,
							(unsigned int)c->rank,
							c->seq, p->rs_sent));
		if (err == -EAGAIN) {
			full[best] = true;	/* SQ full: the others may go */
			continue;
		}
		if (err)
			return err;
		tx->posted++;
		p->rs_sent++;
	}
}

/* Whether every member's part of our next chunk has landed. */
static bool xnic_coll_parts_ready(struct xnic_comm *c)
{
	int k, r;

	for (k = 0; k < c->ngrp; k++) {
		struct xnic_coll_chan_rx *rx;

		r = c->grp[k];
		rx = &c->peers[r].rx[XNIC_COLL_CH_RS];
		if (r != c->rank && rx->arrived == rx->consumed)
			return false;
	}
	return true;
}

/*
 * Step 2: reduce (or, without RS, copy) our next chunks into AG outbox
 * slots, and the reduced ones into recvbuf.
 */
static int xnic_coll_produce(struct xnic_comm *c, struct xnic_coll_job *op)
{
	unsigned int slots = c->lay.slots, s, rs;
	size_t n, e0, bytes;
	char *dst;
	int k, r, err;

	while (op->produced < c->nch[c->rank]) {
		s = (unsigned int)(c->ag_produced % slots);
		if (c->ag_ref[s] || (op->rs && !xnic_coll_parts_ready(c)))
			return 0;
		n = xnic_coll_chunk_len(c->len[c->rank], op->ce, op->produced);
		e0 = c->off[c->rank] + op->produced * op->ce;
		bytes = n * op->esize;
		dst = xnic_coll_at(c, xnic_coll_off_ag_out(&c->lay, s));
		if (!op->rs) {
			memcpy(dst, op->src + e0 * op->esize, bytes);
		} else {
			for (k = 0; k < c->ngrp; k++) {
				struct xnic_coll_peer *p;
				struct xnic_coll_chan_rx *rx;

				r = c->grp[k];
				p = &c->peers[r];
				rx = &p->rx[XNIC_COLL_CH_RS];
				if (r == c->rank) {
					c->srcs[k] = op->src + e0 * op->esize;
					continue;
				}
				rs = (unsigned int)(rx->consumed % slots);
				err = xnic_coll_check_msg(c, r, xnic_coll_job_name(op),
							  XNIC_COLL_K_RS,
							  rx->imm[rs],
							  op->produced,
							  rx->len[rs],
							  (uint32_t)bytes);
				if (err)
					return err;
				c->srcs[k] = xnic_coll_at(c,
							  xnic_coll_off_rs_in(&c->lay,
									      p->pi,
									      rs));
			}
			if (op->dtype == XNIC_COLL_FLOAT32)
				xnic_coll_reduce_f32((float *)dst,
						     (const float *const *)c->srcs,
						     (unsigned int)c->ngrp, n);
			else
				xnic_coll_reduce_bf16((uint16_t *)dst,
						      (const uint16_t *const *)c->srcs,
						      (unsigned int)c->ngrp, n);
			for (k = 0; k < c->ngrp; k++)
				if (c->grp[k] != c->rank)
					c->peers[c->grp[k]].rx[XNIC_COLL_CH_RS].consumed++;
			memcpy(op->recv + e0 * op->esize, dst, bytes);
		}
		/* Without AG the slot is free again at once. */
		c->ag_ref[s] = op->ag ? (uint32_t)(c->ngrp - 1) : 0;
		c->ag_produced++;
		op->produced++;
		c->progress = true;
	}
	return 0;
}

/* Step 3: post our produced chunks to every peer, oldest chunk first. */
static int xnic_coll_ag_send(struct xnic_comm *c, struct xnic_coll_job *op)
{
	bool full[XNIC_COLL_MAX_RANKS] = { false };
	unsigned int slots = c->lay.slots, s, ls;
	struct xnic_coll_chan_tx *tx;
	struct xnic_coll_peer *p;
	int best, err;
	size_t n;

	for (;;) {
		best = xnic_coll_pick(c, op, XNIC_COLL_CH_COPY, full);
		if (best < 0)
			return 0;
		p = &c->peers[best];
		tx = &p->tx[XNIC_COLL_CH_COPY];
		s = (unsigned int)(tx->posted % slots);
		ls = (unsigned int)((op->ag_base + p->cp_sent) % slots);
		n = xnic_coll_chunk_len(c->len[c->rank], op->ce, p->cp_sent);
		if (!xnic_coll_may_send(c, n * op->esize))
			return 0;
		err = xnic_coll_post(c, best, XNIC_COLL_K_COPY, ls,
				     xnic_coll_at(c, xnic_coll_off_ag_out(&c->lay,
									  ls)),
				     (uint32_t)(n * op->esize),
				     tx->raddr + (uint64_t)s * c->lay.chunk,
				     xnic_coll_imm_data(XNIC_COLL_K_COPY,
							(unsigned int)c->rank,
							c->seq, p->cp_sent));
		if (err == -EAGAIN) {
			full[best] = true;
			continue;
		}
		if (err)
			return err;
		tx->posted++;
		p->cp_sent++;
	}
}

/* Step 4: copy the members' chunks out of our COPY inboxes. */
static int xnic_coll_copy_out(struct xnic_comm *c, struct xnic_coll_job *op)
{
	unsigned int slots = c->lay.slots, s;
	size_t n;
	int k, r, err;

	for (k = 0; k < c->ngrp; k++) {
		struct xnic_coll_peer *p;
		struct xnic_coll_chan_rx *rx;

		r = c->grp[k];
		if (r == c->rank)
			continue;
		p = &c->peers[r];
		rx = &p->rx[XNIC_COLL_CH_COPY];
		while (p->cp_recvd < c->nch[r] && rx->arrived > rx->consumed) {
			s = (unsigned int)(rx->consumed % slots);
			n = xnic_coll_chunk_len(c->len[r], op->ce, p->cp_recvd);
			err = xnic_coll_check_msg(c, r, xnic_coll_job_name(op),
						  XNIC_COLL_K_COPY, rx->imm[s],
						  p->cp_recvd, rx->len[s],
						  (uint32_t)(n * op->esize));
			if (err)
				return err;
			memcpy(op->recv + (c->off[r] + p->cp_recvd * op->ce) *
			       op->esize,
			       xnic_coll_at(c, xnic_coll_off_cp_in(&c->lay, p->pi,
								   s)),
			       n * op->esize);
			rx->consumed++;
			p->cp_recvd++;
			c->progress = true;
		}
	}
	return 0;
}

/*
 * The active phase's step: 1 when our part of it is done (every chunk
 * of ours produced and posted, every member's chunk copied out).
 */
static int xnic_coll_phase_step(struct xnic_comm *c, struct xnic_coll_job *op)
{
	bool done;
	int k, r, err;

	/* Finished chunks go out before new parts take the budget. */
	err = xnic_coll_produce(c, op);
	if (!err && op->ag)
		err = xnic_coll_ag_send(c, op);
	if (!err && op->rs)
		err = xnic_coll_rs_send(c, op);
	if (!err && op->ag)
		err = xnic_coll_copy_out(c, op);
	if (err)
		return err;
	/* Every peer: an earlier phase's members may still be owed credits. */
	for (r = 0; r < c->nranks; r++) {
		if (r == c->rank)
			continue;
		err = xnic_coll_flush_credits(c, r);
		if (err)
			return err;
	}
	done = op->produced == c->nch[c->rank];
	for (k = 0; k < c->ngrp; k++) {
		struct xnic_coll_peer *p = &c->peers[c->grp[k]];

		r = c->grp[k];
		if (r == c->rank)
			continue;
		if ((op->ag && (p->cp_sent != op->produced ||
				p->cp_recvd != c->nch[r])) ||
		    (op->rs && p->rs_sent != c->nch[r]))
			done = false;
	}
	return done;
}

static void xnic_coll_phase_begin(struct xnic_comm *c, struct xnic_coll_job *op);

static int xnic_coll_op_step(struct xnic_comm *c, struct xnic_coll_req *q)
{
	struct xnic_coll_job *op = &q->job;
	int ret;

	for (;;) {
		ret = xnic_coll_phase_step(c, op);
		if (ret <= 0)
			return ret;
		if (!op->hier || op->phase == 2)
			return 1;
		op->phase++;
		xnic_coll_phase_begin(c, op);
	}
}

static void xnic_coll_op_describe(struct xnic_comm *c, struct xnic_coll_req *q,
				  char *buf, size_t size)
{
	struct xnic_coll_job *op = &q->job;
	int k, r;

	for (k = 0; k < c->ngrp; k++) {
		struct xnic_coll_peer *p = &c->peers[c->grp[k]];

		r = c->grp[k];
		if (r == c->rank)
			continue;
		if (op->rs && op->produced < c->nch[c->rank] &&
		    p->rx[XNIC_COLL_CH_RS].arrived ==
		    p->rx[XNIC_COLL_CH_RS].consumed) {
			snprintf(buf, size,
				 "waiting for rank %d's part of chunk %zu of %zu of our shard",
				 r, op->produced, c->nch[c->rank]);
			return;
		}
		if (op->ag && p->cp_recvd < c->nch[r]) {
			snprintf(buf, size,
				 "waiting for chunk %zu of %zu from rank %d",
				 p->cp_recvd, c->nch[r], r);
			return;
		}
		if ((op->ag && p->cp_sent < c->nch[c->rank]) ||
		    (op->rs && p->rs_sent < c->nch[r])) {
			snprintf(buf, size,
				 "waiting for rank %d to free slots (credits)", r);
			return;
		}
	}
	snprintf(buf, size, "waiting for our writes to complete%s",
		 op->hier ? (op->phase == 0 ? " (reduce-scatter in our appliance)" :
			     op->phase == 1 ? " (all-reduce across appliances)" :
			     " (all-gather in our appliance)") : "");
}

static bool xnic_coll_in(const int *grp, int n, int r)
{
	int k;

	for (k = 0; k < n && grp[k] != r; k++)
		;
	return k < n;
}

/*
 * Whether we still need rank @r: chunks to or from it, or its parts of
 * our shard (a peer that finished had all of ours, so this is exact
 * enough); in a hierarchical all-reduce, also a rank of a later phase's
 * group (a rank of neither group may finish, and leave, before us).
 */
static bool xnic_coll_op_needs(struct xnic_comm *c, struct xnic_coll_req *q,
			       int r)
{
	struct xnic_coll_job *op = &q->job;
	struct xnic_coll_peer *p = &c->peers[r];

	if (op->hier && ((op->phase < 2 &&
			  xnic_coll_in(c->local, c->nlocal, r)) ||
			 (op->phase == 0 && xnic_coll_in(c->across, c->nappl, r))))
		return true;
	if (!xnic_coll_in(c->grp, c->ngrp, r))
		return false;
	if (op->ag && (p->cp_recvd < c->nch[r] || p->cp_sent < c->nch[c->rank]))
		return true;
	return op->rs && (p->rs_sent < c->nch[r] ||
			  op->produced < c->nch[c->rank]);
}

/*
 * Start the job's current phase: its group, what it does, its shards
 * (those of the group's members, in group order, over the phase's
 * segment), chunk counts and per-peer counters.
 */
static void xnic_coll_phase_begin(struct xnic_comm *c, struct xnic_coll_job *op)
{
	size_t seg_off = 0, seg_len = op->count, o, l;
	int k, r;

	c->seq++;
	op->produced = 0;
	op->ag_base = c->ag_produced;
	op->rs = !op->bcast && op->phase < 2;
	op->ag = op->phase != 0 || !op->hier;
	op->src = op->phase ? op->recv : op->send;
	c->grp = c->all;
	c->ngrp = c->nranks;
	c->gi = c->rank;
	if (op->hier) {
		if (op->phase == 1) {
			xnic_coll_shard(op->count, (unsigned int)c->nlocal,
					(unsigned int)c->li, &seg_off, &seg_len);
			c->grp = c->across;
			c->ngrp = c->nappl;
		} else {
			c->grp = c->local;
			c->ngrp = c->nlocal;
		}
	}
	for (r = 0; r < c->nranks; r++) {
		c->off[r] = 0;
		c->len[r] = 0;
		c->peers[r].rs_sent = 0;
		c->peers[r].cp_sent = 0;
		c->peers[r].cp_recvd = 0;
	}
	for (k = 0; k < c->ngrp; k++) {
		r = c->grp[k];
		if (r == c->rank)
			c->gi = k;
		if (op->bcast) {
			c->len[r] = r == op->root ? op->count : 0;
		} else {
			xnic_coll_shard(seg_len, (unsigned int)c->ngrp,
					(unsigned int)k, &o, &l);
			c->off[r] = seg_off + o;
			c->len[r] = l;
		}
	}
	for (r = 0; r < c->nranks; r++)
		c->nch[r] = xnic_coll_nchunks(c->len[r], op->ce);
}

static void xnic_coll_op_begin(struct xnic_comm *c, struct xnic_coll_req *q)
{
	q->job.phase = 0;
	xnic_coll_phase_begin(c, &q->job);
}

static const struct xnic_coll_waiter xnic_coll_op_waiter = {
	.begin = xnic_coll_op_begin,
	.step = xnic_coll_op_step,
	.describe = xnic_coll_op_describe,
	.needs = xnic_coll_op_needs,
};

/* Checks common to every collective: a communicator that still works. */
static int xnic_coll_enter(struct xnic_comm *c, const char *what,
			   struct xnic_coll_req **reqp)
{
	if (reqp)
		*reqp = NULL;
	if (!c)
		return xnic_coll_seterr(NULL, -EINVAL, "%s: no communicator",
					what);
	if (!reqp)
		return xnic_coll_seterr(c, -EINVAL, "%s: no request pointer",
					what);
	if (c->failed)
		return xnic_coll_seterr(c, c->failed,
					"%s: the communicator failed earlier: %.160s",
					what, c->err);
	return 0;
}

int xnic_allreduce_start(struct xnic_comm *comm, const void *sendbuf,
			 void *recvbuf, size_t count, int dtype, int op,
			 struct xnic_coll_req **reqp)
{
	size_t esize = xnic_coll_dtype_size(dtype), bytes;
	const struct xnic_coll_waiter *w = &xnic_coll_op_waiter;
	const char *s = sendbuf;
	struct xnic_coll_req *q;
	char *d = recvbuf;
	int err;

	err = xnic_coll_enter(comm, "allreduce", reqp);
	if (err)
		return err;
	if (!esize)
		return xnic_coll_seterr(comm, -EINVAL,
					"allreduce: unknown data type %d", dtype);
	if (op != XNIC_COLL_SUM)
		return xnic_coll_seterr(comm, -EINVAL,
					"allreduce: unknown operation %d", op);
	if (count && (!sendbuf || !recvbuf))
		return xnic_coll_seterr(comm, -EINVAL, "allreduce: NULL buffer");
	if (count > SIZE_MAX / esize)
		return xnic_coll_seterr(comm, -EINVAL,
					"allreduce: %zu elements overflow size_t",
					count);
	bytes = count * esize;
	if ((uintptr_t)sendbuf % esize || (uintptr_t)recvbuf % esize)
		return xnic_coll_seterr(comm, -EINVAL,
					"allreduce: buffers must be aligned to %zu bytes",
					esize);
	if (s != d && s < d + bytes && d < s + bytes)
		return xnic_coll_seterr(comm, -EINVAL,
					"allreduce: send and receive buffers overlap");
	if (!count || comm->nranks == 1) {
		if (s != d && bytes)
			memcpy(d, s, bytes);
		w = NULL;	/* done already */
	}
	q = xnic_coll_req_new(comm, "allreduce", w);
	if (!q)
		return -ENOMEM;
	q->job.hier = comm->algo == XNIC_COLL_ALGO_HIER;
	q->job.dtype = dtype;
	q->job.esize = esize;
	q->job.count = count;
	q->job.send = s;
	q->job.recv = d;
	q->job.ce = comm->lay.chunk / esize;
	return xnic_coll_submit(comm, q, reqp);
}

int xnic_broadcast_start(struct xnic_comm *comm, void *buf, size_t bytes,
			 int root, struct xnic_coll_req **reqp)
{
	const struct xnic_coll_waiter *w = &xnic_coll_op_waiter;
	struct xnic_coll_req *q;
	int err;

	err = xnic_coll_enter(comm, "broadcast", reqp);
	if (err)
		return err;
	if (root < 0 || root >= comm->nranks)
		return xnic_coll_seterr(comm, -EINVAL,
					"broadcast: root %d is not a rank", root);
	if (bytes && !buf)
		return xnic_coll_seterr(comm, -EINVAL, "broadcast: NULL buffer");
	if (!bytes || comm->nranks == 1)
		w = NULL;
	q = xnic_coll_req_new(comm, "broadcast", w);
	if (!q)
		return -ENOMEM;
	q->job.bcast = true;
	q->job.esize = 1;
	q->job.count = bytes;
	q->job.root = root;
	q->job.send = buf;
	q->job.recv = buf;
	q->job.ce = comm->lay.chunk;
	return xnic_coll_submit(comm, q, reqp);
}

int xnic_allreduce(struct xnic_comm *comm, const void *sendbuf,
		   void *recvbuf, size_t count, int dtype, int op)
{
	struct xnic_coll_req *q;
	int err;

	err = xnic_allreduce_start(comm, sendbuf, recvbuf, count, dtype, op,
				   &q);
	return err ? err : xnic_coll_wait(q);
}

int xnic_broadcast(struct xnic_comm *comm, void *buf, size_t bytes, int root)
{
	struct xnic_coll_req *q;
	int err;

	err = xnic_broadcast_start(comm, buf, bytes, root, &q);
	return err ? err : xnic_coll_wait(q);
}

static int xnic_coll_barrier_step(struct xnic_comm *c, struct xnic_coll_req *q)
{
	uint64_t b = c->barriers;
	bool done = true;
	int r, err;

	(void)q;
	for (r = 0; r < c->nranks; r++) {
		struct xnic_coll_peer *p = &c->peers[r];

		if (r == c->rank)
			continue;
		err = xnic_coll_flush_credits(c, r);
		if (err)
			return err;
		if (!p->ctrl_sent) {
			err = xnic_coll_post(c, r, XNIC_COLL_K_CTRL, 0, NULL, 0,
					     p->tx[XNIC_COLL_CH_COPY].raddr,
					     xnic_coll_imm_data(XNIC_COLL_K_CTRL,
								(unsigned int)c->rank,
								c->seq, b));
			if (err && err != -EAGAIN)
				return err;
			p->ctrl_sent = !err;
		}
		if (p->ctrl_consumed < b && p->ctrl_arrived > p->ctrl_consumed) {
			err = xnic_coll_check_msg(c, r, "barrier",
						  XNIC_COLL_K_CTRL,
						  p->ctrl_imm[p->ctrl_consumed %
							      XNIC_COLL_CTRL_RING],
						  b, 0, 0);
			if (err)
				return err;
			p->ctrl_consumed++;
			c->progress = true;
		}
		if (!p->ctrl_sent || p->ctrl_consumed < b)
			done = false;
	}
	return done;
}

static void xnic_coll_barrier_describe(struct xnic_comm *c,
				       struct xnic_coll_req *q, char *buf,
				       size_t size)
{
	int r;

	(void)q;
	for (r = 0; r < c->nranks; r++) {
		if (r != c->rank && c->peers[r].ctrl_consumed < c->barriers) {
			snprintf(buf, size, "rank %d has not entered barrier %" PRIu64,
				 r, c->barriers);
			return;
		}
	}
	snprintf(buf, size, "our barrier messages cannot be posted");
}

static bool xnic_coll_barrier_needs(struct xnic_comm *c,
				    struct xnic_coll_req *q, int r)
{
	(void)q;
	return !c->peers[r].ctrl_sent || c->peers[r].ctrl_consumed < c->barriers;
}

static void xnic_coll_barrier_begin(struct xnic_comm *c,
				    struct xnic_coll_req *q)
{
	int r;

	(void)q;
	c->seq++;
	c->barriers++;
	for (r = 0; r < c->nranks; r++)
		c->peers[r].ctrl_sent = false;
}

static const struct xnic_coll_waiter xnic_coll_barrier_waiter = {
	.begin = xnic_coll_barrier_begin,
	.step = xnic_coll_barrier_step,
	.describe = xnic_coll_barrier_describe,
	.needs = xnic_coll_barrier_needs,
};

int xnic_barrier_start(struct xnic_comm *comm, struct xnic_coll_req **reqp)
{
	struct xnic_coll_req *q;
	int err;

	err = xnic_coll_enter(comm, "barrier", reqp);
	if (err)
		return err;
	q = xnic_coll_req_new(comm, "barrier", comm->nranks == 1 ? NULL :
				  &xnic_coll_barrier_waiter);
	if (!q)
		return -ENOMEM;
	return xnic_coll_submit(comm, q, reqp);
}

int xnic_barrier(struct xnic_comm *comm)
{
	struct xnic_coll_req *q;
	int err;

	err = xnic_barrier_start(comm, &q);
	return err ? err : xnic_coll_wait(q);
}
