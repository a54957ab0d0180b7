// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - connection manager: the REQ/REP/RTU/REJ exchange (IBTA 1.4
 * volume 1 chapter 12, reduced) that lets two applications connect a pair
 * of QPs knowing only (node, service id). Documentation/cm.rst has the
 * protocol, the states and the timeouts; cm.h the execution model.
 *
 * Active side:  CONNECT -> REQ_SENT --REP--> REP_RCVD --RTU request-->
 *                ACTIVE_DONE (RTU sent, once the application connected
 *                its QP); REQ_SENT --REJ / resends exhausted--> freed
 * Passive side: REQ -> REQ_RCVD (event to the listener)
 *                  --ACCEPT--> REP_SENT --RTU--> ESTABLISHED
 *                  --REJECT / listener gone--> REJECTED
 * Both, once the QP is tied to the connection (xnic_cm_bind()):
 *                ACTIVE_DONE/ESTABLISHED --linger over--> CONNECTED;
 *                --QP destroyed, reset or errored--> DREQ_SENT --DREP /
 *                resends exhausted--> freed; --DREQ--> DREQ_RCVD (DREP
 *                sent, QP to error) --linger over--> freed
 * This file holds the messages, their receipt, the timers and the device
 * lifetime; cm_req.c the applications' requests, cm_priv.h the records.
 * Records that are done linger for as long as the peer may resend (its
 * timeout times its resends plus two), so that duplicates are answered
 * the same way (the same REP, RTU or REJ) and never reach the
 * application twice. Passive records are found by (peer node, peer's
 * communication id), active ones by our communication id.
 */
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "transport_priv.h"
#include "cm_priv.h"

static_assert(sizeof(struct xnic_wire_cm) == XNIC_WIRE_CM_LEN);
static_assert(XNIC_CM_PRIVATE_MAX == XNIC_CM_PRIVATE_LEN);

/* Names of enum xnic_cm_counter, in order (Documentation/cm.rst). */
const char *const xnic_cm_counter_names[XNIC_CM_NR_COUNTERS] = {
	[XNIC_CM_CNT_REQ_SENT]		= "cm_req_sent",
	[XNIC_CM_CNT_REQ_RCVD]		= "cm_req_rcvd",
	[XNIC_CM_CNT_REP_SENT]		= "cm_rep_sent",
	[XNIC_CM_CNT_REP_RCVD]		= "cm_rep_rcvd",
	[XNIC_CM_CNT_RTU_SENT]		= "cm_rtu_sent",
	[XNIC_CM_CNT_RTU_RCVD]		= "cm_rtu_rcvd",
	[XNIC_CM_CNT_REJ_SENT]		= "cm_rej_sent",
	[XNIC_CM_CNT_REJ_RCVD]		= "cm_rej_rcvd",
	[XNIC_CM_CNT_DUP_REQ]		= "cm_dup_req",
	[XNIC_CM_CNT_DUP_REP]		= "cm_dup_rep",
	[XNIC_CM_CNT_RETRANSMITS]	= "cm_retransmits",
	[XNIC_CM_CNT_TIMEOUTS]		= "cm_timeouts",
	[XNIC_CM_CNT_ESTABLISHED]	= "cm_established",
	[XNIC_CM_CNT_MALFORMED]		= "cm_malformed",
	[XNIC_CM_CNT_UNKNOWN_ID]	= "cm_unknown_id",
	[XNIC_CM_CNT_EVENT_DROPS]	= "cm_event_drops",
	[XNIC_CM_CNT_DREQ_SENT]		= "cm_dreq_sent",
	[XNIC_CM_CNT_DREQ_RCVD]		= "cm_dreq_rcvd",
	[XNIC_CM_CNT_DREP_SENT]		= "cm_drep_sent",
	[XNIC_CM_CNT_DREP_RCVD]		= "cm_drep_rcvd",
	[XNIC_CM_CNT_DISCONNECTS]	= "cm_disconnects",
};

/* Every device's CM, for the netlink socket release notifier. */
static LIST_HEAD(xnic_cm_all);
static DEFINE_MUTEX(xnic_cm_mutex);

/* Make xnic_cm_work() run by @when at the latest. Context: cm->lock. */
static void xnic_cm_arm(struct xnic_cm *cm, unsigned long when)
{
	unsigned long now = jiffies;

	if (cm->dying)
		return;
	if (cm->armed && !time_before(when, cm->next_run))
		return;
	cm->armed = true;
	cm->next_run = when;
	mod_delayed_work(system_wq, &cm->work,
			 time_after(when, now) ? when - now : 0);
}

/**
 * xnic_cm_set_deadline() - when xnic_cm_work() next looks at a record
 * @cm: the device's CM
 * @c: the record
 * @delay: from now, jiffies
 *
 * Context: @cm->lock held.
 */
void xnic_cm_set_deadline(struct xnic_cm *cm, struct xnic_cm_conn *c,
			  unsigned long delay)
{
	c->deadline = jiffies + delay;
	xnic_cm_arm(cm, c->deadline);
}

