// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection management on the xnic fabric CM (Documentation/cm.rst): no
 * TCP. libxnic's CM calls block until the peer answered, libfabric's
 * return at once and report on the EQ (fi_cm(3)), so:
 *  - a passive endpoint runs a thread that turns xnic connection requests
 *    into FI_CONNREQ events (fi_info.handle: struct fi_xnic_connreq);
 *  - fi_connect and fi_accept each run the blocking call in a thread of
 *    the endpoint and queue FI_CONNECTED, or an error entry (err
 *    FI_ECONNREFUSED with the REJ reason as prov_errno and the peer's
 *    reject data as err_data, FI_ETIMEDOUT, ...);
 *  - fi_shutdown disconnects (DREQ); the peer's QP goes to error and its
 *    domain's async thread queues FI_SHUTDOWN (fi_xnic_ep_qp_fatal()).
 * A listener's netlink socket is not thread safe: every call on it (get a
 * request, accept, reject) holds the passive endpoint's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fi_xnic.h"

/* The provider's timeout_ms parameter (FI_XNIC_TIMEOUT_MS), ms. */
int fi_xnic_timeout_ms(void)
{
	int t = 0;

	if (fi_param_get_int(&fi_xnic_prov, "timeout_ms", &t) || t <= 0 ||
	    t > 110000)
		t = FI_XNIC_DEF_TIMEOUT_MS;
	return t;
}

static int xnic_getname(const struct fi_xnic_addr *a, void *addr,
			size_t *addrlen)
{
	size_t have;

	if (!addrlen)
		return -FI_EINVAL;
	have = *addrlen;
	*addrlen = sizeof(*a);
	if (!addr || have < sizeof(*a))
		return -FI_ETOOSMALL;
	memcpy(addr, a, sizeof(*a));
	return 0;
}

/* fi_getopt of passive and active endpoints: FI_OPT_CM_DATA_SIZE. */
int fi_xnic_getopt(fid_t fid, int level, int optname, void *optval,
		   size_t *optlen)
{
	(void)fid;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen || *optlen < sizeof(size_t))
		return -FI_ETOOSMALL;
	*(size_t *)optval = FI_XNIC_CM_DATA_MAX;
	*optlen = sizeof(size_t);
	return 0;
}

/* --------------------------- active side ---------------------------- */

static void xnic_put_connected(struct fi_xnic_ep *ep, const void *data,
			       size_t len)
{
	struct {
		struct fi_eq_cm_entry e;
		uint8_t data[FI_XNIC_CM_DATA_MAX];
	} ev;

	memset(&ev, 0, sizeof(ev));
	ev.e.fid = &ep->ep_fid.fid;
	if (len > FI_XNIC_CM_DATA_MAX)
		len = FI_XNIC_CM_DATA_MAX;
	if (len)
		memcpy(ev.e.data, data, len);
	ep->state = FI_XNIC_EP_CONNECTED;
	if (fi_xnic_eq_put(ep->eq, FI_CONNECTED, &ev, sizeof(ev.e) + len))
		XNIC_WARN(FI_LOG_EP_CTRL, "no memory for FI_CONNECTED\n");
}

static void xnic_put_cm_error(struct fi_xnic_ep *ep, int err, int reason,
			      const void *data, size_t len)
{
	ep->state = FI_XNIC_EP_SHUTDOWN;
	XNIC_DBG(FI_LOG_EP_CTRL, "connection failed: %s\n", xnic_strerror(err));
	if (fi_xnic_eq_put_err(ep->eq, &ep->ep_fid.fid, ep->ep_fid.fid.context,
			       -err, reason, data, len))
		XNIC_WARN(FI_LOG_EP_CTRL, "no memory for an EQ error\n");
}

static void *xnic_connect_thread(void *arg)
{
	struct fi_xnic_ep *ep = arg;
	struct xnic_cm_reply rep;
	int err;

	memset(&rep, 0, sizeof(rep));
	err = xnic_cm_connect(ep->domain->ctx, ep->qp,
			      fi_xnic_addr_node(&ep->peer),
			      fi_xnic_addr_sid(&ep->peer), ep->cm_data,
			      ep->cm_len, fi_xnic_timeout_ms(), &rep);
	if (!err)
		xnic_put_connected(ep, rep.private_data, rep.private_len);
	else
		xnic_put_cm_error(ep, err, (int)rep.reject_reason,
				  rep.private_data, rep.private_len);
	return NULL;
}

static void *xnic_accept_thread(void *arg)
{
	struct fi_xnic_ep *ep = arg;
	int err;

	err = fi_xnic_connreq_accept(ep->connreq, ep->qp, ep->cm_data,
				     ep->cm_len);
	if (!err)
		xnic_put_connected(ep, NULL, 0);
	else
		xnic_put_cm_error(ep, err, 0, NULL, 0);
	return NULL;
}

