// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the requester: copies WQEs out of the SQ, segments them into
 * frames with PSNs, keeps up to XNIC_TX_WINDOW PSNs unacknowledged (fewer
 * while its congestion window is cut), retransmits on timeout, and
 * completes WQEs in order. ACKs, NAKs and READ responses are taken in
 * tx_ack.c; the timer, flushes and link failures are in tx_recovery.c.
 * See wire-protocol.rst.
 *
 * Everything here runs under the QP's tp lock, from the engine thread,
 * the wakeup syscall or the receive softirq (transport_priv.h). Frames
 * are allocated GFP_ATOMIC; one that cannot be built or sent is recovered
 * like a loss.
 */
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "engine.h"
#include "rto_logic.h"
#include "tx_priv.h"

static bool xnic_wr_has_imm(u8 opcode)
{
	return opcode == XNIC_WR_RDMA_WRITE_WITH_IMM ||
	       opcode == XNIC_WR_SEND_WITH_IMM;
}

/* Whether the opcode consumes a receive WQE at the target. */
static bool xnic_wr_uses_rq(u8 opcode)
{
	return opcode == XNIC_WR_RDMA_WRITE_WITH_IMM ||
	       opcode == XNIC_WR_SEND || opcode == XNIC_WR_SEND_WITH_IMM;
}

static u8 xnic_wr_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case XNIC_WR_RDMA_WRITE:
	case XNIC_WR_RDMA_WRITE_WITH_IMM:
		return XNIC_WC_RDMA_WRITE;
	case XNIC_WR_RDMA_READ:
		return XNIC_WC_RDMA_READ;
	default:
		return XNIC_WC_SEND;
	}
}

/**
 * xnic_tx_cqe() - post the send completion of a WQE
 * @qp: the QP
 * @wqe: the WQE as posted
 * @len: bytes it moved (reported on success)
 * @status: XNIC_WC_*; a success is posted only when the WQE or the QP
 *	asks for signaled completions
 *
 * Context: tp lock held.
 */
void xnic_tx_cqe(struct xnic_qp *qp, const struct xnic_sq_wqe *wqe, u32 len,
		 u8 status)
{
	struct xnic_cqe cqe = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = xnic_wr_wc_opcode(wqe->opcode),
		.byte_len = status ? 0 : len,
		.qp_num = xnic_qpn(qp),
	};

	if (status == XNIC_WC_SUCCESS && !qp->sq_sig_all &&
	    !(wqe->flags & XNIC_WQE_F_SIGNALED))
		return;
	xnic_qp_cq_post(qp, qp->scq, &cqe, false);
}

/**
 * xnic_tx_fail() - the requester failed: move the QP to the error state
 * @qp: the QP
 * @w: the WQE that failed, which completes with @status (NULL: none in
 *	particular); every other outstanding WQE is flushed
 * @status: XNIC_WC_* of @w; also says the QP's enum xnic_qp_err_reason
 *	(retries or RNR retries exhausted, the peer refused, else local)
 *
 * Context: tp lock held.
 */
void xnic_tx_fail(struct xnic_qp *qp, struct xnic_tx_wqe *w, u8 status)
{
	u32 reason;

	switch (status) {
	case XNIC_WC_RETRY_EXC_ERR:
		reason = XNIC_QP_ERR_RETRY_EXC;
		break;
	case XNIC_WC_RNR_RETRY_EXC_ERR:
		reason = XNIC_QP_ERR_RNR_RETRY_EXC;
		break;
	case XNIC_WC_REM_INV_REQ_ERR:
	case XNIC_WC_REM_ACCESS_ERR:
	case XNIC_WC_REM_OP_ERR:
	case XNIC_WC_BAD_RESP_ERR:
		reason = XNIC_QP_ERR_REMOTE;
		break;
	default:
		reason = XNIC_QP_ERR_LOCAL;
		break;
	}
	if (w && !w->status)
		w->status = status;
	xnic_qp_to_error(qp, reason);
	__xnic_tp_qp_flush(qp);
}

/*
 * Gather @n bytes at offset @off of a validated WQE's data into @skb:
 * copied into the linear part (inline data, small payloads), or attached
 * as fragments of the MR pages (zero copy). Return 0 or an XNIC_WC_*;
 * -EMSGSIZE when the pieces need more fragments than an skb has.
 */
static int xnic_tx_gather(struct xnic_qp *qp, const struct xnic_tx_wqe *w,
			  u32 off, struct sk_buff *skb, u32 n, bool zc)
{
	const struct xnic_sq_wqe *wqe = &w->wqe;
	struct xnic_mr *mr;
	int k, err, status = XNIC_WC_LOC_LEN_ERR;

	if (wqe->flags & XNIC_WQE_F_INLINE) {
		skb_put_data(skb, wqe->inline_data + off, n);
		return 0;
	}
	for (k = 0; k < wqe->num_sge && n; k++) {
		const struct xnic_sge *sge = &wqe->sge[k];
		u32 c;

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		c = min(n, sge->length - off);
		mr = xnic_mr_get(qp->xdev, sge->lkey, qp->pd, 0,
				 sge->addr + off, c, &status);
		if (!mr)
			return status;
		if (zc)
			err = xnic_frame_add_mr(skb, mr, sge->addr + off, c);
		else
			err = xnic_mr_copy_from(mr, sge->addr + off,
						skb_put(skb, c), c);
		xnic_mr_put(mr);
		if (err)
			return err == -EMSGSIZE ? err : XNIC_WC_LOC_PROT_ERR;
		n -= c;
		off = 0;
	}
	return n ? status : 0;
}

