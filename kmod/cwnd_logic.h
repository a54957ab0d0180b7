/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic congestion window: the pure arithmetic (no locks, no clock), shared
 * by tx.c, tx_ack.c and selftests/unit/cwnd_test.c.
 *
 * Credits (credit_logic.h, link_credit_logic.h) keep a requester from
 * overrunning its responder and its member links' receivers; they know
 * nothing of a queue between them: a rate-capped link, a switch (a Linux
 * bridge) that several senders share, or a receiving CPU's backlog. When
 * such a queue overflows, the frames it drops are the only sign. The
 * window is RFC 5681's answer to that sign, counted in frames (PSNs) and
 * without its initial slow start (credits already bound the first burst):
 *
 * - it starts at the requester's whole window, so a path that never
 *   drops runs exactly as without it;
 * - a loss found by fast retransmit halves it (multiplicative decrease,
 *   RFC 5681 section 3.2); a retransmission timeout (the second in a row:
 *   tx.c takes the first for a stall, and probes) takes it to
 *   XNIC_CWND_MIN and slow start (section 3.1) climbs back to half of
 *   what was in flight;
 * - losses of frames sent before the last cut are the same congestion
 *   event (RFC 6582's "recover" point): one cut per round trip;
 * - every frame acknowledged adds one frame below ssthresh (slow start),
 *   one frame per window's worth of acknowledged frames above it
 *   (congestion avoidance), up to the requester's window;
 * - a cut is undone when every resend of its congestion event turns out
 *   spurious (the responder reports each as received twice, D-SACK, RFC
 *   2883): nothing was lost, the frames were late (reordered over links
 *   whose queues differ, or a stall). As RFC 4015's response to a
 *   spurious retransmission, the window and threshold go back to what
 *   they were before the cut.
 */
#ifndef XNIC_CWND_LOGIC_H
#define XNIC_CWND_LOGIC_H

#include "wire.h"

/* The smallest window, frames: enough for a fast retransmit's 3 later PSNs. */
#define XNIC_CWND_MIN	4

/**
 * struct xnic_cwnd - a requester's congestion window
 * @cwnd: frames it may have in flight (next_psn - una)
 * @ssthresh: slow start threshold, frames
 * @acked: frames acknowledged toward the next increase above @ssthresh
 * @recover: losses of PSNs before this one belong to the last cut
 * @max: the requester's window, frames: @cwnd never exceeds it
 * @prior_cwnd: @cwnd before the last cut; 0: nothing to undo
 * @prior_ssthresh: @ssthresh before the last cut
 * @undo_retx: resends since the last cut not yet reported spurious
 */
struct xnic_cwnd {
	__u32 cwnd;
	__u32 ssthresh;
	__u32 acked;
	__u32 recover;
	__u32 max;
	__u32 prior_cwnd;
	__u32 prior_ssthresh;
	__u32 undo_retx;
};

/**
 * xnic_cwnd_init() - a requester starts
 * @c: its window
 * @max: its whole window, frames (at least XNIC_CWND_MIN)
 * @psn: its first PSN
 */
static inline void xnic_cwnd_init(struct xnic_cwnd *c, __u32 max, __u32 psn)
{
	c->max = max;
	c->cwnd = max;
	c->ssthresh = max;
	c->acked = 0;
	c->recover = psn;
	c->prior_cwnd = 0;
	c->prior_ssthresh = 0;
	c->undo_retx = 0;
}

/**
 * xnic_cwnd_acked() - frames were acknowledged
 * @c: the window
 * @n: how many frames became done
 */
static inline void xnic_cwnd_acked(struct xnic_cwnd *c, __u32 n)
{
	while (n && c->cwnd < c->max) {
		if (c->cwnd < c->ssthresh) {
			c->cwnd++;
		} else if (++c->acked >= c->cwnd) {
			c->acked = 0;
			c->cwnd++;
		}
		n--;
	}
}

/**
 * xnic_cwnd_loss() - a frame was found lost
 * @c: the window
 * @psn: the lost frame's PSN
 * @next_psn: the next PSN the requester will assign
 * @flight: frames in flight (next_psn - una)
 * @timeout: found by the retransmission timer (else by fast retransmit)
 *
 * Return: whether the window was cut (a new congestion event).
 */
static inline bool xnic_cwnd_loss(struct xnic_cwnd *c, __u32 psn,
				  __u32 next_psn, __u32 flight, bool timeout)
{
	__u32 half = flight / 2;

	/* Sent before the last cut: that cut answered it. */
	if (xnic_psn_before(psn, c->recover))
		return false;
	c->prior_cwnd = c->cwnd;
	c->prior_ssthresh = c->ssthresh;
	c->undo_retx = 0;
	c->ssthresh = half > XNIC_CWND_MIN ? half : XNIC_CWND_MIN;
	c->cwnd = timeout ? XNIC_CWND_MIN : c->ssthresh;
	c->acked = 0;
	c->recover = next_psn;
	return true;
}

/**
 * xnic_cwnd_resent() - a PSN was sent again
 * @c: the window
 * @psn: the PSN
 */
static inline void xnic_cwnd_resent(struct xnic_cwnd *c, __u32 psn)
{
	if (c->prior_cwnd && xnic_psn_before(psn, c->recover))
		c->undo_retx++;
}

/**
 * xnic_cwnd_spurious() - a resend of a PSN was spurious (D-SACK)
 * @c: the window
 * @psn: the PSN
 *
 * Return: whether that was the last resend of the cut's congestion event
 * not known spurious, and the cut was undone.
 */
static inline bool xnic_cwnd_spurious(struct xnic_cwnd *c, __u32 psn)
{
	if (!c->prior_cwnd || !c->undo_retx ||
	    !xnic_psn_before(psn, c->recover) || --c->undo_retx)
		return false;
	if (c->cwnd < c->prior_cwnd)
		c->cwnd = c->prior_cwnd;
	if (c->ssthresh < c->prior_ssthresh)
		c->ssthresh = c->prior_ssthresh;
	c->prior_cwnd = 0;
	return true;
}

#endif /* XNIC_CWND_LOGIC_H */
