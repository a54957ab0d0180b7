// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - peers: HELLO discovery, the peer table (node id -> the member
 * links and MAC addresses that reach it), the source check of received
 * frames, transmission of frames to a peer, the transport counters and
 * their debugfs readout (/sys/kernel/debug/xnic/<dev>/{peers,counters}).
 *
 * A device sends a HELLO on every member link when the transport starts,
 * when a link is attached or comes up, and every XNIC_HELLO_MS; a HELLO
 * from a node or over a path we did not know is answered at once, so two
 * nodes find each other within one round trip.
 *
 * Locking: xnic_peers.lock serialises writers of the table; readers (the
 * engine thread, debugfs) use RCU. A peer whose paths change is replaced
 * by a copy (RCU); only xnic_path.last_seen is written in place.
 */
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/mutex.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "transport_priv.h"
#include "cm.h"
#include "../uapi/xnic-netlink.h"

/* Names of enum xnic_tp_counter, in order. */
const char *const xnic_tp_counter_names[XNIC_TP_NR_COUNTERS] = {
	[XNIC_CNT_RX_FRAMES]		= "rx_frames",
	[XNIC_CNT_RX_BYTES]		= "rx_bytes",
	[XNIC_CNT_TX_FRAMES]		= "tx_frames",
	[XNIC_CNT_TX_BYTES]		= "tx_bytes",
	[XNIC_CNT_TX_DROPS]		= "tx_drops",
	[XNIC_CNT_CRC_ERRORS]		= "rx_crc_errors",
	[XNIC_CNT_MALFORMED]		= "rx_malformed",
	[XNIC_CNT_MISDIRECTED]		= "rx_misdirected",
	[XNIC_CNT_FORGED]		= "rx_forged",
	[XNIC_CNT_UNKNOWN_QPN]		= "rx_unknown_qpn",
	[XNIC_CNT_BAD_QP_STATE]		= "rx_bad_qp_state",
	[XNIC_CNT_DUPLICATES]		= "rx_duplicates",
	[XNIC_CNT_OUT_OF_WINDOW]	= "rx_out_of_window",
	[XNIC_CNT_RETRANSMITS]		= "tx_retransmits",
	[XNIC_CNT_TIMEOUTS]		= "tx_timeouts",
	[XNIC_CNT_ACKS_SENT]		= "acks_sent",
	[XNIC_CNT_ACKS_RCVD]		= "acks_rcvd",
	[XNIC_CNT_NAKS_SENT]		= "naks_sent",
	[XNIC_CNT_NAKS_RCVD]		= "naks_rcvd",
	[XNIC_CNT_RNR_NAKS_SENT]	= "rnr_naks_sent",
	[XNIC_CNT_RNR_NAKS_RCVD]	= "rnr_naks_rcvd",
	[XNIC_CNT_HELLO_SENT]		= "hello_sent",
	[XNIC_CNT_HELLO_RCVD]		= "hello_rcvd",
	[XNIC_CNT_PEERS_REFUSED]	= "peers_refused",
	[XNIC_CNT_UNANSWERED_LIMITED]	= "tx_unanswered_limited",
	[XNIC_CNT_CWND_CUTS]		= "tx_cwnd_cuts",
	[XNIC_CNT_SPURIOUS_RETX]	= "tx_spurious_retransmits",
	[XNIC_CNT_TX_BURSTS]		= "tx_bursts",
};

/**
 * xnic_tp_counters() - read the transport counters of a device
 * @xdev: the device
 * @vals: filled with up to @n values, in xnic_tp_counter_names[] order
 * @n: room in @vals
 *
 * Context: any; the values are read without a lock.
 * Return: the number of values written (0 before xnic_tp_dev_init()).
 */
int xnic_tp_counters(struct xnic_dev *xdev, u64 *vals, int n)
{
	struct xnic_peers *p = READ_ONCE(xdev->peers);
	int k;

	if (!p)
		return 0;
	n = min_t(int, n, XNIC_CNT_MAX);
	for (k = 0; k < n; k++)
		vals[k] = atomic64_read(&p->cnt[k]);
	return n;
}

/* Describe path @k of @peer (none when @k < 0) for netlink. */
static void xnic_peer_info(const struct xnic_peer *peer, int k,
			   struct xnic_tp_peer_info *pi)
{
	const struct xnic_path *path;
	u64 srtt, down, now;

