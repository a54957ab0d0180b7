// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the receive path and the responder.
 *
 * xnic_tp_rx() validates every frame (header, frame check, source node against
 * the peer table, destination QP and its connection) and dispatches it:
 * READ responses, ACKs and NAKs go to the requester (tx_ack.c), WRITE, SEND
 * and READ_REQ to the responder below.
 *
 * The responder accepts PSNs in [epsn, epsn + XNIC_RX_WINDOW) in any
 * order, exactly once (a bitmap, struct xnic_psn_win), places their data
 * at once, and completes receive WQEs in message order when epsn passes a
 * message's last PSN: a receive completion thus means that the message
 * and every earlier message of the QP are placed. READ_REQs run when epsn
 * passes them, so a READ sees every earlier WRITE (rx_read.c). Errors
 * are held back until every earlier PSN has arrived, then NAKed; the QP
 * goes to error.
 *
 * Everything here runs in the receive softirq under the QP's tp lock
 * (transport_priv.h), but for bulk data frames, which the receiving
 * device's engine thread checks and places with bottom halves off (a CPU
 * of its own, xnic_rx_to_engine()), HELLOs, which it handles (the peer
 * table's lock is not BH safe), and READ responses left over, which
 * xnic_tp_qp_process() sends.
 */
#include <linux/jiffies.h>

#include "engine.h"
#include "transport_priv.h"
#include "cm.h"

static struct xnic_rx_msg *xnic_rx_msg(struct xnic_rx *rx, u32 msn)
{
	return &rx->msgs[msn & (rx->nr_msg - 1)];
}

/*
 * Send an ACK (@syndrome XNIC_NAK_NONE) or a NAK about @psn; an ACK with
 * @flags XNIC_WF_DSACK reports @psn as received twice.
 */
static void xnic_rx_ack_frame(struct xnic_qp *qp, u8 syndrome, u32 psn,
			      u16 flags)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_dev *xdev = qp->xdev;
	u64 sack[XNIC_WIRE_SACK_BITS / 64];
	struct xnic_wire_info i = {
		.opcode = syndrome ? XNIC_OP_NAK : XNIC_OP_ACK,
		.src_node = xdev->node_id,
		.dst_node = rx->remote_node,
		.src_qpn = xnic_qpn(qp),
		.dst_qpn = rx->dest_qpn,
		.psn = rx->win.epsn,
		.msn = rx->rmsn,
		.payload_len = sizeof(struct xnic_wire_ack),
		.flags = flags,
	};
	struct xnic_wire_ack *ack;
	struct sk_buff *skb;
	int k;

	rx->unacked = 0;
	rx->ack_due = false;
	i.credits = xnic_credit_rx_grant(qp, rx->win.epsn);
	skb = xnic_frame_alloc(sizeof(*ack), GFP_ATOMIC);
	if (!skb) {
		xnic_cnt_inc(xdev, XNIC_CNT_TX_DROPS);
		return;
	}
	ack = skb_put_zero(skb, sizeof(*ack));
	ack->nak_psn = cpu_to_be32(syndrome || flags ? psn : 0);
	ack->syndrome = syndrome;
	if (syndrome == XNIC_NAK_RNR)
		ack->rnr_timer = rx->rnr_timer;
	xnic_psn_win_sack(&rx->win, sack);
	for (k = 0; k < ARRAY_SIZE(sack); k++)
		ack->sack[k] = cpu_to_be64(sack[k]);
	xnic_tp_send_ack(qp, skb, &i);

	xnic_cnt_inc(xdev, syndrome ? XNIC_CNT_NAKS_SENT : XNIC_CNT_ACKS_SENT);
	if (syndrome == XNIC_NAK_RNR)
		xnic_cnt_inc(xdev, XNIC_CNT_RNR_NAKS_SENT);
}

static void xnic_rx_send_ack(struct xnic_qp *qp, u8 syndrome, u32 nak_psn)
{
	xnic_rx_ack_frame(qp, syndrome, nak_psn, 0);
}

