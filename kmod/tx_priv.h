/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - the requester's internals, shared by tx.c (sending),
 * tx_ack.c (ACKs, NAKs, READ responses) and tx_recovery.c (timer,
 * flushes, link failures). Everything here runs under the QP's tp lock.
 */
#ifndef XNIC_TX_PRIV_H
#define XNIC_TX_PRIV_H

#include "transport_priv.h"

/* The slot of the unacknowledged PSN @psn. */
static inline struct xnic_tx_slot *xnic_tx_slot(struct xnic_tx *tx, u32 psn)
{
	return &tx->slots[psn % XNIC_TX_WINDOW];
}

/* The copy of the WQE at SQ index @sq_idx (free running). */
static inline struct xnic_tx_wqe *xnic_tx_wqe(struct xnic_tx *tx, u32 sq_idx)
{
	return &tx->wqes[sq_idx & (tx->nr_wqe - 1)];
}

static inline bool xnic_wr_is_read(const struct xnic_tx_wqe *w)
{
	return w->wqe.opcode == XNIC_WR_RDMA_READ;
}

/* Segments a READ_REQ slot asks for: one per mtu bytes, at least one. */
static inline u32 xnic_tx_read_nseg(const struct xnic_tx *tx,
				    const struct xnic_tx_slot *s)
{
	return s->len ? DIV_ROUND_UP(s->len, tx->mtu) : 1;
}

/* The PSN of @s is acknowledged (or its READ responses are all in). */
static inline void xnic_tx_slot_done(struct xnic_tx *tx,
				     struct xnic_tx_slot *s)
{
	struct xnic_tx_wqe *w = &tx->wqes[s->widx];

	if (s->done)
		return;
	s->done = true;
	w->ndone++;
	xnic_cwnd_acked(&tx->cw, 1);
	if (xnic_wr_is_read(w))
		tx->reads--;
}

/* tx.c */
void xnic_tx_cqe(struct xnic_qp *qp, const struct xnic_sq_wqe *wqe, u32 len,
		 u8 status);
void xnic_tx_fail(struct xnic_qp *qp, struct xnic_tx_wqe *w, u8 status);
int xnic_tx_send_psn(struct xnic_qp *qp, u32 psn, bool retx);
void xnic_tx_resend_from(struct xnic_tx *tx, u32 from, u8 mode);
void xnic_tx_progress(struct xnic_tp_qp *tp);
void xnic_tx_responded(struct xnic_tx *tx);
void xnic_tx_lost(struct xnic_qp *qp, u32 psn, bool timeout);
bool xnic_tx_complete(struct xnic_qp *qp);
void xnic_tx_push(struct xnic_qp *qp);

#endif /* XNIC_TX_PRIV_H */
