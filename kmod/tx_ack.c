// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the requester's receive side: ACKs and NAKs (completions,
 * round trip samples, fast retransmit of SACK holes, RNR waits, remote
 * errors) and RDMA READ responses (placed in the READ WQE's buffers).
 * See wire-protocol.rst.
 *
 * Context: the member links' packet handler (softirq), the QP's tp lock
 * held.
 */
#include <linux/jiffies.h>
#include <linux/sched/clock.h>

#include "rto_logic.h"
#include "tx_priv.h"

/*
 * Fast retransmit: resend holes that three later PSNs have overtaken and
 * that were sent a round trip (SRTT) plus a reordering allowance ago, at
 * most @budget of them. A frame that waited in a link's queue is as old
 * as the round trip when frames sprayed on a shorter queue overtake it,
 * and is not lost. The allowance is a quarter of the timeout, or the
 * round trip when that is more: link credit comes back half a window at
 * a time, so the queues of sprayed links differ by up to half a window
 * of frames, and more in bursts; when the queues make the round trip,
 * that is a large part of it. Where that is not enough, the responder's
 * D-SACKs make the allowance a larger multiple (reorder_logic.h).
 */
static int xnic_tx_fast_retransmit(struct xnic_qp *qp, unsigned int budget)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	u64 base = max(jiffies_to_nsecs(tx->rto) / 4, tx->srtt);
	u64 age = xnic_reo_age(&tx->reo, tx->srtt, base);
	u64 now = local_clock();
	unsigned int after = 0;
	u32 psn;
	int err;

	if (tx->rnr_wait)
		return 0;
	for (psn = tx->next_psn; psn != tx->una && budget;) {
		struct xnic_tx_slot *s = xnic_tx_slot(tx, --psn);

		if (s->done) {
			after++;
			continue;
		}
		if (after < 3 || xnic_wr_is_read(&tx->wqes[s->widx]) ||
		    now < s->sent || now - s->sent < age)
			continue;
		xnic_tx_lost(qp, psn, false);
		err = xnic_tx_send_psn(qp, psn, true);
		if (err)
			return err;
		budget--;
	}
	return 0;
}

/*
 * Responses of the READ_REQ @upto_psn arrived: an earlier READ_REQ (or
 * this one) still missing segments after a while has likely lost them.
 */
static int xnic_tx_read_fast_retransmit(struct xnic_qp *qp, u32 upto_psn)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	u64 age = jiffies_to_nsecs(tx->rto) / 4, now = local_clock();
	u32 psn;
	int err;

	for (psn = tx->una; !xnic_psn_before(upto_psn, psn); psn++) {
		struct xnic_tx_slot *s = xnic_tx_slot(tx, psn);

		if (s->done || !xnic_wr_is_read(&tx->wqes[s->widx]) ||
		    now < s->sent || now - s->sent < age)
			continue;
		err = xnic_tx_send_psn(qp, psn, true);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The responder received @psn twice (D-SACK): a resend of it was
 * spurious, the first frame was late, not lost. Counted; the congestion
 * window's cut is undone once every resend of its event was spurious,
 * and fast retransmit waits longer for late frames. A PSN no longer in
 * the window, never resent, or reported more often than resent changes
 * nothing.
 */
static void xnic_tx_dsack(struct xnic_qp *qp, u32 psn)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_tx_slot *s;

	if (!xnic_psn_in(psn, tx->next_psn - XNIC_TX_WINDOW, XNIC_TX_WINDOW))
		return;
	s = xnic_tx_slot(tx, psn);
	if (!s->resends || xnic_wr_is_read(&tx->wqes[s->widx]))
		return;
	s->resends--;
	xnic_cnt_inc(qp->xdev, XNIC_CNT_SPURIOUS_RETX);
	xnic_cwnd_spurious(&tx->cw, psn);
	xnic_reo_spurious(&tx->reo, psn, tx->next_psn);
}

/* The WQE the unacknowledged PSN @psn belongs to, or NULL. */
static struct xnic_tx_wqe *xnic_tx_psn_wqe(struct xnic_tx *tx, u32 psn)
{
	if (!xnic_psn_in(psn, tx->una, tx->next_psn - tx->una))
		return NULL;
	return &tx->wqes[xnic_tx_slot(tx, psn)->widx];
}

static u8 xnic_nak_status(u8 syndrome)
{
	switch (syndrome) {
	case XNIC_NAK_REM_ACCESS:
		return XNIC_WC_REM_ACCESS_ERR;
	case XNIC_NAK_REM_OP:
		return XNIC_WC_REM_OP_ERR;
	default:
		return XNIC_WC_REM_INV_REQ_ERR;
	}
}

