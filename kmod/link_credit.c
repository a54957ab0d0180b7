// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - link-level credit (InfiniBand link-level flow control, IBA vol 1
 * section 7.9, per path: member link x peer node). link_credit.h has the
 * rules and the locking, link_credit_logic.h the arithmetic.
 *
 * Sender: the bond chooses a link for a data-bearing frame only among the
 * links whose path to the peer has credit (xnic_lcr_link_has()), and
 * spends one on it (xnic_lcr_link_take()); a QP that finds no link with
 * credit to its peer waits (xnic_lcr_qp_ok()) and is handed to the engine
 * when an update raises a limit (or by its timer, should the wakeup be
 * missed). Nothing is dropped for lack of credit.
 *
 * Receiver: every frame the packet handler takes off a link that took
 * link credit at its sender (XNIC_WF_LINK) counts for its path; once half
 * a window was processed since the last advertisement an update goes back
 * on the same link. A receiver with link credit off grants
 * XNIC_LCR_MAX_WINDOW, so the setting may differ between nodes, or change
 * under traffic, without a sender stalling or a count going wrong.
 * Updates are CREDIT frames with XNIC_WF_LINK: psn the limit granted
 * (FCCL), msn the sender's own count of frames sent (FCTBS), offset its
 * path's epoch, msg_len the epoch of the peer's path the grant is for.
 * Each heartbeat tick also sends one on every path that is not idle: the
 * sync that lets the receiver give up lost frames (xnic_lcr_rx_sync()).
 */
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "transport_priv.h"
#include "engine.h"
#include "link_credit.h"
#include "../uapi/xnic-netlink.h"

static struct xnic_uint_param link_credit_window = {
	.val = 64, .min = 0, .max = XNIC_LCR_MAX_WINDOW,
};
module_param_cb(link_credit_window, &xnic_uint_param_ops,
		&link_credit_window, 0644);
MODULE_PARM_DESC(link_credit_window,
		 "Frames a sender may have unprocessed on one member link towards one peer; 0 turns link credit off (default 64, at most 4096)");

/* A QP waiting for link credit checks again after this long, ms. */
#define XNIC_LCR_POLL_MS	5
/* An idle path is synced every this many heartbeat ticks. */
#define XNIC_LCR_IDLE_TICKS	10

/* Names of enum xnic_lcr_counter, in order. */
const char *const xnic_lcr_counter_names[XNIC_LCNT_MAX] = {
	[XNIC_LCNT_STALLS]	= "link_credit_stalls",
	[XNIC_LCNT_WAKEUPS]	= "link_credit_wakeups",
	[XNIC_LCNT_RACES]	= "link_credit_races",
	[XNIC_LCNT_UPD_SENT]	= "link_credit_updates_sent",
	[XNIC_LCNT_UPD_RCVD]	= "link_credit_updates_rcvd",
	[XNIC_LCNT_RESYNC_LOST]	= "link_credit_resync_lost",
	[XNIC_LCNT_LATE]	= "link_credit_late",
	[XNIC_LCNT_NOMEM]	= "link_credit_nomem",
};

/**
 * xnic_lcr_counters() - read the link credit counters of a device
 * @xdev: the device
 * @vals: XNIC_LCNT_MAX values, filled in xnic_lcr_counter_names[] order
 *
 * Context: any; the values are read without a lock.
 */
void xnic_lcr_counters(struct xnic_dev *xdev, u64 *vals)
{
	struct xnic_peers *p = READ_ONCE(xdev->peers);
	int k;

	for (k = 0; k < XNIC_LCNT_MAX; k++)
		vals[k] = p ? atomic64_read(&p->credit.lcnt[k]) : 0;
}

static u32 xnic_lcr_window(void)
{
	return READ_ONCE(link_credit_window.val);
}

/*
 * The window a receiver grants: with link credit off here (0), the most
 * there is, so that a peer that has it on never waits for our credit.
 */
static u32 xnic_lcr_rx_window(void)
{
	return xnic_lcr_window() ?: XNIC_LCR_MAX_WINDOW;
}

static void xnic_lcnt_add(struct xnic_dev *xdev, enum xnic_lcr_counter c,
			  s64 v)
{
	atomic64_add(v, &xdev->peers->credit.lcnt[c]);
}

/**
 * xnic_lcr_link_init() - a member link starts with no path
 * @bl: its bond state, being set up
 *
 * Context: process context (xnic_bond_link_init()).
 */