/**
 * xnic_cm_tries_start() - the REQ, REP or DREQ of @c was sent: schedule
 *	its resends
 * @cm: the device's CM
 * @c: the record, in REQ_SENT, REP_SENT or DREQ_SENT
 *
 * Resends back off from XNIC_CM_FIRST_TRY_MS to @c->timeout_ms; they stop
 * @c->timeout_ms * (@c->retries + 1) after the first try, before the
 * peer's record of the exchange stops answering duplicates
 * (xnic_cm_linger()).
 *
 * Context: @cm->lock held.
 */
void xnic_cm_tries_start(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	c->try_ms = min_t(u32, XNIC_CM_FIRST_TRY_MS, c->timeout_ms);
	c->give_up = jiffies +
		     msecs_to_jiffies(c->timeout_ms * (c->retries + 1U));
	xnic_cm_set_deadline(cm, c, msecs_to_jiffies(c->try_ms));
}

/* A try of @c timed out. Return whether to resend (the deadline is set). */
static bool xnic_cm_next_try(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	unsigned long now = jiffies;

	if (!time_before(now, c->give_up))
		return false;
	xnic_cm_inc(cm, XNIC_CM_CNT_RETRANSMITS);
	c->try_ms = min(c->try_ms * 2, c->timeout_ms);
	c->deadline = now + msecs_to_jiffies(c->try_ms);
	if (time_after(c->deadline, c->give_up))
		c->deadline = c->give_up;
	return true;
}

/* Send a CM message to @node. Losses are the peer's resends' business. */
static void xnic_cm_send(struct xnic_cm *cm, u16 node,
			 const struct xnic_cm_info *ci)
{
	static const u8 cnt[XNIC_CM_TYPE_MAX] = {
		[XNIC_CM_REQ] = XNIC_CM_CNT_REQ_SENT,
		[XNIC_CM_REP] = XNIC_CM_CNT_REP_SENT,
		[XNIC_CM_RTU] = XNIC_CM_CNT_RTU_SENT,
		[XNIC_CM_REJ] = XNIC_CM_CNT_REJ_SENT,
		[XNIC_CM_DREQ] = XNIC_CM_CNT_DREQ_SENT,
		[XNIC_CM_DREP] = XNIC_CM_CNT_DREP_SENT,
	};
	struct xnic_dev *xdev = cm->xdev;
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_CM,
		.src_node = READ_ONCE(xdev->node_id),
		.dst_node = node,
		.payload_len = XNIC_WIRE_CM_LEN,
	};
	struct sk_buff *skb;

	xnic_cm_inc(cm, cnt[ci->type]);
	skb = xnic_frame_alloc(XNIC_WIRE_CM_LEN, GFP_ATOMIC);
	if (!skb) {
		xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
		return;
	}
	xnic_cm_encode(skb_put(skb, XNIC_WIRE_CM_LEN), ci);
	xnic_frame_finish(skb, &i);
	xnic_tp_xmit(xdev, node, skb);
}

/**
 * xnic_cm_send_conn() - send (again) the REQ or REP of a record
 * @cm: the device's CM
 * @c: the record: active, its REQ; passive, its REP
 *
 * Context: @cm->lock held.
 */
void xnic_cm_send_conn(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	struct xnic_cm_info ci = {
		.type = c->passive ? XNIC_CM_REP : XNIC_CM_REQ,
		.local_id = c->id,
		.remote_id = c->remote_id,
		.qpn = c->qpn,
		.psn = c->psn,
		.service_id = c->service_id,
		.private_len = c->private_len,
	};

	if (!c->passive) {
		ci.timeout_ms = c->timeout_ms;
		ci.retries = c->retries;
	}
	memcpy(ci.private_data, c->private_data, c->private_len);
	xnic_cm_send(cm, c->node, &ci);
}

/**
 * xnic_cm_send_short() - send a message carrying no QP (RTU, REJ)
 * @cm: the device's CM
 * @node: destination node
 * @type: XNIC_CM_RTU or XNIC_CM_REJ
 * @reason: REJ: enum xnic_cm_reason; RTU: 0
 * @local_id: our communication id (0: no record)
 * @remote_id: the destination's communication id
 * @service_id: the service id
 * @priv: private data (REJ), may be NULL when @priv_len is 0
 * @priv_len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 *
 * Context: @cm->lock held.
 */
void xnic_cm_send_short(struct xnic_cm *cm, u16 node, u8 type,
			u8 reason, u32 local_id, u32 remote_id,
			u64 service_id, const u8 *priv, u8 priv_len)
{
	struct xnic_cm_info ci = {
		.type = type,
		.reason = reason,
		.local_id = local_id,
		.remote_id = remote_id,
		.service_id = service_id,
		.private_len = priv_len,
	};

	memcpy(ci.private_data, priv, priv_len);
	xnic_cm_send(cm, node, &ci);
}

