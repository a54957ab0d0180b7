// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - completion queues: a ring of struct xnic_cqe the kernel produces
 * and the process consumes (uapi/xnic-abi.h), with completion events for
 * ib_uverbs' completion channels.
 *
 * The consumer index is the process's and hostile: the kernel only uses it
 * to compute the free space, and a value that claims more entries in use
 * than exist counts as an overflow. An overflow puts the CQ in the error
 * state for good (IBTA 1.4 section 11.4.2.1): no CQE is written after it,
 * XNIC_RING_F_ERROR tells the process, and IB_EVENT_CQ_ERR is raised.
 * The QP whose completion could not be written fails too
 * (XNIC_QP_ERR_CQ_OVERFLOW, see xnic_qp_cq_post()), so that no QP keeps
 * working with its completions lost.
 */
#include <linux/atomic.h>
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>

#include "xnic.h"
#include "verbs.h"

/* CQ numbers, for messages only. */
static atomic_t xnic_cqn = ATOMIC_INIT(0);

/**
 * xnic_create_cq() - ib_device_ops.create_cq: make a CQ and its ring
 * @ibcq: the CQ, allocated by ib_core
 * @attr: cqe (1..XNIC_MAX_CQE, the device's max_cqe), flags (none
 *	supported)
 * @udata: driver data: no input, struct xnic_create_cq_resp output
 *
 * The ring has roundup_pow_of_two(cqe) entries (at least the request, as
 * verbs asks), all usable; ibcq.cqe reports that number.
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP for a kernel CQ or flags; -EINVAL for a bad cqe
 * or non-zero input; -ENOMEM; -EFAULT.
 */
int xnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct xnic_dev *xdev = to_xdev(ibcq->device);
	struct xnic_cq *cq = to_xcq(ibcq);
	struct xnic_create_cq_resp resp = {};
	struct xnic_ucontext *uctx;
	u32 entries;
	u64 key;
	int err;

	if (!udata)
		return -EOPNOTSUPP;
	if (attr->flags)
		return -EOPNOTSUPP;
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (attr->cqe < 1 || attr->cqe > XNIC_MAX_CQE)
		return -EINVAL;
	entries = roundup_pow_of_two(attr->cqe);

	uctx = rdma_udata_to_drv_context(udata, struct xnic_ucontext, ibuc);
	spin_lock_init(&cq->lock);
	cq->notify = 0;
	cq->error = false;
	cq->cqn = atomic_inc_return(&xnic_cqn);

	err = xnic_ring_alloc(&cq->ring, entries, sizeof(struct xnic_cqe));
	if (err)
		return err;
	err = xnic_ring_map(&cq->ring, &uctx->ibuc, &key);
	if (err)
		goto err_ring;

	resp.ring_key = key;
	resp.ring_size = cq->ring.size;
	resp.entries = entries;
	resp.cqn = cq->cqn;
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_ring;

	ibcq->cqe = entries;
	xnic_dbg(xdev, "CQ %u: %u entries\n", cq->cqn, entries);
	return 0;

err_ring:
	xnic_ring_free(&cq->ring);
	return err;
}

/**
 * xnic_destroy_cq() - ib_device_ops.destroy_cq
 * @ibcq: the CQ; ib_core has checked that no QP uses it any more, and the
 *	engine only posts CQEs through QPs it holds a reference on
 * @udata: unused
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int xnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	xnic_ring_free(&to_xcq(ibcq)->ring);
	return 0;
}

/**
 * xnic_req_notify_cq() - ib_device_ops.req_notify_cq: arm the CQ
 * @ibcq: the CQ
 * @flags: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED, maybe with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * The next CQE (or the next solicited one) calls ibcq.comp_handler once.
 * An armed IB_CQ_NEXT_COMP is not narrowed by a later IB_CQ_SOLICITED.
 *
 * Context: process context (the REQ_NOTIFY_CQ command).
 * Return: 0; 1 with IB_CQ_REPORT_MISSED_EVENTS when CQEs are waiting.
 */
int xnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct xnic_cq *cq = to_xcq(ibcq);
	struct xnic_ring *ring = &cq->ring;
	int ret = 0;

	spin_lock_bh(&cq->lock);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    ring->kidx != READ_ONCE(ring->hdr->consumer))
		ret = 1;
	spin_unlock_bh(&cq->lock);
	return ret;
}

static void xnic_cq_error_event(struct xnic_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * xnic_cq_post() - write one CQE (rule R1 of uapi/xnic-abi.h)
 * @cq: the CQ
 * @cqe: the entry, complete (reserved fields zero)
 * @solicited: the completion is solicited (wakes IB_CQ_SOLICITED waiters)
 *
 * A CQ with no free entry overflows: it enters the error state and raises
 * IB_EVENT_CQ_ERR; so does one whose consumer index claims more entries in
 * use than exist. A completion event is delivered, outside the lock, when
 * the CQ was armed for it.
 *
 * Context: process or softirq context (the engine thread); takes cq->lock.
 * Return: 0; -EOVERFLOW when this CQE overflowed the CQ; -EIO when the CQ
 * was already in the error state. The CQE is lost in both error cases.
 */
int xnic_cq_post(struct xnic_cq *cq, const struct xnic_cqe *cqe,
		 bool solicited)
{
	struct xnic_ring *ring = &cq->ring;
	struct xnic_ring_hdr *hdr = ring->hdr;
	bool notify = false;
	u32 used;

	spin_lock_bh(&cq->lock);
	if (cq->error) {
		spin_unlock_bh(&cq->lock);
		return -EIO;
	}
	/* Pairs with the consumer's store-release (R2): slots below are free. */
	used = ring->kidx - smp_load_acquire(&hdr->consumer);
	if (used >= ring->nr) {
		cq->error = true;
		WRITE_ONCE(hdr->flags, READ_ONCE(hdr->flags) | XNIC_RING_F_ERROR);
		spin_unlock_bh(&cq->lock);
		xnic_warn_rl(to_xdev(cq->ibcq.device),
			     "CQ %u overflow (%u of %u in use)\n", cq->cqn,
			     used, ring->nr);
		xnic_cq_error_event(cq);
		return -EOVERFLOW;
	}
	memcpy(ring->entries + (ring->kidx & (ring->nr - 1)) * ring->elem_size,
	       cqe, sizeof(*cqe));
	/* Rule R1: the entry is visible before the new producer index. */
	smp_store_release(&hdr->producer, ++ring->kidx);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_bh(&cq->lock);

	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

/**
 * xnic_qp_cq_post() - write a CQE of a QP; a lost one fails the QP
 * @qp: the QP the completion belongs to
 * @cq: its send or receive CQ
 * @cqe: the entry, complete
 * @solicited: as for xnic_cq_post()
 *
 * When the CQ overflows, or overflowed before, the CQE is lost: @qp goes
 * to the error state with XNIC_QP_ERR_CQ_OVERFLOW (the first reason stays
 * when it is there already), so that the application learns it from the
 * QP too and posts no more work whose completions would vanish.
 *
 * Context: as xnic_cq_post(); does not sleep.
 */
void xnic_qp_cq_post(struct xnic_qp *qp, struct xnic_cq *cq,
		     const struct xnic_cqe *cqe, bool solicited)
{
	if (xnic_cq_post(cq, cqe, solicited))
		xnic_qp_to_error(qp, XNIC_QP_ERR_CQ_OVERFLOW);
}
