// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - credit-based flow control (lossless, prioritised, fair).
 *
 * Requester: a QP sends a new PSN only against credit its peer's
 * responder granted (credit_logic.h); a flow out of credit is "stalled"
 * (the time is counted) and, while it stays so, asks for credit with a
 * CREDIT request (XNIC_OP_CREDIT with XNIC_WF_CREDIT_REQ) at backed-off
 * intervals, so a lost update never deadlocks it.
 *
 * Responder: every ACK, NAK and CREDIT update carries the credit it
 * grants past its cumulative ACK PSN: an equal share of the device's
 * ingress pool (credit_pool frames) among the flows that received data in
 * the last two epochs, at most the flow's window
 * (the credit_window parameter) and the receive PSN window.
 *
 * Traffic classes: the engine serves class 0 (latency-critical) first in
 * each pass and gives class 1 (bulk) its weighted share while class 0 is
 * backlogged (xnic_credit_budget()); the flows of one class share it by
 * byte deficit round robin (xnic_credit_drr_begin(), credit_logic.h), so
 * that small frames and large ones get equal bytes.
 *
 * Context and locking: see credit.h.
 */
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched/clock.h>

#include "engine.h"
#include "transport_priv.h"

/* Largest credit_pool (frames) and drr_unit (bytes) accepted */
#define XNIC_CREDIT_POOL_MAX	1048576U
#define XNIC_DRR_UNIT_MAX	1048576U

static bool credits = true;
module_param(credits, bool, 0644);
MODULE_PARM_DESC(credits,
		 "Requesters send only against credit granted by the receiver (default Y)");

static struct xnic_uint_param credit_init = {
	.val = 32, .min = 1, .max = XNIC_TX_WINDOW,
};
module_param_cb(credit_init, &xnic_uint_param_ops, &credit_init, 0644);
MODULE_PARM_DESC(credit_init,
		 "Credits (frames) a flow may send before its first credit update, 1 to 256 (default 32)");

static struct xnic_uint_param credit_pool = {
	.val = 768, .min = 1, .max = XNIC_CREDIT_POOL_MAX,
};
module_param_cb(credit_pool, &xnic_uint_param_ops, &credit_pool, 0644);
MODULE_PARM_DESC(credit_pool,
		 "Receive credits (frames) of a device shared by its active flows, 1 to 1048576 (default 768)");

static struct xnic_uint_param drr_unit = {
	.val = 2048, .min = XNIC_WIRE_MIN_SEG, .max = XNIC_DRR_UNIT_MAX,
	.zero_ok = true,
};
module_param_cb(drr_unit, &xnic_uint_param_ops, &drr_unit, 0644);
MODULE_PARM_DESC(drr_unit,
		 "Bytes of a QP's deficit round robin quantum per frame of its class budget, 64 to 1048576; 0 schedules by frames (default 2048)");

static struct xnic_uint_param class1_seg_busy = {
	.val = 2048, .min = XNIC_WIRE_MIN_SEG, .max = UINT_MAX, .zero_ok = true,
};
module_param_cb(class1_seg_busy, &xnic_uint_param_ops, &class1_seg_busy,
		0644);
MODULE_PARM_DESC(class1_seg_busy,
		 "Largest class 1 frame payload, bytes, while class 0 is sending (at least 64); 0: the path MTU (default 2048)");

/*
 * Bytes of one class 1 turn while class 0 is idle: about one frame at the
 * mesh's 9000 B MTU, so that a class 0 WQE rung meanwhile waits for no
 * more than that (xnic_credit_budget()).
 */
#define XNIC_CREDIT_CLASS1_TURN	8192
/*
 * Class 0 counts as sending for this long after its last frame, ms: long
 * enough that the first WQE of an intermittent latency-critical flow also
 * finds the bulk frames cut.
 */
#define XNIC_CREDIT_CLASS0_RECENT_MS	100

