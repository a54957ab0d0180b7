/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - credit-based flow control and traffic classes (credit.c): the
 * hooks the requester (tx.c), the responder (rx.c) and the engine call.
 * The arithmetic is in credit_logic.h; the protocol is in
 * Documentation/wire-protocol.rst, "Credit-based flow control".
 *
 * Locking: per-QP state (struct xnic_credit_qp) lives in the QP's
 * transport state and is used under its tp lock, like the rest of it.
 * The device state (struct xnic_credit_dev) has its own spinlock, taken
 * under a tp lock (BH off) and nothing taken under it; its counters are
 * atomic.
 */
#ifndef XNIC_CREDIT_H
#define XNIC_CREDIT_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "credit_logic.h"

struct xnic_dev;
struct xnic_qp;
struct xnic_tp_qp;
struct xnic_wire_info;

/* Device counters of flow control; names in xnic_credit_counter_names[]. */
enum xnic_credit_counter {
	XNIC_CCNT_GRANTED,
	XNIC_CCNT_CONSUMED,
	XNIC_CCNT_RETURNED,
	XNIC_CCNT_ADVERTISED,
	XNIC_CCNT_STALLS,
	XNIC_CCNT_STALL_NS,
	XNIC_CCNT_REQ_SENT,
	XNIC_CCNT_REQ_RCVD,
	XNIC_CCNT_UPD_SENT,
	XNIC_CCNT_UPD_RCVD,
	XNIC_CCNT_CLASS0_BYTES,
	XNIC_CCNT_CLASS1_BYTES,
	XNIC_CCNT_RX_DROPS,
	XNIC_CCNT_RX_VIOLATIONS,
	XNIC_CCNT_INLINE_PRIO_DEFERRED,
	XNIC_CCNT_INLINE_DRR_DEFERRED,
	XNIC_CCNT_INLINE_CLASS0_FRAMES,
	XNIC_CCNT_INLINE_CLASS1_FRAMES,
	XNIC_CCNT_MAX,
};

#define XNIC_CREDIT_NR_COUNTERS	18
static_assert(XNIC_CCNT_MAX == XNIC_CREDIT_NR_COUNTERS);
extern const char *const xnic_credit_counter_names[XNIC_CREDIT_NR_COUNTERS];

/* Device counters of link credit (link_credit.c); names in link_credit.c. */
enum xnic_lcr_counter {
	XNIC_LCNT_STALLS,
	XNIC_LCNT_WAKEUPS,
	XNIC_LCNT_RACES,
	XNIC_LCNT_UPD_SENT,
	XNIC_LCNT_UPD_RCVD,
	XNIC_LCNT_RESYNC_LOST,
	XNIC_LCNT_LATE,
	XNIC_LCNT_NOMEM,
	XNIC_LCNT_MAX,
};

extern const char *const xnic_lcr_counter_names[XNIC_LCNT_MAX];
void xnic_lcr_counters(struct xnic_dev *xdev, u64 *vals);

/**
 * struct xnic_credit_dev - flow control state of a device (xnic_peers)
 * @lock: guards the active-flow estimate and @lwait
 * @epoch: current epoch number (jiffies / epoch length)
 * @active_cur: flows that received data in epoch @epoch
 * @active_prev: flows that received data in the epoch before
 * @cnt: counters, enum xnic_credit_counter
 * @lwait: QPs waiting for link credit (xnic_credit_qp.lwait)
 * @lcnt: link credit counters, enum xnic_lcr_counter
 * @class0_at: when a class 0 frame was last sent, jiffies
 */
struct xnic_credit_dev {
	spinlock_t lock; /* the active-flow estimate, @lwait */
	unsigned long epoch;
	u32 active_cur;
	u32 active_prev;
	atomic64_t cnt[XNIC_CCNT_MAX];
	struct list_head lwait;
	atomic64_t lcnt[XNIC_LCNT_MAX];
	unsigned long class0_at;
};

