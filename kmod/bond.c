// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - link bonding: heartbeats, RTT probes, the health patrol and the
 * state machine of every member link, what a state change entails
 * (failover, announcement, peer timeout), and the bond state's lifetime.
 * bond_path.c chooses links and fails PSNs over; bond_show.c reads the
 * state out. bond.h has the execution model;
 * Documentation/design.rst ("Link bonding") the rules.
 *
 * Models: BFD (RFC 5880: periodic control packets, detection after a
 * number of missed intervals, a state carried in the packets so that a
 * one-way failure is seen from both ends), Linux bonding (balance-rr,
 * active-backup, layer3+4 hash; updelay as hysteresis), InfiniBand APM.
 */
#include <linux/ethtool.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "bond.h"
#include "transport_priv.h"
#include "verbs.h"
#include "../uapi/xnic-netlink.h"

/* Why a link changed state, for the log. */
enum xnic_bond_reason {
	XNIC_BR_CARRIER,
	XNIC_BR_HB_MISSED,
	XNIC_BR_HEALTH,
	XNIC_BR_REMOTE,
	XNIC_BR_RECOVERED,
	XNIC_BR_THERMAL,
};

static const char *const xnic_bond_reason_str[] = {
	[XNIC_BR_CARRIER]	= "carrier",
	[XNIC_BR_HB_MISSED]	= "heartbeats missed",
	[XNIC_BR_HEALTH]	= "loss or CRC errors over threshold",
	[XNIC_BR_REMOTE]	= "the peer finds the link bad",
	[XNIC_BR_RECOVERED]	= "healthy for the hold time",
	[XNIC_BR_THERMAL]	= "temperature critical",
};

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
	if (new == XNIC_LINK_STATE_DOWN && why == XNIC_BR_HB_MISSED)
		WRITE_ONCE(bl->detect_late_us,
			   div_u64(bl->silent_late_ns, NSEC_PER_USEC));
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

/*
 * Whether the link's heartbeats wait in queues: the smoothed round trip,
 * or the window's longest (a queue that filled within the window), far
 * over the base (see XNIC_BOND_QUEUE_MULT). Loss then is the queues'
 * (congestion: the transport's window answers it), not a failing link's,
 * which loses frames at its base round trip. Context: bl->lock held.
 */
static bool xnic_bond_congested(struct xnic_bond_link *bl)
{
	u64 base = XNIC_BOND_QUEUE_MULT * bl->rtt_base_ns;

	return bl->rtt_base_ns &&
	       (bl->srtt_ns > base + XNIC_BOND_QUEUE_MIN_NS ||
		bl->rtt_win_max_ns > base + XNIC_BOND_QUEUE_PEAK_NS);
}

/*
 * A window closed, @lost heartbeats unanswered in it: every
 * XNIC_BOND_BASE_WINDOWS windows the base becomes the lowest sample of
 * that epoch, so that it follows a path whose round trip changed; but not
 * after an epoch that lost heartbeats: a lasting queue would otherwise
 * become the base, and its loss be held against the link.
 * Context: bl->lock held.
 */
static void xnic_bond_base_epoch(struct xnic_bond_link *bl, u64 lost)
{
	bl->base_lossy |= lost > 0;
	if (++bl->base_windows < XNIC_BOND_BASE_WINDOWS)
		return;
	bl->base_windows = 0;
	if (bl->rtt_next_ns && !bl->base_lossy)
		bl->rtt_base_ns = bl->rtt_next_ns;
	bl->rtt_next_ns = 0;
	bl->base_lossy = false;
}

/* Close a patrol window: loss and CRC error rates, health weight. */
static void xnic_bond_window(struct xnic_bond_link *bl)
{
	u64 d[XNIC_BL_NR], lost, crc, rx, sent;
	bool first = !bl->win_base[XNIC_BL_RX_FRAMES] &&
		     !bl->win_base[XNIC_BL_HB_SENT];
	bool lossy;
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
	/* XNIC_BOND_LOSS_MAX a window, per peer on a switched link. */
	lossy = lost * XNIC_BOND_WINDOW >=
		XNIC_BOND_LOSS_MAX * max_t(u64, sent, XNIC_BOND_WINDOW);
	if (lossy && xnic_bond_congested(bl)) {
		xnic_bl_inc(bl, XNIC_BL_HB_CONGESTED);
		lossy = false;
	}
	bl->rtt_win_max_ns = 0;
	bl->win_bad = lossy || (crc >= XNIC_BOND_CRC_MIN &&
				crc * 1000000 >= rx * XNIC_BOND_CRC_PPM);
	WRITE_ONCE(bl->health_w, XNIC_BOND_MAX_HEALTH_W -
		   min_t(u64, lost + crc, XNIC_BOND_MAX_HEALTH_W - 1));
	xnic_bond_base_epoch(bl, lost);
}

