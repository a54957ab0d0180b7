// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libxnic - protection domains and memory regions. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

#define XNIC_ACCESS_ALL	(XNIC_ACCESS_LOCAL_WRITE | XNIC_ACCESS_REMOTE_WRITE | \
			 XNIC_ACCESS_REMOTE_READ)

int xnic_alloc_pd(struct xnic_ctx *ctx, struct xnic_pd **pdp)
{
	struct ib_uverbs_alloc_pd req = { 0 };
	struct ib_uverbs_alloc_pd_resp resp;
	struct xnic_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req),
		       NULL, 0, &resp, sizeof(resp), NULL, 0);
	if (err) {
		free(pd);
		return err;
	}
	pd->ctx = ctx;
	pd->handle = resp.pd_handle;
	pthread_mutex_lock(&ctx->lock);
	XNIC_LIST_ADD(ctx->pds, pd);
	pthread_mutex_unlock(&ctx->lock);
	*pdp = pd;
	return 0;
}

int xnic_dealloc_pd(struct xnic_pd *pd)
{
	struct xnic_ctx *ctx = pd->ctx;
	struct ib_uverbs_dealloc_pd req = { .pd_handle = pd->handle };
	int err;

	pthread_mutex_lock(&ctx->lock);
	if (pd->users) {
		pthread_mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_DEALLOC_PD, &req,
		       sizeof(req), NULL, 0, NULL, 0, NULL, 0);
	if (!err)
		XNIC_LIST_DEL(ctx->pds, pd);
	pthread_mutex_unlock(&ctx->lock);
	if (!err)
		free(pd);
	return err;
}

/* REG_MR with driver input @drv (NULL: none) of @drv_len bytes. */
static int xnic_reg_mr_drv(struct xnic_pd *pd, void *addr, size_t length,
			   unsigned int access, const void *drv,
			   size_t drv_len, struct xnic_mr **mrp)
{
	struct xnic_ctx *ctx = pd->ctx;
	struct ib_uverbs_reg_mr req = { 0 };
	struct ib_uverbs_reg_mr_resp resp;
	struct xnic_mr *mr;
	int err;

	if (!length || (access & ~XNIC_ACCESS_ALL) ||
	    ((access & XNIC_ACCESS_REMOTE_WRITE) &&
	     !(access & XNIC_ACCESS_LOCAL_WRITE)) ||
	    (uintptr_t)addr + length < (uintptr_t)addr)
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;

	/* hca_va == start: same offset in the page, as the core requires. */
	req.start = (uintptr_t)addr;
	req.length = length;
	req.hca_va = (uintptr_t)addr;
	req.pd_handle = pd->handle;
	req.access_flags = access;
	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_REG_MR, &req, sizeof(req),
		       drv, drv_len, &resp, sizeof(resp), NULL, 0);
	if (err) {
		free(mr);
		return err;
	}
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->pd = pd;
	mr->handle = resp.mr_handle;
	pthread_mutex_lock(&ctx->lock);
	XNIC_LIST_ADD(ctx->mrs, mr);
	pd->users++;
	pthread_mutex_unlock(&ctx->lock);
	*mrp = mr;
	return 0;
}

int xnic_reg_mr(struct xnic_pd *pd, void *addr, size_t length,
		unsigned int access, struct xnic_mr **mrp)
{
	return xnic_reg_mr_drv(pd, addr, length, access, NULL, 0, mrp);
}

/*
 * Register with the kernel watching the range: byte @slot of the context
 * page's mr_stale turns 1 when its mapping changes (XNIC_CAP_MR_WATCH).
 */
int xnic_reg_mr_watched(struct xnic_pd *pd, void *addr, size_t length,
			unsigned int access, unsigned int slot,
			struct xnic_mr **mrp)
{
	struct xnic_reg_mr_req drv = {
		.comp_mask = XNIC_REG_MR_REQ_WATCH,
		.watch_slot = slot,
	};

	return xnic_reg_mr_drv(pd, addr, length, access, &drv, sizeof(drv),
			       mrp);
}

int xnic_dereg_mr(struct xnic_mr *mr)
{
	struct xnic_ctx *ctx = mr->pd->ctx;
	struct ib_uverbs_dereg_mr req = { .mr_handle = mr->handle };
	int err;

	err = xnic_cmd(ctx->fd, IB_USER_VERBS_CMD_DEREG_MR, &req, sizeof(req),
		       NULL, 0, NULL, 0, NULL, 0);
	if (err)
		return err;
	pthread_mutex_lock(&ctx->lock);
	XNIC_LIST_DEL(ctx->mrs, mr);
	mr->pd->users--;
	pthread_mutex_unlock(&ctx->lock);
	free(mr);
	return 0;
}
