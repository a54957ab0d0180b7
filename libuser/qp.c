// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - queue pairs: creation and its two mapped rings, the state
 * transitions through EX_MODIFY_QP (the only modify command that carries
 * driver data), destruction, and the engine wakeup of rule D1.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "priv.h"

#define XNIC_DEFAULT_WR		128

#define XNIC_QP_RD_ATOMIC_VAL	16	/* outstanding RDMA READs */
/* The attributes xnic_qp_set_attr() takes. */
#define XNIC_QP_ATTR_REL	(XNIC_QP_ATTR_TIMEOUT | XNIC_QP_ATTR_RETRY_CNT | \
				 XNIC_QP_ATTR_RNR_RETRY |			 \
				 XNIC_QP_ATTR_MIN_RNR_TIMER)

/* Values of @a's reliability attributes in range? */
static bool xnic_qp_attr_ok(const struct xnic_qp_attr *a)
{
	return !((a->comp_mask & XNIC_QP_ATTR_TIMEOUT) && a->timeout > 31) &&
	       !((a->comp_mask & XNIC_QP_ATTR_RETRY_CNT) && a->retry_cnt > 7) &&
	       !((a->comp_mask & XNIC_QP_ATTR_RNR_RETRY) && a->rnr_retry > 7) &&
	       !((a->comp_mask & XNIC_QP_ATTR_MIN_RNR_TIMER) &&
		 a->min_rnr_timer > 31);
}

static void xnic_qp_attr_keep(struct xnic_qp *qp, const struct xnic_qp_attr *a)
{
	if (a->comp_mask & XNIC_QP_ATTR_TIMEOUT)
		qp->timeout = a->timeout;
	if (a->comp_mask & XNIC_QP_ATTR_RETRY_CNT)
		qp->retry_cnt = a->retry_cnt;
	if (a->comp_mask & XNIC_QP_ATTR_RNR_RETRY)
		qp->rnr_retry = a->rnr_retry;
	if (a->comp_mask & XNIC_QP_ATTR_MIN_RNR_TIMER)
		qp->min_rnr_timer = a->min_rnr_timer;
}

static int xnic_destroy_qp_cmd(struct xnic_ctx *ctx, uint32_t handle)
{
	struct ib_uverbs_destroy_qp req = { .qp_handle = handle };
	struct ib_uverbs_destroy_qp_resp resp;

	return xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_DESTROY_QP, &req,
			sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
}

static int xnic_check_ring(uint32_t entries, uint32_t size, size_t elem)
{
	if (!entries || (entries & (entries - 1)) || entries > XNIC_MAX_QP_WR)
		return -EPROTO;
	if (size < XNIC_RING_HDR_SIZE + (size_t)entries * elem)
		return -EPROTO;
	return 0;
}

static int xnic_check_qp_resp(const struct xnic_ctx *ctx,
			      const struct xnic_create_qp_resp *r)
{
	int err;

	err = xnic_check_ring(r->sq_entries, r->sq_size,
			      sizeof(struct xnic_sq_wqe));
	if (!err)
		err = xnic_check_ring(r->rq_entries, r->rq_size,
				      sizeof(struct xnic_rq_wqe));
	if (err)
		return err;
	if (r->db_index >= XNIC_MAX_QP_PER_CTX ||
	    offsetof(struct xnic_ctx_page, db_bits) +
	    (r->db_index / 64 + 1) * sizeof(uint64_t) > ctx->page_size)
		return -EPROTO;
	return 0;
}

static void xnic_wq_init(struct xnic_wq *wq, void *map, uint32_t entries,
			 uint32_t max_sge)
{
	wq->hdr = (struct xnic_ring_hdr *)map;
	wq->wqes = (char *)map + XNIC_RING_HDR_SIZE;
	wq->entries = entries;
	wq->mask = entries - 1;
	wq->tail = __atomic_load_n(&wq->hdr->producer, __ATOMIC_RELAXED);
	wq->published = wq->tail;
	wq->head_cache = __atomic_load_n(&wq->hdr->consumer, __ATOMIC_ACQUIRE);
	wq->max_sge = max_sge;
}