/**
 * xnic_cm_send_rej() - send the REJ a record holds (reason, private data)
 * @cm: the device's CM
 * @c: the record
 *
 * Context: @cm->lock held.
 */
void xnic_cm_send_rej(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	xnic_cm_send_short(cm, c->node, XNIC_CM_REJ, c->reason, c->id,
			   c->remote_id, c->service_id, c->private_data,
			   c->private_len);
}

/* Report to @c's owner; 0 or the delivery's error (counted). */
static int xnic_cm_report(struct xnic_cm *cm, struct xnic_cm_conn *c,
			  u8 event, const struct xnic_cm_info *ci)
{
	struct xnic_cm_event_info ev = {
		.event = event,
		.id = c->id,
		.node = c->node,
		.service_id = c->service_id,
	};
	int err;

	if (!c->owner.portid) {
		err = -ENOTCONN;
		goto drop;
	}
	if (ci) {
		ev.qpn = ci->qpn;
		ev.psn = ci->psn;
		ev.reason = ci->reason;
		ev.private_len = ci->private_len;
		ev.private_data = ci->private_data;
	}
	err = xnic_cm_nl_event(cm->xdev, &c->owner, &ev);
	if (!err)
		return 0;
drop:
	xnic_cm_inc(cm, XNIC_CM_CNT_EVENT_DROPS);
	return err;
}

/**
 * xnic_cm_free() - forget a record
 * @cm: the device's CM
 * @c: the record; freed
 *
 * Context: @cm->lock held.
 */
void xnic_cm_free(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	xa_erase(&cm->conns, c->id);
	if (c->passive)
		hash_del(&c->hnode);
	if (c->state != XNIC_CMS_CONNECTED)
		cm->nr_conns--;
	kfree(c);
}

/**
 * xnic_cm_alloc() - give a new record a communication id
 * @cm: the device's CM
 * @c: the record, zeroed but for what the caller filled
 *
 * Context: @cm->lock held.
 * Return: @c, or NULL at XNIC_CM_MAX_CONNS records or out of memory.
 */
struct xnic_cm_conn *xnic_cm_alloc(struct xnic_cm *cm,
				   struct xnic_cm_conn *c)
{
	int err;

	if (cm->nr_conns >= XNIC_CM_MAX_CONNS)
		return NULL;
	err = xa_alloc_cyclic(&cm->conns, &c->id, c, XA_LIMIT(1, U32_MAX),
			      &cm->next_id, GFP_ATOMIC);
	if (err < 0)
		return NULL;
	cm->nr_conns++;
	return c;
}

static u32 xnic_cm_passive_key(u16 node, u32 remote_id)
{
	return remote_id ^ ((u32)node << 16);
}

static struct xnic_cm_conn *xnic_cm_find_passive(struct xnic_cm *cm,
						 u16 node, u32 remote_id)
{
	struct xnic_cm_conn *c;

	hash_for_each_possible(cm->passive, c, hnode,
			       xnic_cm_passive_key(node, remote_id))
		if (c->node == node && c->remote_id == remote_id)
			return c;
	return NULL;
}

/**
 * xnic_cm_find_listener() - the listener of a service id
 * @cm: the device's CM
 * @service_id: the service id
 *
 * Context: @cm->lock held.
 * Return: the listener or NULL.
 */
struct xnic_cm_listener *xnic_cm_find_listener(struct xnic_cm *cm,
					       u64 service_id)
{
	struct xnic_cm_listener *l;

	hash_for_each_possible(cm->listeners, l, hnode, service_id)
		if (l->service_id == service_id)
			return l;
	return NULL;
}

/**
 * xnic_cm_refuse() - refuse a request not answered yet
 * @cm: the device's CM
 * @c: a passive record in REQ_RCVD; lingers as REJECTED
 * @reason: enum xnic_cm_reason
 * @priv: private data for the REJ (may be NULL when @priv_len is 0)
 * @priv_len: bytes of @priv
 *
 * Context: @cm->lock held.
 */
void xnic_cm_refuse(struct xnic_cm *cm, struct xnic_cm_conn *c,
		    u8 reason, const u8 *priv, u8 priv_len)
{
	c->state = XNIC_CMS_REJECTED;
	c->reason = reason;
	c->private_len = priv_len;
	memcpy(c->private_data, priv, priv_len);
	xnic_cm_send_rej(cm, c);
	xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
}

/* ----------------------------- disconnect ---------------------------- */

/* Whether @o may name @qp: it created it, or it has CAP_NET_ADMIN. */
static bool xnic_cm_owns_qp(const struct xnic_cm_owner *o,
			    const struct xnic_qp *qp)
{
	return o->admin || uid_eq(o->uid, qp->owner_uid);
}