/*
 * A data frame (WRITE, SEND) with @n bytes of @w from @off: zero copy
 * when the payload is large enough, else copied. A retransmission
 * (@retx) is always copied: its PSN may be acknowledged by an earlier
 * copy while this frame still waits in a queue, and once the WQE has
 * completed the application may rewrite the buffer under a zero-copy
 * frame, whose CRC would then fail at the receiver and count against the
 * link's health. Return the frame, or NULL with *@status 0 (out of
 * memory: like a loss) or an XNIC_WC_*.
 */
static struct sk_buff *xnic_tx_data_frame(struct xnic_qp *qp,
					  const struct xnic_tx_wqe *w,
					  u32 off, u32 n, bool retx,
					  int *status)
{
	bool zc = !retx && n >= XNIC_TX_ZC_MIN &&
		  !(w->wqe.flags & XNIC_WQE_F_INLINE);
	struct sk_buff *skb;

	*status = 0;
	skb = xnic_frame_alloc(zc ? 0 : n, GFP_ATOMIC);
	if (!skb)
		return NULL;
	*status = xnic_tx_gather(qp, w, off, skb, n, zc);
	if (*status == -EMSGSIZE) {
		/* Too many pieces for one skb: copy them instead. */
		kfree_skb(skb);
		*status = 0;
		skb = xnic_frame_alloc(n, GFP_ATOMIC);
		if (!skb)
			return NULL;
		*status = xnic_tx_gather(qp, w, off, skb, n, false);
	}
	if (*status) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/*
 * Validate a WQE copied out of the SQ and fill in its length.
 * Return: XNIC_WC_SUCCESS or the status it completes with.
 */
static int xnic_tx_validate(struct xnic_qp *qp, struct xnic_tx_wqe *w)
{
	struct xnic_sq_wqe *wqe = &w->wqe;
	struct xnic_mr *mr;
	int access, status, k;
	u64 len = 0;

	if (wqe->opcode > XNIC_WR_RDMA_READ)
		return XNIC_WC_LOC_QP_OP_ERR;
	if (wqe->flags & XNIC_WQE_F_INLINE) {
		if (wqe->opcode == XNIC_WR_RDMA_READ)
			return XNIC_WC_LOC_QP_OP_ERR;
		if (wqe->inline_len > XNIC_MAX_INLINE)
			return XNIC_WC_LOC_LEN_ERR;
		w->len = wqe->inline_len;
		return XNIC_WC_SUCCESS;
	}
	if (wqe->num_sge > XNIC_MAX_SGE)
		return XNIC_WC_LOC_LEN_ERR;
	access = wqe->opcode == XNIC_WR_RDMA_READ ? IB_ACCESS_LOCAL_WRITE : 0;
	for (k = 0; k < wqe->num_sge; k++) {
		const struct xnic_sge *sge = &wqe->sge[k];

		len += sge->length;
		if (!sge->length)
			continue;
		mr = xnic_mr_get(qp->xdev, sge->lkey, qp->pd, access,
				 sge->addr, sge->length, &status);
		if (!mr)
			return status;
		xnic_mr_put(mr);
	}
	if (len > XNIC_MAX_MSG_SIZE)
		return XNIC_WC_LOC_LEN_ERR;
	w->len = len;
	return XNIC_WC_SUCCESS;
}

/*
 * Bytes the next PSN of @w carries (READ: asks for); WRITE and SEND frames
 * of a class 1 QP may be smaller than the MTU (xnic_credit_seg_bytes()).
 */
static u32 xnic_tx_psn_bytes(struct xnic_qp *qp, const struct xnic_tx *tx,
			     const struct xnic_tx_wqe *w)
{
	if (xnic_wr_is_read(w))
		return tx->mtu * XNIC_WIRE_READ_SEGS;
	return xnic_credit_seg_bytes(qp, tx->mtu);
}

/* Every byte of @w has a PSN (a zero-length WQE: one). */
static bool xnic_tx_wqe_segmented(const struct xnic_tx_wqe *w)
{
	return w->nsent && w->next_off == w->len;
}

/*
 * Copy the next WQE out of the SQ (rule R2; the copy is validated, the
 * ring entry never read again).
 * Return: 1 when a WQE was taken, 0 when there is none or no room,
 * -EIO when the SQ producer index is hostile (the QP is in error now).
 */
static int xnic_tx_fetch(struct xnic_qp *qp)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_ring *sq = &qp->sq;
	struct xnic_tx_wqe *w;
	u32 prod;

	prod = xnic_ring_producer(sq);
	if (prod - sq->kidx > sq->nr) {
		ibdev_dbg(&qp->xdev->ibdev,
			  "QP %u: SQ producer %u, consumer %u: error\n",
			  xnic_qpn(qp), prod, sq->kidx);
		xnic_tx_fail(qp, NULL, 0);
		return -EIO;
	}
	if (prod == tx->fetch || tx->fetch - sq->kidx >= tx->nr_wqe)
		return 0;

	w = xnic_tx_wqe(tx, tx->fetch);
	memcpy(&w->wqe, sq->entries + (tx->fetch & (sq->nr - 1)) *
	       sq->elem_size, sizeof(w->wqe));
	w->len = 0;
	w->nsent = 0;
	w->ndone = 0;
	w->next_off = 0;
	w->status = xnic_tx_validate(qp, w);
	if (w->status)
		tx->stopped = true;
	else if (xnic_wr_uses_rq(w->wqe.opcode))
		w->msn = tx->msn++;
	tx->fetch++;
	return 1;
}

