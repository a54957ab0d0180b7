// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - link bonding: heartbeats, RTT probes, the health patrol and the
 * state machine of every member link, path selection for xnic_tp_xmit(),
 * failover, and the peer timeout. bond.h has the execution model;
 * Documentation/design.rst ("Link bonding") the rules.
 *
 * Models: BFD (RFC 5880: periodic control packets, detection after a
 * number of missed intervals, a state carried in the packets so that a
 * one-way failure is seen from both ends), Linux bonding (balance-rr,
 * active-backup, layer3+4 hash; updelay as hysteresis), InfiniBand APM.
 */
#include <linux/ethtool.h>
#include <linux/gcd.h>
#include <linux/hash.h>
#include <linux/ktime.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "bond.h"
#include "transport_priv.h"
#include "verbs.h"
#include "../uapi/xnic-netlink.h"

/* Spray position, shared by every device (only its spread matters). */
static atomic_t xnic_bond_rr = ATOMIC_INIT(0);

/* Why a link changed state, for the log. */
enum xnic_bond_reason {
	XNIC_BR_CARRIER,
	XNIC_BR_HB_MISSED,
	XNIC_BR_HEALTH,
	XNIC_BR_REMOTE,
	XNIC_BR_RECOVERED,
};

static const char *const xnic_bond_reason_str[] = {
	[XNIC_BR_CARRIER]	= "carrier",
	[XNIC_BR_HB_MISSED]	= "heartbeats missed",
	[XNIC_BR_HEALTH]	= "loss or CRC errors over threshold",
	[XNIC_BR_REMOTE]	= "the peer finds the link bad",
	[XNIC_BR_RECOVERED]	= "healthy for the hold time",
};

static const char *const xnic_bond_cnt_str[XNIC_BL_NR] = {
	[XNIC_BL_HB_SENT]	= "hb_sent",
	[XNIC_BL_HB_RCVD]	= "hb_rcvd",
	[XNIC_BL_HB_REQ_RCVD]	= "hb_req_rcvd",
	[XNIC_BL_HB_MISSED]	= "hb_missed",
	[XNIC_BL_CRC_ERRORS]	= "crc_errors",
	[XNIC_BL_RX_FRAMES]	= "rx_frames",
	[XNIC_BL_TX_FRAMES]	= "tx_frames",
	[XNIC_BL_TX_BYTES]	= "tx_bytes",
	[XNIC_BL_FAILOVERS]	= "failovers",
	[XNIC_BL_RESENT]	= "resent",
	[XNIC_BL_STATE_CHANGES]	= "state_changes",
};

static const char *xnic_bond_state_str(u8 state)
{
	switch (state) {
	case XNIC_LINK_STATE_UP:
		return "up";
	case XNIC_LINK_STATE_DEGRADED:
		return "degraded";
	case XNIC_LINK_STATE_DOWN:
		return "down";
	default:
		return "?";
	}
}

static u64 xnic_bl_cnt(struct xnic_bond_link *bl, enum xnic_bond_counter c)
{
	return atomic64_read(&bl->cnt[c]);
}

static void xnic_bl_inc(struct xnic_bond_link *bl, enum xnic_bond_counter c)
{
	atomic64_inc(&bl->cnt[c]);
}

/* The member link of @xdev on @ndev. Context: RCU read. */
static struct xnic_link *xnic_bond_find(struct xnic_dev *xdev,
					const struct net_device *ndev)
{
	struct xnic_link *link;

	list_for_each_entry_rcu(link, &xdev->links, list)
		if (link->ndev == ndev)
			return link->bond ? link : NULL;
	return NULL;
}

/* Weight of a link's capacity: its speed in Gb/s. Context: RTNL held. */
static u32 xnic_bond_cap_weight(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;

	if (__ethtool_get_link_ksettings(ndev, &ks) ||
	    ks.base.speed == (u32)SPEED_UNKNOWN || !ks.base.speed)
		return XNIC_BOND_DEF_CAP_W;
	return clamp_t(u32, ks.base.speed / 1000, 1, XNIC_BOND_MAX_CAP_W);
}

/* ------------------------------ state machine ------------------------------ */

/*
 * Enter state @new. Return true when the work has something to do.
 * Context: bl->lock held.
 */
static bool xnic_bond_set_state(struct xnic_bond_link *bl, u8 new,
				enum xnic_bond_reason why, u64 now)
{
	u8 old = bl->state;

