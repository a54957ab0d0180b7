// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the transport state of a QP (struct xnic_tp_qp): its lock and
 * how frames leave under it, its lifetime (init, stop, release; RCU), and
 * the flush of a QP in error. transport_priv.h has the execution model
 * and the lock order; tx*.c and rx*.c the requester and the responder.
 */
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "engine.h"
#include "transport_priv.h"

/**
 * __xnic_tp_qp_flush() - complete every outstanding WQE with a flush error
 * @qp: the QP, in the error state
 *
 * Idempotent: called again, it flushes only what was posted since.
 *
 * Context: tp lock held.
 */
void __xnic_tp_qp_flush(struct xnic_qp *qp)
{
	xnic_tx_flush(qp);
	xnic_rx_flush(qp);
}

/**
 * xnic_tp_qp_flush() - complete every outstanding WQE with a flush error
 * @qp: the QP, in the error state
 *
 * Context: process context or softirq; takes the tp lock.
 */
void xnic_tp_qp_flush(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp = xnic_tp_lock(qp);

	if (!tp)
		return;
	__xnic_tp_qp_flush(qp);
	xnic_tp_unlock(tp);
}

/**
 * xnic_tp_arm() - make sure a QP's timer fires at a time at the latest
 * @tp: the state; its tp lock is held
 * @when: jiffies
 *
 * The timer serves the requester's retransmission and RNR deadlines and
 * the responder's delayed ACK; it fires at the earliest the caller asked
 * for, and re-arms itself for what is left (xnic_tx_timer()).
 *
 * Context: tp lock held.
 */
void xnic_tp_arm(struct xnic_tp_qp *tp, unsigned long when)
{
	if (!timer_pending(&tp->timer) ||
	    time_before(when, READ_ONCE(tp->timer.expires)))
		mod_timer(&tp->timer, when);
}

/**
 * xnic_tp_lock() - lock the transport state of a QP
 * @qp: the QP, referenced by the caller
 *
 * Context: process context or softirq; takes the tp lock (BH).
 * Return: the state, locked (unlock with xnic_tp_unlock()), or NULL when
 * the QP has none or it is being released.
 */
struct xnic_tp_qp *xnic_tp_lock(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp;

	rcu_read_lock();
	tp = rcu_dereference(qp->tp.priv);
	if (tp) {
		spin_lock_bh(&tp->lock);
		if (tp->dead) {
			spin_unlock_bh(&tp->lock);
			tp = NULL;
		} else {
			/* For sparse: the caller holds it (xnic_tp_unlock()). */
			__release(&tp->lock);
		}
	}
	/* A holder of the lock keeps the state: it is freed after "dead". */
	rcu_read_unlock();
	return tp;
}

/* Take @tp's lock if it is free, or frees up within @ns nanoseconds. */
static bool xnic_tp_trylock_for(struct xnic_tp_qp *tp, u64 ns)
{
	u64 start = 0;

	/* The clock only when waiting: a read costs ~0.3 us under TCG. */
	while (!spin_trylock_bh(&tp->lock)) {
		u64 now = local_clock();

		if (!start)
			start = now;
		if (now - start >= ns)
			return false;
		cpu_relax();
	}
	/* For sparse: the caller holds it. */
	__release(&tp->lock);
	return true;
}

/**
 * xnic_tp_lock_within() - xnic_tp_lock(), unless another context holds the
 *	lock for longer than a while
 * @qp: the QP, referenced by the caller
 * @ns: how long to wait for a holder on another CPU, nanoseconds (0: not)
 * @busy: set to whether the lock stayed held elsewhere that long
 *
 * The packet handler waits a short holder out (a ping-pong's peer
 * finishing the ACK of its last message) rather than wake the engine for
 * the frame, and leaves the frame to the engine rather than spin while a
 * sender holds the lock for a whole burst (it seals frames under it).
 *
 * Context: softirq or process context; takes the tp lock (BH).
 * Return: the state, locked; NULL when the lock stayed busy, or the QP has
 * no state or it is being released.
 */
struct xnic_tp_qp *xnic_tp_lock_within(struct xnic_qp *qp, u64 ns, bool *busy)
{
	struct xnic_tp_qp *tp;