/* Fill the header of a frame of PSN @psn (slot @s of WQE @w). */
static void xnic_tx_info(struct xnic_qp *qp, struct xnic_tx_wqe *w,
			 struct xnic_tx_slot *s, u32 psn,
			 struct xnic_wire_info *i)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	const struct xnic_sq_wqe *wqe = &w->wqe;

	memset(i, 0, sizeof(*i));
	i->src_node = qp->xdev->node_id;
	i->dst_node = tx->remote_node;
	i->src_qpn = xnic_qpn(qp);
	i->dst_qpn = tx->dest_qpn;
	i->psn = psn;
	i->msn = w->msn;
	i->msg_len = w->len;
	i->offset = s->offset;
	switch (wqe->opcode) {
	case XNIC_WR_RDMA_READ:
		i->opcode = XNIC_OP_READ_REQ;
		i->payload_len = sizeof(struct xnic_wire_read_req);
		break;
	case XNIC_WR_RDMA_WRITE:
	case XNIC_WR_RDMA_WRITE_WITH_IMM:
		i->opcode = XNIC_OP_WRITE;
		i->payload_len = s->len;
		break;
	default:
		i->opcode = XNIC_OP_SEND;
		i->payload_len = s->len;
		break;
	}
	if (i->opcode != XNIC_OP_SEND) {
		i->raddr = wqe->remote_addr;
		i->rkey = wqe->rkey;
	}
	if (xnic_wr_has_imm(wqe->opcode)) {
		i->flags |= XNIC_WF_IMM;
		i->imm = (__force __be32)wqe->imm_data;
	}
	if ((wqe->flags & XNIC_WQE_F_SOLICITED) &&
	    xnic_wr_uses_rq(wqe->opcode))
		i->flags |= XNIC_WF_SOLICITED;
	/*
	 * Ask for an ACK at the end of a message someone waits for (a
	 * signaled WQE), every XNIC_TX_ACKREQ_EVERY PSNs, and on the PSN that
	 * fills the window, so that it reopens without a timeout. Not more
	 * (as rxe): an ACK costs about what a small frame does, and when a
	 * ping-pong's sender had to process one it answers later. The
	 * responder acknowledges the rest within a tick (delayed ACK).
	 */
	if (i->opcode == XNIC_OP_READ_REQ ||
	    (s->offset + s->len == w->len &&
	     (qp->sq_sig_all || (wqe->flags & XNIC_WQE_F_SIGNALED))) ||
	    psn % XNIC_TX_ACKREQ_EVERY == 0 ||
	    psn - tx->una + 1 >= tx->cw.cwnd ||
	    xnic_credit_tx_ackreq(qp, psn))
		i->flags |= XNIC_WF_ACKREQ;
}

/*
 * The part of a READ_REQ's chunk to ask for: from its first missing
 * response segment to its last, so that a retransmission does not bring
 * back what already arrived.
 */
static void xnic_tx_read_range(const struct xnic_tx *tx,
			       const struct xnic_tx_slot *s, u32 *offset,
			       u32 *len)
{
	u64 missing = ~s->segs & GENMASK_ULL(xnic_tx_read_nseg(tx, s) - 1, 0);
	u32 first, end;

	if (!s->segs || !missing) {
		*offset = s->offset;
		*len = s->len;
		return;
	}
	first = __ffs64(missing) * tx->mtu;
	end = min((fls64(missing)) * tx->mtu, s->len);
	*offset = s->offset + first;
	*len = end - first;
}

/**
 * xnic_tx_send_psn() - transmit or retransmit one PSN
 * @qp: the QP
 * @psn: an unacknowledged PSN
 * @retx: a retransmission (flagged on the wire, asks for an ACK, gives
 *	no round trip sample)
 *
 * Context: tp lock held.
 * Return: 0, also when the frame was lost on the way out or could not be
 * allocated (that is recovered like loss); -EIO when the WQE failed
 * locally (the QP is in the error state now).
 */