/* Post the receive completion of @m. */
static void xnic_rx_cqe(struct xnic_qp *qp, const struct xnic_rx_msg *m,
			const struct xnic_rq_wqe *wqe, u8 status)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_cqe cqe = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = m && m->imm_op ? XNIC_WC_RECV_RDMA_WITH_IMM :
					   XNIC_WC_RECV,
		.qp_num = xnic_qpn(qp),
		.src_qp = rx->dest_qpn,
		.src_node = rx->remote_node,
	};

	if (m && !status) {
		cqe.byte_len = m->msg_len;
		if (m->has_imm) {
			cqe.flags = XNIC_CQE_F_IMM;
			cqe.imm_data = (__force u32)m->imm;
		}
	}
	xnic_qp_cq_post(qp, qp->rcq, &cqe, m && m->solicited);
}

/*
 * Release the oldest receive WQE (msn rmsn) once its message is complete;
 * the caller publishes the consumer index, then posts the CQE from the
 * copy of the WQE in the message.
 */
static void xnic_rx_pop(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;

	xnic_rx_msg(rx, rx->rmsn)->active = false;
	rx->rmsn++;
	qp->rq.kidx++;
}

/* Complete, in order, the messages whose PSNs are all below epsn. */
static void xnic_rx_complete(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;

	for (;;) {
		struct xnic_rx_msg *m = xnic_rx_msg(rx, rx->rmsn);

		if (!m->active || !m->end_seen ||
		    !xnic_psn_before(m->end_psn, rx->win.epsn))
			break;
		/*
		 * The RQ entry is given back before its CQE is written: a
		 * receive posted again as soon as its completion is seen
		 * finds room (the WQE's copy in @m serves the CQE).
		 */
		xnic_rx_pop(qp);
		xnic_ring_release(&qp->rq);
		xnic_rx_cqe(qp, m, &m->wqe, XNIC_WC_SUCCESS);
	}
}

/**
 * xnic_rx_fatal() - NAK a PSN and move the QP to the error state
 * @qp: the QP
 * @syndrome: XNIC_NAK_* sent
 * @psn: the PSN NAKed
 *
 * Context: tp lock held.
 */
void xnic_rx_fatal(struct xnic_qp *qp, u8 syndrome, u32 psn)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;

	ibdev_dbg(&qp->xdev->ibdev, "QP %u: NAK %u at PSN %u\n",
		  xnic_qpn(qp), syndrome, psn);
	rx->err_pending = false;
	rx->fatal = true;
	rx->err_syndrome = syndrome;
	rx->err_psn = psn;
	rx->nak_sent = jiffies;
	xnic_rx_send_ack(qp, syndrome, psn);
	xnic_qp_to_error(qp, XNIC_QP_ERR_RESPONDER);
	__xnic_tp_qp_flush(qp);
}

/**
 * xnic_rx_error() - record a responder error, reported in PSN order
 * @rx: the responder
 * @psn: the PSN in error
 * @syndrome: XNIC_NAK_* to send
 * @status: XNIC_WC_* the receive WQE of @msn completes with; 0: none
 * @msn: the message
 *
 * The NAK goes out once every PSN before @psn arrived; of two errors the
 * earlier PSN wins.
 *
 * Context: tp lock held.
 * Return: -EPROTO.
 */
int xnic_rx_error(struct xnic_rx *rx, u32 psn, u8 syndrome, u8 status,
		  u32 msn)
{
	if (!rx->err_pending || xnic_psn_before(psn, rx->err_psn)) {
		rx->err_pending = true;
		rx->err_psn = psn;
		rx->err_syndrome = syndrome;
		rx->err_status = status;
		rx->err_msn = msn;
	}
	return -EPROTO;
}

/* Report the held-back error now that every PSN before it arrived. */
static void xnic_rx_fire(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_rx_msg *m = xnic_rx_msg(rx, rx->rmsn);

	if (rx->err_status && rx->err_msn == rx->rmsn && m->active) {
		xnic_rx_pop(qp);
		xnic_ring_release(&qp->rq);
		xnic_rx_cqe(qp, m, &m->wqe, rx->err_status);
	}
	xnic_rx_fatal(qp, rx->err_syndrome, rx->err_psn);
}