	if (new == old)
		return false;
	WRITE_ONCE(bl->state, new);
	xnic_bl_inc(bl, XNIC_BL_STATE_CHANGES);
	bl->down_since_ns = new == XNIC_LINK_STATE_DOWN ? now : 0;
	if (new == XNIC_LINK_STATE_DOWN || old == XNIC_LINK_STATE_DOWN) {
		/* A window must not mix the outage with the link's health. */
		memset(bl->win_base, 0, sizeof(bl->win_base));
		bl->win_ticks = 0;
		bl->win_bad = false;
	}
	if (old == XNIC_LINK_STATE_UP) {
		/* Drain: what the link carried goes out on the others. */
		bl->fail_pending = true;
		bl->fail_start_ns = now;
		if (why != XNIC_BR_CARRIER && bl->last_heard_ns &&
		    bl->last_heard_ns < now)
			bl->fail_start_ns = READ_ONCE(bl->last_heard_ns);
	}
	bl->reason = why;
	bl->changed_ns = now;
	return !bl->dead;
}

/* Close a patrol window: loss and CRC error rates, health weight. */
static void xnic_bond_window(struct xnic_bond_link *bl)
{
	u64 d[XNIC_BL_NR], lost, crc, rx, sent;
	bool first = !bl->win_base[XNIC_BL_RX_FRAMES] &&
		     !bl->win_base[XNIC_BL_HB_SENT];
	int k;

	for (k = 0; k < XNIC_BL_NR; k++) {
		u64 v = xnic_bl_cnt(bl, k);

		d[k] = v - bl->win_base[k];
		bl->win_base[k] = v;
	}
	bl->win_ticks = 0;
	/* After a reset the bases were zero: nothing to judge yet. */
	if (first)
		return;
	sent = d[XNIC_BL_HB_SENT];
	lost = sent > d[XNIC_BL_HB_RCVD] ? sent - d[XNIC_BL_HB_RCVD] : 0;
	crc = d[XNIC_BL_CRC_ERRORS];
	rx = d[XNIC_BL_RX_FRAMES];
	bl->loss_ppm = sent ? div64_u64(lost * 1000000, sent) : 0;
	bl->win_bad = lost >= XNIC_BOND_LOSS_MAX ||
		      (crc >= XNIC_BOND_CRC_MIN &&
		       crc * 1000000 >= rx * XNIC_BOND_CRC_PPM);
	WRITE_ONCE(bl->health_w, XNIC_BOND_MAX_HEALTH_W -
		   min_t(u64, lost + crc, XNIC_BOND_MAX_HEALTH_W - 1));
}

/*
 * One heartbeat interval passed: count a miss when nothing was heard,
 * close the patrol window when it is full, and move the state.
 * Return true when the work has something to do. Context: bl->lock held.
 */
static bool xnic_bond_eval(struct xnic_bond_link *bl, u64 now)
{
	struct xnic_params *pa = &bl->xdev->params;
	u64 hold = (u64)READ_ONCE(pa->bond_hold_ms) * NSEC_PER_MSEC;
	u32 miss = max(READ_ONCE(pa->hb_miss), 1U);
	u64 rx = xnic_bl_cnt(bl, XNIC_BL_RX_FRAMES);

	if (rx != bl->rx_seen) {
		bl->rx_seen = rx;
		bl->miss_run = 0;
	} else if (bl->carrier && bl->probing) {
		bl->miss_run++;
		xnic_bl_inc(bl, XNIC_BL_HB_MISSED);
	}
	if (bl->probing && bl->state != XNIC_LINK_STATE_DOWN &&
	    ++bl->win_ticks >= XNIC_BOND_WINDOW)
		xnic_bond_window(bl);

	if (!bl->carrier) {
		bl->good_since_ns = 0;
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_DOWN,
					   XNIC_BR_CARRIER, now);
	}
	if (bl->probing && bl->miss_run >= miss) {
		bl->good_since_ns = 0;
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_DOWN,
					   XNIC_BR_HB_MISSED, now);
	}
	if (bl->win_bad || bl->remote_bad) {
		bl->good_since_ns = 0;
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_DEGRADED,
					   bl->win_bad ? XNIC_BR_HEALTH :
							 XNIC_BR_REMOTE, now);
	}
	if (!bl->good_since_ns)
		bl->good_since_ns = now;
	if (bl->state != XNIC_LINK_STATE_UP && now - bl->good_since_ns >= hold)
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_UP,
					   XNIC_BR_RECOVERED, now);
	return false;
}

/* Whether our own measurements find the link bad (heartbeat flag). */
static bool xnic_bond_own_bad(struct xnic_bond_link *bl)
{
	return READ_ONCE(bl->win_bad) ||
	       READ_ONCE(bl->miss_run) >= READ_ONCE(bl->xdev->params.hb_miss);
}

