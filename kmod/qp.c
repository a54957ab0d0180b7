// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - reliable connected queue pairs: creation with their SQ and RQ
 * rings, the state machine (RESET -> INIT -> RTR -> RTS, any -> ERR, any ->
 * RESET), the QPN and doorbell tables, and destruction.
 *
 * Tables: xdev->qps maps QPNs (for frames from the wire), uctx->qps maps
 * doorbell slots (for the engine's doorbell scan). Both hold the same one
 * reference, the "table reference" set at creation; lookups run under the
 * xarrays' locks, so a QP found there cannot have dropped it yet. The
 * engine holds one more reference while the QP is on its lists, and one
 * per lookup in flight.
 *
 * Who changes what:
 *  - modify_qp (process context, qp->mutex): every transition;
 *  - the engine (xnic_qp_to_error()): any state -> ERR;
 *  - the engine thread, on modify_qp's request: the ring indices and the
 *    transport state when the QP goes back to RESET (xnic_qp_do_reset()).
 */
#include <linux/log2.h>
#include <linux/sched.h>
#include <rdma/uverbs_ioctl.h>

#include "xnic.h"
#include "verbs.h"
#include "engine.h"
#include "cm.h"

#define XNIC_QPN_MIN		16
#define XNIC_QPN_MAX		((1U << 24) - 1)
#define XNIC_PSN_MASK		0xffffff
#define XNIC_DB_NONE		U32_MAX
#define XNIC_WAIT_WARN		(10 * HZ)

/* Attributes modify_qp understands; ib_modify_qp_is_ok() says which apply. */
#define XNIC_QP_ATTR_MASK	(IB_QP_STATE | IB_QP_CUR_STATE |		\
				 IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX |	\
				 IB_QP_PORT | IB_QP_AV | IB_QP_PATH_MTU |	\
				 IB_QP_TIMEOUT | IB_QP_RETRY_CNT |		\
				 IB_QP_RNR_RETRY | IB_QP_RQ_PSN |		\
				 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER |	\
				 IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |	\
				 IB_QP_DEST_QPN)

#define XNIC_QP_ACCESS		(IB_ACCESS_LOCAL_WRITE |			\
				 IB_ACCESS_REMOTE_WRITE |			\
				 IB_ACCESS_REMOTE_READ |			\
				 IB_ACCESS_REMOTE_ATOMIC)

/* The QP at @index of a QP table (its lock BH), referenced; or NULL. */
static struct xnic_qp *xnic_qp_table_get(struct xarray *table,
					 unsigned long index)
{
	struct xnic_qp *qp;

	xa_lock_bh(table);
	qp = xa_load(table, index);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(table);
	return qp;
}

/**
 * xnic_qp_get() - look up a QP by QPN and take a reference
 * @xdev: device
 * @qpn: QP number (from the wire: any value)
 *
 * Context: any context but hard IRQ; takes the table's lock (BH).
 * Return: the QP, referenced (put it with xnic_qp_put()), or NULL.
 */
struct xnic_qp *xnic_qp_get(struct xnic_dev *xdev, u32 qpn)
{
	return xnic_qp_table_get(&xdev->qps, qpn);
}

/**
 * xnic_uctx_qp_get() - look up a context's QP by doorbell slot and take a
 *	reference
 * @uctx: the context
 * @slot: the QP's db_index (from userspace: any value)
 *
 * Context: any context but hard IRQ; takes the table's lock (BH).
 * Return: the QP, referenced (put it with xnic_qp_put()), or NULL.
 */
struct xnic_qp *xnic_uctx_qp_get(struct xnic_ucontext *uctx,
				 unsigned long slot)
{
	return xnic_qp_table_get(&uctx->qps, slot);
}

/**
 * xnic_qp_put() - drop a reference on a QP
 * @qp: the QP
 *
 * Context: any context but hard IRQ.
 */
void xnic_qp_put(struct xnic_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

static void xnic_ring_set_flags(struct xnic_ring *ring, u32 flags)
{
	WRITE_ONCE(ring->hdr->flags, READ_ONCE(ring->hdr->flags) | flags);
}

static void xnic_qp_set_error(struct xnic_qp *qp, bool fatal, u32 reason)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};

	spin_lock_bh(&qp->state_lock);
	if (qp->state == IB_QPS_ERR) {
		spin_unlock_bh(&qp->state_lock);
		return;
	}
	/* Readers that see ERR also see everything written before. */
	smp_store_release(&qp->state, IB_QPS_ERR);
	WRITE_ONCE(qp->sq.hdr->err_reason, reason);
	/* Userspace reads the reason after an acquire load of the flag. */
	smp_wmb();
	xnic_ring_set_flags(&qp->sq, XNIC_RING_F_ERROR);
	xnic_ring_set_flags(&qp->rq, XNIC_RING_F_ERROR);
	spin_unlock_bh(&qp->state_lock);

	if (fatal && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	/* The engine flushes the QP's WQEs in its own thread. */
	xnic_engine_activate_qp(qp->xdev, qp);
}

