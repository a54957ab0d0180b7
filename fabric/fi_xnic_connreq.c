// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection requests: who owns them and until when. A request reaches
 * the application as fi_info.handle of an FI_CONNREQ event (fi_cm(3));
 * the application then makes an endpoint of it and accepts, or rejects
 * it, or closes the EQ or the passive endpoint without doing either. It
 * may also do these in an order fi_cm(3) does not foresee (reject after
 * closing the endpoint made of it, or a handle twice): a stale handle must
 * get -FI_EINVAL, never be followed. So:
 *  - every live request is in one registry, and a handle given back to the
 *    provider is looked up there before it is used;
 *  - a request has references: the application's handle (dropped by
 *    fi_reject, or passed on to the endpoint fi_endpoint() makes of it),
 *    an endpoint's, and a caller's while it works on it; the last one frees
 *    it;
 *  - a request holds a reference on its passive endpoint, so that the
 *    endpoint's lock outlives fi_close() of it while requests remain;
 *  - a request is answered once (accepted or rejected, pep->lock): closing
 *    the passive endpoint rejects those not answered yet, and an accept
 *    after that fails with FI_ECONNABORTED on the EQ.
 * Lock order: pep->lock, then xnic_cr_lock (which guards the registry and
 * every reference count, and is never held while waiting for a peer).
 */
#include <stdlib.h>

#include "fi_xnic.h"

static pthread_mutex_t xnic_cr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fi_xnic_connreq *xnic_crs;

static int xnic_connreq_close(struct fid *fid)
{
	(void)fid;
	return -FI_ENOSYS;	/* freed by fi_reject or its endpoint */
}

static struct fi_ops xnic_connreq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_connreq_close,
	.bind = fi_xnic_no_bind,
	.control = fi_xnic_no_control,
	.ops_open = fi_xnic_no_ops_open,
};

/**
 * fi_xnic_pep_put() - drop a reference on a passive endpoint
 * @pep: it; freed with the last reference (its handle's, or a request's)
 */
void fi_xnic_pep_put(struct fi_xnic_pep *pep)
{
	bool last;

	pthread_mutex_lock(&xnic_cr_lock);
	last = !--pep->refs;
	pthread_mutex_unlock(&xnic_cr_lock);
	if (!last)
		return;
	fi_freeinfo(pep->info);
	pthread_mutex_destroy(&pep->lock);
	free(pep);
}

/**
 * fi_xnic_connreq_new() - a request of @pep, held by the application's
 *	handle
 * @pep: the passive endpoint (its lock held: its thread)
 * @req: what the CM delivered
 * @info: the FI_CONNREQ event's; its handle is set to the request
 * Return: the request, or NULL without memory.
 */
struct fi_xnic_connreq *fi_xnic_connreq_new(struct fi_xnic_pep *pep,
					    const struct xnic_cm_req *req,
					    struct fi_info *info)
{
	struct fi_xnic_connreq *cr = calloc(1, sizeof(*cr));

	if (!cr)
		return NULL;
	cr->fid.fclass = FI_CLASS_CONNREQ;
	cr->fid.ops = &xnic_connreq_fi_ops;
	cr->pep = pep;
	cr->req = *req;
	cr->refs = 1;
	cr->handle = true;
	pthread_mutex_lock(&xnic_cr_lock);
	pep->refs++;
	cr->next = xnic_crs;
	if (xnic_crs)
		xnic_crs->prev = cr;
	xnic_crs = cr;
	pthread_mutex_unlock(&xnic_cr_lock);
	info->handle = &cr->fid;
	return cr;
}

/* The live request behind @handle, or NULL. Context: xnic_cr_lock. */
static struct fi_xnic_connreq *xnic_cr_find(fid_t handle)
{
	struct fi_xnic_connreq *cr;

	for (cr = xnic_crs; cr && &cr->fid != handle; cr = cr->next)
		;
	return cr;
}

/* Drop a reference; the last unlinks and frees @cr. */
static void xnic_cr_put(struct fi_xnic_connreq *cr)
{
	struct fi_xnic_pep *pep = cr->pep;
	bool last;

	pthread_mutex_lock(&xnic_cr_lock);
	last = !--cr->refs;
	if (last) {
		if (cr->prev)
			cr->prev->next = cr->next;
		else
			xnic_crs = cr->next;
		if (cr->next)
			cr->next->prev = cr->prev;
	}
	pthread_mutex_unlock(&xnic_cr_lock);
	if (!last)
		return;
	free(cr);
	fi_xnic_pep_put(pep);
}

/* Drop the application's handle's reference, if it still has it. */
static void xnic_cr_drop_handle(struct fi_xnic_connreq *cr)
{
	bool had;

	pthread_mutex_lock(&xnic_cr_lock);
	had = cr->handle;
	cr->handle = false;
	pthread_mutex_unlock(&xnic_cr_lock);
	if (had)
		xnic_cr_put(cr);
}

/* Reject @cr unless it was answered (-EINVAL). Context: pep->lock. */
static int xnic_cr_reject_locked(struct fi_xnic_connreq *cr,
				 const void *param, size_t len)
{
	if (cr->answered)
		return -EINVAL;
	cr->answered = true;
	return xnic_cm_reject(&cr->req, param, len);
}

