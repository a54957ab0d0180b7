/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - the reliable transport (the "NIC firmware"): segmentation of WQEs
 * into frames, PSNs, ACK/NAK, retransmission, placement at the target,
 * completions. Everything here runs in the device's engine thread
 * (engine.c), which owns struct xnic_qp_tp; nothing else touches it.
 * See Documentation/wire-protocol.rst.
 */
#ifndef XNIC_TRANSPORT_H
#define XNIC_TRANSPORT_H

#include <linux/if_ether.h>
#include <linux/skbuff.h>
#include <linux/types.h>

struct xnic_dev;
struct xnic_qp;

/**
 * struct xnic_qp_tp - per-QP transport state (engine thread only)
 * @priv: state allocated by xnic_tp_qp_init(), freed by xnic_tp_qp_release()
 */
struct xnic_qp_tp {
	void *priv;
};

/* Called from process context (create_qp); may sleep. 0 or -ENOMEM. */
int xnic_tp_qp_init(struct xnic_qp *qp);
/* Called once the engine no longer references @qp (destroy_qp). */
void xnic_tp_qp_release(struct xnic_qp *qp);

/* Return values of xnic_tp_qp_process() */
enum xnic_tp_status {
	XNIC_TP_IDLE,	/* nothing outstanding: the QP may leave the active list */
	XNIC_TP_WAIT,	/* waiting for an ACK or *deadline: stay, may sleep */
	XNIC_TP_BUSY,	/* made progress or has more to send: call again soon */
};

/*
 * Engine thread entry points.
 * xnic_tp_qp_process(): take new WQEs from the SQ, transmit what the
 *	window allows, handle the QP's retransmit timer; with XNIC_TP_WAIT it
 *	sets *deadline (jiffies) to when it must be called again at the
 *	latest. A QP in a state that may not send (RESET/INIT/RTR) with WQEs
 *	posted completes them with XNIC_WC_LOC_QP_OP_ERR and goes to error.
 * xnic_tp_rx(): handle one received frame (consumes @skb).
 * xnic_tp_qp_flush(): the QP entered the error state: complete every
 *	outstanding SQ and RQ WQE with a flush error.
 */
enum xnic_tp_status xnic_tp_qp_process(struct xnic_qp *qp,
				       unsigned long *deadline);
void xnic_tp_rx(struct xnic_dev *xdev, struct sk_buff *skb);
void xnic_tp_qp_flush(struct xnic_qp *qp);

/*
 * Device lifetime of the transport (peer table, HELLO timer, counters,
 * debugfs); peer.c. xnic_tp_dev_init() needs xdev->node_id set;
 * xnic_tp_dev_cleanup() runs without RTNL, after the engine stopped.
 */
int xnic_tp_dev_init(struct xnic_dev *xdev);
void xnic_tp_dev_cleanup(struct xnic_dev *xdev);

/* Member link events, called by link.c under RTNL. */
void xnic_tp_link_changed(struct xnic_dev *xdev);
void xnic_tp_link_detached(struct xnic_dev *xdev, int ifindex);

/*
 * Transport counters (for rdma_hw_stats, netlink): xnic_tp_counters()
 * copies up to @n values named by xnic_tp_counter_names[], returns how many.
 */
#define XNIC_TP_NR_COUNTERS	23
extern const char *const xnic_tp_counter_names[XNIC_TP_NR_COUNTERS];
int xnic_tp_counters(struct xnic_dev *xdev, u64 *vals, int n);

/**
 * struct xnic_tp_peer_info - one path to a peer, for netlink (peer.c)
 * @node: the peer's node id
 * @guid: its node GUID
 * @ifindex: ifindex of the member link it was heard on; 0 for none
 * @mac: its MAC address on that link
 * @age_ms: ms since the last frame accepted over the path
 */
struct xnic_tp_peer_info {
	u16 node;
	u64 guid;
	int ifindex;
	u8 mac[ETH_ALEN];
	u32 age_ms;
};

int xnic_tp_peers_walk(struct xnic_dev *xdev, unsigned long *pos,
		       int (*fn)(const struct xnic_tp_peer_info *pi,
				 void *arg),
		       void *arg);

#endif /* XNIC_TRANSPORT_H */
