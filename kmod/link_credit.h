/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - link-level credit (link_credit.c): per path (one member link
 * towards one peer node) the sender may have at most a window of frames
 * on the link that the receiver's packet handler has not processed, so
 * the member netdev's backlog never overflows. The arithmetic is in
 * link_credit_logic.h; the protocol in Documentation/wire-protocol.rst,
 * "Link-level credit".
 *
 * Which frames: the QPs' data-bearing frames (WRITE, SEND, READ_REQ,
 * READ_RESP) consume link credit on the link they leave on, first
 * transmissions and resends alike; control frames (ACK, NAK, CREDIT,
 * HELLO, HEARTBEAT, CM) do not: their number is bounded by the data
 * frames and the timers.
 *
 * Locking: the paths of a member link live in xnic_bond_link.lcr (an
 * xarray, readers under RCU, freed after a grace period with the link);
 * each path has a spinlock, innermost of all (taken under a tp lock, in
 * the packet handler, in the heartbeat tick). QPs that found no link
 * credit wait on xnic_credit_dev.lwait (xnic_credit_dev.lock, taken under
 * a tp lock; under it the engine's lock is taken to activate them).
 */
#ifndef XNIC_LINK_CREDIT_H
#define XNIC_LINK_CREDIT_H

#include <linux/types.h>

#include "link_credit_logic.h"

struct sk_buff;
struct seq_file;
struct xnic_bond_link;
struct xnic_dev;
struct xnic_link;
struct xnic_qp;
struct xnic_tp_qp;
struct xnic_wire_info;

/**
 * struct xnic_lcr_path - link credit of one member link towards one peer
 * @lock: guards everything below
 * @node: the peer's node id
 * @tx: sender half: what we may send to @node on the link
 * @rx: receiver half: what we grant @node on the link
 * @synced: @tx.sent in the last sync or update we sent
 * @idle_ticks: heartbeat ticks since the last sync or update we sent
 * @blocked: times a frame found the path out of credit
 * @upd_sent: syncs and updates sent on the path
 * @upd_rcvd: syncs and updates received on the path
 * @rcu: deferred free
 */
struct xnic_lcr_path {
	spinlock_t lock; /* the path */
	u16 node;
	struct xnic_lcr_tx tx;
	struct xnic_lcr_rx rx;
	u32 synced;
	u32 idle_ticks;
	u64 blocked;
	u64 upd_sent;
	u64 upd_rcvd;
	struct rcu_head rcu;
};

void xnic_lcr_link_init(struct xnic_bond_link *bl);
void xnic_lcr_link_fini(struct xnic_bond_link *bl);
void xnic_lcr_tick(struct xnic_bond_link *bl);

/* path selection (bond_path.c, peer.c), RCU read */
bool xnic_lcr_needed(const struct sk_buff *skb);
bool xnic_lcr_link_has(struct xnic_link *link, u16 node);
bool xnic_lcr_link_take(struct xnic_link *link, u16 node, const u8 *mac,
			u16 *seq);

/* QPs (tx.c, rx.c, credit.c), tp lock held */
bool xnic_lcr_qp_ok(struct xnic_qp *qp, u16 node);
bool xnic_lcr_qp_hint(struct xnic_qp *qp);
void xnic_lcr_qp_stop(struct xnic_qp *qp);
bool xnic_lcr_qp_timer(struct xnic_tp_qp *tp);

/* receive (rx.c), softirq */
void xnic_lcr_rx_count(struct xnic_dev *xdev, struct sk_buff *skb,
		       const struct xnic_wire_info *i);
void xnic_lcr_rx_frame(struct xnic_dev *xdev, struct sk_buff *skb,
		       const struct xnic_wire_info *i);

/* readout (debugfs) */
int xnic_lcr_show(struct seq_file *s, struct xnic_dev *xdev);

#endif /* XNIC_LINK_CREDIT_H */