/**
 * xnic_qp_to_error() - move a QP to the error state on a fatal error
 * @qp: the QP, referenced by the caller
 * @reason: enum xnic_qp_err_reason, for the SQ ring header
 *
 * For errors the engine or transport detects: sets IB_QPS_ERR and
 * XNIC_RING_F_ERROR in both ring headers, raises IB_EVENT_QP_FATAL, and
 * has the engine call xnic_tp_qp_flush() in its thread. Nothing happens
 * when the QP is already in the error state (the first reason stays).
 *
 * Context: process context (the engine thread) or softirq; does not sleep.
 */
void xnic_qp_to_error(struct xnic_qp *qp, u32 reason)
{
	xnic_qp_set_error(qp, true, reason);
}

static void xnic_ring_reset(struct xnic_ring *ring)
{
	ring->kidx = 0;
	WRITE_ONCE(ring->hdr->producer, 0);
	WRITE_ONCE(ring->hdr->consumer, 0);
	WRITE_ONCE(ring->hdr->flags, 0);
	WRITE_ONCE(ring->hdr->err_reason, XNIC_QP_ERR_NONE);
}

/**
 * xnic_qp_do_reset() - return a QP's rings and transport to their start
 * @qp: the QP, in the RESET state
 *
 * Zeroes both indices and the flags of the SQ and RQ headers and the
 * kernel's own indices (the process must start its own from zero too), and
 * replaces the transport state by a fresh one: xnic_tp_qp_release() then
 * xnic_tp_qp_init(). When that fails, tp_ready stays false and the QP
 * cannot leave RESET until a later modify_qp retries.
 *
 * Context: the engine thread, on xnic_engine_reset_qp()'s request; may
 * sleep.
 */
void xnic_qp_do_reset(struct xnic_qp *qp)
{
	xnic_ring_reset(&qp->sq);
	xnic_ring_reset(&qp->rq);
	if (qp->tp_ready)
		xnic_tp_qp_release(qp);
	WRITE_ONCE(qp->tp_ready, !xnic_tp_qp_init(qp));
}

static int xnic_qp_check_caps(const struct ib_qp_cap *cap, u32 *sq_nr,
			      u32 *rq_nr)
{
	if (cap->max_send_wr > XNIC_MAX_QP_WR ||
	    cap->max_recv_wr > XNIC_MAX_QP_WR ||
	    cap->max_send_sge > XNIC_MAX_SGE ||
	    cap->max_recv_sge > XNIC_MAX_RECV_SGE ||
	    cap->max_inline_data > XNIC_MAX_INLINE)
		return -EINVAL;
	*sq_nr = roundup_pow_of_two(max(cap->max_send_wr, 1U));
	*rq_nr = roundup_pow_of_two(max(cap->max_recv_wr, 1U));
	return 0;
}

static void xnic_qp_fill_caps(const struct xnic_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.nr;
	cap->max_recv_wr = qp->rq.nr;
	cap->max_send_sge = XNIC_MAX_SGE;
	cap->max_recv_sge = XNIC_MAX_RECV_SGE;
	cap->max_inline_data = XNIC_MAX_INLINE;
}

/*
 * Undo create_qp at any point, or destroy: unpublish, make the engine let
 * go of the QP, wait for every other reference, then free.
 */
static void xnic_qp_teardown(struct xnic_qp *qp)
{
	struct xnic_dev *xdev = qp->xdev;

	if (qp->db_index != XNIC_DB_NONE)
		xa_erase_bh(&qp->uctx->qps, qp->db_index);
	if (qp->ibqp.qp_num)
		xa_erase_bh(&xdev->qps, qp->ibqp.qp_num);

	xnic_engine_detach_qp(xdev, qp);
	xnic_qp_put(qp);
	while (!wait_for_completion_timeout(&qp->released, XNIC_WAIT_WARN))
		ibdev_warn(&xdev->ibdev, "QP %u: still in use by the engine\n",
			   qp->ibqp.qp_num);
	/*
	 * Out of the table (no CM connection can be tied to it any more)
	 * and done with by the engine: what the QP sent, ACKs of the peer's
	 * last messages included, is on the wire before the DREQ.
	 */
	xnic_cm_qp_disconnect(qp);

	if (qp->tp_ready)
		xnic_tp_qp_release(qp);
	xnic_ring_free(&qp->rq);
	xnic_ring_free(&qp->sq);
	mutex_destroy(&qp->mutex);
}