/**
 * struct xnic_credit_qp - flow control state of a QP (xnic_tp_qp.cr)
 * @flow: requester: its credit (credit_logic.h)
 * @stalled: requester: has a new PSN to send and no credit
 * @stall_since: when the stall began, local_clock() ns
 * @probe_at: requester: when a stalled flow asks for credit, jiffies
 * @probe_ms: the current interval between credit requests, ms
 * @adv: responder: the limit advertised last
 * @adv_valid: @adv is set (the first data frame sets it)
 * @epoch: responder: last epoch the flow was counted active in
 * @lwait: requester: entry in xnic_credit_dev.lwait while @lwaiting
 * @lwaiting: requester: waits for link credit towards its peer
 *	(xnic_credit_dev.lock)
 * @drr: byte deficit round robin among the QPs of its class
 */
struct xnic_credit_qp {
	struct xnic_credit_flow flow;
	bool stalled;
	u64 stall_since;
	unsigned long probe_at;
	unsigned int probe_ms;
	u32 adv;
	bool adv_valid;
	unsigned long epoch;
	struct list_head lwait;
	bool lwaiting;
	struct xnic_drr drr;
};

void xnic_credit_dev_init(struct xnic_credit_dev *cd);
int xnic_credit_counters(struct xnic_dev *xdev, u64 *vals, int n);

/* requester (tx.c), tp lock held */
void xnic_credit_tx_start(struct xnic_qp *qp, u32 psn);
bool xnic_credit_tx_ok(struct xnic_qp *qp, u32 next_psn);
void xnic_credit_tx_sent(struct xnic_qp *qp, u32 psn, u32 bytes);
u32 xnic_credit_seg_bytes(struct xnic_qp *qp, u32 mtu);
bool xnic_credit_tx_ackreq(struct xnic_qp *qp, u32 psn);
void xnic_credit_tx_ack(struct xnic_qp *qp, u32 cum, u16 credits,
			u32 next_psn);
void xnic_credit_tx_stop(struct xnic_qp *qp, u32 next_psn);
bool xnic_credit_timer(struct xnic_tp_qp *tp);

/* responder (rx.c), tp lock held */
u16 xnic_credit_rx_grant(struct xnic_qp *qp, u32 epsn);
void xnic_credit_rx_data(struct xnic_qp *qp, u32 psn, u32 epsn);
void xnic_credit_rx_drop(struct xnic_qp *qp);
void xnic_credit_rx_frame(struct xnic_qp *qp, const struct xnic_wire_info *i);

/* engine */
unsigned int xnic_credit_budget(struct xnic_dev *xdev, u8 tclass,
				unsigned int quantum, bool class0_busy);

/* byte deficit round robin, tp lock held */
unsigned int xnic_credit_drr_begin(struct xnic_qp *qp, unsigned int frames);
void xnic_credit_drr_end(struct xnic_qp *qp, unsigned int frames,
			 bool busy);
unsigned int xnic_credit_drr_inline(struct xnic_qp *qp, unsigned int max);
void xnic_credit_drr_charge(struct xnic_qp *qp, unsigned int bytes);

/**
 * struct xnic_credit_inline - one inline send under the class scheduler
 * @max: most frames the class rule leaves the caller, frames
 * @allowed: what the QP may send, @max or less (its deficit), frames
 * @prio: nothing allowed because class 0 QPs wait for the engine
 */
struct xnic_credit_inline {
	unsigned int max;
	unsigned int allowed;
	bool prio;
};

/* inline sends (wakeup syscall, ACK) under the class scheduler, tp lock */
unsigned int xnic_credit_inline_begin(struct xnic_qp *qp, unsigned int max,
				      struct xnic_credit_inline *ci);
void xnic_credit_inline_end(struct xnic_qp *qp,
			    const struct xnic_credit_inline *ci,
			    unsigned int left, bool more);

#endif /* XNIC_CREDIT_H */