/* Epoch of the active-flow estimate, ms. */
#define XNIC_CREDIT_EPOCH_MS	10
/* First and largest interval between credit requests of a stalled flow. */
#define XNIC_CREDIT_PROBE_MS	10
#define XNIC_CREDIT_PROBE_MAX_MS	1000

/* Names of enum xnic_credit_counter, in order. */
const char *const xnic_credit_counter_names[XNIC_CREDIT_NR_COUNTERS] = {
	[XNIC_CCNT_GRANTED]		= "credit_granted",
	[XNIC_CCNT_CONSUMED]		= "credit_consumed",
	[XNIC_CCNT_RETURNED]		= "credit_returned",
	[XNIC_CCNT_ADVERTISED]		= "credit_advertised",
	[XNIC_CCNT_STALLS]		= "credit_stalls",
	[XNIC_CCNT_STALL_NS]		= "credit_stall_ns",
	[XNIC_CCNT_REQ_SENT]		= "credit_requests_sent",
	[XNIC_CCNT_REQ_RCVD]		= "credit_requests_rcvd",
	[XNIC_CCNT_UPD_SENT]		= "credit_updates_sent",
	[XNIC_CCNT_UPD_RCVD]		= "credit_updates_rcvd",
	[XNIC_CCNT_CLASS0_BYTES]	= "tx_class0_bytes",
	[XNIC_CCNT_CLASS1_BYTES]	= "tx_class1_bytes",
	[XNIC_CCNT_RX_DROPS]		= "rx_credit_drops",
	[XNIC_CCNT_RX_VIOLATIONS]	= "rx_credit_violations",
	[XNIC_CCNT_INLINE_PRIO_DEFERRED] = "tx_inline_prio_deferred",
	[XNIC_CCNT_INLINE_DRR_DEFERRED]	= "tx_inline_drr_deferred",
	[XNIC_CCNT_INLINE_CLASS0_FRAMES] = "tx_inline_class0_frames",
	[XNIC_CCNT_INLINE_CLASS1_FRAMES] = "tx_inline_class1_frames",
};

static struct xnic_credit_dev *xnic_cd(struct xnic_dev *xdev)
{
	return &xdev->peers->credit;
}

static void xnic_ccnt_add(struct xnic_dev *xdev, enum xnic_credit_counter c,
			  s64 v)
{
	atomic64_add(v, &xnic_cd(xdev)->cnt[c]);
}

static struct xnic_credit_qp *xnic_cq_of(struct xnic_qp *qp)
{
	return &xnic_tp(qp)->cr;
}

/* The epoch of the active-flow estimate now. */
static unsigned long xnic_credit_epoch(void)
{
	return jiffies / msecs_to_jiffies(XNIC_CREDIT_EPOCH_MS);
}

/**
 * xnic_credit_dev_init() - set up a device's flow control state
 * @cd: the state, zeroed (part of struct xnic_peers)
 *
 * Context: process context (xnic_tp_dev_init()).
 */
void xnic_credit_dev_init(struct xnic_credit_dev *cd)
{
	int k;

	spin_lock_init(&cd->lock);
	cd->class0_at = jiffies - msecs_to_jiffies(XNIC_CREDIT_CLASS0_RECENT_MS) - 1;
	INIT_LIST_HEAD(&cd->lwait);
	cd->epoch = xnic_credit_epoch();
	for (k = 0; k < XNIC_CCNT_MAX; k++)
		atomic64_set(&cd->cnt[k], 0);
	for (k = 0; k < XNIC_LCNT_MAX; k++)
		atomic64_set(&cd->lcnt[k], 0);
}

/**
 * xnic_credit_counters() - read the flow control counters of a device
 * @xdev: the device
 * @vals: filled with up to @n values, in xnic_credit_counter_names[] order
 * @n: room in @vals
 *
 * Context: any; the values are read without a lock.
 * Return: the number of values written (0 before the transport is up).
 */
