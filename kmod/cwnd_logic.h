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
 *   (congestion avoidance), up to the requester's window.
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
 */
struct xnic_cwnd {
	__u32 cwnd;
	__u32 ssthresh;
	__u32 acked;
	__u32 recover;
	__u32 max;
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
	c->ssthresh = half > XNIC_CWND_MIN ? half : XNIC_CWND_MIN;
	c->cwnd = timeout ? XNIC_CWND_MIN : c->ssthresh;
	c->acked = 0;
	c->recover = next_psn;
	return true;
}

#endif /* XNIC_CWND_LOGIC_H */
