// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - contexts: opening a device (GET_CONTEXT, the doorbell page),
 * port queries, asynchronous events, and closing everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "priv.h"

static int xnic_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* Does the kernel's description of the ABI match what we were built for? */
static int xnic_check_ucontext(const struct xnic_alloc_ucontext_resp *r)
{
	if (r->sq_wqe_size != sizeof(struct xnic_sq_wqe) ||
	    r->rq_wqe_size != sizeof(struct xnic_rq_wqe) ||
	    r->cqe_size != sizeof(struct xnic_cqe))
		return -EPROTO;
	if (r->ctx_page_size < sizeof(struct xnic_ctx_page) ||
	    r->ctx_page_size > (1U << 20))
		return -EPROTO;
	if (!r->max_sge || r->max_sge > XNIC_MAX_SGE ||
	    r->max_recv_sge > XNIC_MAX_RECV_SGE ||
	    r->max_inline > XNIC_MAX_INLINE)
		return -EPROTO;
	return 0;
}

/* GET_CONTEXT, asking for the doorbell file (XNIC_UCTX_REQ_DB_FD) or not. */
static int xnic_get_context_cmd(struct xnic_ctx *ctx, bool db_fd,
				struct ib_uverbs_get_context_resp *resp,
				struct xnic_alloc_ucontext_resp *drv)
{
	struct xnic_alloc_ucontext_req dreq = {
		.comp_mask = db_fd ? XNIC_UCTX_REQ_DB_FD : 0,
	};
	struct ib_uverbs_get_context req = { 0 };

	memset(drv, 0, sizeof(*drv));
	return xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_GET_CONTEXT, &req,
			sizeof(req), &dreq, sizeof(dreq), resp, sizeof(*resp),
			drv, sizeof(*drv));
}

static int xnic_get_context(struct xnic_ctx *ctx)
{
	const char *db = getenv("XNIC_DB_SYSCALL");
	bool want_db = !db || strcmp(db, "uverbs");
	struct ib_uverbs_get_context_resp resp;
	struct xnic_alloc_ucontext_resp drv;
	int err;

	err = xnic_get_context_cmd(ctx, want_db, &resp, &drv);
	/*
	 * A module without the doorbell file refuses the request (EINVAL);
	 * a process out of descriptors gets none (EMFILE): the context
	 * then wakes the engine with POST_SEND.
	 */
	if (want_db && (err == -EINVAL || err == -EMFILE))
		err = xnic_get_context_cmd(ctx, false, &resp, &drv);
	if (err)
		return err;
	/* From here on the kernel context exists: close(fd) frees it. */
	ctx->async_fd = (int)resp.async_fd;
	/* Ours to close whatever follows; else the uverbs POST_SEND (D1). */
	if ((drv.caps & XNIC_CAP_DB_FD) && drv.db_fd >= 0)
		ctx->db_fd = drv.db_fd;
	err = xnic_check_ucontext(&drv);
	if (err)
		return err;
	err = xnic_set_nonblock(ctx->async_fd);
	if (err)
		return err;

	ctx->page_size = drv.ctx_page_size;
	ctx->page = xnic_map(ctx->fd, drv.ctx_page_key, ctx->page_size, &err);
	if (!ctx->page)
		return err;

	ctx->attr.node_id = drv.node_id;
	ctx->attr.payload_mtu = drv.payload_mtu;
	ctx->attr.max_sge = drv.max_sge;
	ctx->attr.max_recv_sge = drv.max_recv_sge;
	ctx->attr.max_inline = drv.max_inline;
	ctx->attr.max_qp_wr = XNIC_MAX_QP_WR;
	/* The device's max_cqe (QUERY_DEVICE) is the same constant. */
	ctx->attr.max_cqe = XNIC_MAX_CQE;
	ctx->attr.num_comp_vectors = resp.num_comp_vectors;
	ctx->caps = drv.caps;
	return 0;
}

int xnic_query_port(struct xnic_ctx *ctx, struct xnic_port_attr *attr)
{
	struct ib_uverbs_query_port req = { 0 };
	struct ib_uverbs_query_port_resp resp;
	int err;

	req.port_num = XNIC_PORT_NUM;
	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_QUERY_PORT, &req,
		       sizeof(req), NULL, 0, &resp, sizeof(resp), NULL, 0);
	if (err)
		return err;
	attr->state = resp.state;
	attr->phys_state = resp.phys_state;
	attr->active_mtu = xnic_mtu_bytes(resp.active_mtu);
	attr->max_mtu = xnic_mtu_bytes(resp.max_mtu);
	attr->max_msg_size = resp.max_msg_sz;
	return 0;
}

