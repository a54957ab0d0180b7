/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - the reliable transport (the "NIC firmware"): segmentation of WQEs
 * into frames, PSNs, ACK/NAK, retransmission, placement at the target,
 * completions. See Documentation/wire-protocol.rst.
 *
 * Where it runs: received frames are handled in the member links' packet
 * handler (softirq), WQEs are taken from the SQ by the wakeup syscall and
 * by the engine thread (engine.c), and a per-QP lock serialises them
 * (transport_priv.h has the execution model and the lock order).
 */
#ifndef XNIC_TRANSPORT_H
#define XNIC_TRANSPORT_H

#include <linux/if_ether.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/types.h>

struct xnic_dev;
struct xnic_qp;
struct xnic_tp_qp;

/**
 * struct xnic_qp_tp - the transport's handle in a QP
 * @priv: state allocated by xnic_tp_qp_init(), freed by
 *	xnic_tp_qp_release(); published with RCU, used under its own lock
 */
struct xnic_qp_tp {
	struct xnic_tp_qp __rcu *priv;
};

/* Called from process context (create_qp, reset); may sleep. 0, -ENOMEM. */
int xnic_tp_qp_init(struct xnic_qp *qp);
/*
 * Called when the state must go (destroy_qp, reset), from process context;
 * concurrent users back off, the timer is stopped. May sleep.
 */
void xnic_tp_qp_release(struct xnic_qp *qp);
/* Like the first half of xnic_tp_qp_release(): nobody touches it after. */
void xnic_tp_qp_stop(struct xnic_qp *qp);

/* Return values of xnic_tp_qp_process() */
enum xnic_tp_status {
	XNIC_TP_IDLE,	/* nothing to do now: timers and ACKs bring it back */
	XNIC_TP_BUSY,	/* budget spent with more to send: call again soon */
};

/*
 * xnic_tp_qp_process(): take new WQEs from the SQ, transmit what the
 *	window allows (at most @budget frames), handle an expired
 *	retransmission or RNR timer, send READ responses left over. A QP in
 *	a state that may not send (RESET/INIT/RTR) with WQEs posted completes
 *	them with XNIC_WC_LOC_QP_OP_ERR and goes to error. Process context
 *	(engine thread, wakeup syscall), or softirq.
 * xnic_tp_qp_post(): the same for the wakeup syscall, but it leaves a QP
 *	that had frames to send from before to the engine (XNIC_TP_BUSY);
 *	@now, the syscall's local_clock(), is its frames' send time.
 * xnic_tp_rx(): handle one received frame (consumes @skb); softirq.
 * xnic_tp_rx_deferred(): handle a frame xnic_tp_rx() handed to the engine
 *	(HELLOs, bulk data; consumes @skb); engine thread.
 * xnic_tp_qp_flush(): the QP entered the error state: complete every
 *	outstanding SQ and RQ WQE with a flush error. Process context.
 * xnic_tp_qp_post_hint(): the PSN the QP's responder expects next, and
 *	whether its SQ has WQEs not taken yet, read without the lock (hints:
 *	tp.c).
 */
enum xnic_tp_status xnic_tp_qp_process(struct xnic_qp *qp,
				       unsigned int budget);
enum xnic_tp_status xnic_tp_qp_post(struct xnic_qp *qp, unsigned int budget,
				    u64 now);
void xnic_tp_rx(struct xnic_dev *xdev, struct sk_buff *skb);
void xnic_tp_rx_deferred(struct xnic_dev *xdev, struct sk_buff *skb);
void xnic_tp_qp_flush(struct xnic_qp *qp);
bool xnic_tp_qp_post_hint(struct xnic_qp *qp, u32 *epsn);

/*
 * Disconnect (DREQ, Documentation/cm.rst):
 * xnic_tp_qp_rx_epsn(): the PSN the QP's responder expects next, every one
 *	before it received; the RTR's first PSN if no frame came. Process
 *	context or softirq; takes the tp lock.
 * xnic_tp_qp_peer_acked(): a peer that disconnects received every PSN
 *	before @epsn: complete what that acknowledges, as a cumulative ACK
 *	would (a PSN outside what was sent is ignored). Softirq or process
 *	context; takes the tp lock.
 */
u32 xnic_tp_qp_rx_epsn(struct xnic_qp *qp);
void xnic_tp_qp_peer_acked(struct xnic_qp *qp, u32 epsn);

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
#define XNIC_TP_NR_COUNTERS	28
extern const char *const xnic_tp_counter_names[XNIC_TP_NR_COUNTERS];
int xnic_tp_counters(struct xnic_dev *xdev, u64 *vals, int n);

/**
 * struct xnic_tp_peer_info - one path to a peer, for netlink (peer.c)
 * @node: the peer's node id
 * @guid: its node GUID
 * @ifindex: ifindex of the member link it was heard on; 0 for none
 * @mac: its MAC address on that link
 * @age_ms: ms since the last frame accepted over the path
 * @answered: the peer answered a heartbeat over the path
 * @rtt_us: smoothed heartbeat round trip over the path, us; 0 for none
 * @lost: the path alone was found lost (struct xnic_path.down_ns)
 * @down_ms: ms since then, when @lost
 */
struct xnic_tp_peer_info {
	u16 node;
	u64 guid;
	int ifindex;
	u8 mac[ETH_ALEN];
	u32 age_ms;
	bool answered;
	u32 rtt_us;
	bool lost;
	u32 down_ms;
};

int xnic_tp_peers_walk(struct xnic_dev *xdev, unsigned long *pos,
		       int (*fn)(const struct xnic_tp_peer_info *pi,
				 void *arg),
		       void *arg);

#endif /* XNIC_TRANSPORT_H */