/* The heartbeat interval, ns. */
static u64 xnic_bond_interval_ns(const struct xnic_params *pa)
{
	return (u64)clamp(READ_ONCE(pa->hb_interval_ms), 1U, 10000U) *
	       NSEC_PER_MSEC;
}

/*
 * Whether nothing was heard on @bl for hb_miss intervals (the last frame,
 * not the ticks, counts). Context: bl->lock held, or read locklessly.
 */
static bool xnic_bond_silent(struct xnic_bond_link *bl, u64 now)
{
	struct xnic_params *pa = &bl->xdev->params;
	u64 heard = READ_ONCE(bl->last_heard_ns);

	return heard && heard < now &&
	       now - heard >= max(READ_ONCE(pa->hb_miss), 1U) *
			      xnic_bond_interval_ns(pa);
}

/*
 * How late @t's verdict comes (its expiry to now, @now on local_clock()),
 * the part after the last frame heard: a CPU's delay, which detection
 * pays; kept as the longest of the link's silence (reset when a tick
 * finds frames heard, before it counts its own lateness: frames heard
 * just before a stall do not hide it). Context: bl->lock held.
 */
static void xnic_bond_timer_late(struct xnic_bond_link *bl, struct hrtimer *t,
				 u64 now)
{
	s64 late = ktime_to_ns(ktime_sub(ktime_get(), hrtimer_get_expires(t)));
	u64 heard = READ_ONCE(bl->last_heard_ns);

	if (late <= 0 || !heard || heard >= now)
		return;
	late = min_t(u64, late, now - heard);
	if (late > bl->silent_late_ns)
		bl->silent_late_ns = late;
}

/*
 * One heartbeat interval passed: count a miss when nothing was heard,
 * close the patrol window when it is full, and move the state.
 * Return true when the work has something to do. Context: bl->lock held.
 */
static bool xnic_bond_eval(struct xnic_bond_link *bl, struct hrtimer *t,
			   u64 now)
{
	struct xnic_params *pa = &bl->xdev->params;
	u64 hold = (u64)READ_ONCE(pa->bond_hold_ms) * NSEC_PER_MSEC;
	u32 miss = max(READ_ONCE(pa->hb_miss), 1U);
	u64 rx = xnic_bl_cnt(bl, XNIC_BL_RX_FRAMES);

	if (rx != bl->rx_seen) {
		bl->rx_seen = rx;
		bl->miss_run = 0;
		bl->silent_late_ns = 0;
	} else if (bl->carrier && bl->probing) {
		bl->miss_run++;
		xnic_bl_inc(bl, XNIC_BL_HB_MISSED);
	}
	xnic_bond_timer_late(bl, t, now);
	if (bl->probing && bl->state != XNIC_LINK_STATE_DOWN &&
	    ++bl->win_ticks >= XNIC_BOND_WINDOW)
		xnic_bond_window(bl);

	if (!bl->carrier) {
		bl->good_since_ns = 0;
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_DOWN,
					   XNIC_BR_CARRIER, now);
	}
	/*
	 * hb_miss silent intervals; or, when the ticks run late (a loaded
	 * or emulated CPU), two silent ticks spanning hb_miss intervals.
	 */
	if (bl->probing &&
	    (bl->miss_run >= miss ||
	     (bl->miss_run >= min(miss, 2U) && xnic_bond_silent(bl, now)))) {
		bl->good_since_ns = 0;
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_DOWN,
					   XNIC_BR_HB_MISSED, now);
	}
	if (bl->win_bad || bl->remote_bad ||
	    bl->thermal == XNIC_THERMAL_CRIT) {
		bl->good_since_ns = 0;
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_DEGRADED,
					   bl->win_bad ? XNIC_BR_HEALTH :
					   bl->remote_bad ? XNIC_BR_REMOTE :
							    XNIC_BR_THERMAL,
					   now);
	}
	if (!bl->good_since_ns)
		bl->good_since_ns = now;
	if (bl->state != XNIC_LINK_STATE_UP && now - bl->good_since_ns >= hold)
		return xnic_bond_set_state(bl, XNIC_LINK_STATE_UP,
					   XNIC_BR_RECOVERED, now);
	return false;
}