	*busy = false;
	rcu_read_lock();
	tp = rcu_dereference(qp->tp.priv);
	if (tp) {
		if (!xnic_tp_trylock_for(tp, ns)) {
			*busy = true;
			tp = NULL;
		} else if (tp->dead) {
			/* For sparse: taken by xnic_tp_trylock_for(). */
			__acquire(&tp->lock);
			spin_unlock_bh(&tp->lock);
			tp = NULL;
		}
		/* Else the caller holds it (xnic_tp_unlock()). */
	}
	rcu_read_unlock();
	return tp;
}

/**
 * xnic_tp_qp_post_hint() - what the engine's stream detection reads of a
 *	QP, without the tp lock
 * @qp: the QP, referenced by the caller
 * @epsn: set to the PSN its responder expects next (0 for a QP without
 *	transport state)
 *
 * Hints, stale at once: the engine tells a stream (posts with nothing
 * received in between) from a request-response exchange by @epsn, and a
 * doorbell of new posts from one whose posts the wakeup syscall already
 * took by the return value. xnic_tp_qp_rx_epsn() is the exact @epsn.
 *
 * Context: any context but hard IRQ.
 * Return: true when the SQ producer index is not the requester's fetch
 * index (WQEs not taken yet).
 */
bool xnic_tp_qp_post_hint(struct xnic_qp *qp, u32 *epsn)
{
	struct xnic_tp_qp *tp;
	bool new = false;

	*epsn = 0;
	rcu_read_lock();
	tp = rcu_dereference(qp->tp.priv);
	if (tp) {
		*epsn = READ_ONCE(tp->rx.win.epsn);
		new = xnic_ring_producer(&qp->sq) != READ_ONCE(tp->tx.fetch);
	}
	rcu_read_unlock();
	return new;
}

/**
 * xnic_tp_send() - send a frame of a QP
 * @qp: the QP; the caller holds its tp lock
 * @node: the peer's node id
 * @skb: a frame from xnic_frame_alloc() with its payload; consumed
 * @i: its header fields
 *
 * The header is written here, the frame check once the link is chosen
 * (xnic_tp_xmit_link()): a frame that takes link credit carries its
 * sequence on the path.
 *
 * The frame leaves at once, under the lock: one context at a time sends a
 * QP's frames (xnic_engine_owns_qp()), in PSN order. The receive softirq
 * it raises (veth) runs once the lock is dropped (BH is off under it).
 *
 * Context: tp lock held.
 * Return: as xnic_tp_xmit_link(); -EAGAIN when no link had link credit
 * for it (it did not leave: send it again later).
 */
int xnic_tp_send(struct xnic_qp *qp, u16 node, struct sk_buff *skb,
		 const struct xnic_wire_info *i)
{
	unsigned int len = skb->len;
	int err;

	xnic_wire_encode((struct xnic_wire_hdr *)skb->data, i);
	err = xnic_tp_xmit_link(qp->xdev, node, skb,
				&xnic_tp(qp)->tx.last_link, true);
	if (err != -EAGAIN)
		xnic_credit_drr_charge(qp, len);
	return err;
}

/**
 * xnic_tp_send_ack() - send an ACK or NAK of a QP's responder
 * @qp: the QP; the caller holds its tp lock
 * @skb: as xnic_tp_send(), to the QP's peer (xnic_rx.remote_node)
 * @i: its header fields
 *
 * While the handling of a received frame holds the lock
 * (xnic_tp_qp.ack_hold), the frame leaves only once xnic_tp_unlock() has
 * dropped it: the receive completion the frame made is visible already,
 * and the application's reply, a doorbell on this QP from another CPU,
 * waits for the lock. Sending the ACK (link choice, frame check, the
 * member link's transmit) under it put that time into every round trip.
 * ACKs carry cumulative state (the expected PSN, a SACK map), so one that
 * leaves after a later frame of its QP is merely stale: the requester
 * takes ACKs in any order, as it does from sprayed links.
 *
 * Context: tp lock held.
 */
void xnic_tp_send_ack(struct xnic_qp *qp, struct sk_buff *skb,
		      const struct xnic_wire_info *i)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);

	if (!tp->ack_hold) {
		xnic_tp_send(qp, tp->rx.remote_node, skb, i);
		return;
	}
	xnic_wire_encode((struct xnic_wire_hdr *)skb->data, i);
	xnic_credit_drr_charge(qp, skb->len);
	__skb_queue_tail(&tp->acks, skb);
}