void xnic_lcr_link_init(struct xnic_bond_link *bl)
{
	xa_init_flags(&bl->lcr, XA_FLAGS_LOCK_BH);
}

/**
 * xnic_lcr_link_fini() - free the paths of a member link
 * @bl: its bond state; its timer is stopped and no packet handler or
 *	transmission finds the link any more (it left the device's list)
 *
 * A path's credit goes with its link: the frames it had on the link are
 * lost (the QPs resend them on the other links, with their credit).
 * After a grace period no transmission or packet handler that saw the
 * link alive (xnic_bond_link.dead) can make a path any more.
 *
 * Context: process context; sleeps.
 */
void xnic_lcr_link_fini(struct xnic_bond_link *bl)
{
	struct xnic_lcr_path *lp;
	unsigned long node;

	synchronize_rcu();
	xa_for_each(&bl->lcr, node, lp) {
		xa_erase_bh(&bl->lcr, node);
		if (!xnic_lcr_tx_avail(&lp->tx))
			atomic_dec(&bl->xdev->lcr_empty);
		kfree_rcu(lp, rcu);
	}
	xa_destroy(&bl->lcr);
}

/*
 * The path of @bl to @node; made when @create (a new epoch, a full
 * window). Context: RCU read; *@made says whether it was made now.
 */
static struct xnic_lcr_path *xnic_lcr_path(struct xnic_bond_link *bl,
					   u16 node, bool create, bool *made)
{
	struct xnic_lcr_path *lp = xa_load(&bl->lcr, node), *old;
	bool empty;

	if (made)
		*made = false;
	if (lp || !create || READ_ONCE(bl->dead))
		return lp;
	lp = kzalloc(sizeof(*lp), GFP_ATOMIC);
	if (!lp) {
		xnic_lcnt_add(bl->xdev, XNIC_LCNT_NOMEM, 1);
		return NULL;
	}
	spin_lock_init(&lp->lock);
	lp->node = node;
	xnic_lcr_tx_init(&lp->tx, get_random_u32() ?: 1, xnic_lcr_window());
	/* Counted before it can be found (a window of 0: link credit off). */
	empty = !xnic_lcr_tx_avail(&lp->tx);
	if (empty)
		atomic_inc(&bl->xdev->lcr_empty);
	old = xa_cmpxchg_bh(&bl->lcr, node, NULL, lp, GFP_ATOMIC);
	if (old || xa_is_err(old)) {
		if (empty)
			atomic_dec(&bl->xdev->lcr_empty);
		kfree(lp);
		if (xa_is_err(old)) {
			xnic_lcnt_add(bl->xdev, XNIC_LCNT_NOMEM, 1);
			return NULL;
		}
		return old;
	}
	if (made)
		*made = true;
	return lp;
}

/*
 * The path of the member link @skb came in on (skb->dev) to @node, made
 * if need be; *@linkp is set to that link. NULL when @skb->dev is not a
 * live member link of @xdev or the path cannot be made.
 * Context: RCU read.
 */
static struct xnic_lcr_path *xnic_lcr_rx_path(struct xnic_dev *xdev,
					      const struct sk_buff *skb,
					      u16 node,
					      struct xnic_link **linkp)
{
	struct xnic_link *link;

	list_for_each_entry_rcu(link, &xdev->links, list) {
		if (link->ndev != skb->dev)
			continue;
		if (!link->bond || READ_ONCE(link->bond->dead))
			return NULL;
		*linkp = link;
		return xnic_lcr_path(link->bond, node, true, NULL);
	}
	return NULL;
}

/*
 * Send a sync and update on @link to @lp's peer at @mac: what we grant
 * it, what we sent it. Context: RCU read, BH off or softirq.
 */
static void xnic_lcr_send(struct xnic_dev *xdev, struct xnic_link *link,
			  struct xnic_lcr_path *lp, const u8 *mac)
{
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_CREDIT,
		.flags = XNIC_WF_LINK,
		.src_node = READ_ONCE(xdev->node_id),
		.dst_node = lp->node,
	};
	struct sk_buff *skb;

	spin_lock_bh(&lp->lock);
	i.psn = xnic_lcr_rx_grant(&lp->rx, xnic_lcr_rx_window());
	i.msn = lp->tx.sent;
	i.offset = lp->tx.epoch;
	i.msg_len = lp->rx.epoch;
	lp->synced = lp->tx.sent;
	lp->idle_ticks = 0;
	lp->upd_sent++;
	spin_unlock_bh(&lp->lock);
	skb = xnic_frame_alloc(0, GFP_ATOMIC);
	if (!skb) {
		xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
		return;
	}
	xnic_frame_finish(skb, &i);
	if (!xnic_link_xmit(xdev, link->ndev, mac, skb))
		xnic_lcnt_add(xdev, XNIC_LCNT_UPD_SENT, 1);
}

