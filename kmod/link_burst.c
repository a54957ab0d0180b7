// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - link bursts: the data frames a QP's requester sends in one pass
 * leave on a member link as one skb, the frames chained on its frag_list
 * (SKB_GSO_FRAGLIST), as TCP hands a veth one 64 KiB segment rather than
 * MTU-sized packets. The first frame is the carrier's own data, the others
 * its frag_list, each a whole frame with its link-layer header before its
 * data. A link that cannot take the burst whole gets the frames one by one
 * from xnic_burst_gso_segment(); the receiving member link's handler
 * splits it again (xnic_burst_split()). Every frame keeps its own header,
 * PSN and check: a burst is only a way through the stack, and nothing on
 * the wire.
 *
 * Context: the sender's tp lock (bottom halves off) from
 * xnic_link_burst_begin() to xnic_link_burst_end(); the burst is per CPU.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>

#include "transport_priv.h"

struct xnic_burst_cpu {
	struct xnic_dev *xdev;		/* the device of the pass; NULL: none */
	struct sk_buff_head frames;	/* the pass's data frames, in order */
	unsigned int dropped;		/* of them, dropped by their link */
};

static DEFINE_PER_CPU(struct xnic_burst_cpu, xnic_burst_cpu);

static bool link_burst = true;
module_param(link_burst, bool, 0644);
MODULE_PARM_DESC(link_burst,
		 "Data frames a QP sends in one pass to a member link that passes frame lists whole (NETIF_F_GSO_FRAGLIST: veth, bridges) cross the stack as one skb per link; 0: one skb per frame (default 1)");

/**
 * xnic_link_burst_begin() - collect the data frames this CPU sends
 * @xdev: the device whose QP sends
 *
 * Until xnic_link_burst_end(), xnic_link_xmit() keeps the data frames it
 * may chain (xnic_link_burst_add()) rather than send them.
 *
 * Context: bottom halves off (the tp lock).
 * Return: whether a collection started here (not nested in another, and
 * bursts enabled); pass it to xnic_link_burst_end().
 */
bool xnic_link_burst_begin(struct xnic_dev *xdev)
{
	struct xnic_burst_cpu *bc = this_cpu_ptr(&xnic_burst_cpu);

	if (bc->xdev || !READ_ONCE(link_burst))
		return false;
	bc->xdev = xdev;
	return true;
}

/* Whether @next may follow @head in a burst: same link and peer, room. */
static bool xnic_burst_joins(const struct sk_buff *head,
			     const struct sk_buff *next, unsigned int frames)
{
	const struct net_device *ndev = head->dev;

	return next->dev == ndev &&
	       ether_addr_equal(eth_hdr(head)->h_dest, eth_hdr(next)->h_dest) &&
	       head->len + next->len < READ_ONCE(ndev->gso_max_size) &&
	       frames < READ_ONCE(ndev->gso_max_segs);
}

/*
 * Send the frames queued on @bc: each with those after it that join it
 * (xnic_burst_joins()) as one carrier; count those the links dropped.
 */
static void xnic_burst_flush(struct xnic_burst_cpu *bc)
{
	struct sk_buff_head *q = &bc->frames;
	struct sk_buff *head, *next, **tail;
	unsigned int frames, bytes, seg;

	while ((head = __skb_dequeue(q))) {
		frames = 1;
		bytes = head->len - skb_network_offset(head);
		seg = bytes;
		tail = &skb_shinfo(head)->frag_list;
		while ((next = skb_peek(q)) &&
		       xnic_burst_joins(head, next, frames)) {
			__skb_unlink(next, q);
			/* A chained frame's data starts at its xnic header. */
			__skb_pull(next, skb_network_offset(next));
			*tail = next;
			tail = &next->next;
			head->len += next->len;
			head->data_len += next->len;
			head->truesize += next->truesize;
			bytes += next->len;
			seg = max(seg, next->len);
			frames++;
		}
		if (frames > 1) {
			/*
			 * As a TCP segment's: the xnic header is the
			 * "transport" header, gso_size the largest payload,
			 * so the stack's checks of segment length
			 * (skb_gso_validate_mac_len()) see the frames'.
			 */
			skb_set_transport_header(head, skb_network_offset(head) +
						 XNIC_WIRE_HDR_LEN);
			skb_shinfo(head)->gso_size = seg - XNIC_WIRE_HDR_LEN;
			skb_shinfo(head)->gso_segs = frames;
			skb_shinfo(head)->gso_type = SKB_GSO_FRAGLIST;
		}
		if (xnic_link_send(bc->xdev, head, frames, bytes))
			bc->dropped += frames;
		else if (frames > 1)
			xnic_cnt_inc(bc->xdev, XNIC_CNT_TX_BURSTS);
	}
}

/**
 * xnic_link_burst_end() - send the bursts collected since
 *	xnic_link_burst_begin()
 * @began: what xnic_link_burst_begin() returned
 *
 * Context: as xnic_link_burst_begin(), on the same CPU.
 * Return: how many of the frames collected their member links dropped
 * (a full qdisc: congestion right here); 0 when @began is false.
 */
unsigned int xnic_link_burst_end(bool began)
{
	struct xnic_burst_cpu *bc = this_cpu_ptr(&xnic_burst_cpu);
	unsigned int dropped;

	if (!began)
		return 0;
	xnic_burst_flush(bc);
	dropped = bc->dropped;
	bc->dropped = 0;
	bc->xdev = NULL;
	return dropped;
}