int xnic_tx_send_psn(struct xnic_qp *qp, u32 psn, bool retx)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_tx_slot *s = xnic_tx_slot(tx, psn);
	struct xnic_tx_wqe *w = &tx->wqes[s->widx];
	struct xnic_wire_read_req *rr;
	struct xnic_wire_info i;
	struct sk_buff *skb;
	int status;
	u32 len;

	xnic_tx_info(qp, w, s, psn, &i);
	if (retx) {
		i.flags |= XNIC_WF_RETX | XNIC_WF_ACKREQ;
		s->retx = true;
	}
	s->sent = tx->clock_ns ?: local_clock();
	if (i.opcode == XNIC_OP_READ_REQ) {
		skb = xnic_frame_alloc(sizeof(*rr), GFP_ATOMIC);
		if (!skb)
			goto nomem;
		rr = skb_put(skb, sizeof(*rr));
		xnic_tx_read_range(tx, s, &i.offset, &len);
		rr->length = cpu_to_be32(len);
		rr->seg_size = cpu_to_be32(tx->mtu);
	} else {
		skb = xnic_tx_data_frame(qp, w, s->offset, s->len, retx,
					 &status);
		if (!skb && status) {
			xnic_tx_fail(qp, w, status);
			return -EIO;
		}
		if (!skb)
			goto nomem;
	}
	status = xnic_tp_send(qp, tx->remote_node, skb, &i);
	if (status == -EAGAIN) {
		/* No link credit after all: it goes out with a resend. */
		s->sent = 0;
		s->link = XNIC_BOND_NO_LINK;
		xnic_tx_resend_from(tx, psn, XNIC_RETX_OLD);
		return 0;
	}
	/*
	 * The link's queue (its qdisc) was full: congestion seen here and
	 * now, as TCP takes a local drop (tcp_enter_cwr()). The window is
	 * cut at once, not a round trip later when the hole shows, so that a
	 * sender stops flooding the queue; the frame is recovered as a lost
	 * one is.
	 */
	if (status == -ENOBUFS)
		xnic_tx_lost(qp, psn, false);
	/* Counted once it left: a try without link credit is not one. */
	if (retx) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_RETRANSMITS);
		if (s->resends < U8_MAX)
			s->resends++;
		xnic_cwnd_resent(&tx->cw, psn);
	}
	s->link = tx->last_link;
	return 0;

nomem:
	xnic_cnt_inc(qp->xdev, XNIC_CNT_TX_DROPS);
	return 0;
}

/* (Re)start the retransmission deadline one timeout from now. */
static void xnic_tx_restart_timer(struct xnic_tp_qp *tp)
{
	struct xnic_tx *tx = &tp->tx;

	tx->deadline = jiffies + tx->rto;
	if (tx->timer_on)
		xnic_tp_arm(tp, tx->deadline);
}

/* Assign the next PSN of the WQE being segmented and send it. */
static int xnic_tx_send_new(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_tx *tx = &tp->tx;
	struct xnic_tx_wqe *w = xnic_tx_wqe(tx, tx->cur);
	struct xnic_tx_slot *s = xnic_tx_slot(tx, tx->next_psn);
	u32 psn = tx->next_psn;

	s->widx = tx->cur & (tx->nr_wqe - 1);
	s->link = XNIC_BOND_NO_LINK;
	s->done = false;
	s->retx = false;
	s->resends = 0;
	s->segs = 0;
	s->offset = w->next_off;
	s->len = min(xnic_tx_psn_bytes(qp, tx, w), w->len - w->next_off);
	if (!w->nsent)
		w->first_psn = psn;
	w->next_off += s->len;
	w->nsent++;
	if (xnic_tx_wqe_segmented(w))
		tx->cur++;
	if (xnic_wr_is_read(w))
		tx->reads++;
	tx->next_psn++;
	xnic_credit_tx_sent(qp, psn, xnic_wr_is_read(w) ? 0 : s->len);
	if (!tx->timer_on) {
		tx->timer_on = true;
		xnic_tx_restart_timer(tp);
	}
	return xnic_tx_send_psn(qp, psn, false);
}

/**
 * xnic_tx_resend_from() - start a resend
 * @tx: the requester
 * @from: first PSN to look at (una if earlier)
 * @mode: enum xnic_retx: which PSNs from @from on are resent
 *
 * The work is done in bounded steps by the next runs of the requester; a
 * resend under way is merged with the new one (the earlier start, the
 * wider mode).
 *
 * Context: tp lock held.
 */
void xnic_tx_resend_from(struct xnic_tx *tx, u32 from, u8 mode)
{
	if (xnic_psn_before(from, tx->una))
		from = tx->una;
	if (tx->resending) {
		if (xnic_psn_before(tx->retx_next, from))
			from = tx->retx_next;
		mode = max(mode, tx->retx_mode);
	}
	tx->resending = true;
	tx->retx_mode = mode;
	tx->retx_first = true;
	tx->retx_next = from;
}

