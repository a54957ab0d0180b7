// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the responder's RDMA READs. A READ_REQ is checked when it
 * arrives (its rkey must grant remote read over the whole message) and
 * answered when epsn passes it, so that it sees every earlier WRITE; the
 * READs of a QP are answered in PSN order, at most XNIC_RX_READ_BUDGET
 * frames from the receive path and the rest from the engine
 * (xnic_tp_qp_process()). A repeated READ_REQ is answered again. See
 * wire-protocol.rst.
 *
 * Context: tp lock held.
 */
#include "transport_priv.h"

/* Read and check a READ_REQ's payload. */
static bool xnic_rx_read_parse(struct xnic_qp *qp,
			       const struct xnic_wire_info *i,
			       struct sk_buff *skb, u32 *length, u32 *seg)
{
	struct xnic_wire_read_req rr;

	if (skb_copy_bits(skb, XNIC_WIRE_HDR_LEN, &rr, sizeof(rr)))
		return false;
	*length = be32_to_cpu(rr.length);
	*seg = be32_to_cpu(rr.seg_size);
	return xnic_wire_check_read_req(i, *length, *seg,
					xnic_tp_max_payload(qp->xdev));
}

/* Whether the READ's rkey grants access to the whole message. */
static bool xnic_rx_read_allowed(struct xnic_qp *qp,
				 const struct xnic_wire_info *i, u32 length)
{
	struct xnic_mr *mr;
	int status;

	if (!length)
		return true;
	mr = xnic_mr_get(qp->xdev, i->rkey, qp->pd, IB_ACCESS_REMOTE_READ,
			 i->raddr, i->msg_len, &status);
	if (!mr)
		return false;
	xnic_mr_put(mr);
	return true;
}

/*
 * Build one READ_RESP payload of @n bytes at @addr of @mr into @skb: zero
 * copy when large enough. Return 0 or -EACCES.
 */
static int xnic_rx_read_payload(struct sk_buff **skb, struct xnic_mr *mr,
				u64 addr, u32 n)
{
	int err;

	if (n >= XNIC_TX_ZC_MIN) {
		err = xnic_frame_add_mr(*skb, mr, addr, n);
		if (err != -EMSGSIZE)
			return err ? -EACCES : 0;
		/* Too many pieces for one skb: copy them instead. */
		kfree_skb(*skb);
		*skb = xnic_frame_alloc(n, GFP_ATOMIC);
		if (!*skb)
			return 0;
	}
	return xnic_mr_copy_from(mr, addr, skb_put(*skb, n), n) ? -EACCES : 0;
}

/*
 * Send READ_RESP frames of @r, at most *@budget; @r is freed once all
 * are sent. Return 0 (frames that could not be built are lost like on
 * the wire) or -EACCES when the memory is no longer accessible.
 */
static int xnic_rx_read_send(struct xnic_qp *qp, struct xnic_rx_read *r,
			     unsigned int *budget)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_READ_RESP,
		.src_node = qp->xdev->node_id,
		.dst_node = rx->remote_node,
		.src_qpn = xnic_qpn(qp),
		.dst_qpn = rx->dest_qpn,
		.psn = r->psn,
		.msg_len = r->info.msg_len,
	};
	struct xnic_mr *mr = NULL;
	struct sk_buff *skb;
	int status, err = 0;
	u32 n;

	if (r->length) {
		mr = xnic_mr_get(qp->xdev, r->info.rkey, qp->pd,
				 IB_ACCESS_REMOTE_READ, r->info.raddr,
				 r->info.msg_len, &status);
		if (!mr)
			return -EACCES;
	}
	while (*budget) {
		/* No link credit: the rest waits (link_credit.c). */
		if (!xnic_lcr_qp_ok(qp, rx->remote_node))
			break;
		n = min(r->seg, r->length);
		skb = xnic_frame_alloc(n >= XNIC_TX_ZC_MIN ? 0 : n,
				       GFP_ATOMIC);
		if (skb && n)
			err = xnic_rx_read_payload(&skb, mr, r->info.raddr +
						   r->info.offset, n);
		if (err) {
			kfree_skb(skb);
			break;
		}
		if (skb) {
			i.offset = r->info.offset;
			i.payload_len = n;
			xnic_tp_send(qp, rx->remote_node, skb, &i);
		} else {
			xnic_cnt_inc(qp->xdev, XNIC_CNT_TX_DROPS);
		}
		(*budget)--;
		r->info.offset += n;
		r->length -= n;
		if (!r->length) {
			r->used = false;
			break;
		}
	}
	if (mr)
		xnic_mr_put(mr);
	return err;
}

/* The runnable READ with the lowest PSN (epsn passed it), or NULL. */
static struct xnic_rx_read *xnic_rx_next_read(struct xnic_rx *rx)
{
	struct xnic_rx_read *r, *best = NULL;
	int k;

	for (k = 0; k < XNIC_RX_MAX_READS; k++) {
		r = &rx->reads[k];
		if (r->used && xnic_psn_before(r->psn, rx->win.epsn) &&
		    (!best || xnic_psn_before(r->psn, best->psn)))
			best = r;
	}
	return best;
}

