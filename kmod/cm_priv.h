/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic connection manager internals shared by cm.c (messages, receive,
 * timers, device lifetime) and cm_req.c (the requests of applications).
 * Not for use elsewhere: the CM's interface is cm.h. The locking rules are
 * in cm.h; everything here but the counters is guarded by xnic_cm.lock.
 */
#ifndef XNIC_CM_PRIV_H
#define XNIC_CM_PRIV_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "cm.h"
#include "cm_wire.h"

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
	XNIC_CM_CNT_DREQ_SENT,
	XNIC_CM_CNT_DREQ_RCVD,
	XNIC_CM_CNT_DREP_SENT,
	XNIC_CM_CNT_DREP_RCVD,
	XNIC_CM_CNT_DISCONNECTS,
	XNIC_CM_CNT_MAX,
};

static_assert(XNIC_CM_CNT_MAX == XNIC_CM_NR_COUNTERS);

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
 * @XNIC_CMS_CONNECTED: either side: lingered, the QP is still bound
 *	(@bound): no timer, waits for a DREQ or for the QP to go
 * @XNIC_CMS_DREQ_SENT: either side: our QP went, DREQ sent; resent until
 *	the DREP comes or the resends are exhausted
 * @XNIC_CMS_DREQ_RCVD: either side: the peer's DREQ was answered with a
 *	DREP; lingers to answer a repeated DREQ the same way
 */
enum xnic_cm_state {
	XNIC_CMS_REQ_SENT,
	XNIC_CMS_REP_RCVD,
	XNIC_CMS_ACTIVE_DONE,
	XNIC_CMS_REQ_RCVD,
	XNIC_CMS_REP_SENT,
	XNIC_CMS_ESTABLISHED,
	XNIC_CMS_REJECTED,
	XNIC_CMS_CONNECTED,
	XNIC_CMS_DREQ_SENT,
	XNIC_CMS_DREQ_RCVD,
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
 * @bound: our QP (@qpn) is connected to the peer's (@remote_qpn) and
 *	names this record in its cm_id: a DREQ disconnects it, its
 *	destruction sends a DREQ
 * @state: enum xnic_cm_state
 * @retries: resends allowed (active: ours; passive: the REQ's); with
 *	@timeout_ms it sets how long the REQ, REP or DREQ is resent
 * @reason: REJECTED: the reason sent
 * @timeout_ms: the longest resend interval, ms
 * @try_ms: REQ_SENT, REP_SENT, DREQ_SENT: the current resend interval, ms
 * @give_up: REQ_SENT, REP_SENT, DREQ_SENT: when resending stops, jiffies
 * @service_id: the service id
 * @qpn: our QP number (REQ, REP)
 * @psn: our first PSN
 * @remote_qpn: the peer's QP number (from its REQ or REP)
 * @rx_epsn: DREQ_SENT: the PSN our QP expected next when it went (the
 *	DREQ's cumulative ACK)
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
	bool bound;
	u8 state;
	u8 retries;
	u8 reason;
	u32 timeout_ms;
	u32 try_ms;
	unsigned long give_up;
	u64 service_id;
	u32 qpn;
	u32 psn;
	u32 remote_qpn;
	u32 rx_epsn;
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
 * @nr_conns: entries of @conns but those in CONNECTED (bounded by the
 *	QPs they are tied to)
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

static inline void xnic_cm_inc(struct xnic_cm *cm, enum xnic_cm_counter c)
{
	atomic64_inc(&cm->cnt[c]);
}

bool xnic_cm_may_use_qp(struct xnic_cm *cm, const struct xnic_cm_owner *o,
			u32 qpn);

static inline bool xnic_cm_owner_eq(const struct xnic_cm_owner *a,
				    const struct xnic_cm_owner *b)
{
	return a->portid && a->portid == b->portid && a->net == b->net;
}

/*
 * The first resend of a REQ, REP or DREQ comes this long after the first
 * try (at most the record's timeout_ms); each next one twice as long after
 * the last, up to timeout_ms. A lost frame on a working path then costs a
 * fraction of a second instead of a whole timeout_ms.
 */
#define XNIC_CM_FIRST_TRY_MS	100

/* How long a finished record answers duplicates, jiffies. */
static inline unsigned long xnic_cm_linger(const struct xnic_cm_conn *c)
{
	return msecs_to_jiffies(c->timeout_ms * (c->retries + 2U));
}

/* cm.c */
void xnic_cm_set_deadline(struct xnic_cm *cm, struct xnic_cm_conn *c,
			  unsigned long delay);
void xnic_cm_tries_start(struct xnic_cm *cm, struct xnic_cm_conn *c);
void xnic_cm_send_conn(struct xnic_cm *cm, struct xnic_cm_conn *c);
void xnic_cm_send_short(struct xnic_cm *cm, u16 node, u8 type, u8 reason,
			u32 local_id, u32 remote_id, u64 service_id,
			const u8 *priv, u8 priv_len);
void xnic_cm_send_rej(struct xnic_cm *cm, struct xnic_cm_conn *c);
void xnic_cm_free(struct xnic_cm *cm, struct xnic_cm_conn *c);
struct xnic_cm_conn *xnic_cm_alloc(struct xnic_cm *cm,
				   struct xnic_cm_conn *c);
struct xnic_cm_listener *xnic_cm_find_listener(struct xnic_cm *cm,
					       u64 service_id);
void xnic_cm_refuse(struct xnic_cm *cm, struct xnic_cm_conn *c, u8 reason,
		    const u8 *priv, u8 priv_len);
void xnic_cm_bind(struct xnic_cm *cm, struct xnic_cm_conn *c);

/* cm_req.c */
void xnic_cm_release_dev(struct xnic_cm *cm, const struct xnic_cm_owner *o);

#endif /* XNIC_CM_PRIV_H */