/*
 * Continue the resend started by xnic_tx_resend_from(), at most *@budget
 * frames. Return 0 or -EIO (the QP failed).
 */
static int xnic_tx_resend(struct xnic_qp *qp, unsigned int *budget)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	u64 age, now;
	int err;

	/* Called on every pass: no clock read (~0.3 us under TCG) for none. */
	if (!tx->resending)
		return 0;
	age = jiffies_to_nsecs(tx->rto);
	now = tx->clock_ns ?: local_clock();
	if (xnic_psn_before(tx->retx_next, tx->una))
		tx->retx_next = tx->una;
	while (tx->resending && *budget) {
		struct xnic_tx_slot *s;
		u32 psn = tx->retx_next;

		if (!xnic_psn_before(psn, tx->next_psn) ||
		    (tx->retx_mode == XNIC_RETX_PROBE && !tx->retx_first)) {
			tx->resending = false;
			break;
		}
		/* No link credit: the resend waits (link_credit.c). */
		if (!xnic_lcr_qp_ok(qp, tx->remote_node))
			break;
		tx->retx_next++;
		s = xnic_tx_slot(tx, psn);
		if (s->done)
			continue;
		if (tx->retx_mode != XNIC_RETX_ALL && !tx->retx_first &&
		    (now < s->sent || now - s->sent < age))
			continue;
		tx->retx_first = false;
		err = xnic_tx_send_psn(qp, psn, true);
		if (err)
			return err;
		(*budget)--;
	}
	return 0;
}

/* The retransmission timeout's floor (transport_priv.h: XNIC_TX_RTO_MIN_US). */
static struct xnic_uint_param rto_min_us = {
	.val = XNIC_TX_RTO_MIN_US, .min = 1000, .max = 1000000,
};
module_param_cb(rto_min_us, &xnic_uint_param_ops, &rto_min_us, 0644);
MODULE_PARM_DESC(rto_min_us,
		 "Least retransmission timeout, us, whatever the round trips measured; read when a QP connects and at every response (default 30000, 1000 to 1000000)");

/* The timeout from the round trip estimate (RFC 6298), jiffies. */
static unsigned long xnic_tx_rto(const struct xnic_tx *tx)
{
	u64 ns;

	if (!tx->srtt)
		return tx->rto_base;
	ns = xnic_rto_ns(tx->srtt, tx->rttvar,
			 READ_ONCE(rto_min_us.val) * (u64)NSEC_PER_USEC);
	/* + 1: a timer fires up to a jiffy early relative to a sample. */
	return nsecs_to_jiffies(ns) + 1;
}

/**
 * xnic_tx_responded() - the responder answered: restart the count of
 *	timeouts without a response
 * @tx: the requester
 *
 * The transport retry counter (the QP's retry_cnt) and the backed-off
 * timeout count expiries of the transport timer with no response at all;
 * an ACK of new PSNs or an RNR NAK (counted by the RNR retry counter)
 * starts them again: the timeout is recomputed from the estimate.
 *
 * Context: tp lock held.
 */
void xnic_tx_responded(struct xnic_tx *tx)
{
	tx->retries = 0;
	tx->rto = xnic_tx_rto(tx);
}

/**
 * xnic_tx_lost() - a frame the requester sent was found lost: the
 *	congestion window answers (cwnd_logic.h)
 * @qp: the QP
 * @psn: the lost PSN
 * @timeout: found by the retransmission timer, else by a fast retransmit
 *	or a PSN sequence NAK
 *
 * Context: tp lock held.
 */
void xnic_tx_lost(struct xnic_qp *qp, u32 psn, bool timeout)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;

	if (!xnic_cwnd_loss(&tx->cw, psn, tx->next_psn,
			    tx->next_psn - tx->una, timeout))
		return;
	xnic_cnt_inc(qp->xdev, XNIC_CNT_CWND_CUTS);
	if (!timeout)
		xnic_reo_recovery(&tx->reo);
}

/**
 * xnic_tx_progress() - after slots became done: move una, restart the
 *	retransmission timer
 * @tp: the QP's transport
 *
 * Context: tp lock held.
 */
void xnic_tx_progress(struct xnic_tp_qp *tp)
{
	struct xnic_tx *tx = &tp->tx;
	u32 una = tx->una;

	while (una != tx->next_psn && xnic_tx_slot(tx, una)->done)
		una++;
	if (una != tx->una)
		tx->rnr_retries = 0;
	tx->una = una;
	xnic_tx_responded(tx);
	tx->timer_on = una != tx->next_psn;
	/*
	 * The timer is armed at the old deadline or earlier: when it fires
	 * it looks at the new one (cheaper than moving it for every ACK).
	 */
	xnic_tx_restart_timer(tp);
}

/**
 * xnic_tx_complete() - complete the finished WQEs at the head of the SQ
 * @qp: the QP
 *
 * In order, releasing their slots to userspace; a WQE that failed moves
 * the QP to the error state.
 *
 * Context: tp lock held.
 * Return: false when the QP went to the error state.
 */