int xnic_credit_counters(struct xnic_dev *xdev, u64 *vals, int n)
{
	struct xnic_peers *p = READ_ONCE(xdev->peers);
	int k;

	if (!p)
		return 0;
	n = min_t(int, n, XNIC_CCNT_MAX);
	for (k = 0; k < n; k++)
		vals[k] = atomic64_read(&p->credit.cnt[k]);
	return n;
}

/* ------------------------------ requester ------------------------------ */

/**
 * xnic_credit_tx_start() - a requester starts: give it its initial credit
 * @qp: the QP
 * @psn: its first PSN
 *
 * Context: tp lock held.
 */
void xnic_credit_tx_start(struct xnic_qp *qp, u32 psn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);
	u32 init = READ_ONCE(credit_init.val);

	xnic_ccnt_add(qp->xdev, XNIC_CCNT_GRANTED,
		      xnic_credit_flow_start(&c->flow, psn, init));
	c->stalled = false;
	c->probe_ms = XNIC_CREDIT_PROBE_MS;
}

/* The stall of a flow that has credit again is over. */
static void xnic_credit_unstall(struct xnic_qp *qp, struct xnic_credit_qp *c)
{
	u64 now = local_clock();

	c->stalled = false;
	c->probe_ms = XNIC_CREDIT_PROBE_MS;
	if (now > c->stall_since)
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_STALL_NS,
			      now - c->stall_since);
}

/**
 * xnic_credit_tx_ok() - may the requester send the new PSN @next_psn?
 * @qp: the QP
 * @next_psn: the PSN
 *
 * When not, the flow is stalled from now on: the time is counted and a
 * credit request is scheduled on the QP's timer (xnic_credit_timer()).
 * With flow control off (module parameter credits=0) always true.
 *
 * Context: tp lock held.
 * Return: whether the PSN may be sent.
 */
bool xnic_credit_tx_ok(struct xnic_qp *qp, u32 next_psn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);

	if (!READ_ONCE(credits) || xnic_credit_flow_avail(&c->flow, next_psn)) {
		if (c->stalled)
			xnic_credit_unstall(qp, c);
		return true;
	}
	if (!c->stalled) {
		c->stalled = true;
		c->stall_since = local_clock();
		c->probe_ms = XNIC_CREDIT_PROBE_MS;
		c->probe_at = jiffies + msecs_to_jiffies(c->probe_ms);
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_STALLS, 1);
		xnic_tp_arm(xnic_tp(qp), c->probe_at);
	}
	return false;
}

/**
 * xnic_credit_tx_sent() - the requester sent the new PSN @psn
 * @qp: the QP
 * @psn: the PSN (consumes one credit)
 * @bytes: payload bytes it carries, counted for the QP's traffic class
 *
 * Context: tp lock held.
 */
void xnic_credit_tx_sent(struct xnic_qp *qp, u32 psn, u32 bytes)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);
	u64 before = c->flow.granted;

	xnic_credit_flow_consume(&c->flow, psn);
	if (c->flow.granted != before)
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_GRANTED,
			      c->flow.granted - before);
	xnic_ccnt_add(qp->xdev, XNIC_CCNT_CONSUMED, 1);
	if (READ_ONCE(qp->tclass)) {
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_CLASS1_BYTES, bytes);
	} else {
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_CLASS0_BYTES, bytes);
		WRITE_ONCE(xnic_cd(qp->xdev)->class0_at, jiffies);
	}
}

/* The class 1 frame payload bound while class 0 sends, bytes; 0: none. */
static u32 xnic_credit_class1_seg(struct xnic_dev *xdev)
{
	unsigned long at = READ_ONCE(xnic_cd(xdev)->class0_at);
	u32 seg = READ_ONCE(class1_seg_busy.val);

	if (!seg || time_after(jiffies,
			       at + msecs_to_jiffies(XNIC_CREDIT_CLASS0_RECENT_MS)))
		return 0;
	return seg;
}

