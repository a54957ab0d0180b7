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
 * Records that are done linger for as long as the peer may resend (its
 * timeout times its resends plus one), so that duplicates are answered
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
#include "cm.h"
#include "cm_wire.h"

static_assert(sizeof(struct xnic_wire_cm) == XNIC_WIRE_CM_LEN);
static_assert(XNIC_CM_PRIVATE_MAX == XNIC_CM_PRIVATE_LEN);

enum xnic_cm_counter {
	XNIC_CM_CNT_REQ_SENT,
	XNIC_CM_CNT_REQ_RCVD,
	XNIC_CM_CNT_REP_SENT,
	XNIC_CM_CNT_REP_RCVD,
	XNIC_CM_CNT_RTU_SENT,
	XNIC_CM_CNT_RTU_RCVD,
	XNIC_CM_CNT_REJ_SENT,
	XNIC_CM_CNT_REJ_RCVD,
	XNIC_CM_CNT_DUP_REQ,
	XNIC_CM_CNT_DUP_REP,
	XNIC_CM_CNT_RETRANSMITS,
	XNIC_CM_CNT_TIMEOUTS,
	XNIC_CM_CNT_ESTABLISHED,
	XNIC_CM_CNT_MALFORMED,
	XNIC_CM_CNT_UNKNOWN_ID,
	XNIC_CM_CNT_EVENT_DROPS,
	XNIC_CM_CNT_MAX,
};

static_assert(XNIC_CM_CNT_MAX == XNIC_CM_NR_COUNTERS);

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
};

/**
 * enum xnic_cm_state - states of a connection record
 * @XNIC_CMS_REQ_SENT: active: REQ sent, waiting for REP or REJ
 * @XNIC_CMS_REP_RCVD: active: REP reported, waiting for the application
 *	to connect its QP and ask for the RTU
 * @XNIC_CMS_ACTIVE_DONE: active: REP reported, RTU sent; lingers to
 *	answer a repeated REP with the RTU again
 * @XNIC_CMS_REQ_RCVD: passive: REQ reported to the listener, waiting for
 *	ACCEPT or REJECT
 * @XNIC_CMS_REP_SENT: passive: REP sent, waiting for the RTU
 * @XNIC_CMS_ESTABLISHED: passive: RTU received; lingers
 * @XNIC_CMS_REJECTED: passive: REJ sent; lingers
 */
enum xnic_cm_state {
	XNIC_CMS_REQ_SENT,
	XNIC_CMS_REP_RCVD,
	XNIC_CMS_ACTIVE_DONE,
	XNIC_CMS_REQ_RCVD,
	XNIC_CMS_REP_SENT,
	XNIC_CMS_ESTABLISHED,
	XNIC_CMS_REJECTED,
};

/**
 * struct xnic_cm_listener - a service id listened on
 * @hnode: entry in xnic_cm.listeners, keyed by @service_id
 * @service_id: the service id
 * @owner: the netlink socket that listens
 */
struct xnic_cm_listener {
	struct hlist_node hnode;
	u64 service_id;
	struct xnic_cm_owner owner;
};

/**
 * struct xnic_cm_conn - a connection in progress, or lingering
 * @hnode: passive: entry in xnic_cm.passive, keyed by (@node, @remote_id)
 * @id: our communication id (index in xnic_cm.conns)
 * @remote_id: the peer's communication id (0 until known)
 * @node: the peer's node id
 * @passive: created by a REQ (else by CONNECT)
 * @state: enum xnic_cm_state
 * @retries: resends allowed (active: ours; passive: the REQ's)
 * @retries_left: resends left of the REQ or REP
 * @reason: REJECTED: the reason sent
 * @timeout_ms: resend interval, ms
 * @service_id: the service id
 * @qpn: our QP number (REQ, REP)
 * @psn: our first PSN
 * @deadline: when xnic_cm_work() next looks at the record, jiffies
 * @owner: the socket events go to
 * @private_len: bytes of @private_data
 * @private_data: what our REQ, REP or REJ carries (resent as is)
 */