/* Hand the QPs waiting for link credit to the engine. Context: BH off. */
static void xnic_lcr_wake(struct xnic_dev *xdev)
{
	struct xnic_credit_dev *cd = &xdev->peers->credit;
	struct xnic_credit_qp *c, *tmp;

	/* Pairs with xnic_lcr_qp_ok()'s: the limit is seen or we see it. */
	smp_mb();
	if (list_empty(&cd->lwait))
		return;
	spin_lock(&cd->lock);
	list_for_each_entry_safe(c, tmp, &cd->lwait, lwait) {
		struct xnic_tp_qp *tp = container_of(c, struct xnic_tp_qp, cr);

		list_del(&c->lwait);
		c->lwaiting = false;
		xnic_engine_activate_qp(xdev, tp->qp);
		xnic_lcnt_add(xdev, XNIC_LCNT_WAKEUPS, 1);
	}
	spin_unlock(&cd->lock);
}

/* ------------------------------ sender ------------------------------ */

/**
 * xnic_lcr_needed() - whether a frame consumes link credit
 * @skb: a finished frame (data at the xnic header)
 *
 * Return: true for WRITE, SEND, READ_REQ and READ_RESP while link credit
 * is on (link_credit_window > 0).
 */
bool xnic_lcr_needed(const struct sk_buff *skb)
{
	struct xnic_wire_hdr _h;
	const struct xnic_wire_hdr *h;

	if (!xnic_lcr_window())
		return false;
	h = skb_header_pointer(skb, 0, sizeof(_h), &_h);
	return h && xnic_wire_op_data(h->opcode);
}

/**
 * xnic_lcr_link_has() - whether a link's path to a peer has credit
 * @link: the member link (with bond state)
 * @node: the peer
 *
 * A path not made yet has a full window. While no path of the device is
 * out of credit (xnic_dev.lcr_empty), the answer is yes without a
 * lookup; else the count is read without the path's lock, as a NIC's
 * arbiter reads a credit register: the answer is a hint for choosing a
 * link, xnic_lcr_link_take() decides under the lock (a frame that lost
 * the race waits like one that found no credit). A waiter reads both
 * after its smp_mb() and an update writes them before xnic_lcr_wake()'s,
 * so no wakeup is lost. It runs two or three times for every data frame
 * (Documentation/libfabric.rst has what the lock and the lookup cost).
 *
 * Context: RCU read.
 * Return: true when a frame to @node may leave on @link now.
 */
bool xnic_lcr_link_has(struct xnic_link *link, u16 node)
{
	struct xnic_lcr_path *lp;

	if (!atomic_read(&link->xdev->lcr_empty))
		return true;
	lp = xa_load(&link->bond->lcr, node);
	/* A hint: xnic_lcr_link_take() decides under the lock. */
	return !lp || data_race(xnic_lcr_tx_avail(&lp->tx)) != 0;
}

/**
 * xnic_lcr_link_take() - spend a link credit for a frame about to leave
 * @link: the member link xnic_bond_select() chose
 * @node: the peer
 * @mac: the peer's MAC address on @link
 * @seq: set to the frame's sequence on the path (the low 16 bits of the
 *	path's frames sent before it), which the frame carries
 *
 * A path made now first sends its sync, so that the receiver counts the
 * frames from its start.
 *
 * Context: RCU read, BH off or softirq.
 * Return: true when a credit was spent; false when another sender took
 * the last one since xnic_lcr_link_has() (the frame must not leave).
 */
bool xnic_lcr_link_take(struct xnic_link *link, u16 node, const u8 *mac,
			u16 *seq)
{
	struct xnic_lcr_path *lp;
	bool made, ok;

	lp = xnic_lcr_path(link->bond, node, true, &made);
	if (!lp)
		return false;
	if (made)
		xnic_lcr_send(link->xdev, link, lp, mac);
	spin_lock_bh(&lp->lock);
	ok = xnic_lcr_tx_take(&lp->tx);
	if (ok) {
		*seq = lp->tx.sent - 1;
		if (!xnic_lcr_tx_avail(&lp->tx))
			atomic_inc(&link->xdev->lcr_empty);
	} else {
		lp->blocked++;
	}
	spin_unlock_bh(&lp->lock);
	if (!ok)
		xnic_lcnt_add(link->xdev, XNIC_LCNT_RACES, 1);
	return ok;
}