/* Validate a receive WQE for message @m. Return 0 or an XNIC_WC_*. */
static u8 xnic_rx_validate(struct xnic_qp *qp, struct xnic_rx_msg *m)
{
	struct xnic_mr *mr;
	int k, status;
	u64 cap = 0;

	if (m->wqe.num_sge > XNIC_MAX_RECV_SGE)
		return XNIC_WC_LOC_QP_OP_ERR;
	/* WRITE with immediate consumes the WQE but not its buffers. */
	if (m->imm_op)
		return 0;
	for (k = 0; k < m->wqe.num_sge; k++) {
		const struct xnic_sge *sge = &m->wqe.sge[k];

		cap += sge->length;
		if (!sge->length)
			continue;
		mr = xnic_mr_get(qp->xdev, sge->lkey, qp->pd,
				 IB_ACCESS_LOCAL_WRITE, sge->addr, sge->length,
				 &status);
		if (!mr)
			return status;
		xnic_mr_put(mr);
	}
	return m->msg_len > cap ? XNIC_WC_LOC_LEN_ERR : 0;
}

/*
 * The receive WQE of the message a frame belongs to, copied out of the
 * RQ on its first frame. Return: 0; -EAGAIN when there is none yet (RNR);
 * -EPROTO after recording an error; -EIO when the QP failed.
 */
static int xnic_rx_msg_get(struct xnic_qp *qp, const struct xnic_wire_info *i,
			   bool imm_op, struct xnic_rx_msg **mp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	bool has_imm = i->flags & XNIC_WF_IMM;
	struct xnic_ring *rq = &qp->rq;
	struct xnic_rx_msg *m;
	u32 d = i->msn - rx->rmsn, prod;

	if (xnic_psn_before(i->msn, rx->rmsn))
		return xnic_rx_error(rx, i->psn, XNIC_NAK_INV_REQ, 0, 0);
	if (d >= rx->nr_msg)
		return -EAGAIN;
	m = xnic_rx_msg(rx, i->msn);
	if (!m->active) {
		prod = xnic_ring_producer(rq);
		if (prod - rq->kidx > rq->nr) {
			ibdev_dbg(&qp->xdev->ibdev,
				  "QP %u: RQ producer %u, consumer %u: error\n",
				  xnic_qpn(qp), prod, rq->kidx);
			xnic_qp_to_error(qp, XNIC_QP_ERR_LOCAL);
			__xnic_tp_qp_flush(qp);
			return -EIO;
		}
		if (d >= prod - rq->kidx)
			return -EAGAIN;
		memcpy(&m->wqe, rq->entries + ((rq->kidx + d) & (rq->nr - 1)) *
		       rq->elem_size, sizeof(m->wqe));
		m->active = true;
		m->end_seen = false;
		m->imm_op = imm_op;
		m->has_imm = has_imm;
		m->imm = i->imm;
		m->solicited = i->flags & XNIC_WF_SOLICITED;
		m->msg_len = i->msg_len;
		m->status = xnic_rx_validate(qp, m);
	}
	if (m->status)
		return xnic_rx_error(rx, i->psn,
				     m->status == XNIC_WC_LOC_LEN_ERR ?
				     XNIC_NAK_INV_REQ : XNIC_NAK_REM_OP,
				     m->status, i->msn);
	if (m->imm_op != imm_op || m->has_imm != has_imm ||
	    m->msg_len != i->msg_len)
		return xnic_rx_error(rx, i->psn, XNIC_NAK_INV_REQ, 0, 0);
	*mp = m;
	return 0;
}

static bool xnic_rx_last(const struct xnic_wire_info *i)
{
	return i->offset + i->payload_len == i->msg_len;
}