int fi_xnic_ep_cm_start(struct fi_xnic_ep *ep, bool accept)
{
	int err;

	ep->state = FI_XNIC_EP_CONNECTING;
	err = pthread_create(&ep->cm_thread, NULL,
			     accept ? xnic_accept_thread : xnic_connect_thread,
			     ep);
	if (err) {
		ep->state = FI_XNIC_EP_IDLE;
		return -FI_ENOMEM;
	}
	ep->cm_thread_running = true;
	return 0;
}

/* Checks shared by connect and accept; enables the endpoint if needed. */
static int xnic_cm_prepare(struct fi_xnic_ep *ep, const void *param,
			   size_t paramlen)
{
	int ret;

	if (paramlen > FI_XNIC_CM_DATA_MAX)
		return -FI_EINVAL;
	if (paramlen && !param)
		return -FI_EINVAL;
	if (!ep->eq)
		return -FI_ENOEQ;
	if (ep->state != FI_XNIC_EP_IDLE)
		return ep->state == FI_XNIC_EP_CONNECTED ? -FI_EISCONN :
							   -FI_EALREADY;
	if (!ep->qp) {
		ret = fi_enable(&ep->ep_fid);
		if (ret)
			return ret;
	}
	if (paramlen)
		memcpy(ep->cm_data, param, paramlen);
	ep->cm_len = paramlen;
	return 0;
}

static int xnic_connect(struct fid_ep *ep_fid, const void *addr,
			const void *param, size_t paramlen)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	int ret;

	if (fi_xnic_addr_check(addr, sizeof(struct fi_xnic_addr)))
		return -FI_EINVAL;
	if (fi_xnic_addr_node(addr) == ep->domain->lim.attr.node_id)
		return -FI_EADDRNOTAVAIL;	/* the CM has no loopback */
	if (ep->connreq)
		return -FI_EINVAL;	/* made for fi_accept */
	ret = xnic_cm_prepare(ep, param, paramlen);
	if (ret)
		return ret;
	memcpy(&ep->peer, addr, sizeof(ep->peer));
	return fi_xnic_ep_cm_start(ep, false);
}

static int xnic_accept(struct fid_ep *ep_fid, const void *param,
		       size_t paramlen)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	int ret;

	if (!ep->connreq)
		return -FI_EINVAL;	/* not made from a FI_CONNREQ */
	ret = xnic_cm_prepare(ep, param, paramlen);
	if (ret)
		return ret;
	return fi_xnic_ep_cm_start(ep, true);
}

static int xnic_shutdown(struct fid_ep *ep_fid, uint64_t flags)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	int err;

	(void)flags;
	if (!ep->qp || ep->state == FI_XNIC_EP_IDLE)
		return -FI_ENOTCONN;
	if (ep->state == FI_XNIC_EP_SHUTDOWN)
		return 0;
	ep->state = FI_XNIC_EP_SHUTDOWN;
	err = xnic_cm_disconnect(ep->qp);
	return err == -EINVAL ? 0 : fi_xnic_err(err);
}

static int xnic_ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fi_xnic_ep *ep = container_of(fid, struct fi_xnic_ep,
					     ep_fid.fid);
	struct fi_xnic_addr a;

	fi_xnic_addr_init(&a, ep->domain->lim.attr.node_id, 0);
	return xnic_getname(&a, addr, addrlen);
}

static int xnic_ep_getpeer(struct fid_ep *ep_fid, void *addr,
			   size_t *addrlen)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);

	if (ep->state != FI_XNIC_EP_CONNECTED)
		return -FI_ENOTCONN;
	return xnic_getname(&ep->peer, addr, addrlen);
}

struct fi_ops_cm fi_xnic_ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = fi_xnic_no_setname,
	.getname = xnic_ep_getname,
	.getpeer = xnic_ep_getpeer,
	.connect = xnic_connect,
	.listen = fi_xnic_no_listen,
	.accept = xnic_accept,
	.reject = fi_xnic_no_reject,
	.shutdown = xnic_shutdown,
	.join = fi_xnic_no_join,
};

/* Called by the domain's async thread with the domain lock held. */
void fi_xnic_ep_qp_fatal(struct fi_xnic_ep *ep)
{
	struct fi_eq_cm_entry e = { .fid = &ep->ep_fid.fid };

	if (ep->state != FI_XNIC_EP_CONNECTED || !ep->eq)
		return;
	ep->state = FI_XNIC_EP_SHUTDOWN;
	if (fi_xnic_eq_put(ep->eq, FI_SHUTDOWN, &e, sizeof(e)))
		XNIC_WARN(FI_LOG_EP_CTRL, "no memory for FI_SHUTDOWN\n");
}