/* Zero in a field means its default (what a NULL cap gets). */
static int xnic_fill_cap(const struct xnic_ctx *ctx, struct xnic_qp_cap *cap)
{
	const struct xnic_ctx_attr *a = &ctx->attr;

	if (!cap->max_send_wr)
		cap->max_send_wr = XNIC_DEFAULT_WR;
	if (!cap->max_recv_wr)
		cap->max_recv_wr = XNIC_DEFAULT_WR;
	if (!cap->max_send_sge)
		cap->max_send_sge = a->max_sge;
	if (!cap->max_recv_sge)
		cap->max_recv_sge = a->max_recv_sge;
	if (!cap->max_inline_data)
		cap->max_inline_data = a->max_inline;
	if (cap->max_send_wr > a->max_qp_wr ||
	    cap->max_recv_wr > a->max_qp_wr ||
	    cap->max_send_sge > a->max_sge ||
	    cap->max_recv_sge > a->max_recv_sge ||
	    cap->max_inline_data > a->max_inline)
		return -EINVAL;
	return 0;
}

int xnic_create_qp(struct xnic_pd *pd, struct xnic_cq *send_cq,
		   struct xnic_cq *recv_cq, struct xnic_qp_cap *cap,
		   struct xnic_qp **qpp)
{
	return xnic_create_qp_ex(pd, send_cq, recv_cq, cap, NULL, qpp);
}