static int xnic_rx_write(struct xnic_qp *qp, const struct xnic_wire_info *i,
			 struct sk_buff *skb)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_rx_msg *m = NULL;
	struct xnic_mr *mr;
	int err, status;

	if (i->flags & XNIC_WF_IMM) {
		err = xnic_rx_msg_get(qp, i, true, &m);
		if (err)
			return err;
	}
	/* The whole message must fit: nothing is written when it does not. */
	if (i->payload_len) {
		mr = xnic_mr_get(qp->xdev, i->rkey, qp->pd,
				 IB_ACCESS_REMOTE_WRITE, i->raddr, i->msg_len,
				 &status);
		if (!mr)
			return xnic_rx_error(rx, i->psn, XNIC_NAK_REM_ACCESS,
					     0, 0);
		err = xnic_mr_copy_from_skb(mr, i->raddr + i->offset, skb,
					    XNIC_WIRE_HDR_LEN, i->payload_len);
		xnic_mr_put(mr);
		if (err)
			return xnic_rx_error(rx, i->psn, XNIC_NAK_REM_ACCESS,
					     0, 0);
	}
	if (m && xnic_rx_last(i)) {
		m->end_seen = true;
		m->end_psn = i->psn;
	}
	return 0;
}

static int xnic_rx_send(struct xnic_qp *qp, const struct xnic_wire_info *i,
			struct sk_buff *skb)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_rx_msg *m;
	u8 status;
	int err;

	err = xnic_rx_msg_get(qp, i, false, &m);
	if (err)
		return err;
	if (i->payload_len) {
		/* The payload goes into the receive WQE's buffers. */
		status = xnic_mr_scatter_skb(qp->xdev, qp->pd, m->wqe.sge,
					     m->wqe.num_sge, i->offset, skb,
					     XNIC_WIRE_HDR_LEN, i->payload_len);
		if (status)
			return xnic_rx_error(rx, i->psn, XNIC_NAK_REM_OP,
					     status, i->msn);
	}
	if (xnic_rx_last(i)) {
		m->end_seen = true;
		m->end_psn = i->psn;
	}
	return 0;
}

/* Move epsn, run READs, complete messages, report a held-back error. */
static void xnic_rx_progress(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;

	if (xnic_psn_win_advance(&rx->win) && !xnic_rx_reads_inline(qp))
		return;
	xnic_rx_complete(qp);
	if (rx->err_pending && rx->win.epsn == rx->err_psn)
		xnic_rx_fire(qp);
}