/* --------------------------- passive side --------------------------- */

static void xnic_pep_connreq(struct fi_xnic_pep *pep,
			     const struct xnic_cm_req *req)
{
	struct {
		struct fi_eq_cm_entry e;
		uint8_t data[FI_XNIC_CM_DATA_MAX];
	} ev;
	size_t len = req->private_len < FI_XNIC_CM_DATA_MAX ?
		     req->private_len : FI_XNIC_CM_DATA_MAX;
	struct fi_xnic_connreq *cr;
	struct fi_xnic_addr *peer;
	struct fi_info *info;

	info = fi_dupinfo(pep->info);
	peer = calloc(1, sizeof(*peer));
	if (!info || !peer) {
		free(peer);
		fi_freeinfo(info);
		goto nomem;
	}
	fi_xnic_addr_init(peer, req->remote_node, 0);
	free(info->dest_addr);
	info->dest_addr = peer;
	info->dest_addrlen = sizeof(*peer);
	memset(&ev, 0, sizeof(ev));
	ev.e.fid = &pep->pep_fid.fid;
	ev.e.info = info;
	memcpy(ev.e.data, req->private_data, len);
	cr = fi_xnic_connreq_new(pep, req, info);
	if (cr && !fi_xnic_eq_put_connreq(pep->eq, &ev.e, sizeof(ev.e) + len))
		return;
	if (cr)
		fi_xnic_connreq_undo(cr);
	info->handle = NULL;
	fi_freeinfo(info);
nomem:
	XNIC_WARN(FI_LOG_EP_CTRL, "no memory: connection request refused\n");
	xnic_cm_reject((struct xnic_cm_req *)req, NULL, 0);
}

static void *xnic_pep_thread(void *arg)
{
	struct fi_xnic_pep *pep = arg;
	int fd = xnic_cm_listener_fd(pep->listener);

	/* Readable too while an accept's wait queued requests (libxnic). */
	while (fi_xnic_thread_wait(fd, pep->stop_fd)) {
		struct xnic_cm_disconnect d;
		struct xnic_cm_req req;

		pthread_mutex_lock(&pep->lock);
		while (!xnic_cm_get_request(pep->listener, &req, 0))
			xnic_pep_connreq(pep, &req);
		/* The QP's async event reports a disconnect; drop these. */
		while (!xnic_cm_get_disconnect(pep->listener, &d, 0))
			;
		pthread_mutex_unlock(&pep->lock);
	}
	return NULL;
}

/**
 * fi_xnic_listen() - a CM listener on an address's service id
 * @ctx: the device's context
 * @addr: the address; port 0: an ephemeral port, 32768..65535 from a
 *	pid-based start, written back into @addr
 * @lp: the listener
 * Return: 0 or a negative errno of xnic_cm_listen() (-EADDRINUSE).
 */
int fi_xnic_listen(struct xnic_ctx *ctx, struct fi_xnic_addr *addr,
		   struct xnic_cm_listener **lp)
{
	uint32_t node = fi_xnic_addr_node(addr);
	int err, k;

	if (fi_xnic_addr_port(addr))
		return xnic_cm_listen(ctx, fi_xnic_addr_sid(addr), lp);
	err = -EADDRINUSE;
	for (k = 0; k < 256 && err == -EADDRINUSE; k++) {
		fi_xnic_addr_init(addr, node, (uint16_t)(32768 +
				  (getpid() * 7 + k) % 32768));
		err = xnic_cm_listen(ctx, fi_xnic_addr_sid(addr), lp);
	}
	if (err)
		fi_xnic_addr_init(addr, node, 0);
	return err;
}

static int xnic_listen(struct fid_pep *pep_fid)
{
	struct fi_xnic_pep *pep = container_of(pep_fid, struct fi_xnic_pep,
					       pep_fid);
	int err;

	if (pep->listening)
		return -FI_EALREADY;
	if (!pep->eq)
		return -FI_ENOEQ;
	err = xnic_open(pep->info->domain_attr->name, &pep->ctx);
	if (err)
		return fi_xnic_err(err);
	err = fi_xnic_listen(pep->ctx, &pep->addr, &pep->listener);
	if (err)
		goto err_close;
	pep->stop_fd = eventfd(0, EFD_CLOEXEC);
	err = -FI_ENOMEM;
	if (pep->stop_fd < 0)
		goto err_unlisten;
	err = -pthread_create(&pep->thread, NULL, xnic_pep_thread, pep);
	if (err) {
		close(pep->stop_fd);
		goto err_unlisten;
	}
	pep->listening = true;
	return 0;
err_unlisten:
	xnic_cm_unlisten(pep->listener);
	pep->listener = NULL;
err_close:
	xnic_close(pep->ctx);
	pep->ctx = NULL;
	return err == -EADDRINUSE ? -FI_EADDRINUSE : fi_xnic_err(err);
}