bool xnic_tx_complete(struct xnic_qp *qp)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_ring *sq = &qp->sq;
	bool released = false;

	while (sq->kidx != tx->fetch) {
		struct xnic_tx_wqe *w = xnic_tx_wqe(tx, sq->kidx);

		if (w->status) {
			if (released)
				xnic_ring_release(sq);
			xnic_tx_fail(qp, w, w->status);
			return false;
		}
		if (!xnic_tx_wqe_segmented(w) || w->ndone != w->nsent)
			break;
		xnic_tx_cqe(qp, &w->wqe, w->len, XNIC_WC_SUCCESS);
		sq->kidx++;
		released = true;
	}
	if (released)
		xnic_ring_release(sq);
	return true;
}

static void xnic_tx_start(struct xnic_qp *qp)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	u8 timeout, rd;
	u32 psn, mtu;
	u64 us;

	spin_lock_bh(&qp->state_lock);
	tx->remote_node = qp->remote_node;
	tx->dest_qpn = qp->dest_qpn;
	psn = qp->sq_psn;
	mtu = qp->path_mtu;
	timeout = qp->timeout;
	tx->retry_limit = qp->retry_cnt;
	tx->rnr_limit = qp->rnr_retry;
	rd = qp->max_rd_atomic;
	spin_unlock_bh(&qp->state_lock);

	/*
	 * IBTA timeout 0 means "wait for ever"; we still need a timer to
	 * recover from loss, and take our default. Until round trips are
	 * measured this is the timeout; never below rto_min_us.
	 */
	us = xnic_wire_ack_timeout_us(timeout) ?: XNIC_TX_RTO_MS * 1000ULL;
	us = clamp_t(u64, us, READ_ONCE(rto_min_us.val),
		     XNIC_RTO_MAX_NS / NSEC_PER_USEC);
	tx->rto_base = max_t(unsigned long, usecs_to_jiffies(us), 2);
	tx->max_reads = clamp_t(unsigned int, rd, 1, XNIC_TX_MAX_READS);

	/* A READ_REQ asks for 64 segments of mtu bytes: keep it in u32. */
	tx->mtu = clamp_t(u32, mtu, XNIC_WIRE_MIN_SEG,
			  U16_MAX - XNIC_WIRE_HDR_LEN);
	tx->next_psn = psn;
	tx->una = psn;
	tx->fetch = qp->sq.kidx;
	tx->cur = qp->sq.kidx;
	tx->msn = 0;
	tx->reads = 0;
	tx->stopped = false;
	tx->timer_on = false;
	tx->rnr_wait = false;
	tx->resending = false;
	tx->retries = 0;
	tx->rnr_retries = 0;
	tx->srtt = 0;
	tx->rttvar = 0;
	tx->rto = tx->rto_base;
	xnic_cwnd_init(&tx->cw, XNIC_TX_WINDOW, psn);
	xnic_reo_init(&tx->reo, psn);
	xnic_credit_tx_start(qp, psn);
	tx->started = true;
}

/* WQEs posted while the QP may not send: error, then flush the rest. */
static void xnic_tx_bad_state(struct xnic_qp *qp)
{
	struct xnic_ring *sq = &qp->sq;
	struct xnic_sq_wqe wqe;
	u32 prod;

	prod = xnic_ring_producer(sq);
	if (prod == sq->kidx)
		return;
	if (prod - sq->kidx <= sq->nr) {
		memcpy(&wqe, sq->entries + (sq->kidx & (sq->nr - 1)) *
		       sq->elem_size, sizeof(wqe));
		xnic_tx_cqe(qp, &wqe, 0, XNIC_WC_LOC_QP_OP_ERR);
		sq->kidx++;
		xnic_ring_release(sq);
	}
	xnic_tx_fail(qp, NULL, 0);
}

/* The retransmission timer expired. Return false when the QP failed. */
static bool xnic_tx_timeout(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_tx *tx = &tp->tx;

	xnic_cnt_inc(qp->xdev, XNIC_CNT_TIMEOUTS);
	if (++tx->retries > tx->retry_limit ||
	    xnic_bond_peer_lost(qp->xdev, tx->remote_node)) {
		ibdev_dbg(&qp->xdev->ibdev, "QP %u: retry count exceeded\n",
			  xnic_qpn(qp));
		xnic_tx_fail(qp, xnic_tx_wqe(tx, qp->sq.kidx),
			     XNIC_WC_RETRY_EXC_ERR);
		return false;
	}
	/*
	 * The first expiry resends only the oldest PSN not done: an emulated
	 * CPU (or a loaded host) stalls for longer than any sane timeout now
	 * and then, and the ACK of that one probe tells what really is
	 * missing (fast retransmit then resends the holes and cuts the
	 * congestion window). Loss of the tail of the window takes a second
	 * expiry, which resends all that is old and restarts the window from
	 * its floor: a spurious expiry (a stall, or a queue that grew faster
	 * than the round trip estimate) costs no window.
	 */
	if (tx->retries > 1)
		xnic_tx_lost(qp, tx->una, true);
	xnic_tx_resend_from(tx, tx->una, tx->retries == 1 ? XNIC_RETX_PROBE :
						      XNIC_RETX_OLD);
	tx->rto = xnic_rto_backoff(tx->rto, nsecs_to_jiffies(XNIC_RTO_MAX_NS));
	xnic_tx_restart_timer(tp);
	return true;
}