static int xnic_qp_read_req(struct ib_udata *udata, u8 *tclass)
{
	struct xnic_create_qp_req req = {};
	int err;

	*tclass = XNIC_TCLASS_LATENCY;
	err = xnic_udata_read(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask & ~XNIC_CREATE_QP_REQ_TCLASS)
		return -EOPNOTSUPP;
	if (req.reserved)
		return -EINVAL;
	if (!(req.comp_mask & XNIC_CREATE_QP_REQ_TCLASS) && req.tclass)
		return -EINVAL;
	if (req.tclass >= XNIC_NR_TCLASSES)
		return -EINVAL;
	*tclass = req.tclass;
	return 0;
}

/**
 * xnic_create_qp() - ib_device_ops.create_qp: an RC QP with its rings
 * @ibqp: the QP, allocated by ib_core
 * @init_attr: type (IB_QPT_RC only), CQs and capabilities; the real
 *	capabilities are written back into @init_attr->cap
 * @udata: driver data: optional struct xnic_create_qp_req input, struct
 *	xnic_create_qp_resp output
 *
 * The QP starts in RESET, in the traffic class the request names (class
 * 0 without one). Ring sizes are the requested work requests
 * rounded up to powers of two (at least 1, at most XNIC_MAX_QP_WR).
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for a kernel QP, another QP type, an SRQ, create
 * flags or unknown request bits; -EINVAL for capabilities over the limits,
 * a traffic class that does not exist or non-zero reserved input;
 * -ENOMEM, also when the context has XNIC_MAX_QP_PER_CTX QPs or the device
 * is out of QPNs; -EFAULT.
 */
int xnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init_attr,
		   struct ib_udata *udata)
{
	struct xnic_dev *xdev = to_xdev(ibqp->device);
	struct xnic_qp *qp = to_xqp(ibqp);
	struct xnic_create_qp_resp resp = {};
	u32 sq_nr, rq_nr, qpn;
	u8 tclass;
	int err;

	if (!udata || init_attr->qp_type != IB_QPT_RC)
		return -EOPNOTSUPP;
	if (init_attr->srq || init_attr->create_flags ||
	    init_attr->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (!init_attr->send_cq || !init_attr->recv_cq)
		return -EINVAL;
	err = xnic_qp_check_caps(&init_attr->cap, &sq_nr, &rq_nr);
	if (err)
		return err;
	err = xnic_qp_read_req(udata, &tclass);
	if (err)
		return err;
	qp->tclass = tclass;

	qp->xdev = xdev;
	qp->uctx = rdma_udata_to_drv_context(udata, struct xnic_ucontext,
					     ibuc);
	qp->pd = to_xpd(ibqp->pd);
	qp->scq = to_xcq(init_attr->send_cq);
	qp->rcq = to_xcq(init_attr->recv_cq);
	qp->db_index = XNIC_DB_NONE;
	qp->ibqp.qp_num = 0;
	mutex_init(&qp->mutex);
	spin_lock_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->owner_uid = current_euid();
	qp->sq_sig_all = init_attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->path_mtu = xnic_dev_payload_mtu(xdev);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	INIT_LIST_HEAD(&qp->engine_node);

	err = xnic_ring_alloc(&qp->sq, sq_nr, sizeof(struct xnic_sq_wqe));
	if (err)
		goto err_teardown;
	err = xnic_ring_alloc(&qp->rq, rq_nr, sizeof(struct xnic_rq_wqe));
	if (err)
		goto err_teardown;
	err = xnic_tp_qp_init(qp);
	if (err)
		goto err_teardown;
	qp->tp_ready = true;
	err = xnic_ring_map(&qp->sq, &qp->uctx->ibuc, &resp.sq_key);
	if (err)
		goto err_teardown;
	err = xnic_ring_map(&qp->rq, &qp->uctx->ibuc, &resp.rq_key);
	if (err)
		goto err_teardown;

	/* Reserve both slots; publish the QP only once it is complete. */
	err = xa_alloc_bh(&qp->uctx->qps, &qp->db_index, NULL,
			  XA_LIMIT(0, XNIC_MAX_QP_PER_CTX - 1), GFP_KERNEL);
	if (err) {
		qp->db_index = XNIC_DB_NONE;
		goto err_nomem;
	}
	err = xa_alloc_cyclic_bh(&xdev->qps, &qpn, NULL,
				 XA_LIMIT(XNIC_QPN_MIN, XNIC_QPN_MAX),
				 &xdev->qpn_next, GFP_KERNEL);
	if (err < 0)
		goto err_nomem;
	qp->ibqp.qp_num = qpn;

	resp.sq_size = qp->sq.size;
	resp.rq_size = qp->rq.size;
	resp.sq_entries = qp->sq.nr;
	resp.rq_entries = qp->rq.nr;
	resp.db_index = qp->db_index;
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_teardown;

	err = xa_err(xa_store_bh(&qp->uctx->qps, qp->db_index, qp,
				 GFP_KERNEL));
	if (!err)
		err = xa_err(xa_store_bh(&xdev->qps, qpn, qp, GFP_KERNEL));
	if (err)
		goto err_teardown;

	xnic_qp_fill_caps(qp, &init_attr->cap);
	xnic_dbg(xdev, "QP %u: db %u, SQ %u, RQ %u entries\n", qpn,
		 qp->db_index, qp->sq.nr, qp->rq.nr);
	return 0;

err_nomem:
	err = -ENOMEM;
err_teardown:
	xnic_qp_teardown(qp);
	return err;
}

/**
 * xnic_destroy_qp() - ib_device_ops.destroy_qp
 * @ibqp: the QP
 * @udata: unused
 *
 * Returns once neither the engine nor the transport references the QP;
 * ib_core frees it right after. WQEs still outstanding get no completion.
 * The peer of a CM connection tied to the QP gets a DREQ
 * (xnic_cm_qp_disconnect()); this also happens when a process dies, as
 * closing its uverbs file destroys its QPs.
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int xnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	xnic_qp_teardown(to_xqp(ibqp));
	return 0;
}

struct xnic_qp_mod {
	u32 path_mtu;
	u16 remote_node;
};

/* Check every attribute value before changing anything. */
static int xnic_qp_check_attr(struct xnic_qp *qp, const struct ib_qp_attr *attr,
			      int mask, struct ib_udata *udata,
			      struct xnic_qp_mod *mod)
{
	struct xnic_modify_qp_req req = {};
	bool have_node = false;
	int err, mtu;

