/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic connection manager (Documentation/cm.rst): listeners, connections
 * in progress and their REQ/REP/RTU/REJ exchange over the fabric (cm.c,
 * cm_req.c, cm_priv.h), driven by generic netlink requests and reported
 * by unicast events (cm_netlink.c).
 *
 * Execution model: CM frames arrive in softirq (xnic_tp_rx() hands them to
 * xnic_cm_rx() once the frame passed the transport's checks, the source
 * node check included); resends and expiries run from a delayed work;
 * requests run in the requesting process under RTNL. Everything of a
 * device's CM is guarded by struct xnic_cm.lock (a BH spinlock), taken
 * after RTNL and never held while taking RTNL or the transport's locks.
 * Frames and events are sent under it: both are non-blocking
 * (dev_queue_xmit(), netlink_unicast() with MSG_DONTWAIT).
 */
#ifndef XNIC_CM_H
#define XNIC_CM_H

#include <linux/types.h>
#include <net/netlink.h>

#include "../uapi/xnic-netlink.h"

struct net;
struct sk_buff;
struct genl_info;
struct genl_family;
struct xnic_dev;
struct xnic_qp;
struct xnic_wire_info;

/* Connections (in progress or lingering) a device keeps at most. */
#define XNIC_CM_MAX_CONNS	4096
/* Listeners a device keeps at most. */
#define XNIC_CM_MAX_LISTENERS	1024
/* CONNECT defaults when the request does not say. */
#define XNIC_CM_DEF_TIMEOUT_MS	1000
#define XNIC_CM_DEF_RETRIES	3

/**
 * struct xnic_cm_owner - the netlink socket a listener or connection
 *	belongs to
 * @net: its network namespace (compared, not referenced: the socket's
 *	release drops every record first, see xnic_cm_release_owner())
 * @portid: its port id; 0 for none (the owner went away)
 * @uid: the requester's effective uid: it names only its own QPs
 * @admin: the requester has CAP_NET_ADMIN: it may name any QP
 */
struct xnic_cm_owner {
	struct net *net;
	u32 portid;
	kuid_t uid;
	bool admin;
};

/**
 * struct xnic_cm_event_info - what an event tells its owner
 * @event: enum xnic_cm_event
 * @id: the connection's communication id on this device
 * @node: the peer's node id
 * @service_id: the service id
 * @qpn: the peer's QP number (REQ, REP)
 * @psn: the peer's first PSN (REQ, REP)
 * @reason: REJ: enum xnic_cm_reason
 * @private_len: bytes of @private_data
 * @private_data: the peer's private data (REQ, REP, REJ)
 */
struct xnic_cm_event_info {
	u8 event;
	u32 id;
	u16 node;
	u64 service_id;
	u32 qpn;
	u32 psn;
	u8 reason;
	u8 private_len;
	const u8 *private_data;
};

/**
 * struct xnic_cm_connect_args - a CONNECT request, validated
 * @node: the peer's node id
 * @service_id: the service to connect to
 * @qpn: the caller's QP number
 * @psn: the caller's first PSN
 * @timeout_ms: REQ resend interval, ms
 * @retries: REQ resends before giving up
 * @private_len: bytes of @private_data
 * @private_data: sent in the REQ
 */
struct xnic_cm_connect_args {
	u16 node;
	u64 service_id;
	u32 qpn;
	u32 psn;
	u32 timeout_ms;
	u8 retries;
	u8 private_len;
	const u8 *private_data;
};

/* cm.c, cm_req.c */
int xnic_cm_dev_init(struct xnic_dev *xdev);
void xnic_cm_dev_cleanup(struct xnic_dev *xdev);
void xnic_cm_rx(struct xnic_dev *xdev, const struct xnic_wire_info *i,
		struct sk_buff *skb);
int xnic_cm_listen(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u64 service_id);
int xnic_cm_unlisten(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		     u64 service_id);
int xnic_cm_connect(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		    const struct xnic_cm_connect_args *a, u32 *id);
int xnic_cm_accept(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u32 id, u32 qpn, u32 psn, const u8 *priv, u8 priv_len);
int xnic_cm_reject(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		   u32 id, const u8 *priv, u8 priv_len);
int xnic_cm_rtu(struct xnic_dev *xdev, const struct xnic_cm_owner *o, u32 id);
void xnic_cm_release_owner(struct net *net, u32 portid);
void xnic_cm_qp_disconnect(struct xnic_qp *qp);

/* Counters of the CM, after the transport's and the engine's. */
#define XNIC_CM_NR_COUNTERS	21
extern const char *const xnic_cm_counter_names[XNIC_CM_NR_COUNTERS];
void xnic_cm_counters(struct xnic_dev *xdev, u64 *vals);

/* cm_netlink.c */
int xnic_cm_nl_event(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		     const struct xnic_cm_event_info *ev);
int xnic_cm_nl_listen_doit(struct sk_buff *skb, struct genl_info *info);
int xnic_cm_nl_unlisten_doit(struct sk_buff *skb, struct genl_info *info);
int xnic_cm_nl_connect_doit(struct sk_buff *skb, struct genl_info *info);
int xnic_cm_nl_accept_doit(struct sk_buff *skb, struct genl_info *info);
int xnic_cm_nl_reject_doit(struct sk_buff *skb, struct genl_info *info);
int xnic_cm_nl_rtu_doit(struct sk_buff *skb, struct genl_info *info);
extern const struct nla_policy xnic_cm_nl_policy[XNIC_A_MAX + 1];
/* An entry of netlink.c's ops for a CM request. */
#define XNIC_CM_NL_OP(c, fn) {			\
	.cmd = (c),				\
	.doit = (fn),				\
	.policy = xnic_cm_nl_policy,		\
	.maxattr = XNIC_A_MAX,			\
}

int xnic_cm_nl_init(void);
void xnic_cm_nl_exit(void);

/* netlink.c: the family, for the messages cm_netlink.c builds */
extern struct genl_family xnic_nl_family;

#endif /* XNIC_CM_H */