	memset(pi, 0, sizeof(*pi));
	pi->node = peer->node;
	pi->guid = peer->guid;
	if (k < 0)
		return;
	pi->ifindex = peer->path[k].ifindex;
	ether_addr_copy(pi->mac, peer->path[k].mac);
	path = &peer->path[k];
	pi->age_ms = jiffies_to_msecs(jiffies - READ_ONCE(path->last_seen));
	pi->answered = READ_ONCE(path->answered);
	srtt = READ_ONCE(path->srtt_ns);
	pi->rtt_us = srtt ? max_t(u64, div_u64(srtt, NSEC_PER_USEC), 1) : 0;
	down = READ_ONCE(path->down_ns);
	if (down) {
		now = local_clock();
		pi->lost = true;
		pi->down_ms = now > down ? div_u64(now - down, NSEC_PER_MSEC) : 0;
	}
}

/* xnic_tp_peers_walk() position: node id, then path slot. */
#define XNIC_WALK_SLOT_BITS	4
#define XNIC_WALK_END		(0x10000UL << XNIC_WALK_SLOT_BITS)

/**
 * xnic_tp_peers_walk() - call a function for every path to every peer
 * @xdev: the device
 * @pos: where to start, 0 the first time; on return, where to resume
 * @fn: called under RCU (must not sleep) for each path in node id order;
 *	a non-zero return stops the walk
 * @arg: passed to @fn
 *
 * A walk stopped by @fn resumes at the path @fn stopped on (netlink dumps
 * retry it in the next message); a finished walk leaves @pos past the end.
 *
 * Context: RTNL held (keeps xdev->peers).
 * Return: 0 when the walk finished, else what @fn returned.
 */
int xnic_tp_peers_walk(struct xnic_dev *xdev, unsigned long *pos,
		       int (*fn)(const struct xnic_tp_peer_info *pi,
				 void *arg),
		       void *arg)
{
	struct xnic_peers *p = xdev->peers;
	unsigned long node = *pos >> XNIC_WALK_SLOT_BITS;
	int k = *pos & (BIT(XNIC_WALK_SLOT_BITS) - 1);
	struct xnic_tp_peer_info pi;
	struct xnic_peer *peer;
	int ret = 0;

	BUILD_BUG_ON(BIT(XNIC_WALK_SLOT_BITS) < XNIC_MAX_LINKS);
	ASSERT_RTNL();
	if (!p || *pos >= XNIC_WALK_END) {
		*pos = XNIC_WALK_END;
		return 0;
	}
	rcu_read_lock();
	xa_for_each_start(&p->table, node, peer, node) {
		if (*pos >> XNIC_WALK_SLOT_BITS != node)
			k = 0;
		for (; k < XNIC_MAX_LINKS; k++) {
			if (!peer->path[k].ifindex)
				continue;
			xnic_peer_info(peer, k, &pi);
			ret = fn(&pi, arg);
			if (ret) {
				*pos = (node << XNIC_WALK_SLOT_BITS) | k;
				goto out;
			}
		}
	}
	*pos = XNIC_WALK_END;
out:
	rcu_read_unlock();
	return ret;
}

/* Find the member link of @xdev with @ifindex. Context: RCU read. */
static struct xnic_link *xnic_link_by_ifindex(struct xnic_dev *xdev,
					      int ifindex)
{
	struct xnic_link *link;

	list_for_each_entry_rcu(link, &xdev->links, list)
		if (link->ndev->ifindex == ifindex)
			return link;
	return NULL;
}

/**
 * xnic_link_xmit() - send a frame on one member link
 * @xdev: the device
 * @ndev: the member link's netdev
 * @dst: the destination MAC address
 * @skb: a frame from xnic_frame_alloc(), finished; always consumed
 *
 * Control frames (ACK, NAK, credit, heartbeat, hello, CM) leave with
 * skb->priority TC_PRIO_CONTROL, data frames with TC_PRIO_BESTEFFORT: a
 * priority qdisc on the link (pfifo_fast, prio) sends them ahead of queued
 * data, as a NIC's transmit arbiter sends its responder's ACKs between
 * the frames of its send queues, not behind all of them.
 *
 * Context: RCU read (keeps @ndev alive), any context that may call
 * dev_queue_xmit().
 * Return: 0; -ENOMEM or -ENOBUFS when the frame was dropped (counted).
 */
