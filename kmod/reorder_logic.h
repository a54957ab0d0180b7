/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic reordering allowance of fast retransmit: the pure arithmetic (no
 * locks, no clock), shared by tx.c, tx_ack.c and
 * selftests/unit/reorder_test.c.
 *
 * Fast retransmit resends a hole that three later PSNs overtook once it
 * is a round trip plus an allowance old (tx_ack.c). Frames sprayed over
 * links whose queues differ arrive out of order by up to the difference
 * of the queues, which no fixed allowance fits. As RACK (RFC 8985
 * section 6.2, "reo_wnd_mult"), the allowance is a multiple of its base,
 * and the multiple learns from the responder's D-SACKs (RFC 2883: a resend
 * arrived although its original had too, so it was spurious):
 *
 * - it starts at 1;
 * - a D-SACK of a resend adds 1, at most once per round trip (only for a
 *   PSN sent after the last increase), up to XNIC_REO_MULT_MAX;
 * - after XNIC_REO_PERSIST recoveries (congestion window cuts by fast
 *   retransmit) without a D-SACK it is back to 1 (RFC 8985's 16).
 */
#ifndef XNIC_REORDER_LOGIC_H
#define XNIC_REORDER_LOGIC_H

#include "wire.h"

/* The largest multiple of the base allowance. */
#define XNIC_REO_MULT_MAX	8
/* Recoveries without a D-SACK before the multiple returns to 1. */
#define XNIC_REO_PERSIST	16

/**
 * struct xnic_reo - a requester's reordering allowance
 * @mult: the allowance is @mult times its base (1..XNIC_REO_MULT_MAX)
 * @persist: recoveries left before @mult returns to 1
 * @psn: a D-SACK raises @mult only for a PSN from this one on
 */
struct xnic_reo {
	__u8 mult;
	__u8 persist;
	__u32 psn;
};

/**
 * xnic_reo_init() - a requester starts
 * @r: its allowance
 * @psn: its first PSN
 */
static inline void xnic_reo_init(struct xnic_reo *r, __u32 psn)
{
	r->mult = 1;
	r->persist = XNIC_REO_PERSIST;
	r->psn = psn;
}

/**
 * xnic_reo_spurious() - the responder reported a resent PSN twice
 * @r: the allowance
 * @psn: that PSN
 * @next_psn: the next PSN the requester will assign
 *
 * Return: whether the multiple grew.
 */
static inline bool xnic_reo_spurious(struct xnic_reo *r, __u32 psn,
				     __u32 next_psn)
{
	r->persist = XNIC_REO_PERSIST;
	if (xnic_psn_before(psn, r->psn) || r->mult >= XNIC_REO_MULT_MAX)
		return false;
	r->mult++;
	r->psn = next_psn;
	return true;
}

/**
 * xnic_reo_recovery() - fast retransmit cut the congestion window
 * @r: the allowance
 */
static inline void xnic_reo_recovery(struct xnic_reo *r)
{
	if (r->persist && !--r->persist)
		r->mult = 1;
}

/**
 * xnic_reo_age() - how old a hole must be to be resent
 * @r: the allowance
 * @srtt: the smoothed round trip time, ns
 * @base: the base allowance, ns
 *
 * Return: @srtt + @r->mult x @base, ns.
 */
static inline __u64 xnic_reo_age(const struct xnic_reo *r, __u64 srtt,
				 __u64 base)
{
	return srtt + r->mult * base;
}

#endif /* XNIC_REORDER_LOGIC_H */
