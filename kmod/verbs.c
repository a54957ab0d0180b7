// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the verbs of the datapath: the ib_device_ops table, user contexts
 * (the shared doorbell page), mmap, protection domains and the doorbell
 * wakeup syscall. MRs, CQs and QPs live in mr.c, cq.c and qp.c.
 *
 * xnic serves user QPs only: every object comes through ib_uverbs with
 * udata, and the device is not a kernel verbs provider (no poll_cq or
 * get_dma_mr), so kernel ULPs never see it.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "xnic.h"
#include "verbs.h"
#include "engine.h"
#include "wire.h"

/**
 * xnic_dev_payload_mtu() - payload bytes per frame on every member link
 * @xdev: the device
 *
 * Context: any; reads the member links under RCU.
 * Return: the smallest payload MTU of the member links, bytes; 0 when the
 * device has no member link (it is going away).
 */
u32 xnic_dev_payload_mtu(struct xnic_dev *xdev)
{
	struct xnic_link *link;
	u32 mtu = U32_MAX;

	rcu_read_lock();
	list_for_each_entry_rcu(link, &xdev->links, list)
		mtu = min_t(u32, mtu,
			    xnic_wire_payload_mtu(READ_ONCE(link->ndev->mtu)));
	rcu_read_unlock();
	return mtu == U32_MAX ? 0 : mtu;
}

/* Input we do not know must be zero (uapi/xnic-abi.h, versioning). */
static bool xnic_udata_in_clear(struct ib_udata *udata, size_t known)
{
	if (udata->inlen <= known)
		return true;
	return ib_is_udata_cleared(udata, known, udata->inlen - known);
}

/**
 * xnic_udata_read() - copy a command's optional driver input
 * @udata: the command's udata
 * @req: the input struct, zeroed by the caller (a shorter input leaves
 *	its tail zero)
 * @size: sizeof(*@req)
 *
 * A longer input than @size must end in zeros (uapi/xnic-abi.h,
 * versioning).
 *
 * Context: process context.
 * Return: 0, -EFAULT when the input cannot be read, -EINVAL for a non-zero
 * unknown tail.
 */
int xnic_udata_read(struct ib_udata *udata, void *req, size_t size)
{
	int err;

	err = ib_copy_from_udata(req, udata, min(udata->inlen, size));
	if (err)
		return err;
	return xnic_udata_in_clear(udata, size) ? 0 : -EINVAL;
}

static int xnic_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	struct xnic_dev *xdev = to_xdev(ibuc->device);
	struct xnic_ucontext *uctx = to_xuctx(ibuc);
	struct xnic_alloc_ucontext_resp resp = { .db_fd = -1 };
	struct xnic_alloc_ucontext_req req = {};
	struct rdma_user_mmap_entry *entry;
	struct xnic_ctx_page *page;
	u64 key;
	u32 mtu;
	int err;

	BUILD_BUG_ON(sizeof(struct xnic_ctx_page) > PAGE_SIZE);

	err = xnic_udata_read(udata, &req, sizeof(req));
	if (err)
		return err;
	if ((req.comp_mask & ~XNIC_UCTX_REQ_DB_FD) || req.reserved)
		return -EINVAL;
	mtu = xnic_dev_payload_mtu(xdev);
	if (!mtu)
		return -ENODEV;

	page = xnic_vmalloc_user(PAGE_SIZE);
	if (!page)
		return -ENOMEM;
	/*
	 * Start with NEED_WAKEUP set: the engine may be asleep, and it only
	 * clears the flag of contexts it knows once it is awake again.
	 */
	page->engine_flags = XNIC_ENGINE_NEED_WAKEUP;

	entry = xnic_mmap_insert(ibuc, page, PAGE_SIZE, &key);
	if (IS_ERR(entry)) {
		vfree(page);
		return PTR_ERR(entry);
	}
	uctx->page = page;
	uctx->page_mmap = entry;
	xa_init_flags(&uctx->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	INIT_LIST_HEAD(&uctx->engine_node);
	uctx->db_file = NULL;
	if (req.comp_mask & XNIC_UCTX_REQ_DB_FD) {
		/* A descriptor the caller cannot learn would leak. */
		err = -EINVAL;
		if (udata->outlen < offsetofend(typeof(resp), db_fd))
			goto err_entry;
		err = xnic_db_open(uctx);
		if (err < 0)
			goto err_entry;
		resp.db_fd = err;
	}

	resp.ctx_page_key = key;
	resp.ctx_page_size = PAGE_SIZE;
	resp.node_id = xdev->node_id;
	resp.payload_mtu = mtu;
	resp.max_sge = XNIC_MAX_SGE;
	resp.max_recv_sge = XNIC_MAX_RECV_SGE;
	resp.max_inline = XNIC_MAX_INLINE;
	resp.sq_wqe_size = sizeof(struct xnic_sq_wqe);
	resp.rq_wqe_size = sizeof(struct xnic_rq_wqe);
	resp.cqe_size = sizeof(struct xnic_cqe);
	resp.caps = XNIC_CAP_MR_WATCH | (uctx->db_file ? XNIC_CAP_DB_FD : 0);
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		goto err_db;

	xnic_engine_add_context(xdev, uctx);
	/* Last: ib_core fails nothing after alloc_ucontext succeeded. */
	if (uctx->db_file)
		xnic_db_publish(uctx);
	return 0;

err_db:
	if (uctx->db_file)
		xnic_db_abort(uctx);
err_entry:
	/* The entry owns the page now and frees it. */
	rdma_user_mmap_entry_remove(entry);
	return err;
}