/* Handle a WRITE, SEND or READ_REQ frame for a QP in RTR or RTS. */
static void xnic_rx_request(struct xnic_qp *qp, const struct xnic_wire_info *i,
			    struct sk_buff *skb)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	int err, access;

	switch (xnic_psn_win_classify(&rx->win, i->psn)) {
	case XNIC_PSN_AHEAD:
		xnic_cnt_inc(qp->xdev, XNIC_CNT_OUT_OF_WINDOW);
		xnic_credit_rx_drop(qp);
		if (rx->seq_nak_epsn != rx->win.epsn) {
			rx->seq_nak_epsn = rx->win.epsn;
			xnic_rx_send_ack(qp, XNIC_NAK_PSN_SEQ, rx->win.epsn);
		}
		return;
	case XNIC_PSN_DUP:
		xnic_cnt_inc(qp->xdev, XNIC_CNT_DUPLICATES);
		/*
		 * A WRITE or SEND that arrives twice was resent while it was
		 * on its way: say so at once (D-SACK, RFC 2883), the
		 * requester learns that its resend was spurious.
		 */
		if (i->opcode != XNIC_OP_READ_REQ) {
			xnic_rx_ack_frame(qp, XNIC_NAK_NONE, i->psn,
					  XNIC_WF_DSACK);
			return;
		}
		xnic_rx_read_dup(qp, i, skb);
		if ((i->flags & (XNIC_WF_ACKREQ | XNIC_WF_RETX)) ||
		    ++rx->unacked >= XNIC_RX_ACK_EVERY)
			xnic_rx_send_ack(qp, XNIC_NAK_NONE, 0);
		return;
	case XNIC_PSN_NEW:
		break;
	}
	/* Nothing at or after a held-back error is accepted. */
	if (rx->err_pending && !xnic_psn_before(i->psn, rx->err_psn))
		return;
	xnic_credit_rx_data(qp, i->psn, rx->win.epsn);

	access = READ_ONCE(qp->qp_access);
	switch (i->opcode) {
	case XNIC_OP_WRITE:
		if (!(access & IB_ACCESS_REMOTE_WRITE))
			err = xnic_rx_error(rx, i->psn, XNIC_NAK_INV_REQ, 0, 0);
		else
			err = xnic_rx_write(qp, i, skb);
		break;
	case XNIC_OP_SEND:
		err = xnic_rx_send(qp, i, skb);
		break;
	default:
		if (!(access & IB_ACCESS_REMOTE_READ))
			err = xnic_rx_error(rx, i->psn, XNIC_NAK_INV_REQ, 0, 0);
		else
			err = xnic_rx_read_req(qp, i, skb);
		break;
	}
	if (err == -EIO)
		return;
	if (err == -EAGAIN) {
		/* No receive WQE: one RNR NAK per jiffy is enough. */
		if (time_after(jiffies, rx->nak_sent)) {
			rx->nak_sent = jiffies;
			xnic_rx_send_ack(qp, XNIC_NAK_RNR, i->psn);
		}
		return;
	}
	if (!err) {
		xnic_psn_win_set(&rx->win, i->psn);
		rx->unacked++;
	}
	xnic_rx_progress(qp);
	if (rx->fatal)
		return;
	if (err)
		return;
	if ((i->flags & XNIC_WF_ACKREQ) || rx->unacked >= XNIC_RX_ACK_EVERY) {
		xnic_rx_send_ack(qp, XNIC_NAK_NONE, 0);
	} else if (!rx->ack_due) {
		rx->ack_due = true;
		rx->ack_at = jiffies + XNIC_RX_ACK_DELAY;
		xnic_tp_arm(xnic_tp(qp), rx->ack_at);
	}
}

/**
 * xnic_rx_timer() - send the responder's delayed ACK when it is due
 * @qp: the QP
 *
 * Context: the QP's timer (softirq), tp lock held.
 */
void xnic_rx_timer(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	enum ib_qp_state state;

	if (!rx->ack_due)
		return;
	if (time_before(jiffies, rx->ack_at)) {
		xnic_tp_arm(xnic_tp(qp), rx->ack_at);
		return;
	}
	state = xnic_qp_state(qp);
	if (rx->started && !rx->fatal &&
	    (state == IB_QPS_RTR || state == IB_QPS_RTS))
		xnic_rx_send_ack(qp, XNIC_NAK_NONE, 0);
	rx->ack_due = false;
}

static void xnic_rx_start(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	u32 psn;

	spin_lock_bh(&qp->state_lock);
	rx->remote_node = qp->remote_node;
	rx->dest_qpn = qp->dest_qpn;
	psn = qp->rq_psn;
	rx->rnr_timer = qp->min_rnr_timer;
	spin_unlock_bh(&qp->state_lock);

	xnic_psn_win_init(&rx->win, psn);
	rx->rmsn = 0;
	rx->unacked = 0;
	rx->ack_due = false;
	rx->err_pending = false;
	rx->fatal = false;
	rx->seq_nak_epsn = psn - 1;
	rx->nak_sent = jiffies - 1;
	rx->started = true;
}

/**
 * xnic_tp_qp_rx_epsn() - the PSN a QP's responder expects next
 * @qp: the QP, referenced by the caller
 *
 * Context: process context or softirq; takes the tp lock.
 * Return: the expected PSN: every PSN before it was received. The RTR's
 * first PSN when no frame has arrived or the transport state is gone.
 */
u32 xnic_tp_qp_rx_epsn(struct xnic_qp *qp)
{
	struct xnic_tp_qp *tp = xnic_tp_lock(qp);
	u32 epsn;

	if (tp && tp->rx.started) {
		epsn = tp->rx.win.epsn;
	} else {
		spin_lock_bh(&qp->state_lock);
		epsn = qp->rq_psn;
		spin_unlock_bh(&qp->state_lock);
	}
	if (tp)
		xnic_tp_unlock(tp);
	return epsn;
}