/**
 * xnic_credit_seg_bytes() - payload bytes of a QP's next WRITE or SEND frame
 * @qp: the QP
 * @mtu: its path MTU, payload bytes
 *
 * Class 1 frames carry at most class1_seg_busy bytes while class 0 has
 * sent within the last XNIC_CREDIT_CLASS0_RECENT_MS: the engine sends
 * frames whole, so a class 0 frame waits for up to one class 1 frame
 * (xnic_credit_budget()), and smaller class 1 frames shorten that wait at
 * the cost of more frames for the bulk (the fragment size of IEEE 802.3br
 * frame preemption plays the same part). Frames of one message may so
 * differ in size; each carries its offset (wire-protocol.rst).
 *
 * Context: tp lock held.
 * Return: bytes, at most @mtu.
 */
u32 xnic_credit_seg_bytes(struct xnic_qp *qp, u32 mtu)
{
	u32 seg;

	if (!READ_ONCE(qp->tclass))
		return mtu;
	seg = xnic_credit_class1_seg(qp->xdev);
	return seg ? min(seg, mtu) : mtu;
}

/**
 * xnic_credit_tx_ackreq() - should the frame of @psn ask for an ACK?
 * @qp: the QP
 * @psn: a new PSN
 *
 * The PSN that spends the last credit asks for one, so that the grant
 * comes back without waiting for a delayed ACK.
 *
 * Context: tp lock held.
 * Return: true for the last PSN the credit allows.
 */
bool xnic_credit_tx_ackreq(struct xnic_qp *qp, u32 psn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);

	return c->flow.live && psn + 1 == c->flow.limit;
}

/**
 * xnic_credit_tx_ack() - take the credit an ACK, NAK or update carries
 * @qp: the QP
 * @cum: the frame's cumulative ACK PSN, not past @next_psn
 * @credits: the frame's credits field
 * @next_psn: the requester's next new PSN
 *
 * Context: tp lock held (softirq).
 */
void xnic_credit_tx_ack(struct xnic_qp *qp, u32 cum, u16 credits,
			u32 next_psn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);
	u32 inc = xnic_credit_flow_update(&c->flow, cum, credits, next_psn);

	if (inc)
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_GRANTED, inc);
}

/**
 * xnic_credit_tx_stop() - the requester stops (flush, reset, destroy)
 * @qp: the QP
 * @next_psn: its next new PSN
 *
 * Its unused credit is counted returned; a stopped flow has none. It
 * no longer waits for link credit either.
 *
 * Context: tp lock held, or the state is no longer shared.
 */
void xnic_credit_tx_stop(struct xnic_qp *qp, u32 next_psn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);

	xnic_lcr_qp_stop(qp);
	if (!c->flow.live)
		return;
	if (c->stalled)
		xnic_credit_unstall(qp, c);
	xnic_ccnt_add(qp->xdev, XNIC_CCNT_RETURNED,
		      xnic_credit_flow_stop(&c->flow, next_psn));
}

/* Send a CREDIT frame: a request (@req) or an update of @credits. */
static void xnic_credit_send(struct xnic_qp *qp, u16 node, u32 dqpn,
			     u32 psn, u16 credits, bool req)
{
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_CREDIT,
		.flags = req ? XNIC_WF_CREDIT_REQ : 0,
		.src_node = qp->xdev->node_id,
		.dst_node = node,
		.src_qpn = xnic_qpn(qp),
		.dst_qpn = dqpn,
		.psn = psn,
		.credits = credits,
	};
	struct sk_buff *skb = xnic_frame_alloc(0, GFP_ATOMIC);

	if (!skb) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_TX_DROPS);
		return;
	}
	xnic_tp_send(qp, node, skb, &i);
	xnic_ccnt_add(qp->xdev, req ? XNIC_CCNT_REQ_SENT : XNIC_CCNT_UPD_SENT,
		      1);
}