int xnic_link_xmit(struct xnic_dev *xdev, struct net_device *ndev,
		   const u8 *dst, struct sk_buff *skb)
{
	const struct xnic_wire_hdr *h = (const struct xnic_wire_hdr *)skb->data;
	u32 prio = xnic_wire_op_data(h->opcode) ? TC_PRIO_BESTEFFORT :
						  TC_PRIO_CONTROL;
	unsigned int len = skb->len;

	if (skb_cow_head(skb, LL_RESERVED_SPACE(ndev)))
		goto drop;
	skb->dev = ndev;
	skb->priority = prio;
	skb->protocol = htons(XNIC_ETH_P);
	skb_reset_network_header(skb);
	if (dev_hard_header(skb, ndev, XNIC_ETH_P, dst, ndev->dev_addr,
			    skb->len) < 0)
		goto drop;
	if (xnic_link_burst_add(xdev, skb))
		return 0;
	return xnic_link_send(xdev, skb, 1, len);

drop:
	kfree_skb(skb);
	xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
	return -ENOMEM;
}

/**
 * xnic_link_send() - hand a frame or a burst to its member link, counted
 * @xdev: the device
 * @skb: a frame, or a burst of @frames frames (link_burst.c), ready for
 *	dev_queue_xmit(); always consumed
 * @frames: frames in @skb
 * @bytes: their xnic bytes (headers and payload, no link-layer header)
 *
 * Context: any context that may call dev_queue_xmit().
 * Return: 0, counted in tx_frames and tx_bytes; -ENOBUFS when the link
 * dropped it, counted in tx_drops (one per frame).
 */
int xnic_link_send(struct xnic_dev *xdev, struct sk_buff *skb,
		   unsigned int frames, unsigned int bytes)
{
	/* Not net_xmit_eval(dev_queue_xmit()): it evaluates it twice. */
	int err = dev_queue_xmit(skb);

	if (net_xmit_eval(err)) {
		xnic_cnt_add(xdev, XNIC_CNT_TX_DROPS, frames);
		return -ENOBUFS;
	}
	xnic_cnt_add(xdev, XNIC_CNT_TX_FRAMES, frames);
	xnic_cnt_add(xdev, XNIC_CNT_TX_BYTES, bytes);
	return 0;
}

/**
 * xnic_tp_xmit_link() - send a frame to a peer, and say on which link
 * @xdev: the device
 * @node: the peer's node id
 * @skb: a frame from xnic_frame_alloc(); always consumed
 * @link: when not NULL, set to the xnic_link.index of the member link the
 *	frame left on, or XNIC_BOND_NO_LINK
 * @seal: false when @skb is finished (xnic_frame_finish()); true when
 *	only its header is written: its frame check is written here, once the
 *	link is known (xnic_frame_seal_link())
 *
 * The bond chooses the member link (xnic_bond_select()); a frame that
 * consumes link credit (xnic_lcr_needed()) only among the links with
 * credit towards @node, and spends one. Such a frame must come unsealed:
 * its credits field gets its sequence on the path (xnic_lcr_link_take()),
 * which the receiver needs to recognise a frame a resync gave up as lost.
 *
 * Context: any context that may call dev_queue_xmit().
 * Return: 0; -EHOSTUNREACH when no link reaches @node; -EAGAIN when no
 * link that reaches it has link credit (not sent, not counted as a drop);
 * -ENOMEM or -ENOBUFS when the frame was dropped. Drops are counted; the
 * transport recovers from them like from loss.
 */
int xnic_tp_xmit_link(struct xnic_dev *xdev, u16 node, struct sk_buff *skb,
		      u8 *link, bool seal)
{
	struct xnic_link *l = NULL;
	struct xnic_peer *peer;
	unsigned int len = skb->len;
	int k = -1, err = -EHOSTUNREACH;
	bool need = xnic_lcr_needed(skb);
	u16 seq = 0;

	WARN_ON_ONCE(need && !seal);
	rcu_read_lock();
	peer = xa_load(&xdev->peers->table, node);
	if (peer)
		l = xnic_bond_select(xdev, peer, skb, need, &k);
	if (l && need && !xnic_lcr_link_take(l, node, peer->path[k].mac, &seq))
		l = NULL;
	if (link)
		*link = l ? l->index : XNIC_BOND_NO_LINK;
	if (!l && peer && need) {
		/* No link credit: the frame waits, it is not lost. */
		rcu_read_unlock();
		kfree_skb(skb);
		return -EAGAIN;
	}
	if (!l)
		goto out;
	if (seal) {
		struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)skb->data;

		if (need) {
			h->flags |= cpu_to_be16(XNIC_WF_LINK);
			h->credits = cpu_to_be16(seq);
		}
		xnic_frame_seal_link(skb, l->ndev);
	}
	err = xnic_link_xmit(xdev, l->ndev, peer->path[k].mac, skb);
	if (!err)
		xnic_bond_tx_done(l, len);
	rcu_read_unlock();
	return err;