/**
 * xnic_cm_may_use_qp() - whether a CM request may name a QP
 * @cm: the device's CM
 * @o: the requester
 * @qpn: the QP it names in CONNECT or ACCEPT
 *
 * The requests need no privilege (cm_netlink.c), so a QP is tied to a
 * connection (xnic_cm_bind()), and moved to the error state by its DREQ,
 * only for a requester of the uid that created it, or with
 * CAP_NET_ADMIN: else one process could disconnect another's QP.
 *
 * Context: process context.
 * Return: false when @qpn is a QP of another uid (the request fails with
 * -EPERM); true otherwise, also when there is no such QP (yet).
 */
bool xnic_cm_may_use_qp(struct xnic_cm *cm, const struct xnic_cm_owner *o,
			u32 qpn)
{
	struct xnic_qp *qp = xnic_qp_get(cm->xdev, qpn);
	bool ok;

	if (!qp)
		return true;
	ok = xnic_cm_owns_qp(o, qp);
	xnic_qp_put(qp);
	return ok;
}

/*
 * The QP of @c, referenced, when it is connected to @c's peer QP (RTR or
 * RTS, the same node and QPN) and @c's owner may name it
 * (xnic_cm_may_use_qp()): else NULL. Context: @cm->lock held.
 */
static struct xnic_qp *xnic_cm_conn_qp(struct xnic_cm *cm,
				       const struct xnic_cm_conn *c)
{
	struct xnic_qp *qp = xnic_qp_get(cm->xdev, c->qpn);
	enum ib_qp_state st;

	if (!qp)
		return NULL;
	if (!xnic_cm_owns_qp(&c->owner, qp)) {
		xnic_qp_put(qp);
		return NULL;
	}
	/* Pairs with modify_qp's store-release: the peer fields are set. */
	st = smp_load_acquire(&qp->state);
	if ((st != IB_QPS_RTR && st != IB_QPS_RTS) ||
	    qp->remote_node != c->node || qp->dest_qpn != c->remote_qpn) {
		xnic_qp_put(qp);
		return NULL;
	}
	return qp;
}

/*
 * @qp, connected for @c, is tied to another record: connected again
 * without a reset, so that tie is void (a CONNECTED record without its QP
 * is forgotten). Context: @cm->lock held.
 */
static void xnic_cm_untie_other(struct xnic_cm *cm, struct xnic_qp *qp,
				struct xnic_cm_conn *c)
{
	struct xnic_cm_conn *old;

	if (!qp->cm_id || qp->cm_id == c->id)
		return;
	old = xa_load(&cm->conns, qp->cm_id);
	if (old && old->bound && old->qpn == c->qpn) {
		old->bound = false;
		if (old->state == XNIC_CMS_CONNECTED)
			xnic_cm_free(cm, old);
	}
}

/**
 * xnic_cm_bind() - tie a connection that completed to its QP
 * @cm: the device's CM
 * @c: a record in ACTIVE_DONE or ESTABLISHED
 *
 * When @c's QP is connected to the peer's QP @c names, the QP records
 * @c's id: destroying, resetting or disconnecting it then sends a DREQ,
 * and a DREQ from the peer moves it to the error state. A QP that is not
 * (the application connected it elsewhere) is left alone.
 *
 * Context: @cm->lock held.
 */
void xnic_cm_bind(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	struct xnic_qp *qp = xnic_cm_conn_qp(cm, c);

	if (!qp)
		return;
	xnic_cm_untie_other(cm, qp, c);
	qp->cm_id = c->id;
	c->bound = true;
	xnic_qp_put(qp);
}

/*
 * @c leaves CONNECTED, if it is there: it counts against
 * XNIC_CM_MAX_CONNS again (CONNECTED records are bounded by the QPs they
 * are tied to, not by that limit). Context: @cm->lock held.
 */
static void xnic_cm_leave_connected(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	if (c->state == XNIC_CMS_CONNECTED)
		cm->nr_conns++;
}

static void xnic_cm_send_dreq(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	struct xnic_cm_info ci = {
		.type = XNIC_CM_DREQ,
		.local_id = c->id,
		.remote_id = c->remote_id,
		.qpn = c->qpn,
		.psn = c->rx_epsn,
		.service_id = c->service_id,
	};

	xnic_cm_send(cm, c->node, &ci);
}

/**
 * xnic_cm_qp_disconnect() - a QP is destroyed, reset or moved to the error
 *	state: tell the peer of its CM connection
 * @qp: the QP; when destroyed, already out of the device's QP table (so no
 *	connection can be tied to it any more)
 *
 * When @qp is tied to a connection (xnic_cm_bind()), sends a DREQ, resent
 * (xnic_cm_tries_start()) until the DREP comes.
 * The DREQ carries the PSN @qp's responder expects next: the peer takes it
 * as a cumulative ACK, then moves its QP to the error state. Nothing
 * happens otherwise.
 *
 * Context: process context or softirq; does not sleep. @qp's transport
 * state must not be stopped yet (xnic_tp_qp_stop()).
 */