	if (mask & ~XNIC_QP_ATTR_MASK)
		return -EOPNOTSUPP;

	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&req, udata,
					 min(udata->inlen, sizeof(req)));
		if (err)
			return err;
		if (req.comp_mask)
			return -EOPNOTSUPP;
		if (req.reserved)
			return -EINVAL;
		if (udata->inlen > sizeof(req) &&
		    !ib_is_udata_cleared(udata, sizeof(req),
					 udata->inlen - sizeof(req)))
			return -EINVAL;
		have_node = udata->inlen >=
			    offsetofend(struct xnic_modify_qp_req, remote_node);
	}

	if ((mask & IB_QP_PORT) && attr->port_num != XNIC_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~XNIC_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if (mask & IB_QP_DEST_QPN) {
		/* Connecting: the peer's node comes in the driver data. */
		if (attr->dest_qp_num > XNIC_QPN_MAX || !have_node ||
		    req.remote_node > U16_MAX)
			return -EINVAL;
		mod->remote_node = req.remote_node;
	}
	if (mask & IB_QP_PATH_MTU) {
		mtu = ib_mtu_enum_to_int(attr->path_mtu);
		if (mtu <= 0)
			return -EINVAL;
		mod->path_mtu = xnic_dev_payload_mtu(qp->xdev);
		if (!mod->path_mtu)
			return -ENODEV;
		/*
		 * IB_MTU_4096 is the largest path MTU enum ib_mtu can name; it
		 * means the whole payload MTU of the member links (8936 bytes
		 * on MTU 9000). A smaller value caps it.
		 */
		if (attr->path_mtu != IB_MTU_4096)
			mod->path_mtu = min_t(u32, mod->path_mtu, mtu);
	}
	return 0;
}

/* Caller holds qp->state_lock; values were checked. */
static void xnic_qp_apply_attr(struct xnic_qp *qp, const struct ib_qp_attr *attr,
			       int mask, const struct xnic_qp_mod *mod)
{
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->qp_access = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = mod->path_mtu;
	if (mask & IB_QP_DEST_QPN) {
		qp->dest_qpn = attr->dest_qp_num;
		qp->remote_node = mod->remote_node;
	}
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & XNIC_PSN_MASK;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & XNIC_PSN_MASK;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
}