/**
 * xnic_tp_unlock() - unlock the transport state of a QP
 * @tp: the state, from xnic_tp_lock()
 *
 * Then sends the ACKs that waited for it (xnic_tp_send_ack()) and hands
 * the QP to the engine when asked to (xnic_tp_qp.activate). @tp may be
 * gone once the lock is dropped; the QP is referenced by the caller.
 */
void xnic_tp_unlock(struct xnic_tp_qp *tp)
{
	struct xnic_qp *qp = tp->qp;
	bool activate = tp->activate;
	u16 node = tp->rx.remote_node;
	struct sk_buff_head acks;
	struct sk_buff *skb;

	tp->activate = false;
	tp->ack_hold = false;
	__skb_queue_head_init(&acks);
	skb_queue_splice_init(&tp->acks, &acks);
	/* For sparse: taken by xnic_tp_lock(). */
	__acquire(&tp->lock);
	spin_unlock_bh(&tp->lock);
	while ((skb = __skb_dequeue(&acks)))
		xnic_tp_xmit_link(qp->xdev, node, skb, NULL, true);
	if (activate)
		xnic_engine_activate_qp(qp->xdev, qp);
}

/**
 * xnic_tp_qp_init() - allocate a QP's transport state
 * @qp: the QP; its rings are allocated (their sizes bound the tables);
 *	it has no transport state
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int xnic_tp_qp_init(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp;
	u32 nw, nm;

	nw = qp->sq.nr ? min_t(u32, qp->sq.nr, XNIC_TX_MAX_WQE) :
			 XNIC_TX_MAX_WQE;
	nm = qp->rq.nr ? min_t(u32, qp->rq.nr, XNIC_RX_MAX_MSG) :
			 XNIC_RX_MAX_MSG;
	tp = kvzalloc(sizeof(*tp), XNIC_GFP_ACCOUNT);
	if (!tp)
		return -ENOMEM;
	tp->tx.nr_wqe = roundup_pow_of_two(nw);
	tp->tx.wqes = kvcalloc(tp->tx.nr_wqe, sizeof(*tp->tx.wqes),
			       XNIC_GFP_ACCOUNT);
	tp->rx.nr_msg = roundup_pow_of_two(nm);
	tp->rx.msgs = kvcalloc(tp->rx.nr_msg, sizeof(*tp->rx.msgs),
			       XNIC_GFP_ACCOUNT);
	if (!tp->tx.wqes || !tp->rx.msgs) {
		kvfree(tp->tx.wqes);
		kvfree(tp->rx.msgs);
		kvfree(tp);
		return -ENOMEM;
	}
	spin_lock_init(&tp->lock);
	__skb_queue_head_init(&tp->acks);
	tp->qp = qp;
	timer_setup(&tp->timer, xnic_tx_timer, 0);
	rcu_assign_pointer(qp->tp.priv, tp);
	return 0;
}

/**
 * xnic_tp_qp_stop() - make a QP's transport state unusable
 * @qp: the QP
 *
 * Waits for the holder of the tp lock, if any, and for a running timer;
 * afterwards nothing uses the state (xnic_tp_lock() fails) and the QP's
 * ring indices are the caller's. Idempotent.
 *
 * Context: process context, may sleep.
 */
void xnic_tp_qp_stop(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp = rcu_dereference_protected(qp->tp.priv, true);

	if (!tp)
		return;
	spin_lock_bh(&tp->lock);
	tp->dead = true;
	spin_unlock_bh(&tp->lock);
	/* The timer re-arms only under the lock and not once dead. */
	del_timer_sync(&tp->timer);
}

/**
 * xnic_tp_qp_release() - free a QP's transport state
 * @qp: the QP
 *
 * Stops it first (xnic_tp_qp_stop()); the struct itself is freed after
 * an RCU grace period, since xnic_tp_lock() may still be looking at it.
 *
 * Context: process context, may sleep.
 */
void xnic_tp_qp_release(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp = rcu_dereference_protected(qp->tp.priv, true);

	if (!tp)
		return;
	xnic_tp_qp_stop(qp);
	/* Empty: xnic_tp_unlock() sends them. */
	__skb_queue_purge(&tp->acks);
	xnic_credit_tx_stop(qp, tp->tx.next_psn);
	RCU_INIT_POINTER(qp->tp.priv, NULL);
	kvfree(tp->tx.wqes);
	kvfree(tp->rx.msgs);
	kvfree_rcu(tp, rcu);
}
