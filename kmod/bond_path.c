// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - link bonding, the datapath side: which member link a frame to a
 * peer leaves on (xnic_bond_select(), by the device's bond_policy), the
 * failover of a link's unacknowledged PSNs to the others, and whether a
 * peer has been unreachable for peer_timeout_ms. bond.h has the execution
 * model; Documentation/design.rst ("Link bonding") the rules.
 */
#include <linux/gcd.h>
#include <linux/hash.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>

#include "bond.h"
#include "transport_priv.h"
#include "verbs.h"
#include "../uapi/xnic-netlink.h"

/* Spray position, per CPU, shared by every device (only its spread
 * matters; a per-CPU counter keeps CPUs off each other's cache line).
 */
static DEFINE_PER_CPU(u32, xnic_bond_rr);

/* ------------------------------ failover ------------------------------ */

/**
 * xnic_bond_kick_qps() - tell every QP of a device that a link failed
 * @xdev: the device
 * @index: xnic_link.index of the link whose unacknowledged PSNs are to be
 *	resent at once, or XNIC_BOND_NO_LINK for none
 * @expire: expire the retransmission deadline of QPs whose peer has been
 *	unreachable for peer_timeout_ms (xnic_tx_bond_event())
 * @node: only the QPs whose peer is this node id; -1 for every QP (a
 *	path over a switched link failed, not the whole link)
 *
 * Context: process context, nothing held; takes each QP's tp lock.
 * Return: the number of PSNs marked for resending.
 */
unsigned int xnic_bond_kick_qps(struct xnic_dev *xdev, u8 index, bool expire,
				int node)
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
				if (node < 0 || tp->tx.remote_node == node)
					n += xnic_tx_bond_event(qp, index,
								expire);
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

/* When @path last carried a frame or a heartbeat answer, local_clock() ns. */
static u64 xnic_path_heard_ns(const struct xnic_path *path, u64 now)
{
	u64 age = jiffies_to_nsecs(jiffies - READ_ONCE(path->last_seen));

	return max(READ_ONCE(path->hb_ns), age < now ? now - age : 0);
}

/**
 * xnic_bond_peer_lost() - whether a peer has been unreachable too long
 * @xdev: the device
 * @node: the peer's node id
 *
 * A path that is down but still carries the peer's frames (a queue that
 * drops most of them and delays the rest) does not make the peer lost:
 * the transport's retransmission timeout waits for such a path.
 *
 * Context: any; takes the RCU read lock.
 * Return: true when peer_timeout_ms is set, the peer has paths, and every
 * one of them has been down (its member link DOWN, or the path itself:
 * struct xnic_path.down_ns) and silent for at least peer_timeout_ms.
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
				since = READ_ONCE(peer->path[k].down_ns);
			if (!since)
				goto out;
			latest = max3(latest, since,
				      xnic_path_heard_ns(&peer->path[k], now));
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
 * @need: it consumes link credit (the caller's xnic_lcr_needed())
 * @path: set to the index in @peer->path of the link chosen
 *
 * Among the links that reach @peer with carrier and in state UP, by the
 * device's bond_policy: spray (weighted round robin, weight = capacity x
 * health, reduced by their gcd so that equal links alternate frame by
 * frame), active-backup (the first, in the order links were added), or
 * flow-hash (by the frame's QP numbers). With no UP link, a DEGRADED one
 * with carrier, then a DOWN one with carrier: the heartbeat may be wrong,
 * and a frame sent is better than one dropped. A frame that consumes link
 * credit (@need) is given only a link whose path to @peer has
 * credit, and none while UP links exist but have none (it waits for them
 * rather than fall back). A peer's paths over links that are not switched
 * (one hop, struct xnic_bond_link.switched) are preferred: its switched
 * paths are used only when none of those is UP; a path a switched link
 * lost (struct xnic_path.down_ns) counts as DOWN. A link running warm
 * (thermal WARN) takes only its quarter weight's share: it is not where
 * frames go while a cooler UP link waits for credit.
 *
 * Context: RCU read (the caller's: xnic_tp_xmit()).
 * Return: the link, or NULL when no link with carrier reaches @peer.
 */
struct xnic_link *xnic_bond_select(struct xnic_dev *xdev,
				   const struct xnic_peer *peer,
				   const struct sk_buff *skb, bool need,
				   int *path)
{
	u32 policy = READ_ONCE(xdev->params.bond_policy);
	struct xnic_link *cand[XNIC_MAX_LINKS], *link, *fb = NULL;
	u32 w[XNIC_MAX_LINKS], total = 0, g = 0, x;
	int cp[XNIC_MAX_LINKS], n = 0, k, fbp = -1;
	bool up = false, mesh_up = false, has;
	bool sw[XNIC_MAX_LINKS], warm[XNIC_MAX_LINKS], swi, cool_waits = false;
	struct xnic_link *ab = NULL;
	int abp = -1;
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
		/* A path a switched link lost is down, the link may be UP. */
		if (READ_ONCE(peer->path[k].down_ns))
			state = XNIC_LINK_STATE_DOWN;
		swi = READ_ONCE(bl->switched);
		has = !need || xnic_lcr_link_has(link, peer->node);
		if (state == XNIC_LINK_STATE_UP &&
		    policy == XNIC_BOND_ACTIVE_BACKUP) {
			/* The active link, or wait for its credit. */
			if (!swi) {
				*path = has ? k : -1;
				return has ? link : NULL;
			}
			if (!ab) {
				ab = link;
				abp = has ? k : -1;
			}
			continue;
		}
		up |= state == XNIC_LINK_STATE_UP;
		mesh_up |= state == XNIC_LINK_STATE_UP && !swi;
		/* flow-hash keeps a flow on its link: it waits for it. */
		if (!has && (state != XNIC_LINK_STATE_UP ||
			     policy != XNIC_BOND_FLOW_HASH)) {
			cool_waits |= state == XNIC_LINK_STATE_UP &&
				      READ_ONCE(bl->thermal) != XNIC_THERMAL_WARN;
			continue;
		}
		if (state != XNIC_LINK_STATE_UP) {
			if (!fb || (fbs == XNIC_LINK_STATE_DOWN &&
				    state == XNIC_LINK_STATE_DEGRADED)) {
				fb = link;
				fbp = k;
				fbs = state;
			}
			continue;
		}
		cand[n] = link;
		cp[n] = k;
		sw[n] = swi;
		w[n] = max(READ_ONCE(bl->cap_w), 1U) *
		       max(READ_ONCE(bl->health_w), 1U);
		/* Running warm: a quarter of the traffic (bond_thermal.c). */
		warm[n] = READ_ONCE(bl->thermal) == XNIC_THERMAL_WARN;
		if (warm[n])
			w[n] = max(w[n] / 4, 1U);
		n++;
		if (n == XNIC_MAX_LINKS)
			break;
	}
	if (ab) {
		/* Active-backup with only switched links UP: the first. */
		*path = abp;
		return abp < 0 ? NULL : ab;
	}
	if (mesh_up || cool_waits) {
		/*
		 * One hop first: switched paths only when no mesh link is UP.
		 * A warm link is no overflow for a cool one out of credit.
		 */
		for (k = 0, x = 0; k < n; k++) {
			if ((mesh_up && sw[k]) || (cool_waits && warm[k]))
				continue;
			cand[x] = cand[k];
			cp[x] = cp[k];
			w[x++] = w[k];
		}
		n = x;
	}
	if (!n && up) {
		/* UP links out of link credit: wait for them, no fallback. */
		*path = -1;
		return NULL;
	}
	if (n == 1 && need && !xnic_lcr_link_has(cand[0], peer->node)) {
		*path = -1;
		return NULL;
	}
	if (n <= 1) {
		/* Nothing to spread: the one UP link, or the fallback. */
		*path = n ? cp[0] : fbp;
		return n ? cand[0] : fb;
	}
	for (k = 0; k < n; k++)
		g = gcd(g, w[k]);
	for (k = 0; k < n; k++) {
		w[k] /= g;
		total += w[k];
	}
	if (policy == XNIC_BOND_FLOW_HASH)
		x = xnic_bond_flow(skb) % total;
	else
		x = this_cpu_inc_return(xnic_bond_rr) % total;
	for (k = 0; k < n - 1 && x >= w[k]; k++)
		x -= w[k];
	if (need && !xnic_lcr_link_has(cand[k], peer->node)) {
		*path = -1;
		return NULL;
	}
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