int xnic_create_qp_ex(struct xnic_pd *pd, struct xnic_cq *send_cq,
		      struct xnic_cq *recv_cq, struct xnic_qp_cap *cap,
		      const struct xnic_qp_attr *attr, struct xnic_qp **qpp)
{
	struct xnic_ctx *ctx = pd->ctx;
	struct xnic_qp_cap def = { 0 };	/* every default */
	struct ib_uverbs_create_qp req = { 0 };
	struct ib_uverbs_create_qp_resp resp;
	struct xnic_create_qp_req drv_in = { 0 };
	struct xnic_create_qp_resp drv;
	struct xnic_qp *qp;
	__u64 *bits;
	int err;

	if (!cap)
		cap = &def;
	if (send_cq->ctx != ctx || recv_cq->ctx != ctx)
		return -EINVAL;
	if (attr) {
		if ((attr->comp_mask & ~(XNIC_QP_ATTR_TCLASS |
					 XNIC_QP_ATTR_REL)) ||
		    !xnic_qp_attr_ok(attr))
			return -EINVAL;
		if (attr->comp_mask & XNIC_QP_ATTR_TCLASS) {
			if (attr->tclass > XNIC_TCLASS_BULK)
				return -EINVAL;
			drv_in.comp_mask |= XNIC_CREATE_QP_REQ_TCLASS;
			drv_in.tclass = attr->tclass;
		}
	}
	err = xnic_fill_cap(ctx, cap);
	if (err)
		return err;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;

	req.user_handle = (uintptr_t)qp;
	req.pd_handle = pd->handle;
	req.send_cq_handle = send_cq->handle;
	req.recv_cq_handle = recv_cq->handle;
	req.max_send_wr = cap->max_send_wr;
	req.max_recv_wr = cap->max_recv_wr;
	req.max_send_sge = cap->max_send_sge;
	req.max_recv_sge = cap->max_recv_sge;
	req.max_inline_data = cap->max_inline_data;
	req.sq_sig_all = 0;
	req.qp_type = IB_UVERBS_QPT_RC;
	memset(&drv, 0, sizeof(drv));
	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_CREATE_QP, &req, sizeof(req),
		       &drv_in, sizeof(drv_in), &resp, sizeof(resp), &drv,
		       sizeof(drv));
	if (err) {
		free(qp);
		return err;
	}
	qp->handle = resp.qp_handle;
	err = xnic_check_qp_resp(ctx, &drv);
	if (err)
		goto err_destroy;
	qp->sq_map_size = drv.sq_size;
	qp->sq_map = xnic_map(ctx->fd, drv.sq_key, qp->sq_map_size, &err);
	if (!qp->sq_map)
		goto err_destroy;
	qp->rq_map_size = drv.rq_size;
	qp->rq_map = xnic_map(ctx->fd, drv.rq_key, qp->rq_map_size, &err);
	if (!qp->rq_map)
		goto err_unmap;

	qp->qpn = resp.qpn;
	xnic_wq_init(&qp->sq, qp->sq_map, drv.sq_entries,
		     resp.max_send_sge < XNIC_MAX_SGE ? resp.max_send_sge :
							XNIC_MAX_SGE);
	xnic_wq_init(&qp->rq, qp->rq_map, drv.rq_entries,
		     resp.max_recv_sge < XNIC_MAX_RECV_SGE ?
		     resp.max_recv_sge : XNIC_MAX_RECV_SGE);
	qp->max_inline = resp.max_inline_data < XNIC_MAX_INLINE ?
			 resp.max_inline_data : XNIC_MAX_INLINE;
	bits = ctx->page->db_bits;
	qp->db_index = drv.db_index;
	qp->db_word = &bits[drv.db_index / 64];
	qp->db_bit = 1ULL << (drv.db_index % 64);
	qp->db_summary = &ctx->page->db_summary;
	qp->db_summary_bit = 1ULL << (drv.db_index / 64);
	qp->engine_flags = &ctx->page->engine_flags;
	qp->ctx = ctx;
	qp->pd = pd;
	qp->send_cq = send_cq;
	qp->recv_cq = recv_cq;
	qp->scq_flags = &send_cq->hdr->flags;
	qp->rcq_flags = &recv_cq->hdr->flags;
	qp->state = XNIC_QPS_RESET;
	qp->timeout = XNIC_QP_DEF_TIMEOUT;
	qp->retry_cnt = XNIC_QP_DEF_RETRY_CNT;
	qp->rnr_retry = XNIC_QP_DEF_RNR_RETRY;
	qp->min_rnr_timer = XNIC_QP_DEF_MIN_RNR_TIMER;
	if (attr)
		xnic_qp_attr_keep(qp, attr);

	cap->max_send_wr = drv.sq_entries;
	cap->max_recv_wr = drv.rq_entries;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_recv_sge = qp->rq.max_sge;
	cap->max_inline_data = qp->max_inline;

	pthread_mutex_lock(&ctx->lock);
	XNIC_LIST_ADD(ctx->qps, qp);
	pd->users++;
	send_cq->users++;
	recv_cq->users++;
	pthread_mutex_unlock(&ctx->lock);
	*qpp = qp;
	return 0;

err_unmap:
	munmap(qp->sq_map, qp->sq_map_size);
err_destroy:
	xnic_destroy_qp_cmd(ctx, qp->handle);
	free(qp);
	return err;
}

int xnic_destroy_qp(struct xnic_qp *qp)
{
	struct xnic_ctx *ctx = qp->ctx;
	int err;

	err = xnic_destroy_qp_cmd(ctx, qp->handle);
	if (err)
		return err;
	pthread_mutex_lock(&ctx->lock);
	XNIC_LIST_DEL(ctx->qps, qp);
	qp->pd->users--;
	qp->send_cq->users--;
	qp->recv_cq->users--;
	pthread_mutex_unlock(&ctx->lock);
	munmap(qp->sq_map, qp->sq_map_size);
	munmap(qp->rq_map, qp->rq_map_size);
	free(qp);
	return 0;
}