struct xnic_cm_conn {
	struct hlist_node hnode;
	u32 id;
	u32 remote_id;
	u16 node;
	bool passive;
	u8 state;
	u8 retries;
	u8 retries_left;
	u8 reason;
	u32 timeout_ms;
	u64 service_id;
	u32 qpn;
	u32 psn;
	unsigned long deadline;
	struct xnic_cm_owner owner;
	u8 private_len;
	u8 private_data[XNIC_CM_PRIVATE_MAX];
};

/**
 * struct xnic_cm - a device's connection manager (xnic_dev.cm)
 * @xdev: the device
 * @node: entry in xnic_cm_all (xnic_cm_mutex)
 * @lock: guards everything below but @cnt
 * @listeners: service id -> struct xnic_cm_listener
 * @passive: (node, remote id) -> passive struct xnic_cm_conn
 * @conns: communication id -> struct xnic_cm_conn
 * @next_id: xa_alloc_cyclic() cursor of @conns (random start, so that a
 *	reloaded module does not reuse the ids a peer still remembers)
 * @nr_conns: entries of @conns
 * @nr_listeners: entries of @listeners
 * @dying: being torn down: @work is not armed any more
 * @armed: @work is due at @next_run
 * @next_run: when @work runs next, jiffies
 * @work: resends and expiries
 * @cnt: counters, enum xnic_cm_counter
 */
struct xnic_cm {
	struct xnic_dev *xdev;
	struct list_head node;
	spinlock_t lock; /* see above */
	DECLARE_HASHTABLE(listeners, 6);
	DECLARE_HASHTABLE(passive, 8);
	struct xarray conns;
	u32 next_id;
	unsigned int nr_conns;
	unsigned int nr_listeners;
	bool dying;
	bool armed;
	unsigned long next_run;
	struct delayed_work work;
	atomic64_t cnt[XNIC_CM_CNT_MAX];
};

/* Every device's CM, for the netlink socket release notifier. */
static LIST_HEAD(xnic_cm_all);
static DEFINE_MUTEX(xnic_cm_mutex);

static void xnic_cm_inc(struct xnic_cm *cm, enum xnic_cm_counter c)
{
	atomic64_inc(&cm->cnt[c]);
}

static bool xnic_cm_owner_eq(const struct xnic_cm_owner *a,
			     const struct xnic_cm_owner *b)
{
	return a->portid && a->portid == b->portid && a->net == b->net;
}

/* How long a finished record answers duplicates, jiffies. */
static unsigned long xnic_cm_linger(const struct xnic_cm_conn *c)
{
	return msecs_to_jiffies(c->timeout_ms * (c->retries + 2U));
}

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