int xnic_open(const char *name, struct xnic_ctx **ctxp)
{
	struct xnic_port_attr port;
	struct xnic_ctx *ctx;
	int err;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->fd = -1;
	ctx->async_fd = -1;
	ctx->db_fd = -1;
	err = pthread_mutex_init(&ctx->lock, NULL);
	if (err) {
		free(ctx);
		return -err;
	}

	err = xnic_device_lookup(name, &ctx->dev);
	if (err)
		goto err_free;
	if (ctx->dev.abi_version != XNIC_UVERBS_ABI_VERSION) {
		err = -EPROTO;
		goto err_free;
	}
	ctx->fd = open(ctx->dev.uverbs, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0) {
		err = -errno;
		goto err_free;
	}
	err = xnic_get_context(ctx);
	if (err)
		goto err_free;
	err = xnic_query_port(ctx, &port);
	if (err)
		goto err_free;
	ctx->attr.port_state = port.state;
	ctx->attr.active_mtu = port.active_mtu;
	ctx->attr.max_msg_size = port.max_msg_size;
	*ctxp = ctx;
	return 0;

err_free:
	xnic_close(ctx);
	return err;
}

void xnic_close(struct xnic_ctx *ctx)
{
	struct xnic_mr *mr;
	struct xnic_pd *pd;
	struct xnic_cq *cq;
	struct xnic_qp *qp;

	if (!ctx)
		return;
	/* The kernel destroys every object when the uverbs file closes. */
	while ((qp = ctx->qps)) {
		ctx->qps = qp->next;
		munmap(qp->sq_map, qp->sq_map_size);
		munmap(qp->rq_map, qp->rq_map_size);
		free(qp);
	}
	while ((cq = ctx->cqs)) {
		ctx->cqs = cq->next;
		munmap(cq->map, cq->map_size);
		if (cq->channel_fd >= 0)
			close(cq->channel_fd);
		free(cq);
	}
	while ((mr = ctx->mrs)) {
		ctx->mrs = mr->next;
		free(mr);
	}
	while ((pd = ctx->pds)) {
		ctx->pds = pd->next;
		free(pd);
	}
	if (ctx->page)
		munmap(ctx->page, ctx->page_size);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
	if (ctx->fd >= 0)
		close(ctx->fd);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

const struct xnic_ctx_attr *xnic_ctx_info(const struct xnic_ctx *ctx)
{
	return &ctx->attr;
}

int xnic_async_fd(const struct xnic_ctx *ctx)
{
	return ctx->async_fd;
}

int xnic_get_async_event(struct xnic_ctx *ctx, struct xnic_async_event *ev)
{
	struct ib_uverbs_async_event_desc desc;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	ssize_t n;

	do {
		n = read(ctx->async_fd, &desc, sizeof(desc));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != sizeof(desc))
		return -EIO;

	memset(ev, 0, sizeof(*ev));
	ev->type = desc.event_type;
	switch (desc.event_type) {
	case XNIC_EVENT_CQ_ERR:
		/* element is the user_handle we gave: the object's address */
		pthread_mutex_lock(&ctx->lock);
		for (cq = ctx->cqs; cq; cq = cq->next)
			if ((uintptr_t)cq == desc.element)
				ev->cq = cq;
		pthread_mutex_unlock(&ctx->lock);
		break;
	case XNIC_EVENT_DEVICE_FATAL:
		break;
	case XNIC_EVENT_PORT_ACTIVE:
	case XNIC_EVENT_PORT_ERR:
	case 11 ... 13:	/* LID, PKEY, SM change */
	case 17 ... 18:	/* client reregister, GID change */
		ev->port = (uint32_t)desc.element;
		break;
	default:
		pthread_mutex_lock(&ctx->lock);
		for (qp = ctx->qps; qp; qp = qp->next)
			if ((uintptr_t)qp == desc.element)
				ev->qp = qp;
		pthread_mutex_unlock(&ctx->lock);
		break;
	}
	return 0;
}