static int xnic_modify(struct xnic_qp *qp, struct ib_uverbs_ex_modify_qp *req,
		       const struct xnic_modify_qp_req *drv)
{
	struct ib_uverbs_ex_modify_qp_resp resp;
	int err;

	req->base.qp_handle = qp->handle;
	err = xnic_cmd_ex(qp->ctx->fd, IB_USER_VERBS_EX_CMD_MODIFY_QP, req,
			  sizeof(*req), drv, drv ? sizeof(*drv) : 0, &resp,
			  sizeof(resp), NULL, 0);
	if (!err)
		qp->state = req->base.qp_state;
	return err;
}

/* enum ib_mtu of a byte count (256 .. 4096; smaller rounds to 256) */
static uint8_t xnic_ib_mtu(uint32_t bytes)
{
	uint8_t e = 5;

	while (e > 1 && bytes < (128U << e))
		e--;
	return e;
}

int xnic_connect_qp(struct xnic_qp *qp, uint32_t remote_node,
		    uint32_t remote_qpn, uint32_t local_psn,
		    uint32_t remote_psn)
{
	struct xnic_modify_qp_req drv = { 0 };
	struct ib_uverbs_ex_modify_qp req;
	int err;

	if (qp->state != XNIC_QPS_RESET)
		return -EINVAL;

	memset(&req, 0, sizeof(req));
	req.base.attr_mask = XNIC_QP_STATE | XNIC_QP_PKEY_INDEX |
			     XNIC_QP_PORT | XNIC_QP_ACCESS_FLAGS;
	req.base.qp_state = XNIC_QPS_INIT;
	req.base.pkey_index = 0;
	req.base.port_num = XNIC_PORT_NUM;
	req.base.qp_access_flags = XNIC_ACCESS_LOCAL_WRITE |
				   XNIC_ACCESS_REMOTE_WRITE |
				   XNIC_ACCESS_REMOTE_READ;
	err = xnic_modify(qp, &req, NULL);
	if (err)
		return err;

	memset(&req, 0, sizeof(req));
	req.base.attr_mask = XNIC_QP_STATE | XNIC_QP_AV | XNIC_QP_PATH_MTU |
			     XNIC_QP_DEST_QPN | XNIC_QP_RQ_PSN |
			     XNIC_QP_MAX_DEST_RD_ATOMIC |
			     XNIC_QP_MIN_RNR_TIMER;
	req.base.qp_state = XNIC_QPS_RTR;
	req.base.dest.port_num = XNIC_PORT_NUM;
	req.base.path_mtu = xnic_ib_mtu(qp->ctx->attr.active_mtu);
	req.base.dest_qp_num = remote_qpn;
	req.base.rq_psn = remote_psn & XNIC_PSN_MASK;
	req.base.max_dest_rd_atomic = XNIC_QP_RD_ATOMIC_VAL;
	req.base.min_rnr_timer = qp->min_rnr_timer;
	drv.remote_node = remote_node;
	err = xnic_modify(qp, &req, &drv);
	if (err)
		return err;

	memset(&req, 0, sizeof(req));
	req.base.attr_mask = XNIC_QP_STATE | XNIC_QP_TIMEOUT |
			     XNIC_QP_RETRY_CNT | XNIC_QP_RNR_RETRY |
			     XNIC_QP_SQ_PSN | XNIC_QP_MAX_QP_RD_ATOMIC;
	req.base.qp_state = XNIC_QPS_RTS;
	req.base.timeout = qp->timeout;
	req.base.retry_cnt = qp->retry_cnt;
	req.base.rnr_retry = qp->rnr_retry;
	req.base.sq_psn = local_psn & XNIC_PSN_MASK;
	req.base.max_rd_atomic = XNIC_QP_RD_ATOMIC_VAL;
	return xnic_modify(qp, &req, NULL);
}

int xnic_modify_qp_err(struct xnic_qp *qp)
{
	struct ib_uverbs_ex_modify_qp req;

	memset(&req, 0, sizeof(req));
	req.base.attr_mask = XNIC_QP_STATE;
	req.base.qp_state = XNIC_QPS_ERR;
	return xnic_modify(qp, &req, NULL);
}