/* ------------------------------ heartbeats ------------------------------ */

/* Build and send one heartbeat on @bl's link to @node at @mac. */
static int xnic_bond_hb_xmit(struct xnic_bond_link *bl, u16 node,
			     const u8 *mac, u16 flags, __be32 seq,
			     __be64 tstamp)
{
	struct xnic_dev *xdev = bl->xdev;
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_HEARTBEAT,
		.flags = flags,
		.src_node = READ_ONCE(xdev->node_id),
		.dst_node = node,
		.payload_len = sizeof(struct xnic_wire_heartbeat),
	};
	struct xnic_wire_heartbeat *hb;
	struct sk_buff *skb;

	skb = xnic_frame_alloc(sizeof(*hb), GFP_ATOMIC);
	if (!skb) {
		xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
		return -ENOMEM;
	}
	hb = skb_put_zero(skb, sizeof(*hb));
	hb->seq = seq;
	hb->tstamp = tstamp;
	hb->health = xnic_bond_own_bad(bl) ? XNIC_HB_BAD : 0;
	xnic_frame_finish(skb, &i);
	return xnic_link_xmit(xdev, bl->link->ndev, mac, skb);
}

/*
 * Send a heartbeat request to every peer heard on the link.
 * Return: how many peers the link reaches. Context: softirq.
 */
static unsigned int xnic_bond_hb_send_all(struct xnic_bond_link *bl)
{
	struct net_device *ndev = bl->link->ndev;
	struct xnic_peers *p = READ_ONCE(bl->xdev->peers);
	struct xnic_peer *peer;
	unsigned long node;
	unsigned int n = 0;
	int k;

	if (!p || !xnic_link_is_up(bl->link))
		return 0;
	rcu_read_lock();
	xa_for_each(&p->table, node, peer) {
		for (k = 0; k < XNIC_MAX_LINKS; k++) {
			if (peer->path[k].ifindex != ndev->ifindex)
				continue;
			n++;
			if (!xnic_bond_hb_xmit(bl, peer->node,
					       peer->path[k].mac, 0,
					       cpu_to_be32(bl->seq++),
					       cpu_to_be64(local_clock())))
				xnic_bl_inc(bl, XNIC_BL_HB_SENT);
		}
	}
	rcu_read_unlock();
	return n;
}

/* The heartbeat tick of a link: every hb_interval_ms, in softirq. */
static enum hrtimer_restart xnic_bond_tick(struct hrtimer *t)
{
	struct xnic_bond_link *bl = container_of(t, struct xnic_bond_link,
						 timer);
	u32 ms = clamp(READ_ONCE(bl->xdev->params.hb_interval_ms), 1U, 10000U);
	unsigned int peers;
	bool queue;

	peers = xnic_bond_hb_send_all(bl);
	spin_lock(&bl->lock);
	if (bl->dead) {
		spin_unlock(&bl->lock);
		return HRTIMER_NORESTART;
	}
	bl->probing = peers > 0;
	queue = xnic_bond_eval(bl, local_clock());
	spin_unlock(&bl->lock);
	if (queue)
		queue_work(system_highpri_wq, &bl->work);
	hrtimer_forward_now(t, ms_to_ktime(ms));
	return HRTIMER_RESTART;
}

/* A round trip sample, ns (RFC 6298 weights: 1/8 and 1/4). */
static void xnic_bond_rtt_sample(struct xnic_bond_link *bl, u64 rtt)
{
	u64 delta;

	if (!bl->srtt_ns) {
		bl->srtt_ns = rtt ?: 1;
		bl->rttvar_ns = rtt / 2;
		return;
	}
	delta = bl->srtt_ns > rtt ? bl->srtt_ns - rtt : rtt - bl->srtt_ns;
	bl->rttvar_ns = (3 * bl->rttvar_ns + delta) / 4;
	bl->srtt_ns = max_t(u64, (7 * bl->srtt_ns + rtt) / 8, 1);
}

/**
 * xnic_bond_hb_rx() - handle a received heartbeat
 * @xdev: the device
 * @skb: the frame (not consumed), from a node learned on this path
 * @i: its header, accepted by xnic_wire_check()
 *
 * A request is answered on the same link at once; a reply gives a round
 * trip sample. Either tells the peer's view of the link: a peer whose own
 * measurements find the link bad makes us isolate it too (a one-way
 * failure is then seen from both ends).
 *
 * Context: softirq (the member link's packet handler).
 */