/*
 * Whether xnic_bond_select() would find a link with credit for a frame to
 * @node: an UP link with credit (active-backup: the first UP link;
 * flow-hash: every UP link, the flow's is not known here), or, with no UP
 * link, any other with carrier and credit.
 */
static bool xnic_lcr_node_avail(struct xnic_dev *xdev, u16 node)
{
	u32 policy = READ_ONCE(xdev->params.bond_policy);
	bool ab = policy == XNIC_BOND_ACTIVE_BACKUP;
	bool fh = policy == XNIC_BOND_FLOW_HASH;
	bool up = false, up_has = false, up_all = true, other_has = false;
	struct xnic_peer *peer;
	struct xnic_link *link;
	int k;

	rcu_read_lock();
	peer = xa_load(&xdev->peers->table, node);
	if (!peer) {
		/* Unreachable: the transmission says so, not the credit. */
		rcu_read_unlock();
		return true;
	}
	list_for_each_entry_rcu(link, &xdev->links, list) {
		struct xnic_bond_link *bl = link->bond;
		bool has, is_up;

		if (!bl || READ_ONCE(bl->dead) || !xnic_link_is_up(link))
			continue;
		for (k = 0; k < XNIC_MAX_LINKS; k++)
			if (peer->path[k].ifindex == link->ndev->ifindex)
				break;
		if (k == XNIC_MAX_LINKS)
			continue;
		is_up = READ_ONCE(bl->state) == XNIC_LINK_STATE_UP;
		if (ab && is_up && up)
			continue;
		has = xnic_lcr_link_has(link, node);
		if (is_up) {
			up = true;
			up_has |= has;
			up_all &= has;
		} else {
			other_has |= has;
		}
	}
	rcu_read_unlock();
	/* flow-hash: the flow's link is not known here; all must have it. */
	if (up)
		return fh ? up_all : up_has;
	return other_has;
}

/**
 * xnic_lcr_qp_ok() - may a QP send a data-bearing frame to its peer now?
 * @qp: the QP
 * @node: its peer
 *
 * When no link that reaches @node has credit, the QP waits: it is handed
 * to the engine when an update raises a limit, and its timer looks again
 * every XNIC_LCR_POLL_MS should that wakeup be missed.
 *
 * Context: tp lock held.
 * Return: true when some link has credit (or link credit is off).
 */
bool xnic_lcr_qp_ok(struct xnic_qp *qp, u16 node)
{
	struct xnic_credit_dev *cd = &qp->xdev->peers->credit;
	struct xnic_tp_qp *tp = xnic_tp(qp);
	struct xnic_credit_qp *c = &tp->cr;

	if (!xnic_lcr_window() || xnic_lcr_node_avail(qp->xdev, node))
		return true;
	spin_lock(&cd->lock);
	if (!c->lwaiting) {
		c->lwaiting = true;
		list_add_tail(&c->lwait, &cd->lwait);
		xnic_lcnt_add(qp->xdev, XNIC_LCNT_STALLS, 1);
	}
	spin_unlock(&cd->lock);
	xnic_tp_arm(tp, jiffies + msecs_to_jiffies(XNIC_LCR_POLL_MS));
	/* Pairs with xnic_lcr_wake(): an update that came meanwhile. */
	smp_mb();
	return xnic_lcr_node_avail(qp->xdev, node);
}

/**
 * xnic_lcr_qp_hint() - may a QP send a new frame without xnic_lcr_qp_ok()?
 * @qp: the QP, not resending
 *
 * Yes while link credit is off or no path of the device is out of credit:
 * every path has some then. A frame sent on the hint that finds no link
 * after all (credit spent meanwhile, or no link with carrier to the peer)
 * comes back -EAGAIN from xnic_tp_xmit_link() and is resent, and a
 * resending QP asks xnic_lcr_qp_ok(), which makes it wait.
 *
 * Context: tp lock held.
 * Return: true when the requester need not ask xnic_lcr_qp_ok().
 */
bool xnic_lcr_qp_hint(struct xnic_qp *qp)
{
	return !xnic_lcr_window() || !atomic_read(&qp->xdev->lcr_empty);
}

/**
 * xnic_lcr_qp_stop() - a QP no longer waits for link credit
 * @qp: the QP (stopping, or its state being released)
 *
 * Context: tp lock held, or the state is no longer shared.
 */