void xnic_cm_qp_disconnect(struct xnic_qp *qp)
{
	struct xnic_cm *cm = READ_ONCE(qp->xdev->cm);
	struct xnic_cm_conn *c;
	u32 epsn;

	if (!cm)
		return;
	epsn = xnic_tp_qp_rx_epsn(qp);
	spin_lock_bh(&cm->lock);
	c = qp->cm_id ? xa_load(&cm->conns, qp->cm_id) : NULL;
	qp->cm_id = 0;
	if (c && c->bound && c->qpn == qp->ibqp.qp_num) {
		c->bound = false;
		xnic_cm_leave_connected(cm, c);
		c->state = XNIC_CMS_DREQ_SENT;
		c->rx_epsn = epsn;
		xnic_cm_send_dreq(cm, c);
		xnic_cm_tries_start(cm, c);
	}
	spin_unlock_bh(&cm->lock);
}

/* ------------------------------ receive ------------------------------ */

static void xnic_cm_rx_req(struct xnic_cm *cm, u16 node,
			   const struct xnic_cm_info *ci)
{
	struct xnic_cm_listener *l;
	struct xnic_cm_conn *c;

	xnic_cm_inc(cm, XNIC_CM_CNT_REQ_RCVD);
	c = xnic_cm_find_passive(cm, node, ci->local_id);
	if (c) {
		/* A resend: answer as before, never report it again. */
		xnic_cm_inc(cm, XNIC_CM_CNT_DUP_REQ);
		if (c->state == XNIC_CMS_REP_SENT ||
		    c->state == XNIC_CMS_ESTABLISHED)
			xnic_cm_send_conn(cm, c);
		else if (c->state == XNIC_CMS_REJECTED)
			xnic_cm_send_rej(cm, c);
		return;
	}
	l = xnic_cm_find_listener(cm, ci->service_id);
	if (!l) {
		xnic_cm_send_short(cm, node, XNIC_CM_REJ,
				   XNIC_CM_REASON_NO_LISTENER, 0, ci->local_id,
				   ci->service_id, NULL, 0);
		return;
	}
	c = kzalloc(sizeof(*c), GFP_ATOMIC);
	if (!c || !xnic_cm_alloc(cm, c)) {
		kfree(c);
		xnic_cm_send_short(cm, node, XNIC_CM_REJ,
				   XNIC_CM_REASON_NO_RESOURCES, 0,
				   ci->local_id, ci->service_id, NULL, 0);
		return;
	}
	c->passive = true;
	c->state = XNIC_CMS_REQ_RCVD;
	c->node = node;
	c->remote_id = ci->local_id;
	c->service_id = ci->service_id;
	c->timeout_ms = ci->timeout_ms;
	c->retries = ci->retries;
	c->remote_qpn = ci->qpn;
	c->owner = l->owner;
	hash_add(cm->passive, &c->hnode,
		 xnic_cm_passive_key(node, c->remote_id));
	if (xnic_cm_report(cm, c, XNIC_CM_EVENT_REQ, ci)) {
		/* Not reported: forget it, the peer's resend tries again. */
		xnic_cm_free(cm, c);
		return;
	}
	/* The application has until the peer gives up to answer. */
	xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
}

/* @c: ours, from @node; NULL (counted) when the message is not for one. */
static struct xnic_cm_conn *xnic_cm_lookup(struct xnic_cm *cm, u16 node,
					   const struct xnic_cm_info *ci)
{
	struct xnic_cm_conn *c = xa_load(&cm->conns, ci->remote_id);

	/* A REJ answering a message we sent for no record has local_id 0. */
	if (!c || c->node != node ||
	    (c->remote_id && c->remote_id != ci->local_id &&
	     !(ci->type == XNIC_CM_REJ && !ci->local_id))) {
		xnic_cm_inc(cm, XNIC_CM_CNT_UNKNOWN_ID);
		return NULL;
	}
	return c;
}

static void xnic_cm_rx_rep(struct xnic_cm *cm, u16 node,
			   const struct xnic_cm_info *ci)
{
	struct xnic_cm_conn *c;

	xnic_cm_inc(cm, XNIC_CM_CNT_REP_RCVD);
	c = xnic_cm_lookup(cm, node, ci);
	if (!c || c->passive) {
		/* We gave up on it: tell the peer so it stops resending. */
		if (!c)
			xnic_cm_send_short(cm, node, XNIC_CM_REJ,
					   XNIC_CM_REASON_TIMEOUT, 0,
					   ci->local_id, ci->service_id,
					   NULL, 0);
		return;
	}
	if (c->state != XNIC_CMS_REQ_SENT) {
		/* A resend: our RTU was lost, or is not sent yet. */
		xnic_cm_inc(cm, XNIC_CM_CNT_DUP_REP);
		if (c->state == XNIC_CMS_ACTIVE_DONE)
			xnic_cm_send_short(cm, node, XNIC_CM_RTU, 0, c->id,
					   c->remote_id, c->service_id,
					   NULL, 0);
		return;
	}
	/* Not reported (socket full): our REQ resend brings the REP back. */
	if (xnic_cm_report(cm, c, XNIC_CM_EVENT_REP, ci))
		return;
	c->remote_id = ci->local_id;
	c->remote_qpn = ci->qpn;
	c->state = XNIC_CMS_REP_RCVD;
	/* The application connects its QP, then asks for the RTU. */
	xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
}

