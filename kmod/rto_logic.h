/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic retransmission timeout: the pure arithmetic (no locks, no clock),
 * shared by tx.c, tx_ack.c and selftests/unit/rto_test.c.
 *
 * RFC 6298: every ACK that covers a PSN sent only once (Karn's rule: the
 * caller takes no sample from a retransmitted PSN) gives a round trip
 * sample R; SRTT and RTTVAR are smoothed with gains 1/8 and 1/4; the
 * timeout is SRTT + 4 * RTTVAR, at least a floor, at most
 * XNIC_RTO_MAX_NS. Each expiry without progress doubles the timeout, up
 * to the same ceiling; progress recomputes it from the estimate.
 *
 * The ceiling is RFC 6298's (2.5): "a maximum value MAY be placed on RTO
 * provided it is at least 60 seconds" (Linux TCP: 120 s). A lower one
 * (xnic had 1 s) breaks on a slow link with a deep queue: a frame that
 * waits behind seconds of queued frames is not lost, but a timeout that
 * cannot grow past the queue's delay expires again and again, resends
 * what is still queued (more queue) and runs out of retries
 * (XNIC_WC_RETRY_EXC_ERR) on a path that works. A peer that is really
 * gone is found by the bond's heartbeats in peer_timeout_ms, not by this
 * ceiling.
 */
#ifndef XNIC_RTO_LOGIC_H
#define XNIC_RTO_LOGIC_H

#include <linux/types.h>

/* Largest retransmission timeout, estimated or backed off, ns. */
#define XNIC_RTO_MAX_NS		(60ULL * 1000 * 1000 * 1000)

/**
 * xnic_rto_sample() - take a round trip sample (RFC 6298 section 2)
 * @srtt: smoothed round trip time, ns; 0: no sample yet
 * @rttvar: round trip time variation, ns
 * @rtt: the sample, ns
 *
 * The first sample sets SRTT = R, RTTVAR = R / 2; later ones
 * RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R.
 * @srtt never becomes 0 (that means "no sample").
 */
static inline void xnic_rto_sample(__u64 *srtt, __u64 *rttvar, __u64 rtt)
{
	__u64 delta, s;

	if (!*srtt) {
		*srtt = rtt ? rtt : 1;
		*rttvar = rtt / 2;
		return;
	}
	delta = *srtt > rtt ? *srtt - rtt : rtt - *srtt;
	*rttvar = (3 * *rttvar + delta) / 4;
	s = (7 * *srtt + rtt) / 8;
	*srtt = s ? s : 1;
}

/**
 * xnic_rto_ns() - the timeout from the estimate
 * @srtt: smoothed round trip time, ns (not 0)
 * @rttvar: round trip time variation, ns
 * @floor_ns: the least timeout, ns
 *
 * Return: SRTT + 4 * RTTVAR, at least @floor_ns, at most
 * XNIC_RTO_MAX_NS.
 */
static inline __u64 xnic_rto_ns(__u64 srtt, __u64 rttvar, __u64 floor_ns)
{
	__u64 rto = srtt + 4 * rttvar;

	if (rto < floor_ns)
		rto = floor_ns;
	return rto < XNIC_RTO_MAX_NS ? rto : XNIC_RTO_MAX_NS;
}

/**
 * xnic_rto_backoff() - the timeout after an expiry without progress
 * @rto: the timeout that expired (any unit)
 * @ceiling: the largest timeout (same unit)
 *
 * Return: 2 * @rto, at most @ceiling (and at least @rto).
 */
static inline __u64 xnic_rto_backoff(__u64 rto, __u64 ceiling)
{
	if (rto >= ceiling)
		return rto;
	return rto <= ceiling / 2 ? 2 * rto : ceiling;
}

#endif /* XNIC_RTO_LOGIC_H */