/* Handle a frame addressed to an existing QP. */
static void xnic_rx_dispatch(struct xnic_qp *qp, const struct xnic_wire_info *i,
			     struct sk_buff *skb)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_wire_ack ack;
	enum ib_qp_state state;
	bool ours;

	switch (i->opcode) {
	case XNIC_OP_READ_RESP:
		xnic_tx_read_resp_rx(qp, i, skb);
		return;
	case XNIC_OP_ACK:
	case XNIC_OP_NAK:
		if (skb_copy_bits(skb, XNIC_WIRE_HDR_LEN, &ack, sizeof(ack))) {
			xnic_cnt_inc(qp->xdev, XNIC_CNT_MALFORMED);
			return;
		}
		xnic_tx_ack_rx(qp, i, &ack);
		return;
	case XNIC_OP_CREDIT:
		xnic_credit_rx_frame(qp, i);
		return;
	}

	state = xnic_qp_state(qp);
	ours = rx->started && i->src_node == rx->remote_node &&
	       i->src_qpn == rx->dest_qpn;
	if (state == IB_QPS_ERR && rx->fatal && ours) {
		/* The NAK may have been lost: repeat it, once per jiffy. */
		if (time_after(jiffies, rx->nak_sent)) {
			rx->nak_sent = jiffies;
			xnic_rx_send_ack(qp, rx->err_syndrome, rx->err_psn);
		}
		return;
	}
	if (state != IB_QPS_RTR && state != IB_QPS_RTS) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_BAD_QP_STATE);
		return;
	}
	if (!rx->started) {
		xnic_rx_start(qp);
		ours = i->src_node == rx->remote_node &&
		       i->src_qpn == rx->dest_qpn;
	}
	if (!ours) {
		xnic_cnt_inc(qp->xdev, XNIC_CNT_BAD_QP_STATE);
		return;
	}
	xnic_rx_request(qp, i, skb);
}

static struct xnic_uint_param rx_engine_min = {
	.val = 1024, .min = 0, .max = U16_MAX,
};
module_param_cb(rx_engine_min, &xnic_uint_param_ops, &rx_engine_min, 0644);
MODULE_PARM_DESC(rx_engine_min,
		 "Payload bytes from which a received WRITE, SEND or READ response frame is checked and placed by the device's engine thread rather than in the packet handler; 0: never (default 1024)");

/*
 * Whether the engine takes @i's frame: bulk data. The packet handler runs
 * on the CPU that sent the frame (veth, or a NIC's one receive queue for
 * a protocol it cannot hash), so checking and placing bulk data there
 * serialises a stream's sender and receiver on one CPU; the engine thread
 * of the receiving device is a CPU of its own, as a NIC's receive engine
 * is. Small frames (ACKs, latency-bound messages) stay in the handler:
 * no thread wakeup in their round trip. A small frame may thus overtake
 * bulk frames of its QP queued for the engine: the responder takes PSNs
 * in any order, as it does from sprayed links.
 */
static bool xnic_rx_to_engine(const struct xnic_wire_info *i)
{
	u32 min = READ_ONCE(rx_engine_min.val);

	return min && i->payload_len >= min &&
	       (i->opcode == XNIC_OP_WRITE || i->opcode == XNIC_OP_SEND ||
		i->opcode == XNIC_OP_READ_RESP);
}

static struct xnic_uint_param rx_spin_us = {
	.val = 10, .min = 0, .max = 1000,
};
module_param_cb(rx_spin_us, &xnic_uint_param_ops, &rx_spin_us, 0644);
MODULE_PARM_DESC(rx_spin_us,
		 "Microseconds the packet handler waits for a QP's lock that another CPU holds before it leaves the frame to the device's engine thread, 0 to 1000; 0: at once (default 10)");

/*
 * The checks and the dispatch of a frame whose header passed
 * xnic_wire_check(), in softirq or with bottom halves off. @in_engine:
 * called by the engine thread for bulk data, else by the packet handler.
 * skb->dev may be gone in the engine: it is only compared with member
 * links' netdevs.
 */
