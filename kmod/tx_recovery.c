// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the requester's recovery: the retransmission and RNR timer,
 * the flush of a QP in the error state, and the resend of what a failed
 * member link carried.
 */
#include <linux/jiffies.h>

#include "engine.h"
#include "tx_priv.h"

/**
 * xnic_tx_flush() - complete every outstanding SQ WQE with a flush error
 * @qp: the QP, in the error state
 *
 * WQEs that failed keep their own status. Entries the user posted beyond
 * what a sane producer index allows are not touched.
 *
 * Context: tp lock held.
 */
void xnic_tx_flush(struct xnic_qp *qp)
{
	struct xnic_tx *tx = &xnic_tp(qp)->tx;
	struct xnic_ring *sq = &qp->sq;
	struct xnic_sq_wqe wqe;
	u32 prod;

	/* The transport's own indices are sane: it set them. */
	if (tx->started && tx->fetch - sq->kidx <= tx->nr_wqe) {
		while (sq->kidx != tx->fetch) {
			struct xnic_tx_wqe *w = xnic_tx_wqe(tx, sq->kidx);

			xnic_tx_cqe(qp, &w->wqe, 0,
				    w->status ?: XNIC_WC_WR_FLUSH_ERR);
			sq->kidx++;
		}
	}
	prod = xnic_ring_producer(sq);
	if (prod - sq->kidx > sq->nr)
		prod = sq->kidx;
	while (sq->kidx != prod) {
		memcpy(&wqe, sq->entries + (sq->kidx & (sq->nr - 1)) *
		       sq->elem_size, sizeof(wqe));
		xnic_tx_cqe(qp, &wqe, 0, XNIC_WC_WR_FLUSH_ERR);
		sq->kidx++;
	}
	xnic_ring_release(sq);
	tx->fetch = sq->kidx;
	tx->cur = sq->kidx;
	tx->una = tx->next_psn;
	tx->reads = 0;
	tx->timer_on = false;
	tx->rnr_wait = false;
	tx->resending = false;
	tx->started = false;
	xnic_credit_tx_stop(qp, tx->next_psn);
}

/**
 * xnic_tx_bond_event() - a member link failed, or a peer may be lost
 * @qp: the QP
 * @link: xnic_link.index of the link that failed: the PSNs not done that
 *	last left on it are resent at once (on the links left: the bond no
 *	longer chooses it); XNIC_BOND_NO_LINK for none
 * @expire: when the QP's peer has been unreachable for peer_timeout_ms
 *	(xnic_bond_peer_lost()) and the QP has fetched WQEs not completed,
 *	expire the retransmission deadline now (arming it if nothing was in
 *	flight): the timeout then completes the outstanding work with errors
 *
 * The resend marks the PSNs as sent long ago (and as retransmissions, so
 * they give no round trip sample) and starts an XNIC_RETX_OLD resend from
 * the first of them; the engine sends them (xnic_tp_unlock()).
 *
 * Context: tp lock held (bond.c's work, process context).
 * Return: the number of PSNs marked for resending.
 */
unsigned int xnic_tx_bond_event(struct xnic_qp *qp, u8 link, bool expire)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_tx *tx = &tp->tx;
	unsigned int n = 0;
	u32 psn, first = 0;

	if (!tx->started || xnic_qp_state(qp) != IB_QPS_RTS)
		return 0;
	for (psn = tx->una; link != XNIC_BOND_NO_LINK && psn != tx->next_psn;
	     psn++) {
		struct xnic_tx_slot *s = xnic_tx_slot(tx, psn);

		if (s->done || s->link != link)
			continue;
		if (!n++)
			first = psn;
		s->sent = 0;
		s->retx = true;
		s->link = XNIC_BOND_NO_LINK;
	}
	if (n) {
		xnic_tx_resend_from(tx, first, XNIC_RETX_OLD);
		tp->activate = true;
	}
	/*
	 * Also with nothing in flight: a requester that waits for flow or
	 * link credit from a lost peer has no retransmission timer, and the
	 * credit would never come (seen: a WRITE not completed 30 s after
	 * every link was cut). The timeout fails its oldest WQE.
	 */
	if (expire && (tx->timer_on || tx->fetch != qp->sq.kidx) &&
	    xnic_bond_peer_lost(qp->xdev, tx->remote_node)) {
		tx->timer_on = true;
		tx->deadline = jiffies;
		tp->activate = true;
	}
	return n;
}

/**
 * xnic_tx_timer() - the retransmission and RNR timer of a QP
 * @t: xnic_tp_qp.timer
 *
 * The requester's deadlines only hand the QP to the engine, which
 * resends; fired early (a deadline moved since it was armed), it re-arms.
 * The responder's delayed ACK is sent from here (xnic_rx_timer()).
 *
 * Context: softirq (timer); takes the tp lock.
 */
void xnic_tx_timer(struct timer_list *t)
{
	struct xnic_tp_qp *tp = from_timer(tp, t, timer);
	struct xnic_tx *tx = &tp->tx;
	bool run = false;

	spin_lock(&tp->lock);
	if (tp->dead) {
		spin_unlock(&tp->lock);
		return;
	}
	xnic_rx_timer(tp->qp);
	run = xnic_credit_timer(tp);
	if (tx->rnr_wait) {
		if (time_before(jiffies, tx->rnr_until))
			xnic_tp_arm(tp, tx->rnr_until);
		else
			run = true;
	} else if (tx->timer_on) {
		if (time_before(jiffies, tx->deadline))
			xnic_tp_arm(tp, tx->deadline);
		else
			run = true;
	}
	spin_unlock(&tp->lock);
	/* The timer is stopped before the QP goes: it is still there. */
	if (run)
		xnic_engine_activate_qp(tp->qp->xdev, tp->qp);
}
