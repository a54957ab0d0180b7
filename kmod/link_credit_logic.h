/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic link-level credit: the pure arithmetic (no locks, no allocation),
 * shared by link_credit.c and selftests/unit/link_credit_test.c.
 *
 * Model: InfiniBand link-level flow control (IBA vol 1 section 7.9), per
 * path (one member link towards one peer node), counted in frames:
 *  - the sender counts the frames it sent on the path (FCTBS, @sent) and
 *    may send while @sent is before the limit the receiver granted
 *    (FCCL, @limit);
 *  - the receiver counts the frames it took off the link (ABR, @rcvd:
 *    the packet handler ran for them, they left the netdev's backlog) and
 *    grants limit = @rcvd + window: at most a window of frames is ever
 *    in flight on the path, queued in the link, not processed;
 *  - both numbers are absolute and free-running (mod 2^32): a lost or
 *    repeated update loses or doubles nothing, the next carries it all;
 *  - a frame lost on the link (down link, CRC error, no memory) would
 *    hold its credit for ever: the sender's periodic sync carries @sent,
 *    and a sample that has aged XNIC_LCR_RESYNC_MS while the receiver's
 *    count stayed behind it means the frames before it are lost: the
 *    receiver moves @rcvd up to it (IB sets ABR to FCTBS; on a link that
 *    is not FIFO across CPUs, as veth, the sample must age first); a
 *    frame given up that was only late carries its sequence, so it is
 *    not counted twice (xnic_lcr_rx_take());
 *  - every incarnation of a sender path has a random epoch: a receiver
 *    that sees a new one starts counting from its sync, and a sender
 *    ignores grants made for another epoch of itself.
 *
 * Accounting (sender, per path): granted = initial window + every limit
 * increase; consumed = frames sent; held = @limit - @sent. Invariant:
 * granted == consumed + held, and held == the window once the path is
 * quiet (every frame processed, the last update arrived).
 */
#ifndef XNIC_LINK_CREDIT_LOGIC_H
#define XNIC_LINK_CREDIT_LOGIC_H

#include "wire.h"

/* Largest link window, frames (the most a grant may run ahead). */
#define XNIC_LCR_MAX_WINDOW	4096U
/* A sync sample of the sender's count this old (ms) resyncs the receiver. */
#define XNIC_LCR_RESYNC_MS	200U
/* Frames after a resync for which a late frame it gave up is recognised. */
#define XNIC_LCR_SEQ_HORIZON	16384U

/**
 * struct xnic_lcr_tx - sender half of a path
 * @epoch: this incarnation's epoch (non-zero)
 * @sent: frames sent (FCTBS)
 * @limit: frames before this count may be sent (FCCL)
 * @granted: credits received, the initial window included
 * @consumed: credits spent (frames sent)
 */
struct xnic_lcr_tx {
	__u32 epoch;
	__u32 sent;
	__u32 limit;
	__u64 granted;
	__u64 consumed;
};

/**
 * struct xnic_lcr_rx - receiver half of a path
 * @epoch: the sender's epoch last seen (0: none yet)
 * @rcvd: frames taken off the link (ABR)
 * @adv: the limit advertised last
 * @sync: the sender's count in the sync sample kept
 * @sync_ns: when the sample arrived, ns (0: no sample)
 * @advertised: sum of the increases of @adv
 * @lost: frames given up as lost by resyncs
 * @late: frames that arrived after a resync had given them up (not
 *	counted again)
 * @wo_end: the count the last resync moved @rcvd up to: every frame of a
 *	lower sequence was counted or given up (valid while @wo_valid)
 * @wo_valid: a resync gave frames up, less than XNIC_LCR_SEQ_HORIZON
 *	frames ago
 */
struct xnic_lcr_rx {
	__u32 epoch;
	__u32 rcvd;
	__u32 adv;
	__u32 sync;
	__u64 sync_ns;
	__u64 advertised;
	__u64 lost;
	__u64 late;
	__u32 wo_end;
	bool wo_valid;
};

/**
 * xnic_lcr_tx_init() - a sender path starts
 * @t: the path, zeroed or stopped
 * @epoch: its epoch, non-zero
 * @window: the credit it has before the first update, frames
 */
static inline void xnic_lcr_tx_init(struct xnic_lcr_tx *t, __u32 epoch,
				    __u32 window)
{
	t->epoch = epoch;
	t->sent = 0;
	t->limit = window;
	t->granted += window;
}

/**
 * xnic_lcr_tx_avail() - frames a sender path may send now
 * @t: the path
 *
 * Return: @limit - @sent, 0 when the limit is reached.
 */
static inline __u32 xnic_lcr_tx_avail(const struct xnic_lcr_tx *t)
{
	return xnic_psn_before(t->sent, t->limit) ? t->limit - t->sent : 0;
}

/**
 * xnic_lcr_tx_take() - spend one credit for a frame about to be sent
 * @t: the path
 *
 * Return: true when there was credit (it is spent), false otherwise.
 */
static inline bool xnic_lcr_tx_take(struct xnic_lcr_tx *t)
{
	if (!xnic_lcr_tx_avail(t))
		return false;
	t->sent++;
	t->consumed++;
	return true;
}

/**
 * xnic_lcr_tx_update() - apply a grant from the receiver
 * @t: the path
 * @echo: the epoch the grant was made for
 * @fccl: the limit granted
 *
 * The limit moves only forward, and never more than XNIC_LCR_MAX_WINDOW
 * past @sent (a hostile grant cannot make the counters jump).
 *
 * Return: credits newly granted; 0 for a stale grant or another epoch's.
 */
static inline __u32 xnic_lcr_tx_update(struct xnic_lcr_tx *t, __u32 echo,
				       __u32 fccl)
{
	__u32 inc;

	if (echo != t->epoch || !xnic_psn_before(t->limit, fccl) ||
	    xnic_psn_before(fccl, t->sent))
		return 0;
	if (xnic_psn_diff(fccl, t->sent) > (__s32)XNIC_LCR_MAX_WINDOW)
		fccl = t->sent + XNIC_LCR_MAX_WINDOW;
	if (!xnic_psn_before(t->limit, fccl))
		return 0;
	inc = fccl - t->limit;
	t->limit = fccl;
	t->granted += inc;
	return inc;
}

/**
 * xnic_lcr_tx_check() - the sender's accounting invariant
 * @t: the path
 *
 * Return: true when granted == consumed + held.
 */
static inline bool xnic_lcr_tx_check(const struct xnic_lcr_tx *t)
{
	return t->granted >= t->consumed &&
	       t->granted - t->consumed == xnic_lcr_tx_avail(t);
}

/**
 * xnic_lcr_rx_grant() - the limit a receiver advertises now
 * @r: the path
 * @window: the link window, frames
 *
 * The advertised limit never moves back (a smaller window takes effect
 * as the sender uses what it was given).
 *
 * Return: the limit to send (FCCL).
 */
static inline __u32 xnic_lcr_rx_grant(struct xnic_lcr_rx *r, __u32 window)
{
	__u32 limit = r->rcvd + window;

	/* Ahead by 1..2^31 - 1 only: at 2^31 "before" holds both ways. */
	if (xnic_psn_diff(limit, r->adv) > 0) {
		r->advertised += limit - r->adv;
		r->adv = limit;
	}
	return r->adv;
}

/**
 * xnic_lcr_rx_due() - whether a receiver should send an update now
 * @r: the path
 * @window: the link window, frames
 *
 * Return: true once half a window (at least one frame) was processed
 * since the last advertisement.
 */
static inline bool xnic_lcr_rx_due(const struct xnic_lcr_rx *r,
				   __u32 window)
{
	__u32 limit = r->rcvd + window;
	__u32 half = window / 2 ? window / 2 : 1;

	return xnic_psn_diff(limit, r->adv) > 0 && limit - r->adv >= half;
}

/**
 * xnic_lcr_rx_sync() - a receiver takes the sender's sync
 * @r: the path
 * @epoch: the sender path's epoch
 * @fctbs: the sender's count of frames sent
 * @now_ns: the time, ns (not 0)
 *
 * A new epoch starts the count at @fctbs, which counts the frames sent
 * before the sync: one of them still on its way (the sync overtook it, or
 * the data of a new path came first) is recognised by its sequence and
 * not counted again. Otherwise a kept sample at least XNIC_LCR_RESYNC_MS
 * old that the count is still behind means the frames before it were
 * lost: the count moves up to it. A new sample is kept once the old one
 * was used. A frame given up that was only late is recognised by its
 * sequence when it comes (xnic_lcr_rx_take()).
 *
 * Return: frames given up as lost (0 when none).
 */
static inline __u32 xnic_lcr_rx_sync(struct xnic_lcr_rx *r, __u32 epoch,
				     __u32 fctbs, __u64 now_ns)
{
	__u64 age = (__u64)XNIC_LCR_RESYNC_MS * 1000000ULL;
	__u32 lost = 0;

	if (epoch != r->epoch) {
		r->epoch = epoch;
		r->rcvd = fctbs;
		r->adv = fctbs;
		r->sync_ns = 0;
		r->wo_end = fctbs;
		r->wo_valid = true;
		return 0;
	}
	if (r->sync_ns && now_ns >= r->sync_ns &&
	    now_ns - r->sync_ns < age)
		return 0;
	if (r->sync_ns && xnic_psn_diff(r->sync, r->rcvd) > 0 &&
	    xnic_psn_diff(r->sync, r->rcvd) <= (__s32)XNIC_LCR_MAX_WINDOW) {
		lost = r->sync - r->rcvd;
		r->rcvd = r->sync;
		r->lost += lost;
		r->wo_end = r->sync;
		r->wo_valid = true;
	}
	r->sync = fctbs;
	r->sync_ns = now_ns;
	return lost;
}

/**
 * xnic_lcr_rx_take() - a receiver takes a data-bearing frame off the link
 * @r: the path
 * @seq: the frame's sequence on the path (the credits field of a data
 *	frame: the low 16 bits of the sender's frames sent before it)
 *
 * A frame of a sequence below the point a resync moved the count up to
 * was given up as lost and counted then: it is not counted again (it was
 * late, not lost). 16-bit serial arithmetic holds because a sender has at
 * most a window (<= XNIC_LCR_MAX_WINDOW) of frames beyond the count; the
 * mark expires XNIC_LCR_SEQ_HORIZON frames after the resync, so a frame
 * later than that would count twice.
 *
 * Return: true when the frame counts, false when it was late.
 */
static inline bool xnic_lcr_rx_take(struct xnic_lcr_rx *r, __u16 seq)
{
	if (r->wo_valid) {
		if (r->rcvd - r->wo_end >= XNIC_LCR_SEQ_HORIZON) {
			r->wo_valid = false;
		} else if ((__s16)(__u16)(seq - (__u16)r->wo_end) < 0) {
			r->late++;
			return false;
		}
	}
	r->rcvd++;
	return true;
}

#endif /* XNIC_LINK_CREDIT_LOGIC_H */