static void xnic_cm_set_deadline(struct xnic_cm *cm, struct xnic_cm_conn *c,
				 unsigned long delay)
{
	c->deadline = jiffies + delay;
	xnic_cm_arm(cm, c->deadline);
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

/* The REQ or REP of @c, as first sent. */
static void xnic_cm_send_conn(struct xnic_cm *cm, struct xnic_cm_conn *c)
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

/* A reply carrying no QP: RTU, or REJ with @reason. */
static void xnic_cm_send_short(struct xnic_cm *cm, u16 node, u8 type,
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

static void xnic_cm_send_rej(struct xnic_cm *cm, struct xnic_cm_conn *c)
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

static void xnic_cm_free(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	xa_erase(&cm->conns, c->id);
	if (c->passive)
		hash_del(&c->hnode);
	cm->nr_conns--;
	kfree(c);
}

/* A new record with an id; NULL when out of memory or ids. */
static struct xnic_cm_conn *xnic_cm_alloc(struct xnic_cm *cm,
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

static struct xnic_cm_listener *xnic_cm_find_listener(struct xnic_cm *cm,
						      u64 service_id)
{
	struct xnic_cm_listener *l;

	hash_for_each_possible(cm->listeners, l, hnode, service_id)
		if (l->service_id == service_id)
			return l;
	return NULL;
}

/* Refuse a request not answered yet; the record lingers as REJECTED. */
static void xnic_cm_refuse(struct xnic_cm *cm, struct xnic_cm_conn *c,
			   u8 reason, const u8 *priv, u8 priv_len)
{
	c->state = XNIC_CMS_REJECTED;
	c->reason = reason;
	c->private_len = priv_len;
	memcpy(c->private_data, priv, priv_len);
	xnic_cm_send_rej(cm, c);
	xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
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
	if (c->state == XNIC_CMS_REQ_SENT || c->state == XNIC_CMS_REP_SENT) {
		xnic_cm_report(cm, c, XNIC_CM_EVENT_REJ, ci);
		xnic_cm_free(cm, c);
	}
}

/**
 * xnic_cm_rx() - handle a received CM frame
 * @xdev: the device
 * @i: its header, accepted by xnic_wire_check() (payload length
 *	XNIC_WIRE_CM_LEN); the crc32c and the source node were checked
 * @skb: the frame, data at the xnic header; not consumed
 *
 * Malformed messages (xnic_cm_check(), QP numbers in the header) are
 * dropped and counted in cm_malformed; messages for no record of ours in
 * cm_unknown_id.
 *
 * Context: softirq (the member links' packet handler).
 */
void xnic_cm_rx(struct xnic_dev *xdev, const struct xnic_wire_info *i,
		struct sk_buff *skb)
{
	struct xnic_cm *cm = xdev->cm;
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
	}
	spin_unlock_bh(&cm->lock);
}

/* ------------------------------ timers ------------------------------ */

/* @c's deadline passed. Return: false when @c was freed. */
static bool xnic_cm_expire(struct xnic_cm *cm, struct xnic_cm_conn *c)
{
	switch (c->state) {
	case XNIC_CMS_REQ_SENT:
	case XNIC_CMS_REP_SENT:
		if (c->retries_left) {
			c->retries_left--;
			xnic_cm_inc(cm, XNIC_CM_CNT_RETRANSMITS);
			xnic_cm_send_conn(cm, c);
			c->deadline = jiffies + msecs_to_jiffies(c->timeout_ms);
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
		if (!time_before(now, c->deadline) && !xnic_cm_expire(cm, c))
			continue;
		if (!any || time_before(c->deadline, next))
			next = c->deadline;
		any = true;
	}
	if (any)
		xnic_cm_arm(cm, next);
	spin_unlock_bh(&cm->lock);
}

/* ------------------------------ requests ------------------------------ */

/**
 * xnic_cm_listen() - listen on a service id
 * @xdev: the device
 * @o: the requesting socket, which owns the listener
 * @service_id: the service id
 *
 * Context: process context, RTNL held (the device stays).
 * Return: 0; -EADDRINUSE when the device has a listener on @service_id;
 * -ENOSPC at XNIC_CM_MAX_LISTENERS; -ENOMEM.
 */
int xnic_cm_listen(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u64 service_id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_listener *l;
	int err = 0;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->service_id = service_id;
	l->owner = *o;
	spin_lock_bh(&cm->lock);
	if (xnic_cm_find_listener(cm, service_id))
		err = -EADDRINUSE;
	else if (cm->nr_listeners >= XNIC_CM_MAX_LISTENERS)
		err = -ENOSPC;
	if (!err) {
		hash_add(cm->listeners, &l->hnode, service_id);
		cm->nr_listeners++;
	}
	spin_unlock_bh(&cm->lock);
	if (err)
		kfree(l);
	return err;
}

/* Drop a listener: refuse what it left unanswered. Context: cm->lock. */
static void xnic_cm_drop_listener(struct xnic_cm *cm,
				  struct xnic_cm_listener *l)
{
	struct xnic_cm_conn *c;
	unsigned long id;

	xa_for_each(&cm->conns, id, c)
		if (c->passive && c->state == XNIC_CMS_REQ_RCVD &&
		    c->service_id == l->service_id &&
		    xnic_cm_owner_eq(&c->owner, &l->owner))
			xnic_cm_refuse(cm, c, XNIC_CM_REASON_LISTENER_GONE,
				       NULL, 0);
	hash_del(&l->hnode);
	cm->nr_listeners--;
	kfree(l);
}

/**
 * xnic_cm_unlisten() - stop listening on a service id
 * @xdev: the device
 * @o: the requesting socket
 * @service_id: the service id
 *
 * Requests reported to the listener and not answered are rejected
 * (reason LISTENER_GONE); later REQs get REJ (NO_LISTENER).
 *
 * Context: process context, RTNL held.
 * Return: 0; -ENOENT when @o does not listen on @service_id.
 */
int xnic_cm_unlisten(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		     u64 service_id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_listener *l;
	int err = -ENOENT;

	spin_lock_bh(&cm->lock);
	l = xnic_cm_find_listener(cm, service_id);
	if (l && xnic_cm_owner_eq(&l->owner, o)) {
		xnic_cm_drop_listener(cm, l);
		err = 0;
	}
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_connect() - start connecting to a service
 * @xdev: the device
 * @o: the requesting socket: REP, REJ or TIMEOUT is reported to it
 * @a: the request, validated by the caller (lengths, ranges)
 * @id: set to the connection's communication id
 *
 * Sends the REQ and resends it every @a->timeout_ms, @a->retries times,
 * before reporting TIMEOUT.
 *
 * Context: process context, RTNL held.
 * Return: 0; -EINVAL when @a->node is this device's own node id;
 * -ENOBUFS at XNIC_CM_MAX_CONNS records; -ENOMEM.
 */
int xnic_cm_connect(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		    const struct xnic_cm_connect_args *a, u32 *id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err = 0;

	if (a->node == READ_ONCE(xdev->node_id))
		return -EINVAL;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->state = XNIC_CMS_REQ_SENT;
	c->node = a->node;
	c->service_id = a->service_id;
	c->qpn = a->qpn;
	c->psn = a->psn;
	c->timeout_ms = a->timeout_ms;
	c->retries = a->retries;
	c->retries_left = a->retries;
	c->owner = *o;
	c->private_len = a->private_len;
	memcpy(c->private_data, a->private_data, a->private_len);
	spin_lock_bh(&cm->lock);
	if (!xnic_cm_alloc(cm, c)) {
		err = -ENOBUFS;
	} else {
		*id = c->id;
		xnic_cm_send_conn(cm, c);
		xnic_cm_set_deadline(cm, c, msecs_to_jiffies(c->timeout_ms));
	}
	spin_unlock_bh(&cm->lock);
	if (err)
		kfree(c);
	return err;
}

/* The passive record @id of @o waiting for an answer. Context: lock. */
static int xnic_cm_pending(struct xnic_cm *cm, const struct xnic_cm_owner *o,
			   u32 id, struct xnic_cm_conn **cp)
{
	struct xnic_cm_conn *c = xa_load(&cm->conns, id);

	if (!c || !c->passive || !xnic_cm_owner_eq(&c->owner, o))
		return -ENOENT;
	if (c->state != XNIC_CMS_REQ_RCVD)
		return -EINVAL;
	*cp = c;
	return 0;
}

/**
 * xnic_cm_accept() - accept a reported REQ
 * @xdev: the device
 * @o: the requesting socket; must own the request
 * @id: the request's communication id (from the REQ event)
 * @qpn: our QP number, 24 bits (checked by the caller)
 * @psn: our first PSN, 24 bits
 * @priv: private data for the REP
 * @priv_len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 *
 * Sends the REP, resent (the REQ's interval and count) until the RTU
 * arrives: ESTABLISHED, or TIMEOUT, is reported.
 *
 * Context: process context, RTNL held.
 * Return: 0; -ENOENT: no such request of @o (or it expired); -EINVAL: it
 * was answered already.
 */
int xnic_cm_accept(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u32 id, u32 qpn, u32 psn, const u8 *priv, u8 priv_len)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err;

	spin_lock_bh(&cm->lock);
	err = xnic_cm_pending(cm, o, id, &c);
	if (!err) {
		c->state = XNIC_CMS_REP_SENT;
		c->qpn = qpn;
		c->psn = psn;
		c->private_len = priv_len;
		memcpy(c->private_data, priv, priv_len);
		c->retries_left = c->retries;
		xnic_cm_send_conn(cm, c);
		xnic_cm_set_deadline(cm, c, msecs_to_jiffies(c->timeout_ms));
	}
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_reject() - refuse a reported REQ
 * @xdev: the device
 * @o: the requesting socket; must own the request
 * @id: the request's communication id
 * @priv: private data for the REJ
 * @priv_len: bytes of @priv, at most XNIC_CM_PRIVATE_MAX
 *
 * Context: process context, RTNL held.
 * Return: 0, -ENOENT or -EINVAL as xnic_cm_accept().
 */
int xnic_cm_reject(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u32 id, const u8 *priv, u8 priv_len)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err;

	spin_lock_bh(&cm->lock);
	err = xnic_cm_pending(cm, o, id, &c);
	if (!err)
		xnic_cm_refuse(cm, c, XNIC_CM_REASON_USER, priv, priv_len);
	spin_unlock_bh(&cm->lock);
	return err;
}

/**
 * xnic_cm_rtu() - the application connected its QP after a REP: send RTU
 * @xdev: the device
 * @o: the requesting socket; must own the connection
 * @id: the connection's communication id (from CONNECT)
 *
 * The record then lingers to answer a repeated REP with the RTU again.
 *
 * Context: process context, RTNL held.
 * Return: 0; -ENOENT: no such connection of @o; -EINVAL: no REP was
 * reported for it, or the RTU was sent already.
 */
int xnic_cm_rtu(struct xnic_dev *xdev, const struct xnic_cm_owner *o, u32 id)
{
	struct xnic_cm *cm = xdev->cm;
	struct xnic_cm_conn *c;
	int err = 0;

	spin_lock_bh(&cm->lock);
	c = xa_load(&cm->conns, id);
	if (!c || c->passive || !xnic_cm_owner_eq(&c->owner, o)) {
		err = -ENOENT;
	} else if (c->state != XNIC_CMS_REP_RCVD) {
		err = -EINVAL;
	} else {
		c->state = XNIC_CMS_ACTIVE_DONE;
		xnic_cm_inc(cm, XNIC_CM_CNT_ESTABLISHED);
		xnic_cm_send_short(cm, c->node, XNIC_CM_RTU, 0, c->id,
				   c->remote_id, c->service_id, NULL, 0);
		xnic_cm_set_deadline(cm, c, xnic_cm_linger(c));
	}
	spin_unlock_bh(&cm->lock);
	return err;
}

/* Drop what a closed socket owned on one device. Context: cm->lock. */
static void xnic_cm_release_dev(struct xnic_cm *cm,
				const struct xnic_cm_owner *o)
{
	struct xnic_cm_listener *l;
	struct hlist_node *tmp;
	struct xnic_cm_conn *c;
	unsigned long id;
	int bkt;

	hash_for_each_safe(cm->listeners, bkt, tmp, l, hnode)
		if (xnic_cm_owner_eq(&l->owner, o))
			xnic_cm_drop_listener(cm, l);
	xa_for_each(&cm->conns, id, c) {
		if (!xnic_cm_owner_eq(&c->owner, o))
			continue;
		if (c->state == XNIC_CMS_REQ_SENT) {
			xnic_cm_free(cm, c);
		} else if (c->state == XNIC_CMS_REP_RCVD) {
			/* Never connected its QP: the peer must not wait. */
			c->reason = XNIC_CM_REASON_USER;
			c->private_len = 0;
			xnic_cm_send_rej(cm, c);
			xnic_cm_free(cm, c);
		} else if (c->state == XNIC_CMS_REQ_RCVD) {
			xnic_cm_refuse(cm, c, XNIC_CM_REASON_LISTENER_GONE,
				       NULL, 0);
		} else {
			c->owner.portid = 0;	/* lingers, reports nothing */
		}
	}
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
	xa_for_each(&cm->conns, id, c)
		xnic_cm_free(cm, c);
	hash_for_each_safe(cm->listeners, bkt, tmp, l, hnode) {
		hash_del(&l->hnode);
		kfree(l);
	}
	xa_destroy(&cm->conns);
	WRITE_ONCE(xdev->cm, NULL);
	kfree(cm);
}