static void xnic_cm_rx_rtu(struct xnic_cm *cm, u16 node,
			   const struct xnic_cm_info *ci)
{
	struct xnic_cm_conn *c;

	xnic_cm_inc(cm, XNIC_CM_CNT_RTU_RCVD);
	c = xnic_cm_lookup(cm, node, ci);
	if (!c || !c->passive || c->state != XNIC_CMS_REP_SENT)
		return;
	c->state = XNIC_CMS_ESTABLISHED;
	xnic_cm_inc(cm, XNIC_CM_CNT_ESTABLISHED);
	xnic_cm_bind(cm, c);
	xnic_cm_report(cm, c, XNIC_CM_EVENT_ESTABLISHED, NULL);
	xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
}

static void xnic_cm_rx_rej(struct xnic_cm *cm, u16 node,
			   const struct xnic_cm_info *ci)
{
	struct xnic_cm_conn *c;

	xnic_cm_inc(cm, XNIC_CM_CNT_REJ_RCVD);
	c = xnic_cm_lookup(cm, node, ci);
	if (!c)
		return;
	/* REP_RCVD: the passive side gave up before our RTU (too late). */
	if (c->state == XNIC_CMS_REQ_SENT || c->state == XNIC_CMS_REP_SENT ||
	    c->state == XNIC_CMS_REP_RCVD) {
		xnic_cm_report(cm, c, XNIC_CM_EVENT_REJ, ci);
		xnic_cm_free(cm, c);
	}
}

/* The connected record a DREQ or DREP names; NULL (counted) if none. */
static struct xnic_cm_conn *xnic_cm_lookup_conn(struct xnic_cm *cm, u16 node,
						const struct xnic_cm_info *ci)
{
	struct xnic_cm_conn *c = xa_load(&cm->conns, ci->remote_id);

	if (!c || c->node != node || c->remote_id != ci->local_id ||
	    (ci->type == XNIC_CM_DREQ && c->remote_qpn != ci->qpn)) {
		xnic_cm_inc(cm, XNIC_CM_CNT_UNKNOWN_ID);
		return NULL;
	}
	return c;
}

/*
 * A DREQ: answer DREP, and return the QP to move to the error state
 * (referenced) once the lock is dropped, or NULL.
 */
static struct xnic_qp *xnic_cm_rx_dreq(struct xnic_cm *cm, u16 node,
				       const struct xnic_cm_info *ci)
{
	struct xnic_qp *qp = NULL;
	struct xnic_cm_conn *c;

	xnic_cm_inc(cm, XNIC_CM_CNT_DREQ_RCVD);
	c = xnic_cm_lookup_conn(cm, node, ci);
	if (!c)
		return NULL;
	switch (c->state) {
	case XNIC_CMS_ACTIVE_DONE:
	case XNIC_CMS_ESTABLISHED:
	case XNIC_CMS_CONNECTED:
	case XNIC_CMS_REP_SENT:		/* our RTU was lost, theirs went */
		break;
	case XNIC_CMS_DREQ_SENT:	/* both sides at once: both answer */
	case XNIC_CMS_DREQ_RCVD:	/* a resend: our DREP was lost */
		xnic_cm_send_short(cm, node, XNIC_CM_DREP, 0, c->id,
				   c->remote_id, c->service_id, NULL, 0);
		return NULL;
	default:
		/* Not connected: nothing to disconnect. */
		xnic_cm_inc(cm, XNIC_CM_CNT_UNKNOWN_ID);
		return NULL;
	}
	xnic_cm_send_short(cm, node, XNIC_CM_DREP, 0, c->id, c->remote_id,
			   c->service_id, NULL, 0);
	if (c->bound || c->state == XNIC_CMS_REP_SENT)
		qp = xnic_cm_conn_qp(cm, c);
	if (qp && c->bound && qp->cm_id != c->id) {
		xnic_qp_put(qp);
		qp = NULL;
	}
	if (qp) {
		/* REP_SENT: the QP may still be tied to an older record. */
		xnic_cm_untie_other(cm, qp, c);
		qp->cm_id = 0;
		xnic_cm_inc(cm, XNIC_CM_CNT_DISCONNECTS);
	}
	c->bound = false;
	xnic_cm_leave_connected(cm, c);
	c->state = XNIC_CMS_DREQ_RCVD;
	if (c->owner.portid)
		xnic_cm_report(cm, c, XNIC_CM_EVENT_DISCONNECTED, ci);
	xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
	return qp;
}