/* Check a frame for the requester comes from our peer QP. */
static bool xnic_tx_frame_ok(struct xnic_qp *qp,
			     const struct xnic_wire_info *i)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;

	if (!tx->started || xnic_qp_state(qp) != IB_QPS_RTS ||
	    i->src_node != tx->remote_node || i->src_qpn != tx->dest_qpn) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_BAD_QP_STATE);
		return false;
	}
	return true;
}

/*
 * Mark what an ACK covers done; take a round trip sample from the newest
 * PSN it covers that was sent once. *@holes tells whether the selective
 * ACK covers anything (then there may be holes to fast retransmit).
 * Return whether anything became done.
 */
static bool xnic_tx_ack_slots(struct xnic_tx *tx, u32 cum,
			      const u64 sack[XNIC_WIRE_SACK_BITS / 64],
			      bool *holes)
{
	struct xnic_tx_slot *sample = NULL;
	bool progress = false;
	u32 psn, end = tx->next_psn;
	int k;

	*holes = false;
	for (k = 0; k < XNIC_WIRE_SACK_BITS / 64; k++)
		*holes |= !!sack[k];
	/*
	 * Without selective ACKs nothing from @cum on needs looking at (and
	 * a stale ACK, @cum before una, covers nothing new).
	 */
	if (!*holes && xnic_psn_before(cum, end))
		end = xnic_psn_before(cum, tx->una) ? tx->una : cum;
	for (psn = tx->una; xnic_psn_before(psn, end); psn++) {
		struct xnic_tx_slot *s = xnic_tx_slot(tx, psn);

		if (s->done)
			continue;
		if (!xnic_psn_before(psn, cum) &&
		    !xnic_sack_test(sack, cum, psn))
			continue;
		/* A READ is done when its responses are in, not on ACK. */
		if (xnic_wr_is_read(&tx->wqes[s->widx]))
			continue;
		xnic_tx_slot_done(tx, s);
		progress = true;
		if (!s->retx)
			sample = s;
	}
	if (sample) {
		u64 now = local_clock();

		if (now >= sample->sent)
			xnic_rto_sample(&tx->srtt, &tx->rttvar,
					now - sample->sent);
	}
	return progress;
}

/**
 * xnic_tx_ack_rx() - handle an ACK or NAK for the requester of a QP
 * @qp: the QP
 * @i: the frame's header, accepted by xnic_wire_check()
 * @ack: its payload
 *
 * Completes what the ACK covers, retransmits holes and NAKed PSNs, and
 * sends what the reopened window allows (at most XNIC_TX_ACK_BUDGET
 * frames; the engine does the rest).
 *
 * Context: softirq, tp lock held.
 */