int xnic_qp_set_attr(struct xnic_qp *qp, const struct xnic_qp_attr *a)
{
	struct ib_uverbs_ex_modify_qp req;
	int err;

	if (a->comp_mask & ~(XNIC_QP_ATTR_TCLASS | XNIC_QP_ATTR_REL))
		return -EOPNOTSUPP;
	if ((a->comp_mask & XNIC_QP_ATTR_TCLASS) || !xnic_qp_attr_ok(a))
		return -EINVAL;
	if (qp->state == XNIC_QPS_RTR || qp->state == XNIC_QPS_RTS) {
		if (a->comp_mask & ~XNIC_QP_ATTR_MIN_RNR_TIMER)
			return -EINVAL;
		if (!a->comp_mask)
			return 0;
		memset(&req, 0, sizeof(req));
		req.base.attr_mask = XNIC_QP_STATE | XNIC_QP_MIN_RNR_TIMER;
		req.base.qp_state = XNIC_QPS_RTS;
		req.base.min_rnr_timer = a->min_rnr_timer;
		if (qp->state != XNIC_QPS_RTS)
			return -EINVAL;
		err = xnic_modify(qp, &req, NULL);
		if (err)
			return err;
	} else if (qp->state != XNIC_QPS_RESET &&
		   qp->state != XNIC_QPS_INIT) {
		return -EINVAL;
	}
	xnic_qp_attr_keep(qp, a);
	return 0;
}

int xnic_query_qp(struct xnic_qp *qp, struct xnic_qp_info *info)
{
	struct ib_uverbs_query_qp req = { 0 };
	struct ib_uverbs_query_qp_resp resp;
	int err;

	req.qp_handle = qp->handle;
	req.attr_mask = ~0U;
	memset(&resp, 0, sizeof(resp));
	err = xnic_cmd(qp->ctx->fd, IB_USER_VERBS_CMD_QUERY_QP, &req,
		       sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
	if (err)
		return err;
	memset(info, 0, sizeof(*info));
	info->state = resp.qp_state;
	info->dest_qpn = resp.dest_qp_num;
	info->err_reason = resp.qp_state == XNIC_QPS_ERR ?
			   xnic_qp_err_reason(qp) : XNIC_QP_ERR_NONE;
	info->attr.comp_mask = XNIC_QP_ATTR_REL;
	info->attr.timeout = resp.timeout;
	info->attr.retry_cnt = resp.retry_cnt;
	info->attr.rnr_retry = resp.rnr_retry;
	info->attr.min_rnr_timer = resp.min_rnr_timer;
	return 0;
}

uint32_t xnic_qp_err_reason(const struct xnic_qp *qp)
{
	/* The kernel writes the reason before the flag (smp_wmb()). */
	if (!(__atomic_load_n(&qp->sq.hdr->flags, __ATOMIC_ACQUIRE) &
	      XNIC_RING_F_ERROR))
		return XNIC_QP_ERR_NONE;
	return __atomic_load_n(&qp->sq.hdr->err_reason, __ATOMIC_RELAXED);
}

int xnic_qp_wakeup(struct xnic_qp *qp)
{
	struct ib_uverbs_post_send req = { 0 };
	struct ib_uverbs_post_send_resp resp;

	if (qp->ctx->db_fd >= 0) {
		qp->wakeups++;
		if (ioctl(qp->ctx->db_fd, XNIC_DB_RING, qp->db_index))
			return -errno;
		return 0;
	}
	/* Zero work requests; the core still checks wqe_size. */
	req.qp_handle = qp->handle;
	req.wr_count = 0;
	req.sge_count = 0;
	req.wqe_size = sizeof(struct ib_uverbs_send_wr);
	qp->wakeups++;
	return xnic_cmd(qp->ctx->fd, IB_USER_VERBS_CMD_POST_SEND, &req,
			sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
}