out:
	rcu_read_unlock();
	kfree_skb(skb);
	xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
	return err;
}

/**
 * xnic_tp_xmit() - send a frame to a peer
 * @xdev: the device
 * @node: the peer's node id
 * @skb: a frame from xnic_frame_alloc(), finished; always consumed
 *
 * xnic_tp_xmit_link() without the link, for frames that take no link
 * credit.
 *
 * Context: any context that may call dev_queue_xmit().
 * Return: as xnic_tp_xmit_link().
 */
int xnic_tp_xmit(struct xnic_dev *xdev, u16 node, struct sk_buff *skb)
{
	return xnic_tp_xmit_link(xdev, node, skb, NULL, false);
}

/**
 * xnic_tp_max_payload() - largest payload a member link of a device carries
 * @xdev: the device
 *
 * Return: payload bytes per frame of the up member link with the largest
 * MTU; 0 when no link is up.
 */
u32 xnic_tp_max_payload(struct xnic_dev *xdev)
{
	struct xnic_link *link;
	u32 max = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list) {
		u32 mtu = xnic_wire_payload_mtu(READ_ONCE(link->ndev->mtu));

		if (xnic_link_is_up(link))
			max = max(max, mtu);
	}
	rcu_read_unlock();
	return max;
}

/**
 * xnic_peer_check_src() - whether a frame comes from where its node is
 * @xdev: the device
 * @node: the frame's source node id
 * @skb: the frame (received on a member link of @xdev)
 *
 * Context: engine thread.
 * Return: true when @node was learned by HELLO on the link the frame came
 * in on and with the frame's source MAC address.
 */
bool xnic_peer_check_src(struct xnic_dev *xdev, u16 node,
			 const struct sk_buff *skb)
{
	const u8 *src = eth_hdr(skb)->h_source;
	struct xnic_peer *peer;
	bool ok = false;
	int k;

	rcu_read_lock();
	peer = xa_load(&xdev->peers->table, node);
	for (k = 0; peer && k < XNIC_MAX_LINKS; k++) {
		struct xnic_path *path = &peer->path[k];

		if (path->ifindex == skb->skb_iif &&
		    ether_addr_equal(path->mac, src)) {
			WRITE_ONCE(path->last_seen, jiffies);
			ok = true;
			break;
		}
	}
	rcu_read_unlock();
	return ok;
}

/* Build a HELLO; dst_node XNIC_NODE_BROADCAST unless replying. */
static struct sk_buff *xnic_hello_build(struct xnic_dev *xdev,
					struct net_device *ndev, u16 dst_node,
					u16 flags)
{
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_HELLO,
		.flags = flags,
		.src_node = xdev->node_id,
		.dst_node = dst_node,
		.payload_len = sizeof(struct xnic_wire_hello),
	};
	struct xnic_wire_hello *h;
	struct sk_buff *skb;

	skb = xnic_frame_alloc(sizeof(*h), GFP_ATOMIC);
	if (!skb)
		return NULL;
	h = skb_put_zero(skb, sizeof(*h));
	h->node_guid = xdev->ibdev.node_guid;
	h->link_mtu = cpu_to_be32(READ_ONCE(ndev->mtu));
	xnic_frame_finish(skb, &i);
	return skb;
}

static void xnic_hello_send_all(struct xnic_dev *xdev)
{
	struct xnic_link *link;
	struct sk_buff *skb;

	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list) {
		if (!xnic_link_is_up(link))
			continue;
		skb = xnic_hello_build(xdev, link->ndev, XNIC_NODE_BROADCAST,
				       0);
		if (!skb) {
			xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
			continue;
		}
		if (!xnic_link_xmit(xdev, link->ndev, link->ndev->broadcast,
				    skb))
			xnic_cnt_inc(xdev, XNIC_CNT_HELLO_SENT);
	}
	rcu_read_unlock();
}

/* Whether a path was silent for XNIC_PEER_STALE_MS. */
static bool xnic_path_stale(const struct xnic_path *path)
{
	return time_after(jiffies, READ_ONCE(path->last_seen) +
			  msecs_to_jiffies(XNIC_PEER_STALE_MS));
}

/*
 * Record that @node with @guid was heard on @ifindex from @mac. What we
 * learned is only replaced once it went stale (the peer was re-created);
 * until then a contradicting HELLO is forged.
 * Return: 1 when the peer or path is new, 0 when known, -EPERM when it
 * contradicts what we learned (forged), -ENOBUFS when @node is new and the
 * table holds max_peers nodes, -ENOMEM/-ENOSPC.
 */