/**
 * xnic_rx_reads_pending() - whether READ responses are waiting to be sent
 * @qp: the QP
 *
 * Context: tp lock held.
 * Return: true when a READ that epsn passed has responses left.
 */
bool xnic_rx_reads_pending(struct xnic_qp *qp)
{
	return xnic_rx_next_read(&xnic_tp(qp)->rx);
}

/**
 * xnic_rx_run_reads() - send the responses of the READs that epsn passed
 * @qp: the QP
 * @budget: most frames to send; decreased by those sent
 *
 * READs are answered in PSN order. A READ whose memory is no longer
 * accessible is NAKed (the QP goes to error); a repeated one is dropped.
 *
 * Context: tp lock held.
 * Return: false when the QP went to error.
 */
bool xnic_rx_run_reads(struct xnic_qp *qp, unsigned int *budget)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_rx_read *r;

	while (*budget && (r = xnic_rx_next_read(rx))) {
		if (!xnic_lcr_qp_ok(qp, rx->remote_node))
			break;
		if (!xnic_rx_read_send(qp, r, budget))
			continue;
		r->used = false;
		if (!r->dup) {
			xnic_rx_fatal(qp, XNIC_NAK_REM_ACCESS, r->psn);
			return false;
		}
	}
	return true;
}

/* Queue a READ to answer once epsn passed @i->psn. Return 0 or -EBUSY. */
static int xnic_rx_read_add(struct xnic_rx *rx, const struct xnic_wire_info *i,
			    u32 length, u32 seg, bool dup)
{
	int k;

	for (k = 0; k < XNIC_RX_MAX_READS; k++) {
		struct xnic_rx_read *r = &rx->reads[k];

		if (r->used)
			continue;
		r->used = true;
		r->dup = dup;
		r->psn = i->psn;
		r->info = *i;
		r->length = length;
		r->seg = seg;
		return 0;
	}
	return -EBUSY;
}

/**
 * xnic_rx_read_req() - take a new READ_REQ
 * @qp: the QP
 * @i: the frame's header (PSN epsn or later, within the window)
 * @skb: the frame
 *
 * Checks the request and the rkey's access to the whole message, and
 * queues the READ: it is answered once every earlier PSN is in
 * (xnic_rx_reads_inline() from the responder's progress).
 *
 * Context: softirq, tp lock held.
 * Return: 0; -EPROTO (error recorded, xnic_rx_error()); -EBUSY when
 * XNIC_RX_MAX_READS READs are outstanding.
 */
int xnic_rx_read_req(struct xnic_qp *qp, const struct xnic_wire_info *i,
		     struct sk_buff *skb)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	u32 length, seg;

	if (!xnic_rx_read_parse(qp, i, skb, &length, &seg))
		return xnic_rx_error(rx, i->psn, XNIC_NAK_INV_REQ, 0, 0);
	if (!xnic_rx_read_allowed(qp, i, length))
		return xnic_rx_error(rx, i->psn, XNIC_NAK_REM_ACCESS, 0, 0);
	/* Answered once every earlier PSN is in (xnic_rx_progress()). */
	return xnic_rx_read_add(rx, i, length, seg, false);
}

/**
 * xnic_rx_reads_inline() - send READ responses from the receive path
 * @qp: the QP
 *
 * At most XNIC_RX_READ_BUDGET frames; the engine sends the rest.
 *
 * Context: softirq, tp lock held.
 * Return: false when the QP went to the error state.
 */
bool xnic_rx_reads_inline(struct xnic_qp *qp)
{
	unsigned int budget = XNIC_RX_READ_BUDGET;

	if (!xnic_rx_run_reads(qp, &budget))
		return false;
	if (!budget && xnic_rx_reads_pending(qp))
		xnic_tp(qp)->activate = true;
	return true;
}

/**
 * xnic_rx_read_dup() - take a READ_REQ that was received before
 * @qp: the QP
 * @i: the frame's header (a PSN before epsn)
 * @skb: the frame
 *
 * Its responses may have been lost: it is answered again if it is still
 * valid and within the last XNIC_TX_WINDOW PSNs; older duplicates are
 * ignored.
 *
 * Context: softirq, tp lock held.
 */
void xnic_rx_read_dup(struct xnic_qp *qp, const struct xnic_wire_info *i,
		      struct sk_buff *skb)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	u32 length, seg;
	int k;

	if (!xnic_psn_before(i->psn, rx->win.epsn) ||
	    rx->win.epsn - i->psn > XNIC_TX_WINDOW)
		return;
	/* Still answering it: the rest of the answer is on its way. */
	for (k = 0; k < XNIC_RX_MAX_READS; k++)
		if (rx->reads[k].used && rx->reads[k].psn == i->psn)
			return;
	if (xnic_rx_read_parse(qp, i, skb, &length, &seg) &&
	    xnic_rx_read_allowed(qp, i, length) &&
	    !xnic_rx_read_add(rx, i, length, seg, true))
		xnic_rx_reads_inline(qp);
}