void xnic_bond_hb_rx(struct xnic_dev *xdev, struct sk_buff *skb,
		     const struct xnic_wire_info *i)
{
	struct xnic_wire_heartbeat hb;
	struct xnic_bond_link *bl;
	struct xnic_link *link;
	bool queue = false, bad;
	u64 now = local_clock(), ts;

	if (skb_copy_bits(skb, XNIC_WIRE_HDR_LEN, &hb, sizeof(hb))) {
		xnic_cnt_inc(xdev, XNIC_CNT_MALFORMED);
		return;
	}
	rcu_read_lock();
	link = xnic_bond_find(xdev, skb->dev);
	if (!link)
		goto out;
	bl = link->bond;
	bad = hb.health & XNIC_HB_BAD;
	if (!(i->flags & XNIC_WF_REPLY)) {
		xnic_bl_inc(bl, XNIC_BL_HB_REQ_RCVD);
		xnic_bond_hb_xmit(bl, i->src_node, eth_hdr(skb)->h_source,
				  XNIC_WF_REPLY, hb.seq, hb.tstamp);
	} else {
		xnic_bl_inc(bl, XNIC_BL_HB_RCVD);
	}
	ts = be64_to_cpu(hb.tstamp);
	spin_lock(&bl->lock);
	/* Our own clock echoed; anything else is not a sample. */
	if ((i->flags & XNIC_WF_REPLY) && ts && ts <= now &&
	    now - ts < NSEC_PER_SEC)
		xnic_bond_rtt_sample(bl, now - ts);
	bl->remote_bad = bad;
	if (bad && bl->state == XNIC_LINK_STATE_UP) {
		bl->good_since_ns = 0;
		queue = xnic_bond_set_state(bl, XNIC_LINK_STATE_DEGRADED,
					    XNIC_BR_REMOTE, now);
	}
	spin_unlock(&bl->lock);
	if (queue)
		queue_work(system_highpri_wq, &bl->work);
out:
	rcu_read_unlock();
}

/**
 * xnic_bond_rx() - count a frame received on a member link
 * @link: the link
 *
 * Any frame received proves the link alive (the heartbeat detector counts
 * an interval as missed only when nothing at all arrived).
 *
 * Context: softirq (the member link's packet handler).
 */
void xnic_bond_rx(struct xnic_link *link)
{
	struct xnic_bond_link *bl = link->bond;

	if (!bl)
		return;
	xnic_bl_inc(bl, XNIC_BL_RX_FRAMES);
	WRITE_ONCE(bl->last_heard_ns, local_clock());
}

/**
 * xnic_bond_crc_error() - count a frame with a bad crc32c against its link
 * @xdev: the device
 * @skb: the frame, as received on a member link
 *
 * Context: softirq (the member link's packet handler).
 */
void xnic_bond_crc_error(struct xnic_dev *xdev, const struct sk_buff *skb)
{
	struct xnic_link *link;

	rcu_read_lock();
	link = xnic_bond_find(xdev, skb->dev);
	if (link)
		xnic_bl_inc(link->bond, XNIC_BL_CRC_ERRORS);
	rcu_read_unlock();
}

/* ------------------------------ failover ------------------------------ */

/*
 * Tell every QP of @xdev that link @index failed (XNIC_BOND_NO_LINK: no
 * link, just the peer timeout check when @expire). Return the PSNs marked
 * for resending. Context: process context, nothing held.
 */
static unsigned int xnic_bond_kick_qps(struct xnic_dev *xdev, u8 index,
				       bool expire)
{
	unsigned long idx = 0;
	unsigned int n = 0;
	struct xnic_tp_qp *tp;
	struct xnic_qp *qp;
	bool got;

	for (;;) {
		xa_lock_bh(&xdev->qps);
		qp = xa_find(&xdev->qps, &idx, ULONG_MAX, XA_PRESENT);
		got = qp && refcount_inc_not_zero(&qp->ref);
		xa_unlock_bh(&xdev->qps);
		if (!qp)
			break;
		if (got) {
			tp = xnic_tp_lock(qp);
			if (tp) {
				n += xnic_tx_bond_event(qp, index, expire);
				xnic_tp_unlock(tp);
			}
			xnic_qp_put(qp);
		}
		if (idx == ULONG_MAX)
			break;
		idx++;
		cond_resched();
	}
	return n;
}

static int xnic_bond_event_of(u8 state)
{
	switch (state) {
	case XNIC_LINK_STATE_UP:
		return XNIC_EVENT_LINK_UP;
	case XNIC_LINK_STATE_DEGRADED:
		return XNIC_EVENT_LINK_DEGRADED;
	default:
		return XNIC_EVENT_LINK_DOWN;
	}
}