static int xnic_peer_learn(struct xnic_peers *p, u16 node, u64 guid,
			   int ifindex, const u8 *mac)
{
	struct xnic_peer *old, *peer;
	int k, slot = -1, ret = 0;
	bool stale = true;

	spin_lock(&p->lock);
	old = xa_load(&p->table, node);
	if (old && old->guid != guid) {
		for (k = 0; k < XNIC_MAX_LINKS; k++)
			if (old->path[k].ifindex &&
			    !xnic_path_stale(&old->path[k]))
				stale = false;
		if (!stale) {
			ret = -EPERM;
			goto out;
		}
		/* Forget the old incarnation altogether. */
		slot = 0;
		peer = kzalloc(sizeof(*peer), GFP_ATOMIC);
	} else if (old) {
		for (k = 0; k < XNIC_MAX_LINKS; k++) {
			if (old->path[k].ifindex == ifindex) {
				if (ether_addr_equal(old->path[k].mac, mac)) {
					WRITE_ONCE(old->path[k].last_seen,
						   jiffies);
					goto out;
				}
				if (!xnic_path_stale(&old->path[k])) {
					ret = -EPERM;
					goto out;
				}
				slot = k;
				break;
			}
			if (!old->path[k].ifindex && slot < 0)
				slot = k;
		}
		if (slot < 0) {
			ret = -ENOSPC;
			goto out;
		}
		peer = kmemdup(old, sizeof(*old), GFP_ATOMIC);
	} else {
		if (p->nr_peers >= READ_ONCE(p->xdev->params.max_peers)) {
			ret = -ENOBUFS;
			goto out;
		}
		slot = 0;
		peer = kzalloc(sizeof(*peer), GFP_ATOMIC);
	}
	if (!peer) {
		ret = -ENOMEM;
		goto out;
	}
	peer->node = node;
	peer->guid = guid;
	peer->path[slot].ifindex = ifindex;
	ether_addr_copy(peer->path[slot].mac, mac);
	peer->path[slot].answered = false;
	peer->path[slot].last_seen = jiffies;
	ret = xa_err(xa_store(&p->table, node, peer, GFP_ATOMIC));
	if (ret) {
		kfree(peer);
		goto out;
	}
	if (!old)
		p->nr_peers++;
	if (!old || old->guid != guid) {
		struct xnic_tp_peer_info pi;

		xnic_peer_info(peer, slot, &pi);
		xnic_nl_peer_event(p->xdev, &pi, XNIC_EVENT_PEER_JOIN);
	}
	if (old)
		kfree_rcu(old, rcu);
	ret = 1;
out:
	spin_unlock(&p->lock);
	return ret;
}

/**
 * xnic_peer_may_send_unanswered() - whether a frame may go to a path that
 *	never answered
 * @xdev: the device
 * @peer: the peer, or NULL when not in the table
 *
 * HELLO replies and heartbeat probes go to senders of HELLOs that may be
 * forged; together they stay within XNIC_UNANSWERED_PER_S per device, so a
 * flood of forged HELLOs is not amplified. A peer that answered over
 * another path is real (a link added or back): its new path is probed
 * freely.
 *
 * Context: any; RCU read side when @peer is given.
 * Return: true when the frame may go; false (counted in
 * tx_unanswered_limited) when not.
 */
bool xnic_peer_may_send_unanswered(struct xnic_dev *xdev,
				   const struct xnic_peer *peer)
{
	int k;

	for (k = 0; peer && k < XNIC_MAX_LINKS; k++)
		if (peer->path[k].ifindex && READ_ONCE(peer->path[k].answered))
			return true;
	if (__ratelimit(&xdev->peers->unanswered))
		return true;
	xnic_cnt_inc(xdev, XNIC_CNT_UNANSWERED_LIMITED);
	return false;
}

/**
 * xnic_peer_answered() - a peer answered a heartbeat over a path
 * @xdev: the device
 * @node: the peer
 * @ifindex: the member link it answered on
 *
 * From now on the path gets every heartbeat (struct xnic_path.answered).
 *
 * Context: softirq, RCU read side.
 * Return: the path (valid under the caller's RCU read lock; only its
 * in-place fields may be written), or NULL when @node has none on @ifindex.
 */