/**
 * xnic_link_burst_add() - queue a frame for its link's burst
 * @xdev: the device
 * @skb: a frame, finished, its link-layer header pushed (skb->dev set,
 *	network header at the xnic header)
 *
 * Only bulk data frames (zero copy: xnic_tx_data_frame()) whose link
 * checksums them (CHECKSUM_PARTIAL) and takes frame lists whole join a
 * burst: a latency-bound small frame leaves at once. Any other frame first
 * sends the bursts queued, which it must not overtake.
 *
 * Context: as xnic_link_xmit().
 * Return: true when the burst took @skb (sent and counted at
 * xnic_link_burst_end()); false when the caller sends it now.
 */
bool xnic_link_burst_add(struct xnic_dev *xdev, struct sk_buff *skb)
{
	struct xnic_burst_cpu *bc = this_cpu_ptr(&xnic_burst_cpu);
	netdev_features_t need = NETIF_F_GSO_FRAGLIST | NETIF_F_FRAGLIST |
				 NETIF_F_HW_CSUM;

	if (bc->xdev != xdev)
		return false;
	if (!skb_is_nonlinear(skb) || skb->ip_summed != CHECKSUM_PARTIAL ||
	    (skb->dev->features & need) != need) {
		xnic_burst_flush(bc);
		return false;
	}
	skb_reset_mac_header(skb);
	__skb_queue_tail(&bc->frames, skb);
	return true;
}

/**
 * xnic_burst_split() - take a burst apart into its frames
 * @skb: a carrier (SKB_GSO_FRAGLIST), data at its network header
 *
 * The carrier keeps its first frame; the others follow it on its
 * skb->next list, data at their xnic header, mac header set, with the
 * carrier's device, input interface, protocol and packet type. Frames
 * shared with a clone (a packet tap's) are copied first; a frame that
 * cannot be is dropped, a loss the transport recovers from.
 *
 * Context: softirq or bottom halves off.
 * Return: @skb, or NULL when out of memory (everything freed).
 */
struct sk_buff *xnic_burst_split(struct sk_buff *skb)
{
	struct sk_buff *list, *f, **tail;

	if (skb_unclone(skb, GFP_ATOMIC)) {
		kfree_skb(skb);
		return NULL;
	}
	list = skb_shinfo(skb)->frag_list;
	skb_shinfo(skb)->frag_list = NULL;
	skb_gso_reset(skb);
	tail = &skb->next;
	while (list) {
		f = list;
		list = f->next;
		skb->len -= f->len;
		skb->data_len -= f->len;
		/* A shared frame's next is a tap's frag_list: not ours. */
		f = skb_share_check(f, GFP_ATOMIC);
		if (!f)
			continue;
		f->next = NULL;
		if (!skb_mac_header_was_set(f) || skb_mac_offset(f) >= 0) {
			kfree_skb(f);
			continue;
		}
		f->dev = skb->dev;
		f->skb_iif = skb->skb_iif;
		f->protocol = skb->protocol;
		f->pkt_type = skb->pkt_type;
		f->priority = skb->priority;
		skb_reset_network_header(f);
		*tail = f;
		tail = &f->next;
	}
	*tail = NULL;
	return skb;
}

/*
 * gso_segment of the xnic ethertype, for a link (or a bridge port, a
 * qdisc) that cannot pass a burst whole: the frames, each from its
 * link-layer header, with their checksums computed where @features lack
 * the offload. The carrier itself is the first segment; the caller's
 * consume_skb() of it drops the reference taken here.
 */
static struct sk_buff *xnic_burst_gso_segment(struct sk_buff *skb,
					      netdev_features_t features)
{
	struct sk_buff *segs, *f;

	if (!(skb_shinfo(skb)->gso_type & SKB_GSO_FRAGLIST) || skb_shared(skb))
		return ERR_PTR(-EINVAL);
	/* Unshared first: the split of an unshared carrier cannot fail. */
	if (skb_unclone(skb, GFP_ATOMIC))
		return ERR_PTR(-ENOMEM);
	skb_get(skb);
	segs = xnic_burst_split(skb);
	for (f = segs; f; f = f->next) {
		if (f != segs) {
			/* From the link-layer header, as skb_segment()'s. */
			f->mac_len = -skb_mac_offset(f);
			__skb_push(f, f->mac_len);
		}
		if (f->ip_summed == CHECKSUM_PARTIAL &&
		    skb_csum_hwoffload_help(f, features))
			f->ip_summed = CHECKSUM_NONE;
		/* The caller finds the last segment there. */
		segs->prev = f;
	}
	return segs;
}

static struct packet_offload xnic_burst_offload = {
	.type = cpu_to_be16(XNIC_ETH_P),
	.priority = 10,
	.callbacks = {
		.gso_segment = xnic_burst_gso_segment,
	},
};

/**
 * xnic_link_burst_init() - register the segmentation of bursts
 *
 * Context: module init.
 */
void xnic_link_burst_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		__skb_queue_head_init(&per_cpu(xnic_burst_cpu, cpu).frames);
	dev_add_offload(&xnic_burst_offload);
}

/**
 * xnic_link_burst_exit() - unregister it; waits for its users (RCU)
 *
 * Context: module exit, after the member links are gone.
 */
void xnic_link_burst_exit(void)
{
	dev_remove_offload(&xnic_burst_offload);
}