/* After a state change: failover, announcement, peer timeout. */
static void xnic_bond_work(struct work_struct *work)
{
	struct xnic_bond_link *bl = container_of(work, struct xnic_bond_link,
						 work);
	struct xnic_dev *xdev = bl->xdev;
	u32 timeout = READ_ONCE(xdev->params.peer_timeout_ms);
	unsigned int n = 0;
	u8 state, reason;
	bool fail;
	u64 start;

	spin_lock_bh(&bl->lock);
	state = bl->state;
	reason = bl->reason;
	fail = bl->fail_pending;
	bl->fail_pending = false;
	start = bl->fail_start_ns;
	if (fail)
		WRITE_ONCE(bl->detect_us, div_u64(bl->changed_ns - start,
						  NSEC_PER_USEC));
	spin_unlock_bh(&bl->lock);

	if (fail) {
		n = xnic_bond_kick_qps(xdev, bl->link->index, false);
		WRITE_ONCE(bl->failover_us,
			   div_u64(local_clock() - start, NSEC_PER_USEC));
		xnic_bl_inc(bl, XNIC_BL_FAILOVERS);
		atomic64_add(n, &bl->cnt[XNIC_BL_RESENT]);
	}
	if (state != bl->announced) {
		ibdev_info_ratelimited(&xdev->ibdev,
				       "link %s: %s -> %s (%s)%s\n",
				       bl->link->ndev->name,
				       xnic_bond_state_str(bl->announced),
				       xnic_bond_state_str(state),
				       xnic_bond_reason_str[reason],
				       fail ? ", failed over" : "");
		bl->announced = state;
		xnic_nl_link_bond_event(bl->link, xnic_bond_event_of(state));
	}
	if (fail)
		ibdev_dbg(&xdev->ibdev, "link %s: %u PSNs resent, %u us\n",
			  bl->link->ndev->name, n, READ_ONCE(bl->failover_us));
	if (state == XNIC_LINK_STATE_DOWN && timeout)
		mod_delayed_work(system_wq, &bl->peer_work,
				 msecs_to_jiffies(timeout) + 1);
}

/* peer_timeout_ms after the link went down: fail the lost peers' QPs. */
static void xnic_bond_peer_work(struct work_struct *work)
{
	struct xnic_bond_link *bl = container_of(to_delayed_work(work),
						 struct xnic_bond_link,
						 peer_work);

	xnic_bond_kick_qps(bl->xdev, XNIC_BOND_NO_LINK, true);
}

/**
 * xnic_bond_peer_lost() - whether a peer has been unreachable too long
 * @xdev: the device
 * @node: the peer's node id
 *
 * Context: any; takes the RCU read lock.
 * Return: true when peer_timeout_ms is set, the peer has paths and every
 * one of them is over a member link that has been DOWN for at least
 * peer_timeout_ms.
 */
bool xnic_bond_peer_lost(struct xnic_dev *xdev, u16 node)
{
	u64 timeout = (u64)READ_ONCE(xdev->params.peer_timeout_ms) *
		      NSEC_PER_MSEC;
	struct xnic_peers *p = READ_ONCE(xdev->peers);
	u64 latest = 0, now = local_clock();
	struct xnic_peer *peer;
	struct xnic_link *link;
	bool lost = false;
	int k;

	if (!timeout || !p)
		return false;
	rcu_read_lock();
	peer = xa_load(&p->table, node);
	for (k = 0; peer && k < XNIC_MAX_LINKS; k++) {
		struct xnic_bond_link *bl;
		u64 since;

		if (!peer->path[k].ifindex)
			continue;
		list_for_each_entry_rcu(link, &xdev->links, list) {
			bl = link->bond;
			if (link->ndev->ifindex != peer->path[k].ifindex || !bl)
				continue;
			since = READ_ONCE(bl->down_since_ns);
			if (READ_ONCE(bl->state) != XNIC_LINK_STATE_DOWN ||
			    !since)
				goto out;
			latest = max(latest, since);
		}
	}
	lost = latest && now > latest && now - latest >= timeout;
out:
	rcu_read_unlock();
	return lost;
}

/* ------------------------------ path selection ------------------------------ */

/* The flow of a frame: its QP numbers (XOR: both directions alike). */
static u32 xnic_bond_flow(const struct sk_buff *skb)
{
	struct xnic_wire_hdr _h;
	const struct xnic_wire_hdr *h;

	h = skb_header_pointer(skb, 0, sizeof(_h), &_h);
	if (!h)
		return 0;
	return hash_32(be32_to_cpu(h->src_qpn) ^ be32_to_cpu(h->dst_qpn), 32);
}

