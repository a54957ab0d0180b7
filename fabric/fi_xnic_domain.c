// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Domain: one xnic context and PD on the device the domain is named after;
 * memory regions; a thread that turns the device's asynchronous QP events
 * (a peer's disconnect moves our QP to error, see Documentation/cm.rst)
 * into FI_SHUTDOWN events of the endpoint that owns the QP.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fi_xnic_rdm.h"

void fi_xnic_domain_add_ep(struct fi_xnic_domain *d, struct fi_xnic_ep *ep)
{
	pthread_mutex_lock(&d->lock);
	ep->next = d->eps;
	d->eps = ep;
	pthread_mutex_unlock(&d->lock);
}

void fi_xnic_domain_del_ep(struct fi_xnic_domain *d, struct fi_xnic_ep *ep)
{
	struct fi_xnic_ep **pp;

	pthread_mutex_lock(&d->lock);
	for (pp = &d->eps; *pp; pp = &(*pp)->next) {
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
}

static void xnic_domain_event(struct fi_xnic_domain *d,
			      const struct xnic_async_event *ev)
{
	struct fi_xnic_ep *ep;

	switch (ev->type) {
	case XNIC_EVENT_QP_FATAL:
	case XNIC_EVENT_QP_REQ_ERR:
	case XNIC_EVENT_QP_ACCESS_ERR:
		break;
	default:
		return;
	}
	pthread_mutex_lock(&d->lock);
	for (ep = d->eps; ep; ep = ep->next) {
		if (ep->qp == ev->qp) {
			fi_xnic_ep_qp_fatal(ep);
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
}

/**
 * fi_xnic_thread_wait() - a helper thread's sleep
 * @fd: what the thread serves (readable: work to do)
 * @stop_fd: an eventfd written when the thread is to end
 * Return: false when the thread is to end (or poll(2) failed), else true:
 *	@fd may have work.
 */
bool fi_xnic_thread_wait(int fd, int stop_fd)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = stop_fd, .events = POLLIN },
	};

	while (poll(pfd, 2, -1) < 0)
		if (errno != EINTR)
			return false;
	return !pfd[1].revents;
}

/**
 * fi_xnic_thread_stop() - end a helper thread and close its eventfd
 * @thread: a thread that sleeps in fi_xnic_thread_wait() on @stop_fd
 * @stop_fd: its eventfd
 */
void fi_xnic_thread_stop(pthread_t thread, int stop_fd)
{
	uint64_t one = 1;

	if (write(stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(thread, NULL);
	close(stop_fd);
}

static void *xnic_domain_async(void *arg)
{
	struct fi_xnic_domain *d = arg;
	struct xnic_async_event ev;

	while (fi_xnic_thread_wait(xnic_async_fd(d->ctx), d->stop_fd))
		while (!xnic_get_async_event(d->ctx, &ev))
			xnic_domain_event(d, &ev);
	return NULL;
}

/* ------------------------------- MRs -------------------------------- */

static int xnic_mr_close(struct fid *fid)
{
	struct fi_xnic_mr *mr = container_of(fid, struct fi_xnic_mr,
					     mr_fid.fid);
	int err;

	if (mr->mr) {
		err = xnic_dereg_mr(mr->mr);
		if (err)
			return fi_xnic_err(err);
	}
	__atomic_fetch_sub(&mr->domain->refs, 1, __ATOMIC_RELAXED);
	free(mr);
	return 0;
}

static struct fi_ops xnic_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_mr_close,
	.bind = fi_xnic_no_bind,
	.control = fi_xnic_no_control,
	.ops_open = fi_xnic_no_ops_open,
};

static int xnic_mr_reg(struct fid *fid, const void *buf, size_t len,
		       uint64_t access, uint64_t offset,
		       uint64_t requested_key, uint64_t flags,
		       struct fid_mr **mrp, void *context)
{
	struct fi_xnic_domain *d = container_of(fid, struct fi_xnic_domain,
						domain_fid.fid);
	unsigned int xa = XNIC_ACCESS_LOCAL_WRITE;
	struct fi_xnic_mr *mr;
	int err;

	/*
	 * FI_MR_PROV_KEY: the key is ours; no FI_MR_OFFSET mode: offset is
	 * not used; flags (e.g. ofi_rxm's private OFI_MR_NOCACHE) change
	 * nothing here.
	 */
	(void)requested_key;
	(void)offset;
	(void)flags;
	if (!mrp || (!buf && len))
		return -FI_EINVAL;
	if (access & ~(uint64_t)(FI_SEND | FI_RECV | FI_READ | FI_WRITE |
				 FI_REMOTE_READ | FI_REMOTE_WRITE))
		return -FI_EINVAL;
	if (access & FI_REMOTE_WRITE)
		xa |= XNIC_ACCESS_REMOTE_WRITE;
	if (access & FI_REMOTE_READ)
		xa |= XNIC_ACCESS_REMOTE_READ;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	if (len) {
		err = xnic_reg_mr(d->pd, (void *)buf, len, xa, &mr->mr);
		if (err) {
			free(mr);
			return fi_xnic_err(err);
		}
		mr->lkey = mr->mr->lkey;
		mr->mr_fid.key = mr->mr->rkey;
	}
	mr->domain = d;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &xnic_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*mrp = &mr->mr_fid;
	return 0;
}

static int xnic_mr_regv(struct fid *fid, const struct iovec *iov,
			size_t count, uint64_t access, uint64_t offset,
			uint64_t requested_key, uint64_t flags,
			struct fid_mr **mr, void *context)
{
	if (count > 1 || (count && !iov))
		return -FI_EINVAL;	/* mr_iov_limit is 1 */
	return xnic_mr_reg(fid, count ? iov->iov_base : NULL,
			   count ? iov->iov_len : 0, access, offset,
			   requested_key, flags, mr, context);
}

static int xnic_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			   uint64_t flags, struct fid_mr **mr)
{
	if (!attr)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	return xnic_mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
			    attr->offset, attr->requested_key, flags, mr,
			    attr->context);
}