static int xnic_reject(struct fid_pep *pep_fid, fid_t handle,
		       const void *param, size_t paramlen)
{
	struct fi_xnic_pep *pep = container_of(pep_fid, struct fi_xnic_pep,
					       pep_fid);

	if (paramlen > FI_XNIC_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	return fi_xnic_connreq_reject(pep, handle, param, paramlen);
}

static int xnic_pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fi_xnic_pep *pep = container_of(fid, struct fi_xnic_pep,
					       pep_fid.fid);

	return xnic_getname(&pep->addr, addr, addrlen);
}

static int xnic_pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct fi_xnic_pep *pep = container_of(fid, struct fi_xnic_pep,
					       pep_fid.fid);

	if (pep->listening)
		return -FI_EBUSY;
	if (fi_xnic_addr_check(addr, addrlen) ||
	    fi_xnic_addr_node(addr) != fi_xnic_addr_node(&pep->addr))
		return -FI_EINVAL;
	memcpy(&pep->addr, addr, sizeof(pep->addr));
	return 0;
}

static int xnic_pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fi_xnic_pep *pep = container_of(fid, struct fi_xnic_pep,
					       pep_fid.fid);

	(void)flags;
	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (pep->eq)
		return -FI_EBUSY;
	pep->eq = container_of(bfid, struct fi_xnic_eq, eq_fid.fid);
	__atomic_fetch_add(&pep->eq->refs, 1, __ATOMIC_RELAXED);
	return 0;
}

static int xnic_pep_close(struct fid *fid)
{
	struct fi_xnic_pep *pep = container_of(fid, struct fi_xnic_pep,
					       pep_fid.fid);

	if (pep->listening)
		fi_xnic_thread_stop(pep->thread, pep->stop_fd);
	/* After any accept still running on the listener. */
	pthread_mutex_lock(&pep->lock);
	if (pep->listening) {
		fi_xnic_connreq_abort_all(pep);
		xnic_cm_unlisten(pep->listener);
		xnic_close(pep->ctx);
		pep->listener = NULL;
		pep->ctx = NULL;
	}
	pep->closed = true;
	pthread_mutex_unlock(&pep->lock);
	if (pep->eq) {
		fi_xnic_eq_purge(pep->eq, &pep->pep_fid.fid);
		__atomic_fetch_sub(&pep->eq->refs, 1, __ATOMIC_RELAXED);
	}
	/* Freed here, or when its last request goes. */
	fi_xnic_pep_put(pep);
	return 0;
}

static struct fi_ops xnic_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_pep_close,
	.bind = xnic_pep_bind,
	.control = fi_xnic_no_control,
	.ops_open = fi_xnic_no_ops_open,
};

static struct fi_ops_cm xnic_pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = xnic_pep_setname,
	.getname = xnic_pep_getname,
	.getpeer = fi_xnic_no_getpeer,
	.connect = fi_xnic_no_connect,
	.listen = xnic_listen,
	.accept = fi_xnic_no_accept,
	.reject = xnic_reject,
	.shutdown = fi_xnic_no_shutdown,
	.join = fi_xnic_no_join,
};

int fi_xnic_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		       struct fid_pep **pepp, void *context)
{
	struct fi_xnic_pep *pep;
	struct xnic_ctx *ctx;
	uint32_t node_id;
	int err;

	(void)fabric;
	if (!info || !pepp || !info->domain_attr || !info->domain_attr->name)
		return -FI_EINVAL;
	if (info->ep_attr && info->ep_attr->type != FI_EP_MSG &&
	    info->ep_attr->type != FI_EP_UNSPEC)
		return -FI_EINVAL;
	if (info->src_addr &&
	    fi_xnic_addr_check(info->src_addr, info->src_addrlen))
		return -FI_EINVAL;
	err = xnic_open(info->domain_attr->name, &ctx);
	if (err)
		return err == -ENODEV ? -FI_ENODEV : fi_xnic_err(err);
	node_id = xnic_ctx_info(ctx)->node_id;
	xnic_close(ctx);
	if (info->src_addr && fi_xnic_addr_node(info->src_addr) != node_id)
		return -FI_EINVAL;

	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	fi_xnic_addr_init(&pep->addr, node_id,
			  info->src_addr ? fi_xnic_addr_port(info->src_addr) :
					   0);
	pthread_mutex_init(&pep->lock, NULL);
	pep->refs = 1;
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &xnic_pep_fi_ops;
	pep->pep_fid.ops = &fi_xnic_ep_ops;
	pep->pep_fid.cm = &xnic_pep_cm_ops;
	*pepp = &pep->pep_fid;
	return 0;
}
