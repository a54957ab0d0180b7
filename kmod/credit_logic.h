/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic credit-based flow control: the pure arithmetic (no locks, no
 * allocation, no kernel dependency beyond wire.h), shared by credit.c and
 * the userspace unit test selftests/unit/credit_test.c.
 *
 * The unit of credit is one frame (one PSN) of a flow (a QP's requester).
 * Documentation/wire-protocol.rst, "Credit-based flow control", has the
 * protocol; in short:
 *  - the responder grants a flow the right to send the PSNs before a
 *    limit: every ACK, NAK and CREDIT frame carries, in its 16-bit
 *    @credits field, how many PSNs past the frame's cumulative ACK PSN the
 *    requester may send (limit = psn + credits);
 *  - the limit is absolute: a lost, repeated or reordered update neither
 *    loses nor doubles credit, the next one carries the whole state, and
 *    the requester only ever moves its limit forward;
 *  - the requester consumes one credit per new PSN; retransmissions reuse
 *    PSNs already paid for and consume nothing;
 *  - the responder sizes the grant from its receive resources: the flow's
 *    window (credit_window, at most the receive PSN window) and the
 *    device's ingress pool shared by the flows active on it.
 *
 * Accounting (per flow, free-running):
 *   granted  = limit - start PSN        (initial credit + every increase)
 *   consumed = next PSN - start PSN     (new PSNs sent)
 *   returned = unused credit given back when the flow stops (flush, reset,
 *              destroy): granted - consumed at that moment
 * Invariant: granted - consumed - returned >= 0 while the flow lives and
 * == 0 once it stopped; the device counters are the sums over flows.
 */
#ifndef XNIC_CREDIT_LOGIC_H
#define XNIC_CREDIT_LOGIC_H

#include "wire.h"

/* Most credits one update grants past its PSN (the wire field's range). */
#define XNIC_CREDIT_MAX		0xffffU
/* Fewest credits a responder grants an active flow (no starvation). */
#define XNIC_CREDIT_MIN		8U
/* Traffic classes: 0 latency-critical, 1 bulk (uapi XNIC_TCLASS_*). */
#define XNIC_CREDIT_NR_CLASSES	2

/**
 * struct xnic_credit_flow - requester side of one flow's credit
 * @start: PSN the flow started at
 * @limit: the flow may send PSNs before this one
 * @granted: credits received (initial grant included)
 * @consumed: credits spent (new PSNs)
 * @returned: unused credits given back when the flow stopped
 * @live: started and not stopped: @limit is meaningful
 */
struct xnic_credit_flow {
	__u32 start;
	__u32 limit;
	__u64 granted;
	__u64 consumed;
	__u64 returned;
	bool live;
};

/**
 * xnic_credit_flow_start() - a flow starts at a PSN with an initial grant
 * @f: the flow
 * @psn: its first PSN
 * @initial: credits it may use before the first update arrives
 *
 * Return: the credits granted (@initial), for the device counters.
 */
static inline __u32 xnic_credit_flow_start(struct xnic_credit_flow *f,
					   __u32 psn, __u32 initial)
{
	f->start = psn;
	f->limit = psn + initial;
	f->granted += initial;
	f->live = true;
	return initial;
}

/**
 * xnic_credit_flow_avail() - credits a flow has for new PSNs
 * @f: the flow
 * @next_psn: its next new PSN
 *
 * Return: PSNs from @next_psn on it may send; 0 for a stopped flow.
 */
static inline __u32 xnic_credit_flow_avail(const struct xnic_credit_flow *f,
					   __u32 next_psn)
{
	if (!f->live || !xnic_psn_before(next_psn, f->limit))
		return 0;
	return f->limit - next_psn;
}

/**
 * xnic_credit_flow_consume() - a flow sent a new PSN
 * @f: the flow; it had xnic_credit_flow_avail() > 0, or flow control is
 *	off (then the limit follows, so that the accounting holds)
 * @next_psn: the PSN sent
 */
static inline void xnic_credit_flow_consume(struct xnic_credit_flow *f,
					    __u32 next_psn)
{
	if (!xnic_psn_before(next_psn, f->limit)) {
		/* Flow control off: the PSN is granted as it goes. */
		f->granted += next_psn + 1 - f->limit;
		f->limit = next_psn + 1;
	}
	f->consumed++;
}

/**
 * xnic_credit_flow_update() - apply a grant from the responder
 * @f: the flow
 * @psn: the update's cumulative ACK PSN (already checked not to be past
 *	the flow's next PSN)
 * @credits: credits past @psn
 * @next_psn: the flow's next new PSN
 *
 * The limit only moves forward, never to before @next_psn and never
 * further than XNIC_CREDIT_MAX past it (a hostile value cannot make the
 * counters jump: serial order is not transitive across half the PSN
 * space, so a limit can be after the old one yet before @next_psn).
 *
 * Return: credits newly granted (0 for a stale or repeated update).
 */
static inline __u32 xnic_credit_flow_update(struct xnic_credit_flow *f,
					    __u32 psn, __u16 credits,
					    __u32 next_psn)
{
	__u32 limit = psn + credits, inc;

	if (!f->live || !xnic_psn_before(f->limit, limit) ||
	    xnic_psn_before(limit, next_psn))
		return 0;
	if (xnic_psn_diff(limit, next_psn) > (__s32)XNIC_CREDIT_MAX)
		limit = next_psn + XNIC_CREDIT_MAX;
	if (!xnic_psn_before(f->limit, limit))
		return 0;
	inc = limit - f->limit;
	f->limit = limit;
	f->granted += inc;
	return inc;
}

/**
 * xnic_credit_flow_stop() - a flow stops: give back its unused credit
 * @f: the flow
 * @next_psn: its next new PSN
 *
 * Idempotent: a second stop returns nothing.
 *
 * Return: the credits returned.
 */
static inline __u32 xnic_credit_flow_stop(struct xnic_credit_flow *f,
					  __u32 next_psn)
{
	__u32 unused = xnic_credit_flow_avail(f, next_psn);

	if (!f->live)
		return 0;
	f->returned += unused;
	f->live = false;
	return unused;
}

/**
 * xnic_credit_flow_check() - the accounting invariant of a flow
 * @f: the flow
 * @next_psn: its next new PSN
 *
 * Return: true when granted - consumed - returned equals the credit
 * still available (live) or zero (stopped), and consumed matches the
 * PSNs sent since the start.
 */
static inline bool xnic_credit_flow_check(const struct xnic_credit_flow *f,
					  __u32 next_psn)
{
	__u64 held = f->live ? xnic_credit_flow_avail(f, next_psn) : 0;

	if (f->granted < f->consumed + f->returned)
		return false;
	return f->granted - f->consumed - f->returned == held;
}

/**
 * xnic_credit_share() - credits a responder grants one active flow
 * @window: the per-flow window (credit_window), frames
 * @rx_window: the receive PSN window, frames (a hard ceiling)
 * @pool: the device's ingress pool, frames
 * @active: flows active on the device (at least the asking one)
 *
 * An equal share of the pool, never more than the flow's window or the
 * PSN window, never less than XNIC_CREDIT_MIN (so no active flow is shut
 * out: the pool may then be overcommitted by at most
 * XNIC_CREDIT_MIN * @active frames).
 *
 * Return: the grant, frames.
 */
static inline __u32 xnic_credit_share(__u32 window, __u32 rx_window,
				      __u32 pool, __u32 active)
{
	__u32 share = pool / (active ? active : 1);

	if (share > window)
		share = window;
	if (share > rx_window)
		share = rx_window;
	if (share > XNIC_CREDIT_MAX)
		share = XNIC_CREDIT_MAX;
	return share < XNIC_CREDIT_MIN ? XNIC_CREDIT_MIN : share;
}

/**
 * xnic_credit_grant() - the credits field a responder sends
 * @adv: the limit it advertised last (updated)
 * @epsn: its expected PSN (the cumulative ACK PSN of the frame)
 * @share: xnic_credit_share() for the flow
 *
 * The advertised limit never moves back: a smaller share (more flows
 * became active) takes effect as the flow consumes what it was given.
 *
 * Return: credits past @epsn to put in the frame, and by how much the
 * advertised limit moved in *@grew (for the granted counter).
 */
static inline __u16 xnic_credit_grant(__u32 *adv, __u32 epsn, __u32 share,
				      __u32 *grew)
{
	__u32 limit = epsn + share;

	*grew = 0;
	if (xnic_psn_before(*adv, limit)) {
		*grew = limit - *adv;
		*adv = limit;
	}
	/* An advertised limit far behind or ahead (reset): start over. */
	if (xnic_psn_diff(*adv, epsn) > (__s32)XNIC_CREDIT_MAX ||
	    xnic_psn_before(*adv, epsn)) {
		*adv = limit;
		return share;
	}
	return *adv - epsn;
}

/**
 * xnic_credit_class_budget() - frames a flow may send in one scheduling
 *	round
 * @tclass: the flow's traffic class (0 latency-critical, 1 bulk)
 * @quantum: the round's quantum, frames
 * @w0: class 0 weight (at least 1)
 * @w1: class 1 weight (at least 1)
 * @class0_busy: class 0 flows had frames to send in this round
 *
 * Strict priority: class 0 is served first in every round and gets the
 * whole quantum; class 1 gets the whole quantum when class 0 is idle, and
 * otherwise its guaranteed share, @quantum * @w1 / (@w0 + @w1) and at
 * least one frame, so it is never starved.
 *
 * Return: the budget, frames, at least 1.
 */
static inline __u32 xnic_credit_class_budget(__u8 tclass, __u32 quantum,
					     __u32 w0, __u32 w1,
					     bool class0_busy)
{
	__u32 b;

	if (tclass == 0 || !class0_busy)
		return quantum;
	if (!w0)
		w0 = 1;
	if (!w1)
		w1 = 1;
	b = (__u32)((__u64)quantum * w1 / (w0 + w1));
	return b ? b : 1;
}

/* Most frames one deficit round robin turn allows a flow. */
#define XNIC_DRR_MAX_FRAMES	256U

/**
 * struct xnic_drr - byte deficit round robin state of a flow
 * @deficit: bytes the flow may still send in this turn (may be negative:
 *	the last frame of a turn overshoots, inline sends are charged too)
 * @cost: average bytes per frame of the flow (0: none sent yet)
 * @bytes: bytes sent since the last settlement
 * @frames: frames sent since the last settlement
 */
struct xnic_drr {
	__s64 deficit;
	__u32 cost;
	__u64 bytes;
	__u32 frames;
};

/**
 * xnic_drr_charge() - a flow sent a frame
 * @d: the flow
 * @bytes: the frame's bytes on the wire
 */
static inline void xnic_drr_charge(struct xnic_drr *d, __u32 bytes)
{
	d->bytes += bytes;
	d->frames++;
}

/* Take what was sent off the deficit; learn the cost of a frame. */
static inline void xnic_drr_settle(struct xnic_drr *d)
{
	__u32 avg;

	if (!d->frames)
		return;
	d->deficit -= (__s64)d->bytes;
	avg = (__u32)(d->bytes / d->frames);
	d->cost = d->cost ? (__u32)(((__u64)d->cost * 7 + avg) / 8) : avg;
	if (!d->cost)
		d->cost = 1;
	d->bytes = 0;
	d->frames = 0;
}

/**
 * xnic_drr_frames() - frames that fit in a byte budget
 * @d: the flow
 * @bytes: the budget, bytes (> 0)
 * @def_cost: bytes per frame to assume before the flow sent any
 * @max: most frames to allow
 *
 * Return: ceil(@bytes / cost), at least 1, at most @max.
 */
static inline __u32 xnic_drr_frames(const struct xnic_drr *d, __u64 bytes,
				    __u32 def_cost, __u32 max)
{
	__u64 cost = d->cost ? d->cost : (def_cost ? def_cost : 1);
	__u64 n = (bytes + cost - 1) / cost;

	if (n > max)
		n = max;
	return n ? (__u32)n : 1;
}

/**
 * xnic_drr_begin() - a flow's turn starts
 * @d: the flow
 * @quantum: bytes its class gives it per turn
 * @def_cost: bytes per frame to assume when the cost is not known
 *
 * Deficit round robin (Shreedhar and Varghese): the deficit grows by the
 * quantum (never beyond two quanta) and the flow sends while it lasts;
 * the frame that crosses zero is allowed, its overshoot is paid next turn.
 *
 * Return: frames the flow may send in this turn, at most
 * XNIC_DRR_MAX_FRAMES (1 while its cost per frame is not known yet); 0
 * when it is still in debt.
 */
static inline __u32 xnic_drr_begin(struct xnic_drr *d, __u32 quantum,
				   __u32 def_cost)
{
	xnic_drr_settle(d);
	d->deficit += quantum;
	if (d->deficit > 2 * (__s64)quantum)
		d->deficit = 2 * (__s64)quantum;
	if (d->deficit <= 0)
		return 0;
	/* The first frame teaches the cost: no blind overshoot. */
	if (!d->cost)
		return 1;
	return xnic_drr_frames(d, (__u64)d->deficit, def_cost,
			       XNIC_DRR_MAX_FRAMES);
}

/**
 * xnic_drr_end() - a flow's turn is over
 * @d: the flow
 * @quantum: bytes its class gives it per turn
 * @backlogged: it has more to send
 *
 * A flow with nothing left keeps at most one quantum of its deficit: it
 * cannot save up while idle, but what it sends between turns (inline,
 * xnic_drr_inline()) is paid from it.
 */
static inline void xnic_drr_end(struct xnic_drr *d, __u32 quantum,
				bool backlogged)
{
	xnic_drr_settle(d);
	if (!backlogged && d->deficit > (__s64)quantum)
		d->deficit = quantum;
}

/**
 * xnic_drr_inline() - frames a flow may send between its turns
 * @d: the flow
 * @max: most frames the caller would send
 *
 * What the deficit still covers (the frame that crosses zero included);
 * all of @max while the flow's cost per frame is not known.
 *
 * Return: frames, at most @max; 0 when the flow is in debt.
 */
static inline __u32 xnic_drr_inline(struct xnic_drr *d, __u32 max)
{
	xnic_drr_settle(d);
	if (!d->cost)
		return max;
	if (d->deficit <= 0)
		return 0;
	return xnic_drr_frames(d, (__u64)d->deficit, d->cost, max);
}

#ifndef __KERNEL__
/**
 * xnic_credit_jain() - Jain's fairness index of @n shares, in 1/1000
 * @x: the shares (bytes, rates), not all zero
 * @n: how many
 *
 * (sum x)^2 / (n * sum x^2): 1000 when all are equal, 1000 / n when one
 * flow has everything.
 *
 * Return: the index times 1000; 0 for no shares.
 */
static inline __u32 xnic_credit_jain(const double *x, unsigned int n)
{
	double s = 0, s2 = 0;
	unsigned int k;

	for (k = 0; k < n; k++) {
		s += x[k];
		s2 += x[k] * x[k];
	}
	if (!n || s2 <= 0)
		return 0;
	return (__u32)(s * s / (n * s2) * 1000 + 0.5);
}

#endif /* !__KERNEL__ */

#endif /* XNIC_CREDIT_LOGIC_H */