static struct fi_ops_mr xnic_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = xnic_mr_reg,
	.regv = xnic_mr_regv,
	.regattr = xnic_mr_regattr,
};

/* ------------------------------ domain ------------------------------ */

static int xnic_domain_close(struct fid *fid)
{
	struct fi_xnic_domain *d = container_of(fid, struct fi_xnic_domain,
						domain_fid.fid);
	struct xnic_mr_cache_stats st;

	if (__atomic_load_n(&d->refs, __ATOMIC_RELAXED))
		return -FI_EBUSY;
	if (d->async_running)
		fi_xnic_thread_stop(d->async_thread, d->stop_fd);
	else
		close(d->stop_fd);
	xnic_mr_cache_stats(d->mr_cache, &st);
	XNIC_INFO(FI_LOG_MR, "%s: MR cache: %llu hits, %llu misses (%llu not "
		  "kept), %llu dropped as unmapped, %llu evicted\n", d->lim.name,
		  (unsigned long long)st.hits, (unsigned long long)st.misses,
		  (unsigned long long)st.uncached,
		  (unsigned long long)st.stale,
		  (unsigned long long)st.evicted);
	xnic_mr_cache_destroy(d->mr_cache);
	xnic_dealloc_pd(d->pd);
	xnic_close(d->ctx);
	pthread_mutex_destroy(&d->lock);
	free(d);
	return 0;
}

/*
 * The registration cache of the RDM endpoints' rendezvous buffers (MRs of
 * the kernel-watched kind, see xnic_mr_cache_create()); its limits are the
 * mr_cache_max_count and mr_cache_max_size parameters.
 */
static int xnic_domain_mr_cache(struct fi_xnic_domain *d)
{
	size_t count = FI_XNIC_MR_CACHE_COUNT, size = FI_XNIC_MR_CACHE_SIZE;

	fi_param_get_size_t(&fi_xnic_prov, "mr_cache_max_count", &count);
	fi_param_get_size_t(&fi_xnic_prov, "mr_cache_max_size", &size);
	if (count > XNIC_MR_WATCH_SLOTS)
		count = XNIC_MR_WATCH_SLOTS;
	return xnic_mr_cache_create(d->pd, (unsigned int)count, size,
				    &d->mr_cache);
}