void xnic_tx_ack_rx(struct xnic_qp *qp, const struct xnic_wire_info *i,
		    const struct xnic_wire_ack *ack)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_tx *tx = &tp->tx;
	u64 sack[XNIC_WIRE_SACK_BITS / 64];
	u32 cum = i->psn, nak_psn;
	struct xnic_tx_wqe *w;
	u8 syn = ack->syndrome;
	unsigned int delay;
	bool holes;
	int k;

	if (!xnic_tx_frame_ok(qp, i))
		return;
	if (syn >= XNIC_NAK_MAX ||
	    (i->opcode == XNIC_OP_ACK ? syn : !syn)) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_MALFORMED);
		return;
	}
	if (xnic_psn_before(tx->next_psn, cum)) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_OUT_OF_WINDOW);
		return;
	}
	xnic_cnt_inc(qp->xdev, syn ? XNIC_CNT_NAKS_RCVD : XNIC_CNT_ACKS_RCVD);
	xnic_credit_tx_ack(qp, cum, i->credits, tx->next_psn);
	if (syn == XNIC_NAK_RNR)
		xnic_cnt_inc(qp->xdev, XNIC_CNT_RNR_NAKS_RCVD);

	for (k = 0; k < ARRAY_SIZE(sack); k++)
		sack[k] = be64_to_cpu(ack->sack[k]);
	if (xnic_tx_ack_slots(tx, cum, sack, &holes))
		xnic_tx_progress(tp);
	if (!xnic_tx_complete(qp))
		return;

	nak_psn = be32_to_cpu(ack->nak_psn);
	switch (syn) {
	case XNIC_NAK_NONE:
		if (i->flags & XNIC_WF_DSACK)
			xnic_tx_dsack(qp, nak_psn);
		if (holes &&
		    xnic_tx_fast_retransmit(qp, XNIC_TX_ACK_BUDGET) == -EIO)
			return;
		break;
	case XNIC_NAK_PSN_SEQ:
		xnic_tx_lost(qp, cum, false);
		xnic_tx_resend_from(tx, cum, XNIC_RETX_ALL);
		break;
	case XNIC_NAK_RNR:
		w = xnic_tx_psn_wqe(tx, nak_psn);
		if (!w)
			break;
		if (tx->rnr_limit != XNIC_RNR_INFINITE &&
		    ++tx->rnr_retries > tx->rnr_limit) {
			xnic_tx_fail(qp, w, XNIC_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		/*
		 * Else a SEND that waits long for a receive WQE on a lossy
		 * link collects the timeouts of every resend or RNR NAK lost
		 * in all its RNR rounds and fails with XNIC_WC_RETRY_EXC_ERR
		 * on a path that works.
		 */
		xnic_tx_responded(tx);
		tx->rnr_wait = true;
		delay = xnic_wire_rnr_us(ack->rnr_timer);
		tx->rnr_until = jiffies + max(usecs_to_jiffies(delay), 1UL);
		tx->timer_on = false;
		xnic_tp_arm(tp, tx->rnr_until);
		return;
	default:
		w = xnic_tx_psn_wqe(tx, nak_psn);
		if (!w)
			break;
		ibdev_dbg(&qp->xdev->ibdev, "QP %u: NAK %u at PSN %u\n",
			  xnic_qpn(qp), syn, nak_psn);
		xnic_tx_fail(qp, w, xnic_nak_status(syn));
		return;
	}
	xnic_tx_push(qp);
}

/**
 * xnic_tp_qp_peer_acked() - take a disconnecting peer's expected PSN as a
 *	cumulative ACK
 * @qp: the QP, referenced by the caller
 * @epsn: the PSN the peer's responder expected next (its DREQ's PSN)
 *
 * A DREQ can overtake the (delayed) ACK of the last messages the peer
 * took: without this, a SEND that was delivered would be flushed. WQEs
 * whose every PSN is before @epsn complete with success, as if the ACK had
 * come (READs still wait for their responses); an @epsn outside
 * [una, next_psn] acknowledges nothing.
 *
 * Context: softirq or process context; takes the tp lock.
 */
void xnic_tp_qp_peer_acked(struct xnic_qp *qp, u32 epsn)
{
	static const u64 no_sack[XNIC_WIRE_SACK_BITS / 64];
	struct xnic_tp_qp *tp = xnic_tp_lock(qp);
	struct xnic_tx *tx;
	bool holes;

	if (!tp)
		return;
	tx = &tp->tx;
	if (tx->started && !xnic_psn_before(epsn, tx->una) &&
	    !xnic_psn_before(tx->next_psn, epsn) &&
	    xnic_tx_ack_slots(tx, epsn, no_sack, &holes)) {
		xnic_tx_progress(tp);
		xnic_tx_complete(qp);
	}
	xnic_tp_unlock(tp);
}

/**
 * xnic_tx_read_resp_rx() - place an RDMA READ response
 * @qp: the QP
 * @i: the frame's header, accepted by xnic_wire_check()
 * @skb: the frame
 *
 * Context: softirq, tp lock held.
 */
void xnic_tx_read_resp_rx(struct xnic_qp *qp, const struct xnic_wire_info *i,
			  struct sk_buff *skb)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_tx *tx = &tp->tx;
	struct xnic_tx_slot *s;
	struct xnic_tx_wqe *w;
	u32 rel, nseg, want, k;
	int status;

	if (!xnic_tx_frame_ok(qp, i))
		return;
	w = xnic_tx_psn_wqe(tx, i->psn);
	s = xnic_tx_slot(tx, i->psn);
	if (!w || s->done) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_DUPLICATES);
		return;
	}
	if (!xnic_wr_is_read(w) || i->msg_len != w->len ||
	    i->offset < s->offset)
		goto bad;
	rel = i->offset - s->offset;
	nseg = xnic_tx_read_nseg(tx, s);
	if (s->len) {
		if (rel >= s->len || rel % tx->mtu)
			goto bad;
		want = min(tx->mtu, s->len - rel);
	} else {
		want = 0;
	}
	if (i->payload_len != want)
		goto bad;
	k = rel / tx->mtu;
	if (s->segs & BIT_ULL(k)) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_DUPLICATES);
		return;
	}
	/* READ response bytes go into the READ WQE's buffers. */
	status = xnic_mr_scatter_skb(qp->xdev, qp->pd, w->wqe.sge,
				     w->wqe.num_sge, i->offset, skb,
				     XNIC_WIRE_HDR_LEN, want);
	if (status) {
		xnic_tx_fail(qp, w, status);
		return;
	}
	s->segs |= BIT_ULL(k);
	if (s->segs != GENMASK_ULL(nseg - 1, 0)) {
		/* Its last segment is in: the missing ones are likely lost. */
		if (k == nseg - 1)
			xnic_tx_read_fast_retransmit(qp, i->psn);
		return;
	}
	xnic_tx_slot_done(tx, s);
	xnic_tx_progress(tp);
	if (xnic_tx_read_fast_retransmit(qp, i->psn) != -EIO &&
	    xnic_tx_complete(qp))
		xnic_tx_push(qp);
	return;

bad:
	xnic_cnt_inc(qp->xdev, XNIC_CNT_MALFORMED);
}