void xnic_lcr_qp_stop(struct xnic_qp *qp)
{
	struct xnic_credit_dev *cd = &qp->xdev->peers->credit;
	struct xnic_credit_qp *c = &xnic_tp(qp)->cr;

	spin_lock_bh(&cd->lock);
	if (c->lwaiting) {
		list_del(&c->lwait);
		c->lwaiting = false;
	}
	spin_unlock_bh(&cd->lock);
}

/**
 * xnic_lcr_qp_timer() - the link credit part of a QP's timer
 * @tp: the transport state
 *
 * Context: the QP's timer (softirq), tp lock held.
 * Return: true when the QP waits for link credit and some is there now
 * (the engine should run it).
 */
bool xnic_lcr_qp_timer(struct xnic_tp_qp *tp)
{
	struct xnic_credit_qp *c = &tp->cr;
	u16 node;

	if (!READ_ONCE(c->lwaiting))
		return false;
	node = tp->tx.started ? tp->tx.remote_node : tp->rx.remote_node;
	if (xnic_lcr_node_avail(tp->qp->xdev, node))
		return true;
	xnic_tp_arm(tp, jiffies + msecs_to_jiffies(XNIC_LCR_POLL_MS));
	return false;
}

/* ------------------------------ receiver ------------------------------ */

/**
 * xnic_lcr_rx_count() - a frame was taken off a member link
 * @xdev: the device
 * @skb: the frame (skb->dev: the member netdev)
 * @i: its header, from a node learned on that link
 *
 * A frame that took link credit at its sender (XNIC_WF_LINK) counts for
 * its path (unless a resync gave it up before it came:
 * xnic_lcr_rx_take()), whether link credit is on here or not; once half a
 * window was processed since the last advertisement, an update goes back.
 *
 * Context: softirq (the member link's packet handler).
 */
void xnic_lcr_rx_count(struct xnic_dev *xdev, struct sk_buff *skb,
		       const struct xnic_wire_info *i)
{
	struct xnic_lcr_path *lp;
	struct xnic_link *link;
	bool due, counted;

	/* The sender says which frames took link credit, not our window. */
	if (!(i->flags & XNIC_WF_LINK))
		return;
	rcu_read_lock();
	lp = xnic_lcr_rx_path(xdev, skb, i->src_node, &link);
	if (!lp)
		goto out;
	spin_lock_bh(&lp->lock);
	counted = xnic_lcr_rx_take(&lp->rx, i->credits);
	due = lp->rx.epoch && xnic_lcr_rx_due(&lp->rx, xnic_lcr_rx_window());
	spin_unlock_bh(&lp->lock);
	if (!counted)
		xnic_lcnt_add(xdev, XNIC_LCNT_LATE, 1);
	if (due)
		xnic_lcr_send(xdev, link, lp, eth_hdr(skb)->h_source);
out:
	rcu_read_unlock();
}

/**
 * xnic_lcr_rx_frame() - handle a link credit sync and update
 * @xdev: the device
 * @skb: the CREDIT frame with XNIC_WF_LINK, from a node learned on the
 *	member link it came in on
 * @i: its header
 *
 * The sync moves our count of the peer's frames (a new epoch restarts
 * it; an old sample still ahead gives frames up as lost); the grant moves
 * our limit towards the peer and wakes the QPs waiting for link credit.
 * A new epoch or a resync is answered at once.
 *
 * Context: softirq (the member link's packet handler).
 */
void xnic_lcr_rx_frame(struct xnic_dev *xdev, struct sk_buff *skb,
		       const struct xnic_wire_info *i)
{
	struct xnic_lcr_path *lp;
	struct xnic_link *link;
	u32 lost, inc, w = xnic_lcr_rx_window();
	bool reply, was_empty;

	rcu_read_lock();
	lp = xnic_lcr_rx_path(xdev, skb, i->src_node, &link);
	if (!lp)
		goto out;
	spin_lock_bh(&lp->lock);
	lp->upd_rcvd++;
	reply = i->offset != lp->rx.epoch;
	lost = xnic_lcr_rx_sync(&lp->rx, i->offset, i->msn,
				local_clock() ?: 1);
	was_empty = !xnic_lcr_tx_avail(&lp->tx);
	inc = xnic_lcr_tx_update(&lp->tx, i->msg_len, i->psn);
	/* Before xnic_lcr_wake()'s barrier, as the limit is. */
	if (was_empty && inc)
		atomic_dec(&xdev->lcr_empty);
	reply = reply || lost || xnic_lcr_rx_due(&lp->rx, w);
	spin_unlock_bh(&lp->lock);
	xnic_lcnt_add(xdev, XNIC_LCNT_UPD_RCVD, 1);
	if (lost)
		xnic_lcnt_add(xdev, XNIC_LCNT_RESYNC_LOST, lost);
	if (inc)
		xnic_lcr_wake(xdev);
	if (reply)
		xnic_lcr_send(xdev, link, lp, eth_hdr(skb)->h_source);
out:
	rcu_read_unlock();
}