struct xnic_path *xnic_peer_answered(struct xnic_dev *xdev, u16 node,
				     int ifindex)
{
	struct xnic_peer *peer = xa_load(&xdev->peers->table, node);
	int k;

	for (k = 0; peer && k < XNIC_MAX_LINKS; k++) {
		if (peer->path[k].ifindex != ifindex)
			continue;
		if (!READ_ONCE(peer->path[k].answered))
			WRITE_ONCE(peer->path[k].answered, true);
		return &peer->path[k];
	}
	return NULL;
}

/**
 * xnic_peer_hello_rx() - handle a HELLO
 * @xdev: the device
 * @skb: the frame (not consumed)
 * @i: its header, accepted by xnic_wire_check()
 *
 * Learns the sender (unless the table is full: peers_refused) and, when it
 * or the path is new and the HELLO is not itself an answer, answers on the
 * same link, within XNIC_UNANSWERED_PER_S.
 *
 * Context: engine thread.
 */
void xnic_peer_hello_rx(struct xnic_dev *xdev, struct sk_buff *skb,
			const struct xnic_wire_info *i)
{
	const u8 *src = eth_hdr(skb)->h_source;
	struct xnic_wire_hello hello;
	struct xnic_peer *peer;
	struct xnic_link *link;
	struct sk_buff *reply;
	int ret;

	if (skb_copy_bits(skb, XNIC_WIRE_HDR_LEN, &hello, sizeof(hello)) ||
	    !is_valid_ether_addr(src)) {
		xnic_cnt_inc(xdev, XNIC_CNT_MALFORMED);
		return;
	}
	xnic_cnt_inc(xdev, XNIC_CNT_HELLO_RCVD);

	rcu_read_lock();
	link = xnic_link_by_ifindex(xdev, skb->skb_iif);
	if (!link)
		goto out;
	ret = xnic_peer_learn(xdev->peers, i->src_node,
			      be64_to_cpu(hello.node_guid), skb->skb_iif, src);
	if (ret == -ENOBUFS) {
		xnic_cnt_inc(xdev, XNIC_CNT_PEERS_REFUSED);
		goto out;
	}
	if (ret == -EPERM) {
		xnic_cnt_inc(xdev, XNIC_CNT_FORGED);
		if (net_ratelimit())
			ibdev_info(&xdev->ibdev,
				   "HELLO from node %u (%pM) contradicts the peer table\n",
				   i->src_node, src);
		goto out;
	}
	if (ret == 1 && !(i->flags & XNIC_WF_REPLY)) {
		/* Whoever sent it has not answered on this path yet. */
		peer = xa_load(&xdev->peers->table, i->src_node);
		if (!xnic_peer_may_send_unanswered(xdev, peer))
			goto out;
		reply = xnic_hello_build(xdev, link->ndev, i->src_node,
					 XNIC_WF_REPLY);
		if (!reply)
			xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
		else if (!xnic_link_xmit(xdev, link->ndev, src, reply))
			xnic_cnt_inc(xdev, XNIC_CNT_HELLO_SENT);
	}
out:
	rcu_read_unlock();
}

/* ------------------------------ debugfs ------------------------------ */

static DEFINE_MUTEX(xnic_dbg_mutex);
static struct dentry *xnic_dbg_root;
static unsigned int xnic_dbg_users;