static struct fi_ops xnic_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_domain_close,
	.bind = fi_xnic_no_bind,
	.control = fi_xnic_no_control,
	.ops_open = fi_xnic_no_ops_open,
};

/* fi_endpoint: FI_EP_MSG or FI_EP_RDM, as the fi_info says. */
static int xnic_domain_endpoint(struct fid_domain *domain,
				struct fi_info *info, struct fid_ep **ep,
				void *context)
{
	if (info && info->ep_attr && info->ep_attr->type == FI_EP_RDM &&
	    info->tx_attr && info->rx_attr && ep) {
		struct fi_xnic_domain *d = container_of(domain,
				struct fi_xnic_domain, domain_fid);

		if (info->domain_attr && info->domain_attr->name &&
		    strcmp(info->domain_attr->name, d->lim.name))
			return -FI_EINVAL;
		return fi_xnic_rdm_endpoint(domain, info, ep, context);
	}
	return fi_xnic_endpoint(domain, info, ep, context);
}

static struct fi_ops_domain xnic_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = fi_xnic_av_open,
	.cq_open = fi_xnic_cq_open,
	.endpoint = xnic_domain_endpoint,
	.scalable_ep = fi_xnic_no_sep,
	.cntr_open = fi_xnic_no_cntr_open,
	.poll_open = fi_xnic_no_poll_open,
	.stx_ctx = fi_xnic_no_stx,
	.srx_ctx = fi_xnic_no_srx,
	.query_atomic = fi_xnic_no_query_atomic,
	.query_collective = fi_xnic_no_query_collective,
};

int fi_xnic_domain_open(struct fid_fabric *fabric, struct fi_info *info,
			struct fid_domain **dom, void *context)
{
	struct fi_xnic_domain *d;
	int err;

	(void)fabric;
	if (!info || !dom || !info->domain_attr || !info->domain_attr->name)
		return -FI_EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -FI_ENOMEM;
	d->stop_fd = -1;
	pthread_mutex_init(&d->lock, NULL);
	err = xnic_open(info->domain_attr->name, &d->ctx);
	if (err) {
		XNIC_WARN(FI_LOG_DOMAIN, "xnic_open(%s): %s\n",
			  info->domain_attr->name, xnic_strerror(err));
		err = err == -ENODEV ? -FI_ENODEV : fi_xnic_err(err);
		goto err_free;
	}
	err = xnic_alloc_pd(d->ctx, &d->pd);
	if (err)
		goto err_close;
	err = xnic_domain_mr_cache(d);
	if (err) {
		xnic_dealloc_pd(d->pd);
		goto err_close;
	}
	snprintf(d->lim.name, sizeof(d->lim.name), "%s", info->domain_attr->name);
	d->lim.attr = *xnic_ctx_info(d->ctx);
	d->stop_fd = eventfd(0, EFD_CLOEXEC);
	err = -FI_ENOMEM;
	if (d->stop_fd < 0)
		goto err_pd;
	err = -pthread_create(&d->async_thread, NULL, xnic_domain_async, d);
	if (err)
		goto err_pd;
	d->async_running = true;
	d->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	d->domain_fid.fid.context = context;
	d->domain_fid.fid.ops = &xnic_domain_fi_ops;
	d->domain_fid.ops = &xnic_domain_ops;
	d->domain_fid.mr = &xnic_mr_ops;
	*dom = &d->domain_fid;
	return 0;

err_pd:
	if (d->stop_fd >= 0)
		close(d->stop_fd);
	xnic_mr_cache_destroy(d->mr_cache);
	xnic_dealloc_pd(d->pd);
err_close:
	xnic_close(d->ctx);
err_free:
	pthread_mutex_destroy(&d->lock);
	free(d);
	return err;
}