/*
 * Whether our own measurements (or its temperature) find the link bad
 * (heartbeat flag).
 */
static bool xnic_bond_own_bad(struct xnic_bond_link *bl)
{
	return READ_ONCE(bl->win_bad) ||
	       READ_ONCE(bl->thermal) == XNIC_THERMAL_CRIT ||
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
 * On a switched link: whether the path to a peer that answered before went
 * silent for hb_miss intervals: no heartbeat answer and no frame accepted
 * (a path busy with data is not dead for want of a heartbeat), while the
 * link heard other peers in the last interval (a stalled CPU is not a lost
 * path; the link's own detector judges silence of all). Marks it down
 * (struct xnic_path.down_ns). Context: RCU read.
 */
static bool xnic_bond_path_lost(struct xnic_bond_link *bl,
				struct xnic_path *path, u64 now)
{
	struct xnic_params *pa = &bl->xdev->params;
	u32 iv = clamp(READ_ONCE(pa->hb_interval_ms), 1U, 10000U);
	u32 ms = max(READ_ONCE(pa->hb_miss), 1U) * iv;
	u64 heard = READ_ONCE(path->hb_ns), link = READ_ONCE(bl->last_heard_ns);

	/* Only while the link hears others: a stall silences them all. */
	if (!link || link >= now || now - link >= (u64)iv * NSEC_PER_MSEC)
		return false;
	if (!READ_ONCE(bl->switched) || !READ_ONCE(path->answered) ||
	    !heard || READ_ONCE(path->down_ns) || heard >= now ||
	    now - heard < (u64)ms * NSEC_PER_MSEC ||
	    time_before(jiffies, READ_ONCE(path->last_seen) +
			msecs_to_jiffies(ms)))
		return false;
	WRITE_ONCE(path->down_ns, now);
	return true;
}

/* A heartbeat answer over @path: its round trip, and its recovery. */
static void xnic_bond_path_heard(struct xnic_bond_link *bl,
				 struct xnic_path *path, u64 now, u64 rtt)
{
	u64 hold = (u64)READ_ONCE(bl->xdev->params.bond_hold_ms) *
		   NSEC_PER_MSEC;
	u64 srtt = READ_ONCE(path->srtt_ns), down = READ_ONCE(path->down_ns);

	WRITE_ONCE(path->hb_ns, now);
	WRITE_ONCE(path->srtt_ns, srtt ? (7 * srtt + rtt) / 8 : rtt ?: 1);
	if (down && now > down && now - down >= hold)
		WRITE_ONCE(path->down_ns, 0);
}

/*
 * Send a heartbeat request to every peer heard on the link that answered
 * one before, and a probe (the same request) to those that did not, within
 * the device's budget for them (xnic_peer_may_send_unanswered()). A link
 * where more than one peer was heard becomes switched; on it, a path that
 * stopped answering goes down (xnic_bond_path_lost()) and @lost is set.
 * Return: how many peers heartbeats went to. Context: softirq.
 */
static unsigned int xnic_bond_hb_send_all(struct xnic_bond_link *bl,
					  bool *lost)
{
	struct net_device *ndev = bl->link->ndev;
	struct xnic_peers *p = READ_ONCE(bl->xdev->peers);
	u64 now = local_clock();
	unsigned int n = 0, heard = 0;
	struct xnic_peer *peer;
	unsigned long node;
	int k;

	if (!p || !xnic_link_is_up(bl->link))
		return 0;
	rcu_read_lock();
	xa_for_each(&p->table, node, peer) {
		for (k = 0; k < XNIC_MAX_LINKS; k++) {
			if (peer->path[k].ifindex != ndev->ifindex)
				continue;
			heard++;
			*lost |= xnic_bond_path_lost(bl, &peer->path[k], now);
			if (!READ_ONCE(peer->path[k].answered) &&
			    !xnic_peer_may_send_unanswered(bl->xdev, peer))
				continue;
			n++;
			/* A path known down does not count against the link. */
			if (!xnic_bond_hb_xmit(bl, peer->node,
					       peer->path[k].mac, 0,
					       cpu_to_be32(bl->seq++),
					       cpu_to_be64(local_clock() ^
							   bl->hb_key)) &&
			    !READ_ONCE(peer->path[k].down_ns))
				xnic_bl_inc(bl, XNIC_BL_HB_SENT);
		}
	}
	rcu_read_unlock();
	if (heard > 1 && !READ_ONCE(bl->switched))
		WRITE_ONCE(bl->switched, true);
	return n;
}

/*
 * The silence deadline: hb_miss intervals after the last frame heard on
 * the link, which falls between two ticks; the next tick would find the
 * link down up to an interval after it. The tick before arms it when
 * that tick's own verdict would be "down" (the one after it counts a
 * miss). Softirq.
 */
static enum hrtimer_restart xnic_bond_silence(struct hrtimer *t)
{
	struct xnic_bond_link *bl = container_of(t, struct xnic_bond_link,
						 silence);
	bool queue = false;
	u64 now;

	spin_lock(&bl->lock);
	now = local_clock();
	xnic_bond_timer_late(bl, t, now);
	if (!bl->dead && bl->probing && bl->carrier &&
	    bl->state != XNIC_LINK_STATE_DOWN &&
	    xnic_bl_cnt(bl, XNIC_BL_RX_FRAMES) == bl->rx_seen &&
	    xnic_bond_silent(bl, now)) {
		bl->good_since_ns = 0;
		queue = xnic_bond_set_state(bl, XNIC_LINK_STATE_DOWN,
					    XNIC_BR_HB_MISSED, now);
	}
	spin_unlock(&bl->lock);
	if (queue)
		queue_work(system_highpri_wq, &bl->work);
	return HRTIMER_NORESTART;
}

/*
 * Arm the silence deadline when it falls before the next tick and that
 * tick would find the link down if it heard nothing (xnic_bond_eval():
 * at least min(hb_miss, 2) silent ticks). Context: bl->lock held.
 */
static void xnic_bond_arm_silence(struct xnic_bond_link *bl, u64 now)
{
	struct xnic_params *pa = &bl->xdev->params;
	u32 miss = max(READ_ONCE(pa->hb_miss), 1U);
	u64 iv = xnic_bond_interval_ns(pa);
	u64 heard = READ_ONCE(bl->last_heard_ns), deadline;

	if (!bl->probing || !bl->carrier ||
	    bl->state == XNIC_LINK_STATE_DOWN || !heard ||
	    bl->miss_run + 1 < min(miss, 2U))
		return;
	deadline = heard + miss * iv;
	if (deadline > now && deadline - now < iv)
		hrtimer_start(&bl->silence, ns_to_ktime(deadline - now),
			      HRTIMER_MODE_REL_SOFT);
}

/* The heartbeat tick of a link: every hb_interval_ms, in softirq. */
static enum hrtimer_restart xnic_bond_tick(struct hrtimer *t)
{
	struct xnic_bond_link *bl = container_of(t, struct xnic_bond_link,
						 timer);
	u32 ms = clamp(READ_ONCE(bl->xdev->params.hb_interval_ms), 1U, 10000U);
	bool queue, lost = false;
	unsigned int peers;
	u64 now;

	peers = xnic_bond_hb_send_all(bl, &lost);
	xnic_lcr_tick(bl);
	spin_lock(&bl->lock);
	if (bl->dead) {
		spin_unlock(&bl->lock);
		return HRTIMER_NORESTART;
	}
	bl->probing = peers > 0;
	now = local_clock();
	queue = xnic_bond_thermal_eval(bl, now);
	queue |= xnic_bond_eval(bl, t, now);
	xnic_bond_arm_silence(bl, now);
	if (lost) {
		atomic_set(&bl->path_fail, 1);
		queue = true;
	}
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

	rtt = rtt ?: 1;
	if (!bl->rtt_base_ns || rtt < bl->rtt_base_ns)
		bl->rtt_base_ns = rtt;
	if (!bl->rtt_next_ns || rtt < bl->rtt_next_ns)
		bl->rtt_next_ns = rtt;
	bl->rtt_win_max_ns = max(bl->rtt_win_max_ns, rtt);
	if (!bl->srtt_ns) {
		bl->srtt_ns = rtt;
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
 * A request is answered on the same link at once; a reply that echoes our
 * keyed time stamp gives a round trip sample and marks the path answered
 * (it gets every heartbeat from then on). Either tells the peer's view of
 * the link: a peer whose own
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
	struct xnic_path *path;
	struct xnic_link *link;
	bool queue = false, bad, echo;
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
	ts = be64_to_cpu(hb.tstamp) ^ bl->hb_key;
	/* Our own keyed clock echoed; anything else is not an answer. */
	echo = (i->flags & XNIC_WF_REPLY) && ts && ts <= now &&
	       now - ts < NSEC_PER_SEC;
	if (echo) {
		path = xnic_peer_answered(xdev, i->src_node,
					  link->ndev->ifindex);
		if (path)
			xnic_bond_path_heard(bl, path, now, now - ts);
	}
	spin_lock(&bl->lock);
	if (echo)
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
 * xnic_bond_crc_error() - count a frame that failed the frame check against its link
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

/*
 * Paths over a switched link went down: the PSNs their peers' QPs last
 * sent on the link are resent on their other paths. Context: @bl's work.
 */
static void xnic_bond_path_failover(struct xnic_bond_link *bl)
{
	struct xnic_peers *p = READ_ONCE(bl->xdev->peers);
	int ifindex = bl->link->ndev->ifindex;
	u64 since = bl->path_kick_ns, now = local_clock(), down;
	unsigned long node = 0;
	struct xnic_peer *peer;
	unsigned int n;
	int k, found;

	bl->path_kick_ns = now;
	if (!p)
		return;
	for (;;) {
		found = -1;
		rcu_read_lock();
		xa_for_each_start(&p->table, node, peer, node) {
			for (k = 0; k < XNIC_MAX_LINKS; k++) {
				down = READ_ONCE(peer->path[k].down_ns);
				if (peer->path[k].ifindex == ifindex &&
				    down > since && down <= now)
					found = peer->node;
			}
			if (found >= 0)
				break;
		}
		rcu_read_unlock();
		if (found < 0)
			return;
		n = xnic_bond_kick_qps(bl->xdev, bl->link->index, false, found);
		atomic64_add(n, &bl->cnt[XNIC_BL_RESENT]);
		ibdev_dbg(&bl->xdev->ibdev, "link %s: path to node %d down, %u PSNs resent\n",
			  bl->link->ndev->name, found, n);
		node = found + 1;
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
	u8 state, reason, thermal;
	bool fail;
	u64 start;
	s32 t = 0;

	spin_lock_bh(&bl->lock);
	state = bl->state;
	thermal = bl->thermal;
	reason = bl->reason;
	fail = bl->fail_pending;
	bl->fail_pending = false;
	start = bl->fail_start_ns;
	if (fail)
		WRITE_ONCE(bl->detect_us, div_u64(bl->changed_ns - start,
						  NSEC_PER_USEC));
	spin_unlock_bh(&bl->lock);

	if (atomic_xchg(&bl->path_fail, 0))
		xnic_bond_path_failover(bl);
	if (fail) {
		n = xnic_bond_kick_qps(xdev, bl->link->index, false, -1);
		WRITE_ONCE(bl->failover_us,
			   div_u64(local_clock() - start, NSEC_PER_USEC));
		xnic_bl_inc(bl, XNIC_BL_FAILOVERS);
		atomic64_add(n, &bl->cnt[XNIC_BL_RESENT]);
	}
	if (state != bl->announced) {
		ibdev_info_ratelimited(&xdev->ibdev,
				       "link %s: %s -> %s (%s)%s\n",
				       bl->link->ndev->name,
				       xnic_bond_state_name(bl->announced),
				       xnic_bond_state_name(state),
				       xnic_bond_reason_str[reason],
				       fail ? ", failed over" : "");
		bl->announced = state;
		xnic_nl_link_bond_event(bl->link, xnic_bond_event_of(state));
	}
	if (thermal != bl->thermal_announced) {
		xnic_bond_temp(bl, &t);
		ibdev_info_ratelimited(&xdev->ibdev,
				       "link %s: thermal state %u -> %u (%d mC)\n",
				       bl->link->ndev->name,
				       bl->thermal_announced, thermal, t);
		bl->thermal_announced = thermal;
		xnic_nl_link_bond_event(bl->link, XNIC_EVENT_LINK_THERMAL);
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

	xnic_bond_kick_qps(bl->xdev, XNIC_BOND_NO_LINK, true, -1);
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
	bl->hb_key = get_random_u64();
	bl->temp_inject_mc = XNIC_TEMP_INJECT_OFF;
	bl->temp_hyst_mc = XNIC_THERMAL_HYST_MC;
	xnic_lcr_link_init(bl);
	link->bond = bl;
	hrtimer_init(&bl->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	bl->timer.function = xnic_bond_tick;
	hrtimer_init(&bl->silence, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	bl->silence.function = xnic_bond_silence;
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
	/* After the tick: it may have armed the deadline before "dead". */
	hrtimer_cancel(&bl->silence);
	cancel_work_sync(&bl->work);
	cancel_delayed_work_sync(&bl->peer_work);
	xnic_bond_kick_qps(link->xdev, link->index, false, -1);
	xnic_lcr_link_fini(bl);
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