/* Whether the requester has a new PSN it may send now. */
static bool xnic_tx_can_send(struct xnic_qp *qp)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_tx_wqe *w;

	if (tx->rnr_wait || tx->next_psn - tx->una >= tx->cw.cwnd)
		return false;
	if (tx->cur == tx->fetch)
		return !tx->stopped &&
		       xnic_ring_producer(&qp->sq) != tx->fetch &&
		       tx->fetch - qp->sq.kidx < tx->nr_wqe &&
		       xnic_credit_tx_ok(qp, tx->next_psn);
	w = xnic_tx_wqe(tx, tx->cur);
	return w->status ||
	       ((!xnic_wr_is_read(w) || tx->reads < tx->max_reads) &&
		xnic_credit_tx_ok(qp, tx->next_psn) &&
		xnic_lcr_qp_ok(qp, tx->remote_node));
}

/* xnic_tx_send_more() without the link bursts. */
static int xnic_tx_send_window(struct xnic_qp *qp, unsigned int *budget)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	int err;

	if (tx->rnr_wait)
		return 0;
	while (*budget) {
		struct xnic_tx_wqe *w;

		if (tx->cur == tx->fetch) {
			if (tx->stopped)
				break;
			err = xnic_tx_fetch(qp);
			if (err < 0)
				return err;
			if (!err)
				break;
			continue;
		}
		w = xnic_tx_wqe(tx, tx->cur);
		if (w->status) {
			tx->cur++;
			continue;
		}
		/* The full link credit check only when it can say no. */
		if (tx->next_psn - tx->una >= tx->cw.cwnd ||
		    (xnic_wr_is_read(w) && tx->reads >= tx->max_reads) ||
		    !xnic_credit_tx_ok(qp, tx->next_psn) ||
		    ((tx->resending || !xnic_lcr_qp_hint(qp)) &&
		     !xnic_lcr_qp_ok(qp, tx->remote_node)))
			break;
		err = xnic_tx_send_new(qp);
		if (err)
			return err;
		(*budget)--;
	}
	return 0;
}

/*
 * Send new PSNs while the window and *@budget allow, a link's frames as
 * one burst (link_burst.c). Return 0, or -EIO when the QP failed.
 */
static int xnic_tx_send_more(struct xnic_qp *qp, unsigned int *budget)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	bool burst = xnic_link_burst_begin(qp->xdev);
	int err = xnic_tx_send_window(qp, budget);

	/* A link's queue dropped some: see xnic_tx_send_psn(). */
	if (xnic_link_burst_end(burst) && !err)
		xnic_tx_lost(qp, tx->next_psn - 1, false);
	return err;
}

/*
 * Run the requester with the tp lock held, sending at most *@budget
 * frames (decreased by those sent); see xnic_tp_qp_process().
 */
static enum xnic_tp_status xnic_tx_process(struct xnic_qp *qp,
					   unsigned int *budget)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_tx *tx = &tp->tx;
	enum ib_qp_state state = xnic_qp_state(qp);

	if (state == IB_QPS_ERR) {
		__xnic_tp_qp_flush(qp);
		return XNIC_TP_IDLE;
	}
	/* READ responses left over (a responder in RTR or RTS). */
	if ((state == IB_QPS_RTR || state == IB_QPS_RTS) &&
	    !xnic_rx_run_reads(qp, budget))
		return XNIC_TP_IDLE;
	if (state != IB_QPS_RTS) {
		/*
		 * A QP that sent, now in RESET: modify_qp published the state
		 * and waits for the engine to renew the transport
		 * (xnic_engine_reset_qp()), which drops what was posted. It
		 * must not fail its WQEs and turn to ERR before that.
		 */
		if (state == IB_QPS_RESET && tx->started)
			return XNIC_TP_IDLE;
		xnic_tx_bad_state(qp);
		goto out;
	}
	if (!tx->started)
		xnic_tx_start(qp);

	if (tx->rnr_wait) {
		if (time_before(jiffies, tx->rnr_until)) {
			xnic_tp_arm(tp, tx->rnr_until);
			goto out;
		}
		tx->rnr_wait = false;
		tx->timer_on = true;
		xnic_tx_restart_timer(tp);
		xnic_tx_resend_from(tx, tx->una, XNIC_RETX_ALL);
	}
	if (tx->timer_on && !time_before(jiffies, tx->deadline) &&
	    !xnic_tx_timeout(qp))
		return XNIC_TP_IDLE;
	if (xnic_tx_resend(qp, budget) || xnic_tx_send_more(qp, budget))
		return XNIC_TP_IDLE;
	if (!xnic_tx_complete(qp))
		return XNIC_TP_IDLE;