static int xnic_peers_show(struct seq_file *s, void *unused)
{
	struct xnic_peers *p = s->private;
	struct xnic_peer *peer;
	struct xnic_link *link;
	unsigned long node;
	int k;

	seq_puts(s, "node  guid              link             mac                age_ms answered\n");
	rcu_read_lock();
	xa_for_each(&p->table, node, peer) {
		for (k = 0; k < XNIC_MAX_LINKS; k++) {
			struct xnic_path *path = &peer->path[k];

			if (!path->ifindex)
				continue;
			link = xnic_link_by_ifindex(p->xdev, path->ifindex);
			seq_printf(s, "%-5u %016llx  %-16s %pM  %-6u %u\n",
				   peer->node, peer->guid,
				   link ? link->ndev->name : "(gone)",
				   path->mac,
				   jiffies_to_msecs(jiffies -
						    READ_ONCE(path->last_seen)),
				   READ_ONCE(path->answered));
		}
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xnic_peers);

static int xnic_counters_show(struct seq_file *s, void *unused)
{
	struct xnic_peers *p = s->private;
	int k;

	seq_printf(s, "node_id %u\n", p->xdev->node_id);
	for (k = 0; k < XNIC_CNT_MAX; k++)
		seq_printf(s, "%s %lld\n", xnic_tp_counter_names[k],
			   atomic64_read(&p->cnt[k]));
	for (k = 0; k < XNIC_CCNT_MAX; k++)
		seq_printf(s, "%s %lld\n", xnic_credit_counter_names[k],
			   atomic64_read(&p->credit.cnt[k]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xnic_counters);

static int xnic_links_show(struct seq_file *s, void *unused)
{
	struct xnic_peers *p = s->private;

	return xnic_bond_links_show(s, p->xdev);
}
DEFINE_SHOW_ATTRIBUTE(xnic_links);

static int xnic_link_credit_show(struct seq_file *s, void *unused)
{
	struct xnic_peers *p = s->private;

	return xnic_lcr_show(s, p->xdev);
}
DEFINE_SHOW_ATTRIBUTE(xnic_link_credit);

/* Create the device's debugfs directory once it has a name. */
static void xnic_dbg_add(struct xnic_peers *p)
{
	const char *name = dev_name(&p->xdev->ibdev.dev);

	if (p->dbg || !name || !*name)
		return;
	mutex_lock(&xnic_dbg_mutex);
	if (!xnic_dbg_root)
		xnic_dbg_root = debugfs_create_dir(XNIC_DRV_NAME, NULL);
	xnic_dbg_users++;
	p->dbg = debugfs_create_dir(name, xnic_dbg_root);
	debugfs_create_file("peers", 0400, p->dbg, p, &xnic_peers_fops);
	debugfs_create_file("counters", 0400, p->dbg, p, &xnic_counters_fops);
	debugfs_create_file("links", 0400, p->dbg, p, &xnic_links_fops);
	debugfs_create_file("link_credit", 0400, p->dbg, p,
			    &xnic_link_credit_fops);
	mutex_unlock(&xnic_dbg_mutex);
}

static void xnic_dbg_del(struct xnic_peers *p)
{
	if (!p->dbg)
		return;
	mutex_lock(&xnic_dbg_mutex);
	debugfs_remove(p->dbg);
	p->dbg = NULL;
	if (!--xnic_dbg_users) {
		debugfs_remove(xnic_dbg_root);
		xnic_dbg_root = NULL;
	}
	mutex_unlock(&xnic_dbg_mutex);
}

/* ------------------------------ lifetime ------------------------------ */

/* Forget the peers no member link has heard for XNIC_PEER_EXPIRE_MS. */
static void xnic_peers_expire(struct xnic_peers *p)
{
	unsigned long expire = msecs_to_jiffies(XNIC_PEER_EXPIRE_MS);
	struct xnic_tp_peer_info pi;
	struct xnic_peer *peer;
	unsigned long node;
	bool live;
	int k;

	spin_lock(&p->lock);
	xa_for_each(&p->table, node, peer) {
		live = false;
		for (k = 0; k < XNIC_MAX_LINKS; k++)
			if (peer->path[k].ifindex &&
			    time_before(jiffies,
					READ_ONCE(peer->path[k].last_seen) +
					expire))
				live = true;
		if (live)
			continue;
		xnic_peer_info(peer, -1, &pi);
		xnic_nl_peer_event(p->xdev, &pi, XNIC_EVENT_PEER_LEAVE);
		xa_erase(&p->table, node);
		p->nr_peers--;
		kfree_rcu(peer, rcu);
	}
	spin_unlock(&p->lock);
}

/*
 * Every XNIC_HELLO_MS, or at once when asked (@hello_now): expire peers
 * and send HELLOs. Until the device is registered (it has no name before)
 * it also comes back every few ms to create the debugfs directory.
 */
static void xnic_hello_work(struct work_struct *work)
{
	struct xnic_peers *p = container_of(to_delayed_work(work),
					    struct xnic_peers, hello);
	unsigned long delay;

	xnic_dbg_add(p);
	if (atomic_xchg(&p->hello_now, 0) ||
	    !time_before(jiffies, p->next_hello)) {
		xnic_peers_expire(p);
		xnic_hello_send_all(p->xdev);
		p->next_hello = jiffies + msecs_to_jiffies(XNIC_HELLO_MS);
	}
	delay = time_before(jiffies, p->next_hello) ?
		p->next_hello - jiffies : 0;
	if (!p->dbg)
		delay = min(delay, msecs_to_jiffies(10));
	queue_delayed_work(system_wq, &p->hello, delay);
}

/**
 * xnic_tp_link_changed() - a member link was attached or came up
 * @xdev: the device
 *
 * Sends a HELLO on every link now rather than at the next period.
 *
 * Context: RTNL held (serialises against xnic_tp_dev_cleanup()).
 */
void xnic_tp_link_changed(struct xnic_dev *xdev)
{
	struct xnic_peers *p = xdev->peers;

	ASSERT_RTNL();
	if (!p)
		return;
	WRITE_ONCE(p->learn_since, jiffies);
	atomic_set(&p->hello_now, 1);
	mod_delayed_work(system_wq, &p->hello, 0);
}

/**
 * xnic_peer_unreachable() - is a node known not to be reachable?
 * @xdev: the device
 * @node: the node id
 *
 * Return: true when @node is not in the peer table although the table
 * has had XNIC_PEER_LEARN_MS to learn since the transport started or a
 * member link last came; false while it may still be learning.
 *
 * Context: any; takes the RCU read lock.
 */
bool xnic_peer_unreachable(struct xnic_dev *xdev, u16 node)
{
	struct xnic_peers *p = xdev->peers;
	bool known;

	if (!p)
		return false;
	rcu_read_lock();
	known = xa_load(&p->table, node);
	rcu_read_unlock();
	return !known &&
	       time_after(jiffies, READ_ONCE(p->learn_since) +
			  msecs_to_jiffies(XNIC_PEER_LEARN_MS));
}

/**
 * xnic_tp_link_detached() - forget the paths over a member link
 * @xdev: the device
 * @ifindex: ifindex of the link's netdev
 *
 * Context: RTNL held.
 */
void xnic_tp_link_detached(struct xnic_dev *xdev, int ifindex)
{
	struct xnic_peers *p = xdev->peers;
	struct xnic_peer *peer, *copy;
	unsigned long node;
	int k;

	ASSERT_RTNL();
	if (!p)
		return;
	spin_lock(&p->lock);
	xa_for_each(&p->table, node, peer) {
		for (k = 0; k < XNIC_MAX_LINKS; k++)
			if (peer->path[k].ifindex == ifindex)
				break;
		if (k == XNIC_MAX_LINKS)
			continue;
		copy = kmemdup(peer, sizeof(*peer), GFP_ATOMIC);
		if (!copy) {
			/* Unreachable for now; a later HELLO relearns it. */
			xa_erase(&p->table, node);
			p->nr_peers--;
		} else {
			memset(&copy->path[k], 0, sizeof(copy->path[k]));
			xa_store(&p->table, node, copy, GFP_ATOMIC);
		}
		kfree_rcu(peer, rcu);
	}
	spin_unlock(&p->lock);
}

/**
 * xnic_tp_dev_init() - set up a device's transport: peer table, counters,
 *	HELLO timer, debugfs
 * @xdev: the device; @xdev->node_id must be set
 *
 * Context: process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int xnic_tp_dev_init(struct xnic_dev *xdev)
{
	struct xnic_peers *p;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->xdev = xdev;
	spin_lock_init(&p->lock);
	xa_init(&p->table);
	INIT_DELAYED_WORK(&p->hello, xnic_hello_work);
	p->next_hello = jiffies;
	p->learn_since = jiffies;
	ratelimit_state_init(&p->unanswered, HZ, XNIC_UNANSWERED_PER_S);
	/* Its "callbacks suppressed" message: the counter says it. */
	ratelimit_set_flags(&p->unanswered, RATELIMIT_MSG_ON_RELEASE);
	xnic_credit_dev_init(&p->credit);
	if (xnic_cm_dev_init(xdev)) {
		kfree(p);
		return -ENOMEM;
	}
	rtnl_lock();
	xdev->peers = p;
	rtnl_unlock();
	queue_delayed_work(system_wq, &p->hello, 0);
	return 0;
}

/**
 * xnic_tp_dev_cleanup() - release a device's transport state
 * @xdev: the device
 *
 * Context: process context, RTNL not held; the engine must be stopped
 * (nothing may call into the transport any more).
 */
void xnic_tp_dev_cleanup(struct xnic_dev *xdev)
{
	struct xnic_peers *p = xdev->peers;
	struct xnic_peer *peer;
	unsigned long node;

	if (!p)
		return;
	/* The CM sends through the peer table: it goes first. */
	xnic_cm_dev_cleanup(xdev);
	rtnl_lock();
	xdev->peers = NULL;
	rtnl_unlock();
	cancel_delayed_work_sync(&p->hello);
	xnic_dbg_del(p);
	xa_for_each(&p->table, node, peer)
		kfree_rcu(peer, rcu);
	xa_destroy(&p->table);
	kfree(p);
}