/**
 * xnic_modify_qp() - ib_device_ops.modify_qp: the QP state machine
 * @ibqp: the QP
 * @attr: attributes
 * @mask: IB_QP_* attributes given; ib_modify_qp_is_ok() decides which a
 *	transition requires and allows (IBTA 1.4 section 10.3.1)
 * @udata: driver data: struct xnic_modify_qp_req (EX_MODIFY_QP only);
 *	required with IB_QP_DEST_QPN
 *
 * RTR records the peer (remote_node, dest_qpn), rq_psn and the path MTU:
 * the smallest member link's payload MTU, capped at the path_mtu given
 * unless that is IB_MTU_4096 (the largest IB can express, which thus
 * stands for "all the link carries"); RTS records sq_psn.
 * ERR has the engine flush the WQEs (no IB_EVENT_QP_FATAL: the user asked
 * for it). RESET waits until the engine has zeroed the rings' indices and
 * renewed the transport state. ERR and RESET both disconnect the CM
 * connection tied to the QP, if any (a DREQ to the peer).
 *
 * Context: process context, may sleep.
 * Return: 0; -EINVAL for a transition or attribute IBTA forbids, a bad
 * value, or a connection without remote_node; -EOPNOTSUPP for attributes
 * or request bits we do not support; -ENODEV when the device has no member
 * link; -ENOMEM when the transport state could not be set up again; -EFAULT.
 */
int xnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct xnic_qp *qp = to_xqp(ibqp);
	enum ib_qp_state cur, new;
	struct xnic_qp_mod mod = {};
	int err;

	err = xnic_qp_check_attr(qp, attr, mask, udata, &mod);
	if (err)
		return err;

	mutex_lock(&qp->mutex);
	new = (mask & IB_QP_STATE) ? attr->qp_state : IB_QPS_RESET;
	if (!READ_ONCE(qp->tp_ready) && (mask & IB_QP_STATE) &&
	    new != IB_QPS_RESET &&
	    new != IB_QPS_ERR) {
		/* An earlier reset could not renew the transport: retry. */
		xnic_engine_reset_qp(qp->xdev, qp);
		if (!READ_ONCE(qp->tp_ready)) {
			err = -ENOMEM;
			goto out;
		}
	}

	spin_lock_bh(&qp->state_lock);
	cur = qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) ||
	    !ib_modify_qp_is_ok(cur, new, IB_QPT_RC, mask)) {
		spin_unlock_bh(&qp->state_lock);
		err = -EINVAL;
		goto out;
	}

	if (new == IB_QPS_ERR) {
		spin_unlock_bh(&qp->state_lock);
		/* A CM connection's peer is told (DREQ). */
		xnic_cm_qp_disconnect(qp);
		xnic_qp_set_error(qp, false, XNIC_QP_ERR_USER);
	} else if (new == IB_QPS_RESET) {
		/* The engine reads the state with smp_load_acquire(). */
		smp_store_release(&qp->state, IB_QPS_RESET);
		spin_unlock_bh(&qp->state_lock);
		xnic_cm_qp_disconnect(qp);
		if (cur != IB_QPS_RESET)
			xnic_engine_reset_qp(qp->xdev, qp);
	} else {
		xnic_qp_apply_attr(qp, attr, mask, &mod);
		/* Publishes the fields above to smp_load_acquire() readers. */
		smp_store_release(&qp->state, new);
		spin_unlock_bh(&qp->state_lock);
	}
	xnic_dbg(qp->xdev, "QP %u: %d -> %d (mask %#x)\n", qp->ibqp.qp_num,
		 cur, new, mask);
out:
	mutex_unlock(&qp->mutex);
	return err;
}

/**
 * xnic_query_qp() - ib_device_ops.query_qp
 * @ibqp: the QP
 * @attr: filled with the current attributes
 * @mask: ignored: everything is filled
 * @init_attr: filled with the creation attributes
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int xnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init_attr)
{
	struct xnic_qp *qp = to_xqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));

	mutex_lock(&qp->mutex);
	/* Pairs with the store-release of every transition. */
	attr->qp_state = smp_load_acquire(&qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = ib_mtu_int_to_enum(qp->path_mtu);
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qp_access_flags = qp->qp_access;
	attr->rq_psn = qp->rq_psn;
	attr->sq_psn = qp->sq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->port_num = XNIC_PORT;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	xnic_qp_fill_caps(qp, &attr->cap);
	mutex_unlock(&qp->mutex);

	init_attr->qp_type = IB_QPT_RC;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
						  IB_SIGNAL_REQ_WR;
	init_attr->cap = attr->cap;
	return 0;
}