/**
 * xnic_credit_timer() - the credit part of a QP's timer
 * @tp: the transport state
 *
 * A flow stalled on credit until its probe time sends a CREDIT request
 * (the responder answers with an update) and backs off, doubling the
 * interval up to XNIC_CREDIT_PROBE_MAX_MS: a lost update cannot leave the
 * flow waiting for ever.
 *
 * Context: the QP's timer (softirq), tp lock held.
 * Return: true when the flow has credit again and the engine should run
 * the QP.
 */
bool xnic_credit_timer(struct xnic_tp_qp *tp)
{
	struct xnic_credit_qp *c = &tp->cr;
	struct xnic_tx *tx = &tp->tx;

	/* Link credit came without a wakeup (xnic_lcr_qp_timer()). */
	if (xnic_lcr_qp_timer(tp))
		return true;
	if (!c->stalled || !tx->started ||
	    xnic_qp_state(tp->qp) != IB_QPS_RTS)
		return false;
	/* Credit came meanwhile: let the engine send. */
	if (xnic_credit_flow_avail(&c->flow, tx->next_psn)) {
		xnic_credit_unstall(tp->qp, c);
		return true;
	}
	if (time_before(jiffies, c->probe_at)) {
		xnic_tp_arm(tp, c->probe_at);
		return false;
	}
	xnic_credit_send(tp->qp, tx->remote_node, tx->dest_qpn, tx->next_psn,
			 0, true);
	c->probe_ms = min(c->probe_ms * 2, XNIC_CREDIT_PROBE_MAX_MS);
	c->probe_at = jiffies + msecs_to_jiffies(c->probe_ms);
	xnic_tp_arm(tp, c->probe_at);
	return false;
}

/* ------------------------------ responder ------------------------------ */

/* Count the flow active in this epoch; return the flows active now. */
static u32 xnic_credit_active(struct xnic_dev *xdev, struct xnic_credit_qp *c,
			      bool touch)
{
	struct xnic_credit_dev *cd = xnic_cd(xdev);
	unsigned long e = xnic_credit_epoch();
	u32 n;

	spin_lock(&cd->lock);
	if (cd->epoch != e) {
		cd->active_prev = cd->epoch + 1 == e ? cd->active_cur : 0;
		cd->active_cur = 0;
		cd->epoch = e;
	}
	if (touch && c->epoch != e) {
		c->epoch = e;
		cd->active_cur++;
	}
	n = max3(cd->active_cur, cd->active_prev, 1U);
	spin_unlock(&cd->lock);
	return n;
}

/* The share of a flow now (xnic_credit_share()). */
static u32 xnic_credit_rx_share(struct xnic_qp *qp, bool touch)
{
	struct xnic_dev *xdev = qp->xdev;
	u32 pool = READ_ONCE(credit_pool.val);

	return xnic_credit_share(READ_ONCE(xdev->params.credit_window),
				 XNIC_RX_WINDOW, pool,
				 xnic_credit_active(xdev, xnic_cq_of(qp),
						    touch));
}

/**
 * xnic_credit_rx_grant() - the credits field of the responder's next
 *	ACK, NAK or CREDIT update
 * @qp: the QP
 * @epsn: the frame's cumulative ACK PSN (the responder's expected PSN)
 *
 * Context: tp lock held.
 * Return: credits granted past @epsn.
 */
u16 xnic_credit_rx_grant(struct xnic_qp *qp, u32 epsn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);
	u32 grew;
	u16 cr;

	if (!c->adv_valid) {
		c->adv = epsn;
		c->adv_valid = true;
	}
	cr = xnic_credit_grant(&c->adv, epsn, xnic_credit_rx_share(qp, false),
			       &grew);
	if (grew)
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_ADVERTISED, grew);
	return cr;
}

/**
 * xnic_credit_rx_data() - the responder accepted a new request PSN
 * @qp: the QP
 * @psn: the PSN
 * @epsn: the responder's expected PSN before it
 *
 * Counts the flow active, and a PSN beyond the credit advertised as a
 * violation (the peer ignores flow control; the frame is still taken when
 * the receive window has room for it).
 *
 * Context: tp lock held (softirq).
 */