static void xnic_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct xnic_ucontext *uctx = to_xuctx(ibuc);

	/* Returns once the engine no longer reads or writes the page. */
	xnic_engine_del_context(to_xdev(ibuc->device), uctx);
	/* ib_core destroyed every QP of the context before calling us. */
	WARN_ON(!xa_empty(&uctx->qps));
	xnic_db_close(uctx);
	xa_destroy(&uctx->qps);
	rdma_user_mmap_entry_remove(uctx->page_mmap);
	uctx->page = NULL;
}

/*
 * The device is going away with the process still holding its file: ib_core
 * has already destroyed every object of the context and will call
 * dealloc_ucontext next. Our mappings are vmalloc pages, not device memory,
 * so there is nothing to zap: pages the process still maps stay valid (and
 * meaningless) until it unmaps them. Having this op at all is what lets
 * `rdma link delete` proceed without waiting for the process.
 */
static void xnic_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int xnic_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct xnic_mmap_entry *entry;
	int err;

	/* Checks MAP_SHARED and that the size is exactly the entry's. */
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry) {
		ibdev_dbg(ibuc->device, "mmap: no entry at %#lx, %#lx bytes\n",
			  vma->vm_pgoff, vma->vm_end - vma->vm_start);
		return -EINVAL;
	}
	entry = container_of(rdma_entry, struct xnic_mmap_entry, rdma_entry);
	err = remap_vmalloc_range(vma, entry->address, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

static int xnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	if (udata && !xnic_udata_in_clear(udata, 0))
		return -EINVAL;
	return 0;
}

static int xnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

/*
 * The doorbell wakeup syscall (uapi/xnic-abi.h rule D1): a POST_SEND with
 * zero work requests. Work itself is only ever posted through the SQ ring;
 * the syscall sends what the QP's SQ holds inline (bounded) and wakes the
 * engine only for what is left (engine.c).
 */
static int xnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	xnic_engine_post_send(to_xdev(ibqp->device), to_xqp(ibqp));
	return 0;
}

/* User RQs are posted through the RQ ring only. */
static int xnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return 0;
}

const struct ib_device_ops xnic_verbs_ops = {
	.alloc_ucontext = xnic_alloc_ucontext,
	.dealloc_ucontext = xnic_dealloc_ucontext,
	.disassociate_ucontext = xnic_disassociate_ucontext,
	.mmap = xnic_mmap,
	.mmap_free = xnic_mmap_free,

	.alloc_pd = xnic_alloc_pd,
	.dealloc_pd = xnic_dealloc_pd,

	.reg_user_mr = xnic_reg_user_mr,
	.dereg_mr = xnic_dereg_mr,

	.create_cq = xnic_create_cq,
	.destroy_cq = xnic_destroy_cq,
	.req_notify_cq = xnic_req_notify_cq,

	.create_qp = xnic_create_qp,
	.modify_qp = xnic_modify_qp,
	.query_qp = xnic_query_qp,
	.destroy_qp = xnic_destroy_qp,
	.post_send = xnic_post_send,
	.post_recv = xnic_post_recv,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, xnic_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, xnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_cq, xnic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, xnic_qp, ibqp),
};