static void xnic_cm_rx_drep(struct xnic_cm *cm, u16 node,
			    const struct xnic_cm_info *ci)
{
	struct xnic_cm_conn *c;

	xnic_cm_inc(cm, XNIC_CM_CNT_DREP_RCVD);
	c = xnic_cm_lookup_conn(cm, node, ci);
	if (c && c->state == XNIC_CMS_DREQ_SENT)
		xnic_cm_free(cm, c);
}

/**
 * xnic_cm_rx() - handle a received CM frame
 * @xdev: the device
 * @i: its header, accepted by xnic_wire_check() (payload length
 *	XNIC_WIRE_CM_LEN); the frame check and the source node were checked
 * @skb: the frame, data at the xnic header; not consumed
 *
 * Malformed messages (xnic_cm_check(), QP numbers in the header) are
 * dropped and counted in cm_malformed; messages for no record of ours in
 * cm_unknown_id. A DREQ for a connection of ours completes what its
 * expected PSN acknowledges (xnic_tp_qp_peer_acked()), then moves the QP
 * to the error state (xnic_qp_to_error(): the rest flushed,
 * IB_EVENT_QP_FATAL), after the CM lock is dropped.
 *
 * Context: softirq (the member links' packet handler).
 */
void xnic_cm_rx(struct xnic_dev *xdev, const struct xnic_wire_info *i,
		struct sk_buff *skb)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_qp *qp = NULL;
	struct xnic_wire_cm w;
	struct xnic_cm_info ci;

	if (!cm)
		return;
	if (skb_copy_bits(skb, XNIC_WIRE_HDR_LEN, &w, sizeof(w))) {
		xnic_cm_inc(cm, XNIC_CM_CNT_MALFORMED);
		return;
	}
	xnic_cm_decode(&ci, &w);
	if (!xnic_cm_check(&ci) || i->src_qpn || i->dst_qpn || i->flags) {
		xnic_cm_inc(cm, XNIC_CM_CNT_MALFORMED);
		return;
	}
	spin_lock_bh(&cm->lock);
	switch (ci.type) {
	case XNIC_CM_REQ:
		xnic_cm_rx_req(cm, i->src_node, &ci);
		break;
	case XNIC_CM_REP:
		xnic_cm_rx_rep(cm, i->src_node, &ci);
		break;
	case XNIC_CM_RTU:
		xnic_cm_rx_rtu(cm, i->src_node, &ci);
		break;
	case XNIC_CM_REJ:
		xnic_cm_rx_rej(cm, i->src_node, &ci);
		break;
	case XNIC_CM_DREQ:
		qp = xnic_cm_rx_dreq(cm, i->src_node, &ci);
		break;
	case XNIC_CM_DREP:
		xnic_cm_rx_drep(cm, i->src_node, &ci);
		break;
	}
	spin_unlock_bh(&cm->lock);
	if (qp) {
		xnic_tp_qp_peer_acked(qp, ci.psn);
		xnic_qp_to_error(qp, XNIC_QP_ERR_DISCONNECTED);
		xnic_qp_put(qp);
	}
}

/* ------------------------------ timers ------------------------------ */

/* @c's deadline passed. Return: false when @c was freed. */
static bool xnic_cm_expire(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	switch (c->state) {
	case XNIC_CMS_REQ_SENT:
	case XNIC_CMS_REP_SENT:
		if (xnic_cm_next_try(cm, c)) {
			xnic_cm_send_conn(cm, c);
			return true;
		}
		xnic_cm_inc(cm, XNIC_CM_CNT_TIMEOUTS);
		if (c->passive) {
			/* No RTU: tell the peer, which may still wait. */
			c->reason = XNIC_CM_REASON_TIMEOUT;
			c->private_len = 0;
			xnic_cm_send_rej(cm, c);
		}
		xnic_cm_report(cm, c, XNIC_CM_EVENT_TIMEOUT, NULL);
		break;
	case XNIC_CMS_DREQ_SENT:
		if (xnic_cm_next_try(cm, c)) {
			xnic_cm_send_dreq(cm, c);
			return true;
		}
		/* The peer is gone too, or does not know DREQ. */
		xnic_cm_inc(cm, XNIC_CM_CNT_TIMEOUTS);
		break;
	case XNIC_CMS_ACTIVE_DONE:
	case XNIC_CMS_ESTABLISHED:
		if (c->bound) {
			/* Lingered; stays while the QP is connected. */
			c->state = XNIC_CMS_CONNECTED;
			cm->nr_conns--;
			return true;
		}
		break;
	case XNIC_CMS_REP_RCVD:
	case XNIC_CMS_REQ_RCVD:
		/* The application never answered; the peer gave up. */
		xnic_cm_inc(cm, XNIC_CM_CNT_TIMEOUTS);
		c->reason = XNIC_CM_REASON_TIMEOUT;
		c->private_len = 0;
		xnic_cm_send_rej(cm, c);
		break;
	default:
		/* Lingered long enough. */
		break;
	}
	xnic_cm_free(cm, c);
	return false;
}