void xnic_credit_rx_data(struct xnic_qp *qp, u32 psn, u32 epsn)
{
	struct xnic_credit_qp *c = xnic_cq_of(qp);
	u32 init = READ_ONCE(credit_init.val);

	/* Once per flow and epoch: the device lock is not taken per frame. */
	if (c->epoch != xnic_credit_epoch())
		xnic_credit_active(qp->xdev, c, true);
	if (!c->adv_valid) {
		/* The requester's initial credit. */
		c->adv = epsn + init;
		c->adv_valid = true;
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_ADVERTISED, init);
	}
	if (!xnic_psn_before(psn, c->adv))
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_RX_VIOLATIONS, 1);
}

/**
 * xnic_credit_rx_drop() - the responder had no room for a request frame
 * @qp: the QP
 *
 * Context: tp lock held (softirq).
 */
void xnic_credit_rx_drop(struct xnic_qp *qp)
{
	xnic_ccnt_add(qp->xdev, XNIC_CCNT_RX_DROPS, 1);
}

/**
 * xnic_credit_rx_frame() - handle a CREDIT frame
 * @qp: the QP it is addressed to
 * @i: its header, accepted by xnic_wire_check()
 *
 * A request (to the responder) is answered with an update carrying the
 * responder's current grant; an update (to the requester) moves its limit
 * like the credits of an ACK, and hands a flow that can send now to the
 * engine. Frames not from the QP's peer are counted and dropped.
 *
 * Context: softirq, tp lock held.
 */
void xnic_credit_rx_frame(struct xnic_qp *qp, const struct xnic_wire_info *i)
{
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_rx *rx = &tp->rx;
	struct xnic_tx *tx = &tp->tx;
	enum ib_qp_state state = xnic_qp_state(qp);

	if (i->flags & XNIC_WF_CREDIT_REQ) {
		if (!rx->started || rx->fatal || i->src_node != rx->remote_node ||
		    i->src_qpn != rx->dest_qpn ||
		    (state != IB_QPS_RTR && state != IB_QPS_RTS)) {
			xnic_cnt_inc(qp->xdev, XNIC_CNT_BAD_QP_STATE);
			return;
		}
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_REQ_RCVD, 1);
		xnic_credit_send(qp, rx->remote_node, rx->dest_qpn,
				 rx->win.epsn,
				 xnic_credit_rx_grant(qp, rx->win.epsn), false);
		return;
	}
	if (!tx->started || state != IB_QPS_RTS ||
	    i->src_node != tx->remote_node || i->src_qpn != tx->dest_qpn) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_BAD_QP_STATE);
		return;
	}
	if (xnic_psn_before(tx->next_psn, i->psn)) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_OUT_OF_WINDOW);
		return;
	}
	xnic_ccnt_add(qp->xdev, XNIC_CCNT_UPD_RCVD, 1);
	xnic_credit_tx_ack(qp, i->psn, i->credits, tx->next_psn);
	if (tp->cr.stalled &&
	    xnic_credit_flow_avail(&tp->cr.flow, tx->next_psn))
		tp->activate = true;
}

/* ------------------------------ engine ------------------------------ */

/**
 * xnic_credit_budget() - frames a QP may send in one engine pass
 * @xdev: the device (its class weights: netlink class0_weight and
 *	class1_weight)
 * @tclass: the QP's traffic class
 * @quantum: the pass's quantum, frames
 * @class0_busy: class 0 QPs had more to send in this pass
 *
 * xnic_credit_class_budget(); while class 0 is idle, a class 1 turn is
 * XNIC_CREDIT_CLASS1_TURN bytes, or one class 1 frame while class 0 sends
 * (xnic_credit_seg_bytes()); one frame with drr_unit 0. So the engine
 * looks for class 0 doorbells between two bulk frames. The deficit round
 * robin of class 1 (xnic_credit_drr_begin()) is kept with the smaller
 * quantum.
 *
 * Context: the engine thread.
 * Return: the budget, frames, at least 1.
 */