static void xnic_rx_frame(struct xnic_dev *xdev, struct sk_buff *skb,
			  const struct xnic_wire_hdr *hdr,
			  const struct xnic_wire_info *i, bool in_engine)
{
	struct xnic_tp_qp *tp;
	struct xnic_qp *qp;

	if (!in_engine && xnic_rx_to_engine(i)) {
		xnic_engine_rx(xdev, skb);
		return;
	}
	if (!xnic_frame_check_ok(skb, hdr)) {
		xnic_cnt_inc(xdev, XNIC_CNT_CRC_ERRORS);
		xnic_bond_crc_error(xdev, skb);
		goto drop;
	}
	if (i->opcode == XNIC_OP_HELLO) {
		/* The engine learns peers (the peer table's lock). */
		xnic_engine_rx(xdev, skb);
		return;
	}
	if (!xnic_peer_check_src(xdev, i->src_node, skb)) {
		xnic_cnt_inc(xdev, XNIC_CNT_FORGED);
		goto drop;
	}
	if (i->opcode == XNIC_OP_HEARTBEAT) {
		xnic_bond_hb_rx(xdev, skb, i);
		consume_skb(skb);
		return;
	}
	if (i->opcode == XNIC_OP_CM) {
		xnic_cm_rx(xdev, i, skb);
		consume_skb(skb);
		return;
	}
	if (i->opcode == XNIC_OP_CREDIT && (i->flags & XNIC_WF_LINK)) {
		xnic_lcr_rx_frame(xdev, skb, i);
		consume_skb(skb);
		return;
	}
	qp = xnic_qp_get(xdev, i->dst_qpn);
	if (!qp) {
		xnic_cnt_inc(xdev, XNIC_CNT_UNKNOWN_QPN);
		xnic_lcr_rx_count(xdev, skb, i);
		goto drop;
	}
	if (in_engine) {
		tp = xnic_tp_lock(qp);
	} else {
		bool busy;

		/*
		 * Another CPU holds the QP's lock: a short holder is waited
		 * out; a sender sealing a burst (veth: an ACK our own engine's
		 * transmission raised) leaves the frame to the engine.
		 */
		tp = xnic_tp_lock_within(qp, READ_ONCE(rx_spin_us.val) *
					 NSEC_PER_USEC, &busy);
		if (busy) {
			xnic_qp_put(qp);
			xnic_engine_rx(xdev, skb);
			return;
		}
	}
	if (tp) {
		tp->ack_hold = true;	/* xnic_tp_send_ack() */
		xnic_rx_dispatch(qp, i, skb);
		xnic_tp_unlock(tp);
	} else {
		xnic_cnt_inc(xdev, XNIC_CNT_BAD_QP_STATE);
	}
	xnic_qp_put(qp);
	/*
	 * Taken off the link: its link credit goes back (link_credit.c),
	 * once the frame is placed, so that a completion does not wait for
	 * the count (or for the update it may send).
	 */
	xnic_lcr_rx_count(xdev, skb, i);
	consume_skb(skb);
	return;
drop:
	kfree_skb(skb);
}

/* The frame's header, decoded and checked; false (counted) if bad. */
static bool xnic_rx_header(struct xnic_dev *xdev, struct sk_buff *skb,
			   struct xnic_wire_hdr *hdr, struct xnic_wire_info *i)
{
	enum xnic_wire_verdict verdict;

	if (skb_copy_bits(skb, 0, hdr, sizeof(*hdr))) {
		xnic_cnt_inc(xdev, XNIC_CNT_MALFORMED);
		return false;
	}
	xnic_wire_decode(i, hdr);
	verdict = xnic_wire_check(i, skb->len, xdev->node_id);
	if (verdict) {
		xnic_cnt_inc(xdev, verdict == XNIC_WIRE_NOT_FOR_US ?
			     XNIC_CNT_MISDIRECTED : XNIC_CNT_MALFORMED);
		ibdev_dbg_ratelimited(&xdev->ibdev,
				      "dropped frame from node %u: verdict %d\n",
				      i->src_node, verdict);
		return false;
	}
	return true;
}