static void xnic_cm_work(struct work_struct *work)
{
	struct xnic_cm *cm = container_of(to_delayed_work(work),
					  struct xnic_cm, work);
	unsigned long now, next = 0, id;
	struct xnic_cm_conn *c;
	bool any = false;

	spin_lock_bh(&cm->lock);
	cm->armed = false;
	now = jiffies;
	xa_for_each(&cm->conns, id, c) {
		if (c->state == XNIC_CMS_CONNECTED)
			continue;	/* no timer */
		if (!time_before(now, c->deadline) && !xnic_cm_expire(cm, c))
			continue;
		if (c->state == XNIC_CMS_CONNECTED)
			continue;
		if (!any || time_before(c->deadline, next))
			next = c->deadline;
		any = true;
	}
	if (any)
		xnic_cm_arm(cm, next);
	spin_unlock_bh(&cm->lock);
}

/**
 * xnic_cm_release_owner() - a netlink socket is closing
 * @net: its namespace
 * @portid: its port id
 *
 * Its listeners go (their unanswered requests are rejected), its
 * connections in progress are abandoned, and nothing is reported to it
 * any more.
 *
 * Context: process context (NETLINK_URELEASE notifier).
 */
void xnic_cm_release_owner(struct net *net, u32 portid)
{
	struct xnic_cm_owner o = { .net = net, .portid = portid };
	struct xnic_cm *cm;

	mutex_lock(&xnic_cm_mutex);
	list_for_each_entry(cm, &xnic_cm_all, node) {
		spin_lock_bh(&cm->lock);
		xnic_cm_release_dev(cm, &o);
		spin_unlock_bh(&cm->lock);
	}
	mutex_unlock(&xnic_cm_mutex);
}

/* ------------------------------ device ------------------------------ */

/**
 * xnic_cm_counters() - read the CM counters of a device
 * @xdev: the device
 * @vals: XNIC_CM_NR_COUNTERS values in xnic_cm_counter_names[] order
 *	(zeros when the CM is not set up)
 *
 * Context: any but hard IRQ.
 */
void xnic_cm_counters(struct xnic_dev *xdev, u64 *vals)
{
	struct xnic_cm *cm = READ_ONCE(xdev->cm);
	int k;

	for (k = 0; k < XNIC_CM_CNT_MAX; k++)
		vals[k] = cm ? atomic64_read(&cm->cnt[k]) : 0;
}

/**
 * xnic_cm_dev_init() - set up a device's connection manager
 * @xdev: the device, before any member link can hand it a frame
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int xnic_cm_dev_init(struct xnic_dev *xdev)
{
	struct xnic_cm *cm;

	cm = kzalloc(sizeof(*cm), GFP_KERNEL);
	if (!cm)
		return -ENOMEM;
	cm->xdev = xdev;
	spin_lock_init(&cm->lock);
	hash_init(cm->listeners);
	hash_init(cm->passive);
	xa_init_flags(&cm->conns, XA_FLAGS_ALLOC);
	cm->next_id = get_random_u32();
	INIT_DELAYED_WORK(&cm->work, xnic_cm_work);
	WRITE_ONCE(xdev->cm, cm);
	mutex_lock(&xnic_cm_mutex);
	list_add(&cm->node, &xnic_cm_all);
	mutex_unlock(&xnic_cm_mutex);
	return 0;
}

/**
 * xnic_cm_dev_cleanup() - tear down a device's connection manager
 * @xdev: the device: no member link, no netlink request can reach it any
 *	more
 *
 * Records in progress are dropped silently (their owners' sockets get no
 * event: the device is gone).
 *
 * Context: process context, RTNL not held.
 */
void xnic_cm_dev_cleanup(struct xnic_dev *xdev)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_listener *l;
	struct hlist_node *tmp;
	struct xnic_cm_conn *c;
	unsigned long id;
	int bkt;

	if (!cm)
		return;
	mutex_lock(&xnic_cm_mutex);
	list_del(&cm->node);
	mutex_unlock(&xnic_cm_mutex);
	spin_lock_bh(&cm->lock);
	cm->dying = true;
	spin_unlock_bh(&cm->lock);
	cancel_delayed_work_sync(&cm->work);
	/*
	 * Under the lock, softirqs off: the receive path takes the table's
	 * xa_lock in softirq (xnic_cm_alloc()), so it is never taken with
	 * softirqs on (lockdep).
	 */
	spin_lock_bh(&cm->lock);
	xa_for_each(&cm->conns, id, c)
		xnic_cm_free(cm, c);
	spin_unlock_bh(&cm->lock);
	hash_for_each_safe(cm->listeners, bkt, tmp, l, hnode) {
		hash_del(&l->hnode);
		kfree(l);
	}
	xa_destroy(&cm->conns);
	WRITE_ONCE(xdev->cm, NULL);
	kfree(cm);
}