unsigned int xnic_credit_budget(struct xnic_dev *xdev, u8 tclass,
				unsigned int quantum, bool class0_busy)
{
	unsigned int b, unit = READ_ONCE(drr_unit.val);
	u32 turn;

	b = xnic_credit_class_budget(tclass, quantum,
				     READ_ONCE(xdev->params.class_weight[0]),
				     READ_ONCE(xdev->params.class_weight[1]),
				     class0_busy);
	if (tclass == XNIC_TCLASS_LATENCY || class0_busy)
		return b;
	turn = xnic_credit_class1_seg(xdev) ?: XNIC_CREDIT_CLASS1_TURN;
	turn = min_t(u32, turn, XNIC_CREDIT_CLASS1_TURN);
	return min(b, unit ? DIV_ROUND_UP(turn, unit) : 1);
}

/* The byte quantum of a class budget of @frames frames. */
static u32 xnic_credit_drr_quantum(unsigned int frames)
{
	return min_t(u64, (u64)frames * READ_ONCE(drr_unit.val), U32_MAX / 4);
}

/**
 * xnic_credit_drr_begin() - a QP's turn in an engine pass starts
 * @qp: the QP
 * @frames: its class budget, frames (xnic_credit_budget())
 *
 * Byte deficit round robin (credit_logic.h): the QP's deficit grows by
 * @frames * drr_unit bytes, and it may send the frames that cover it, so
 * QPs of one class get equal bytes whatever their frame sizes. With
 * drr_unit 0, @frames as it is.
 *
 * Context: tp lock held (the engine thread).
 * Return: the frames the QP may send in this turn (0: it is in debt).
 */
unsigned int xnic_credit_drr_begin(struct xnic_qp *qp, unsigned int frames)
{
	u32 q = xnic_credit_drr_quantum(frames);

	if (!q)
		return frames;
	return xnic_drr_begin(&xnic_cq_of(qp)->drr, q,
			      READ_ONCE(drr_unit.val));
}

/**
 * xnic_credit_drr_end() - a QP's turn is over
 * @qp: the QP
 * @frames: the class budget its turn began with
 * @busy: it has more to send
 *
 * Context: tp lock held (the engine thread).
 */
void xnic_credit_drr_end(struct xnic_qp *qp, unsigned int frames, bool busy)
{
	u32 q = xnic_credit_drr_quantum(frames);

	if (q)
		xnic_drr_end(&xnic_cq_of(qp)->drr, q, busy);
}

/**
 * xnic_credit_drr_inline() - frames a QP may send outside the engine's
 *	turns (inline, after an ACK)
 * @qp: the QP
 * @max: most frames the caller would send
 *
 * What remains of the QP's deficit; the engine refills it in the QP's
 * next turn.
 *
 * Context: tp lock held.
 * Return: frames, at most @max.
 */
unsigned int xnic_credit_drr_inline(struct xnic_qp *qp, unsigned int max)
{
	if (!READ_ONCE(drr_unit.val))
		return max;
	return xnic_drr_inline(&xnic_cq_of(qp)->drr, max);
}

/**
 * xnic_credit_drr_charge() - a QP sent a frame: pay it from its deficit
 * @qp: the QP
 * @bytes: the frame's bytes
 *
 * Every frame counts, whoever sent it (the engine, the wakeup syscall, an
 * ACK): inline sends leave less for the QP's next turn.
 *
 * Context: tp lock held.
 */
void xnic_credit_drr_charge(struct xnic_qp *qp, unsigned int bytes)
{
	xnic_drr_charge(&xnic_cq_of(qp)->drr, bytes);
}