/**
 * fi_xnic_connreq_undo() - the FI_CONNREQ event of @cr could not be queued
 * @cr: a request of fi_xnic_connreq_new(), freed; the caller (pep->lock
 *	held) rejects it through the CM request it has
 */
void fi_xnic_connreq_undo(struct fi_xnic_connreq *cr)
{
	cr->answered = true;
	xnic_cr_drop_handle(cr);
}

/**
 * fi_xnic_connreq_take() - the request behind fi_info.handle, for the
 *	endpoint fi_endpoint() makes of it
 * @handle: the handle
 * Return: the request, the handle's reference now the caller's; NULL
 * when @handle is no live request or an endpoint was made of it already.
 */
struct fi_xnic_connreq *fi_xnic_connreq_take(fid_t handle)
{
	struct fi_xnic_connreq *cr;

	pthread_mutex_lock(&xnic_cr_lock);
	cr = xnic_cr_find(handle);
	if (cr && !cr->handle)
		cr = NULL;
	if (cr)
		cr->handle = false;
	pthread_mutex_unlock(&xnic_cr_lock);
	return cr;
}

/**
 * fi_xnic_connreq_release() - an endpoint made of @cr is closed
 * @cr: the request; rejected if never answered, and the endpoint's
 *	reference dropped
 */
void fi_xnic_connreq_release(struct fi_xnic_connreq *cr)
{
	pthread_mutex_lock(&cr->pep->lock);
	xnic_cr_reject_locked(cr, NULL, 0);
	pthread_mutex_unlock(&cr->pep->lock);
	xnic_cr_put(cr);
}

/**
 * fi_xnic_connreq_accept() - accept @cr with @qp (an accept thread)
 * @cr: the request
 * @qp: the endpoint's QP
 * @data: private data for the peer
 * @len: its length
 * Return: 0; -ECONNABORTED when it was answered (its passive endpoint
 * closed, or fi_reject); xnic_cm_accept()'s errors.
 */
int fi_xnic_connreq_accept(struct fi_xnic_connreq *cr, struct xnic_qp *qp,
			   const void *data, size_t len)
{
	int err = -ECONNABORTED;

	pthread_mutex_lock(&cr->pep->lock);
	if (!cr->answered) {
		cr->answered = true;
		err = xnic_cm_accept(&cr->req, qp, data, len,
				     fi_xnic_timeout_ms());
	}
	pthread_mutex_unlock(&cr->pep->lock);
	return err;
}

/**
 * fi_xnic_connreq_reject() - fi_reject() of @handle on @pep
 * @pep: the passive endpoint the application names
 * @handle: fi_info.handle of its FI_CONNREQ
 * @param: private data for the peer
 * @len: its length
 * Return: 0; -FI_EINVAL when @handle is no live request of @pep or was
 * answered already; the CM's error.
 */
int fi_xnic_connreq_reject(struct fi_xnic_pep *pep, fid_t handle,
			   const void *param, size_t len)
{
	struct fi_xnic_connreq *cr;
	int err;

	pthread_mutex_lock(&xnic_cr_lock);
	cr = xnic_cr_find(handle);
	if (cr && cr->pep == pep)
		cr->refs++;
	else
		cr = NULL;
	pthread_mutex_unlock(&xnic_cr_lock);
	if (!cr)
		return -FI_EINVAL;
	pthread_mutex_lock(&pep->lock);
	err = xnic_cr_reject_locked(cr, param, len);
	pthread_mutex_unlock(&pep->lock);
	xnic_cr_drop_handle(cr);
	xnic_cr_put(cr);
	return fi_xnic_err(err);
}

/**
 * fi_xnic_connreq_unread() - free an FI_CONNREQ event's fi_info that the
 *	application never read (its EQ or passive endpoint is closed)
 * @info: the event's; the request is rejected if not answered yet
 */
void fi_xnic_connreq_unread(struct fi_info *info)
{
	struct fi_xnic_connreq *cr;

	pthread_mutex_lock(&xnic_cr_lock);
	cr = xnic_cr_find(info->handle);
	if (cr)
		cr->refs++;
	pthread_mutex_unlock(&xnic_cr_lock);
	if (cr) {
		pthread_mutex_lock(&cr->pep->lock);
		xnic_cr_reject_locked(cr, NULL, 0);
		pthread_mutex_unlock(&cr->pep->lock);
		xnic_cr_drop_handle(cr);
		xnic_cr_put(cr);
	}
	info->handle = NULL;
	fi_freeinfo(info);
}

/**
 * fi_xnic_connreq_abort_all() - @pep is being closed: reject its requests
 *	not answered yet; accepts after this fail
 * @pep: the passive endpoint (its lock held, its listener still open)
 */
void fi_xnic_connreq_abort_all(struct fi_xnic_pep *pep)
{
	struct fi_xnic_connreq *cr;

	pthread_mutex_lock(&xnic_cr_lock);
	for (cr = xnic_crs; cr; cr = cr->next)
		if (cr->pep == pep && !cr->answered) {
			cr->answered = true;
			xnic_cm_reject(&cr->req, NULL, 0);
		}
	pthread_mutex_unlock(&xnic_cr_lock);
	pep->closed = true;
}