/**
 * xnic_lcr_tick() - sync the paths of a member link
 * @bl: its bond state
 *
 * Every path with frames not credited back, credit not advertised, or
 * idle for XNIC_LCR_IDLE_TICKS ticks sends a sync and update to its peer.
 *
 * Context: the link's heartbeat tick (softirq).
 */
void xnic_lcr_tick(struct xnic_bond_link *bl)
{
	struct xnic_link *link = bl->link;
	struct xnic_dev *xdev = bl->xdev;
	struct xnic_peers *p = READ_ONCE(xdev->peers);
	struct xnic_lcr_path *lp;
	u32 w = xnic_lcr_window(), rw = xnic_lcr_rx_window();
	unsigned long node;
	struct xnic_peer *peer;
	bool due;
	int k;

	if (!p || !xnic_link_is_up(link))
		return;
	rcu_read_lock();
	xa_for_each(&bl->lcr, node, lp) {
		spin_lock_bh(&lp->lock);
		/* As a sender only with link credit on; always as a receiver. */
		due = lp->rx.adv != lp->rx.rcvd + rw ||
		      (w && (lp->synced != lp->tx.sent ||
			     xnic_lcr_tx_avail(&lp->tx) < w ||
			     ++lp->idle_ticks >= XNIC_LCR_IDLE_TICKS));
		spin_unlock_bh(&lp->lock);
		peer = due ? xa_load(&p->table, node) : NULL;
		for (k = 0; peer && k < XNIC_MAX_LINKS; k++) {
			if (peer->path[k].ifindex == link->ndev->ifindex) {
				xnic_lcr_send(xdev, link, lp, peer->path[k].mac);
				break;
			}
		}
	}
	rcu_read_unlock();
}

/* ------------------------------ readout ------------------------------ */

/**
 * xnic_lcr_show() - debugfs "link_credit": every path of every link
 * @s: the seq_file
 * @xdev: the device
 *
 * One line of device figures (the window, the paths without credit to
 * send with, the counters), then one line per path: the link, the
 * peer, the sender half (sent, limit, granted, consumed, held, blocked)
 * and the receiver half (rcvd, adv, advertised, lost, late), syncs sent and
 * received.
 *
 * Context: process context (debugfs read).
 * Return: 0.
 */
int xnic_lcr_show(struct seq_file *s, struct xnic_dev *xdev)
{
	struct xnic_credit_dev *cd = &xdev->peers->credit;
	struct xnic_lcr_path *lp;
	struct xnic_link *link;
	unsigned long node;
	int k;

	seq_printf(s, "window %u paths_empty %d", xnic_lcr_window(),
		   atomic_read(&xdev->lcr_empty));
	for (k = 0; k < XNIC_LCNT_MAX; k++)
		seq_printf(s, " %s %lld", xnic_lcr_counter_names[k],
			   (long long)atomic64_read(&cd->lcnt[k]));
	seq_putc(s, '\n');
	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list) {
		if (!link->bond)
			continue;
		xa_for_each(&link->bond->lcr, node, lp) {
			struct xnic_lcr_tx t;
			struct xnic_lcr_rx r;
			u64 blocked, us, ur;

			spin_lock_bh(&lp->lock);
			t = lp->tx;
			r = lp->rx;
			blocked = lp->blocked;
			us = lp->upd_sent;
			ur = lp->upd_rcvd;
			spin_unlock_bh(&lp->lock);
			seq_printf(s, "link %s node %lu sent %u limit %u granted %llu consumed %llu held %u blocked %llu rcvd %u adv %u advertised %llu lost %llu late %llu syncs_sent %llu syncs_rcvd %llu\n",
				   link->ndev->name, node, t.sent, t.limit,
				   t.granted, t.consumed, xnic_lcr_tx_avail(&t),
				   blocked, r.rcvd, r.adv, r.advertised, r.lost,
				   r.late, us, ur);
		}
	}
	rcu_read_unlock();
	return 0;
}