/**
 * xnic_bond_select() - the member link a frame to a peer leaves on
 * @xdev: the device
 * @peer: the peer
 * @skb: the frame, finished (data at the xnic header)
 * @path: set to the index in @peer->path of the link chosen
 *
 * Among the links that reach @peer with carrier and in state UP, by the
 * device's bond_policy: spray (weighted round robin, weight = capacity x
 * health, reduced by their gcd so that equal links alternate frame by
 * frame), active-backup (the first, in the order links were added), or
 * flow-hash (by the frame's QP numbers). With no UP link, a DEGRADED one
 * with carrier, then a DOWN one with carrier: the heartbeat may be wrong,
 * and a frame sent is better than one dropped.
 *
 * Context: RCU read (the caller's: xnic_tp_xmit()).
 * Return: the link, or NULL when no link with carrier reaches @peer.
 */
struct xnic_link *xnic_bond_select(struct xnic_dev *xdev,
				   const struct xnic_peer *peer,
				   const struct sk_buff *skb, int *path)
{
	u32 policy = READ_ONCE(xdev->params.bond_policy);
	struct xnic_link *cand[XNIC_MAX_LINKS], *link, *fb = NULL;
	u32 w[XNIC_MAX_LINKS], total = 0, g = 0, x;
	int cp[XNIC_MAX_LINKS], n = 0, k, fbp = -1;
	u8 fbs = 0;

	list_for_each_entry_rcu(link, &xdev->links, list) {
		struct xnic_bond_link *bl = link->bond;
		u8 state;

		for (k = 0; k < XNIC_MAX_LINKS; k++)
			if (peer->path[k].ifindex == link->ndev->ifindex)
				break;
		if (k == XNIC_MAX_LINKS || !bl || READ_ONCE(bl->dead) ||
		    !xnic_link_is_up(link))
			continue;
		state = READ_ONCE(bl->state);
		if (state != XNIC_LINK_STATE_UP) {
			if (!fb || (fbs == XNIC_LINK_STATE_DOWN &&
				    state == XNIC_LINK_STATE_DEGRADED)) {
				fb = link;
				fbp = k;
				fbs = state;
			}
			continue;
		}
		if (policy == XNIC_BOND_ACTIVE_BACKUP) {
			*path = k;
			return link;
		}
		cand[n] = link;
		cp[n] = k;
		w[n] = max(READ_ONCE(bl->cap_w), 1U) *
		       max(READ_ONCE(bl->health_w), 1U);
		g = gcd(g, w[n]);
		n++;
		if (n == XNIC_MAX_LINKS)
			break;
	}
	if (!n) {
		*path = fbp;
		return fb;
	}
	for (k = 0; k < n; k++) {
		w[k] /= g;
		total += w[k];
	}
	if (policy == XNIC_BOND_FLOW_HASH)
		x = xnic_bond_flow(skb) % total;
	else
		x = (u32)atomic_inc_return(&xnic_bond_rr) % total;
	for (k = 0; k < n - 1 && x >= w[k]; k++)
		x -= w[k];
	*path = cp[k];
	return cand[k];
}

/**
 * xnic_bond_tx_done() - count a transport frame sent on a member link
 * @link: the link xnic_bond_select() chose
 * @len: the frame's bytes
 *
 * Context: RCU read.
 */
void xnic_bond_tx_done(struct xnic_link *link, unsigned int len)
{
	struct xnic_bond_link *bl = link->bond;

	xnic_bl_inc(bl, XNIC_BL_TX_FRAMES);
	atomic64_add(len, &bl->cnt[XNIC_BL_TX_BYTES]);
}

/* ------------------------------ lifetime ------------------------------ */

/**
 * xnic_bond_link_changed() - a member link was attached, or its netdev
 *	changed (up, down, carrier, speed)
 * @link: the link
 *
 * Loss of carrier takes the link DOWN at once (and fails over); its
 * return starts the hold time (the heartbeat tick brings the link UP).
 *
 * Context: RTNL held (netdev notifier).
 */
void xnic_bond_link_changed(struct xnic_link *link)
{
	struct xnic_bond_link *bl = link->bond;
	bool queue = false;

	ASSERT_RTNL();
	if (!bl)
		return;
	WRITE_ONCE(bl->cap_w, xnic_bond_cap_weight(link->ndev));
	spin_lock_bh(&bl->lock);
	bl->carrier = xnic_link_is_up(link);
	if (!bl->carrier) {
		bl->good_since_ns = 0;
		queue = xnic_bond_set_state(bl, XNIC_LINK_STATE_DOWN,
					    XNIC_BR_CARRIER, local_clock());
	}
	spin_unlock_bh(&bl->lock);
	if (queue)
		queue_work(system_highpri_wq, &bl->work);
}