/**
 * xnic_credit_inline_begin() - frames a QP may send inline under the class
 *	scheduler
 * @qp: the QP
 * @max: most frames the caller would send (its bound)
 * @ci: filled in for xnic_credit_inline_end()
 *
 * Inline sends (the wakeup syscall, ACK processing) bypass the engine's
 * pass, which serves class 0 first and shares each class by byte deficit
 * round robin; so that they cannot overtake it:
 *  - a class 1 QP sends nothing while a class 0 QP of the device waits
 *    for the engine (xnic_engine_class0_backlogged()), and one frame
 *    otherwise: a burst, above all one in softirq (ACK processing),
 *    would hold up a class 0 doorbell the engine is about to see
 *    (xnic_credit_budget());
 *  - a QP sends at most what its deficit covers
 *    (xnic_credit_drr_inline()). A class 0 QP of small messages keeps
 *    the latency of inline sending: the engine refills its deficit to a
 *    quantum (64 KiB by default) whenever it runs it, and the wakeup
 *    syscall does when no class 0 QP waits for the engine.
 * What the QP may not send is left to the engine (the caller activates
 * the QP), whose pass applies the priority and the deficits.
 *
 * Context: tp lock held.
 * Return: frames the QP may send now, at most @max; 0: none.
 */
unsigned int xnic_credit_inline_begin(struct xnic_qp *qp, unsigned int max,
				      struct xnic_credit_inline *ci)
{
	bool cls0 = READ_ONCE(qp->tclass) == XNIC_TCLASS_LATENCY;

	ci->prio = false;
	if (!cls0) {
		ci->prio = xnic_engine_class0_backlogged(qp->xdev);
		if (ci->prio)
			max = 0;
		else
			max = min(max, 1U);
	}
	ci->max = max;
	ci->allowed = max ? xnic_credit_drr_inline(qp, max) : 0;
	/*
	 * A class 0 QP whose deficit is spent while no class 0 QP waits for
	 * the engine is alone in its round: the wakeup syscall starts its
	 * next turn, as the engine's pass would once woken (a wakeup that
	 * cost a ping-pong ~150 us under TCG every 64 KiB of its frames,
	 * ACKs included). Not in softirq: an ACK's sends stay bounded by the
	 * deficit the engine gave.
	 */
	if (cls0 && max && !ci->allowed && in_task() &&
	    !xnic_engine_class0_backlogged(qp->xdev)) {
		unsigned int b = xnic_credit_budget(qp->xdev,
						    XNIC_TCLASS_LATENCY, max,
						    false);

		ci->allowed = min(max, xnic_credit_drr_begin(qp, b));
	}
	return ci->allowed;
}

/**
 * xnic_credit_inline_end() - count what an inline send did
 * @qp: the QP
 * @ci: what xnic_credit_inline_begin() allowed
 * @left: what is left of @ci->allowed, frames
 * @more: the QP has more to send (it goes to the engine)
 *
 * Counts the frames sent inline per class, and the inline sends left to
 * the engine by the class scheduler: for class 0 (tx_inline_prio_deferred)
 * or because the deficit was spent (tx_inline_drr_deferred).
 *
 * Context: tp lock held.
 */
void xnic_credit_inline_end(struct xnic_qp *qp,
			    const struct xnic_credit_inline *ci,
			    unsigned int left, bool more)
{
	bool cls1 = READ_ONCE(qp->tclass) != XNIC_TCLASS_LATENCY;

	if (ci->allowed > left)
		xnic_ccnt_add(qp->xdev, cls1 ? XNIC_CCNT_INLINE_CLASS1_FRAMES :
				       XNIC_CCNT_INLINE_CLASS0_FRAMES,
			      ci->allowed - left);
	if (!more || left)
		return;
	if (ci->prio)
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_INLINE_PRIO_DEFERRED, 1);
	else if (ci->allowed < ci->max)
		xnic_ccnt_add(qp->xdev, XNIC_CCNT_INLINE_DRR_DEFERRED, 1);
}