out:
	if (*budget)
		return XNIC_TP_IDLE;
	if (xnic_rx_reads_pending(qp) ||
	    (tx->started && (tx->resending || xnic_tx_can_send(qp))))
		return XNIC_TP_BUSY;
	return XNIC_TP_IDLE;
}

/* xnic_tx_process() with a budget passed by value. */
static enum xnic_tp_status __xnic_tp_qp_process(struct xnic_qp *qp,
						unsigned int budget)
{
	return xnic_tx_process(qp, &budget);
}

/**
 * xnic_tp_qp_process() - run the requester of a QP
 * @qp: the QP
 * @budget: the QP's class budget, frames; byte deficit round robin
 *	(xnic_credit_drr_begin()) turns it into the frames it may send
 *
 * Takes new WQEs from the SQ, sends what the window allows, handles an
 * expired retransmission or RNR timer, sends READ responses left over by
 * the receive path, and completes finished WQEs. A QP that may not send
 * with WQEs posted fails them (transport.h); a QP in error is flushed.
 *
 * Context: process context or softirq; takes the QP's tp lock.
 * Return: XNIC_TP_BUSY when the budget ran out with more to send,
 * XNIC_TP_IDLE otherwise (the timer and ACKs bring the QP back).
 */
enum xnic_tp_status xnic_tp_qp_process(struct xnic_qp *qp,
				       unsigned int budget)
{
	struct xnic_tp_qp *tp = xnic_tp_lock(qp);
	enum xnic_tp_status ret;

	if (!tp)
		return XNIC_TP_IDLE;
	ret = __xnic_tp_qp_process(qp, xnic_credit_drr_begin(qp, budget));
	xnic_credit_drr_end(qp, budget, ret == XNIC_TP_BUSY);
	xnic_tp_unlock(tp);
	return ret;
}

/**
 * xnic_tp_qp_post() - run the requester of a QP for the wakeup syscall
 * @qp: the QP
 * @budget: most frames to send
 * @now: local_clock() of the syscall, the send time of its frames
 *
 * xnic_tp_qp_process(), unless the QP still had frames to send from
 * before (a message larger than one batch, a full window, a resend): its
 * ACKs clock those out, and a second sender on another CPU would reorder
 * its PSNs; the caller then hands it to the engine. The class scheduler
 * bounds what it sends (xnic_credit_inline_begin()): a class 1 QP sends
 * nothing while class 0 QPs wait for the engine, any QP at most its
 * deficit; the rest is the engine's.
 *
 * Context: process context; takes the QP's tp lock.
 * Return: XNIC_TP_BUSY when the engine should run the QP, else
 * XNIC_TP_IDLE.
 */
enum xnic_tp_status xnic_tp_qp_post(struct xnic_qp *qp, unsigned int budget,
				    u64 now)
{
	struct xnic_tp_qp *tp = xnic_tp_lock(qp);
	struct xnic_tx *tx;
	enum xnic_tp_status ret = XNIC_TP_BUSY;

	if (!tp)
		return XNIC_TP_IDLE;
	tx = &tp->tx;
	if (!tx->started || (tx->cur == tx->fetch && !tx->resending)) {
		struct xnic_credit_inline ci;
		unsigned int left = xnic_credit_inline_begin(qp, budget, &ci);

		tx->clock_ns = now;
		ret = xnic_tx_process(qp, &left);
		tx->clock_ns = 0;
		xnic_credit_inline_end(qp, &ci, left, ret == XNIC_TP_BUSY);
	}
	xnic_tp_unlock(tp);
	return ret;
}

/**
 * xnic_tx_push() - send what an ACK or READ response let through
 * @qp: the QP
 *
 * Sends at most XNIC_TX_ACK_BUDGET frames (this runs in softirq) and what
 * the class scheduler allows (xnic_credit_inline_begin(): one frame of a
 * class 1 QP), and leaves the rest to the engine; when the engine runs
 * the QP, it leaves all to it (one sender at a time:
 * xnic_engine_owns_qp()).
 *
 * Context: softirq, tp lock held.
 */
void xnic_tx_push(struct xnic_qp *qp)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_credit_inline ci;
	unsigned int budget;
	bool more;

	if (!tx->resending && !xnic_tx_can_send(qp))
		return;
	if (xnic_engine_owns_qp(qp->xdev, qp))
		return;
	/* Class 0 first, then the QP's deficit; else the engine. */
	budget = xnic_credit_inline_begin(qp, XNIC_TX_ACK_BUDGET, &ci);
	if (xnic_tx_resend(qp, &budget) || xnic_tx_send_more(qp, &budget) ||
	    !xnic_tx_complete(qp))
		return;
	more = !budget && (tx->resending || xnic_tx_can_send(qp));
	xnic_credit_inline_end(qp, &ci, budget, more);
	if (more)
		xnic_tp(qp)->activate = true;
}