/**
 * xnic_tp_rx() - handle one received frame
 * @xdev: the device
 * @skb: the frame, data at the xnic header (the Ethernet header before
 *	it); consumed
 *
 * Drops and counts frames that are malformed, fail the frame check, are not
 * for this node, come from a node over a path HELLO did not teach us
 * (forged), or name a QP that does not exist or is not connected to the
 * sender. HELLOs and bulk data (xnic_rx_to_engine()) go to the engine
 * thread (xnic_tp_rx_deferred()) once their header is checked, as do
 * frames whose QP's lock another CPU holds.
 *
 * Context: softirq (the member links' packet handler).
 */
void xnic_tp_rx(struct xnic_dev *xdev, struct sk_buff *skb)
{
	struct xnic_wire_hdr hdr;
	struct xnic_wire_info i;

	xnic_cnt_inc(xdev, XNIC_CNT_RX_FRAMES);
	xnic_cnt_add(xdev, XNIC_CNT_RX_BYTES, skb->len);
	if (!xnic_rx_header(xdev, skb, &hdr, &i)) {
		kfree_skb(skb);
		return;
	}
	xnic_rx_frame(xdev, skb, &hdr, &i, false);
}

/**
 * xnic_tp_rx_deferred() - handle a frame xnic_tp_rx() left to the engine
 * @xdev: the device
 * @skb: a HELLO that passed xnic_tp_rx()'s checks, a bulk data frame
 *	whose header did, or a frame whose QP's lock was busy; consumed
 *
 * A HELLO teaches the peer table. Other frames get the rest of the checks
 * and is handled with bottom halves off, as in the packet handler (the
 * transport takes its locks without _bh there).
 *
 * Context: the engine thread.
 */
void xnic_tp_rx_deferred(struct xnic_dev *xdev, struct sk_buff *skb)
{
	struct xnic_wire_hdr hdr;
	struct xnic_wire_info i;

	if (skb_copy_bits(skb, 0, &hdr, sizeof(hdr))) {
		kfree_skb(skb);
		return;
	}
	xnic_wire_decode(&i, &hdr);
	if (i.opcode == XNIC_OP_HELLO) {
		/* Checked already; the peer table's lock is not BH safe. */
		xnic_peer_hello_rx(xdev, skb, &i);
		consume_skb(skb);
		return;
	}
	local_bh_disable();
	rcu_read_lock();
	xnic_rx_frame(xdev, skb, &hdr, &i, true);
	rcu_read_unlock();
	local_bh_enable();
}

/**
 * xnic_rx_flush() - complete every posted receive WQE with a flush error
 * @qp: the QP, in the error state
 *
 * Entries beyond what a sane producer index allows are not touched. The
 * NAK state is kept so that it can be repeated to the peer.
 *
 * Context: tp lock held.
 */
void xnic_rx_flush(struct xnic_qp *qp)
{
	struct xnic_rx *rx = &xnic_tp(qp)->rx;
	struct xnic_ring *rq = &qp->rq;
	struct xnic_rq_wqe wqe;
	u32 prod, k;

	prod = xnic_ring_producer(rq);
	if (prod - rq->kidx > rq->nr)
		prod = rq->kidx;
	while (rq->kidx != prod) {
		struct xnic_rx_msg *m = xnic_rx_msg(rx, rx->rmsn);

		if (m->active)
			wqe = m->wqe;
		else
			memcpy(&wqe, rq->entries + (rq->kidx & (rq->nr - 1)) *
			       rq->elem_size, sizeof(wqe));
		xnic_rx_cqe(qp, NULL, &wqe, XNIC_WC_WR_FLUSH_ERR);
		xnic_rx_pop(qp);
	}
	xnic_ring_release(rq);
	for (k = 0; k < rx->nr_msg; k++)
		rx->msgs[k].active = false;
	for (k = 0; k < XNIC_RX_MAX_READS; k++)
		rx->reads[k].used = false;
	rx->err_pending = false;
}