/**
 * xnic_bond_link_init() - give a member link its bond state and start its
 *	heartbeat
 * @link: the link, with xdev and ndev set, not yet in the device's list
 *
 * Assigns xnic_link.index: the lowest number no other link of the device
 * uses (the requester records it per PSN). The link starts UP when it has
 * carrier, DOWN otherwise.
 *
 * Context: RTNL held, process context.
 * Return: 0, or -ENOMEM.
 */
int xnic_bond_link_init(struct xnic_link *link)
{
	struct xnic_dev *xdev = link->xdev;
	struct xnic_bond_link *bl;
	struct xnic_link *other;
	unsigned long used = 0;
	u32 ms;

	ASSERT_RTNL();
	bl = kzalloc(sizeof(*bl), GFP_KERNEL);
	if (!bl)
		return -ENOMEM;
	list_for_each_entry(other, &xdev->links, list)
		used |= BIT(other->index);
	link->index = ffz(used);
	bl->link = link;
	bl->xdev = xdev;
	spin_lock_init(&bl->lock);
	INIT_WORK(&bl->work, xnic_bond_work);
	INIT_DELAYED_WORK(&bl->peer_work, xnic_bond_peer_work);
	bl->carrier = xnic_link_is_up(link);
	bl->state = bl->carrier ? XNIC_LINK_STATE_UP : XNIC_LINK_STATE_DOWN;
	bl->announced = bl->state;
	if (!bl->carrier)
		bl->down_since_ns = local_clock();
	bl->cap_w = xnic_bond_cap_weight(link->ndev);
	bl->health_w = XNIC_BOND_MAX_HEALTH_W;
	link->bond = bl;
	hrtimer_init(&bl->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	bl->timer.function = xnic_bond_tick;
	ms = clamp(READ_ONCE(xdev->params.hb_interval_ms), 1U, 10000U);
	hrtimer_start(&bl->timer, ms_to_ktime(ms), HRTIMER_MODE_REL_SOFT);
	return 0;
}

/**
 * xnic_bond_link_fini() - stop a member link's heartbeat and free its
 *	bond state
 * @link: the link, removed from the device's list and from its netdev's
 *	receive hooks
 *
 * What the link carried and was not acknowledged is resent on the other
 * links at once. The state is freed after an RCU grace period (the
 * datapath may still be looking at it).
 *
 * Context: RTNL held, process context; sleeps.
 */
void xnic_bond_link_fini(struct xnic_link *link)
{
	struct xnic_bond_link *bl = link->bond;

	ASSERT_RTNL();
	if (!bl)
		return;
	spin_lock_bh(&bl->lock);
	bl->dead = true;
	WRITE_ONCE(bl->state, XNIC_LINK_STATE_DOWN);
	spin_unlock_bh(&bl->lock);
	hrtimer_cancel(&bl->timer);
	cancel_work_sync(&bl->work);
	cancel_delayed_work_sync(&bl->peer_work);
	xnic_bond_kick_qps(link->xdev, link->index, false);
	kfree_rcu(bl, rcu);
}

/**
 * xnic_bond_params_changed() - the heartbeat interval may have changed
 * @xdev: the device
 *
 * Restarts every link's heartbeat timer at the new interval, so that a
 * shorter one acts at once rather than after the old interval.
 *
 * Context: RTNL held (netlink PARAM_SET).
 */
void xnic_bond_params_changed(struct xnic_dev *xdev)
{
	u32 ms = clamp(READ_ONCE(xdev->params.hb_interval_ms), 1U, 10000U);
	struct xnic_link *link;

	ASSERT_RTNL();
	list_for_each_entry(link, &xdev->links, list)
		if (link->bond)
			hrtimer_start(&link->bond->timer, ms_to_ktime(ms),
				      HRTIMER_MODE_REL_SOFT);
}

/* ------------------------------ readout ------------------------------ */

/**
 * xnic_bond_link_state() - a member link's bond state
 * @link: the link
 *
 * Return: enum xnic_link_state (XNIC_LINK_STATE_UNSPEC without bond state).
 */
u8 xnic_bond_link_state(struct xnic_link *link)
{
	return link->bond ? READ_ONCE(link->bond->state) :
			    XNIC_LINK_STATE_UNSPEC;
}

/**
 * xnic_bond_nl_put() - put a member link's bond state and health into a
 *	netlink message (inside its XNIC_A_LINK nest)
 * @skb: the message
 * @link: the link
 *
 * Context: RTNL held, or the link is otherwise kept attached.
 * Return: 0 or -EMSGSIZE.
 */
int xnic_bond_nl_put(struct sk_buff *skb, struct xnic_link *link)
{
	static const struct {
		u16 attr;
		u8 cnt;
	} c64[] = {
		{ XNIC_LINK_A_HB_SENT, XNIC_BL_HB_SENT },
		{ XNIC_LINK_A_HB_RCVD, XNIC_BL_HB_RCVD },
		{ XNIC_LINK_A_HB_MISSED, XNIC_BL_HB_MISSED },
		{ XNIC_LINK_A_CRC_ERRORS, XNIC_BL_CRC_ERRORS },
		{ XNIC_LINK_A_FAILOVERS, XNIC_BL_FAILOVERS },
		{ XNIC_LINK_A_TX_FRAMES, XNIC_BL_TX_FRAMES },
		{ XNIC_LINK_A_TX_BYTES, XNIC_BL_TX_BYTES },
		{ XNIC_LINK_A_RX_FRAMES, XNIC_BL_RX_FRAMES },
		{ XNIC_LINK_A_STATE_CHANGES, XNIC_BL_STATE_CHANGES },
		{ XNIC_LINK_A_RESENT, XNIC_BL_RESENT },
	};
	struct xnic_bond_link *bl = link->bond;
	unsigned int k;

	if (!bl)
		return 0;
	if (nla_put_u8(skb, XNIC_LINK_A_STATE, READ_ONCE(bl->state)) ||
	    nla_put_u32(skb, XNIC_LINK_A_RTT_US,
			div_u64(READ_ONCE(bl->srtt_ns), NSEC_PER_USEC)) ||
	    nla_put_u32(skb, XNIC_LINK_A_JITTER_US,
			div_u64(READ_ONCE(bl->rttvar_ns), NSEC_PER_USEC)) ||
	    nla_put_u32(skb, XNIC_LINK_A_FAILOVER_US,
			READ_ONCE(bl->failover_us)) ||
	    nla_put_u32(skb, XNIC_LINK_A_LOSS_PPM, READ_ONCE(bl->loss_ppm)))
		return -EMSGSIZE;
	for (k = 0; k < ARRAY_SIZE(c64); k++)
		if (nla_put_u64_64bit(skb, c64[k].attr,
				      xnic_bl_cnt(bl, c64[k].cnt),
				      XNIC_LINK_A_PAD))
			return -EMSGSIZE;
	return 0;
}

/**
 * xnic_bond_links_show() - the bond state of a device's links, for debugfs
 * @s: the seq_file
 * @xdev: the device
 *
 * Context: process context; takes the RCU read lock.
 * Return: 0.
 */
int xnic_bond_links_show(struct seq_file *s, struct xnic_dev *xdev)
{
	struct xnic_link *link;

	seq_printf(s, "policy %u hb_interval_ms %u hb_miss %u hold_ms %u peer_timeout_ms %u\n",
		   READ_ONCE(xdev->params.bond_policy),
		   READ_ONCE(xdev->params.hb_interval_ms),
		   READ_ONCE(xdev->params.hb_miss),
		   READ_ONCE(xdev->params.bond_hold_ms),
		   READ_ONCE(xdev->params.peer_timeout_ms));
	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list) {
		struct xnic_bond_link *bl = link->bond;
		int k;

		if (!bl)
			continue;
		seq_printf(s, "link %s index %u state %s weight %u rtt_us %llu jitter_us %llu loss_ppm %u failover_us %u detect_us %u",
			   link->ndev->name, link->index,
			   xnic_bond_state_str(READ_ONCE(bl->state)),
			   READ_ONCE(bl->cap_w) * READ_ONCE(bl->health_w),
			   div_u64(READ_ONCE(bl->srtt_ns), NSEC_PER_USEC),
			   div_u64(READ_ONCE(bl->rttvar_ns), NSEC_PER_USEC),
			   READ_ONCE(bl->loss_ppm), READ_ONCE(bl->failover_us),
			   READ_ONCE(bl->detect_us));
		for (k = 0; k < XNIC_BL_NR; k++)
			seq_printf(s, " %s %llu", xnic_bond_cnt_str[k],
				   xnic_bl_cnt(bl, k));
		seq_putc(s, '\n');
	}
	rcu_read_unlock();
	return 0;
}
