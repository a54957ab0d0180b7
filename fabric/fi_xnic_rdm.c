// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The FI_EP_RDM endpoint object and its connections (fi_xnic_rdm.h says
 * how the endpoint works): fi_endpoint, bind, enable, close, the thread
 * that accepts peers' connections and the connect on first send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fi_xnic_rdm.h"

/* ---------------------------- connections --------------------------- */

/* Whether this endpoint's address is below (@node, @port). */
static bool xnic_rdm_lower(const struct fi_xnic_rdm_ep *ep, uint32_t node,
			   uint16_t port)
{
	uint32_t n = fi_xnic_addr_node(&ep->addr);

	return n < node || (n == node && fi_xnic_addr_port(&ep->addr) < port);
}

/* The live connection to (@node, @port), or NULL. Lock held. */
static struct fi_xnic_rdm_conn *xnic_rdm_find(struct fi_xnic_rdm_ep *ep,
					      uint32_t node, uint16_t port)
{
	struct fi_xnic_rdm_conn *c;

	for (c = ep->conns; c; c = c->next)
		if (c->node == node && c->port == port && !c->superseded &&
		    !c->stale)
			return c;
	return NULL;
}

/*
 * Whether @c is broken: marked so, or its QP is in the error state (the peer
 * disconnected it, say) and our progress has not read that yet.
 */
static bool xnic_rdm_conn_broken(const struct fi_xnic_rdm_conn *c)
{
	return c->dead ||
	       (c->qp && xnic_qp_err_reason(c->qp) != XNIC_QP_ERR_NONE);
}

/*
 * The newest connection of ours to (@node, @port) that failed and was
 * replaced (it waits to be freed), or NULL: a new one is then a
 * reconnection, which the peer takes even if it has not seen that one
 * fail. Lock held.
 */
static const struct fi_xnic_rdm_conn *
xnic_rdm_replaced(const struct fi_xnic_rdm_ep *ep, uint32_t node,
		  uint16_t port)
{
	const struct fi_xnic_rdm_conn *c;

	for (c = ep->conns; c; c = c->next)	/* newest first */
		if (c->node == node && c->port == port && c->stale)
			return c;
	return NULL;
}

/* A new connection to (@node, @port), on the list, not set up. Lock held. */
static struct fi_xnic_rdm_conn *xnic_rdm_conn_add(struct fi_xnic_rdm_ep *ep,
						  uint32_t node, uint16_t port,
						  uint8_t state)
{
	struct fi_xnic_rdm_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ep = ep;
	c->node = node;
	c->port = port;
	c->state = state;
	c->credit = FI_XNIC_RDM_CREDITS;
	c->peer = fi_xnic_av_find(ep->av, node, port);
	c->next = ep->conns;
	ep->conns = c;
	return c;
}

/* Destroy @c's QP: the kernel writes no CQE of it after this. */
static void xnic_rdm_conn_qp_destroy(struct fi_xnic_rdm_conn *c)
{
	int err = xnic_destroy_qp(c->qp);

	if (err)
		XNIC_WARN(FI_LOG_EP_CTRL, "destroy QP: %s\n",
			  xnic_strerror(err));
	c->qp = NULL;
	c->qp_gone = true;
}

static void xnic_rdm_conn_free(struct fi_xnic_rdm_conn *c)
{
	if (c->qp)
		xnic_rdm_conn_qp_destroy(c);
	if (c->qp_gone)
		fi_xnic_cqe_give(&c->ep->cqe_budget,
				 FI_XNIC_RDM_SQ + FI_XNIC_RDM_RX_BUFS);
	if (c->mr)
		xnic_dereg_mr(c->mr);
	free(c->mem);
	free(c->bufs);
	free(c->repost);
	free(c);
}

/* Unlink @c and free it (it never connected: no CQE refers to it). */
static void xnic_rdm_conn_drop(struct fi_xnic_rdm_ep *ep,
			       struct fi_xnic_rdm_conn *c)
{
	struct fi_xnic_rdm_conn **pp;

	for (pp = &ep->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	xnic_rdm_conn_free(c);
}

/**
 * fi_xnic_rdm_conn_retire() - replace a connection
 * @ep: its endpoint, lock held
 * @c: the connection: it failed, or the peer connected again
 *
 * No lookup finds @c any more, its QP goes to error (a DREQ tells the
 * peer, the kernel flushes its WQEs) and its sends waiting for a FIN
 * fail; it stays on the list for the CQEs and requests that name it,
 * until fi_xnic_rdm_reap() frees it, and tells a later connect to the
 * same peer that it replaces a failed one (xnic_rdm_replaced()).
 */
void fi_xnic_rdm_conn_retire(struct fi_xnic_rdm_ep *ep,
			     struct fi_xnic_rdm_conn *c)
{
	size_t i;

	if (c->stale)
		return;
	c->stale = true;
	ep->nstale++;
	for (i = 0; i < ep->ntx; i++)
		if (ep->tx[i] == c)
			ep->tx[i] = NULL;
	if (!c->dead && c->qp) {
		xnic_cm_disconnect(c->qp);
		fi_xnic_rdm_conn_failed(ep, c, XNIC_WC_WR_FLUSH_ERR);
	}
	c->dead = true;
}

/* Whether a request, a queue or a bounce buffer to post refers to @c. */
static bool xnic_rdm_conn_held(const struct fi_xnic_rdm_ep *ep,
			       const struct fi_xnic_rdm_conn *c)
{
	const struct fi_xnic_rdm_req *r;
	int q;

	if (c->pend.head || c->nrepost)
		return true;
	for (r = ep->inflight; r; r = r->inext)
		if (r->conn == c)
			return true;
	for (q = 0; q < 2; q++)
		for (r = ep->unexp[q].head; r; r = r->next)
			if (r->conn == c)
				return true;
	return false;
}

/**
 * fi_xnic_rdm_reap() - free the replaced connections nothing refers to
 * @ep: endpoint, its lock held, its CQ just read empty
 *
 * In two steps, each after a read of the CQ that found it empty: the
 * first destroys the QP (the kernel writes no CQE of it after that), the
 * second frees the connection and gives its CQ entries back, as every
 * CQE naming it has then been read. A connection that never got a QP
 * (its accept failed before, e.g. the CQ was full) is freed at once: it
 * took no CQ entries. Called by fi_xnic_rdm_progress().
 */
void fi_xnic_rdm_reap(struct fi_xnic_rdm_ep *ep)
{
	struct fi_xnic_rdm_conn **pp = &ep->conns, *c;

	while ((c = *pp)) {
		if (!c->stale || xnic_rdm_conn_held(ep, c)) {
			pp = &c->next;
		} else if (c->qp) {
			xnic_rdm_conn_qp_destroy(c);
			pp = &c->next;
		} else {
			*pp = c->next;
			ep->nstale--;
			xnic_rdm_conn_free(c);
		}
	}
}

/* Take @need entries of the endpoint's CQ for a QP, or -FI_ENOSPC. */
static int xnic_rdm_cqe_take(struct fi_xnic_rdm_ep *ep, unsigned int need)
{
	if (!fi_xnic_cqe_take(&ep->cqe_budget, need))
		return 0;
	XNIC_WARN(FI_LOG_EP_CTRL, "RDM: CQ full, no more connections\n");
	return -FI_ENOSPC;
}

/*
 * @c's QP (its WQEs counted in the endpoint's CQ) and FI_XNIC_RDM_RX_BUFS
 * bounce buffers of FI_XNIC_RDM_BUF bytes, posted. Called without the
 * lock: @c is not READY, so nobody else touches it.
 */
static int xnic_rdm_conn_setup(struct fi_xnic_rdm_ep *ep,
			       struct fi_xnic_rdm_conn *c)
{
	const unsigned int n = FI_XNIC_RDM_RX_BUFS;
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY,
		.rnr_retry = XNIC_QP_RNR_INFINITE,	/* FI_RM_ENABLED */
	};
	struct xnic_qp_cap cap = {
		.max_send_wr = FI_XNIC_RDM_SQ,
		.max_recv_wr = n,
		.max_inline_data = ep->domain->lim.attr.max_inline,
	};
	unsigned int i;
	int err;

	c->bufs = calloc(n, sizeof(*c->bufs));
	c->repost = calloc(n, sizeof(*c->repost));
	c->mem = malloc((size_t)n * FI_XNIC_RDM_BUF);
	if (!c->bufs || !c->repost || !c->mem)
		return -FI_ENOMEM;
	c->nbufs = n;
	err = xnic_reg_mr(ep->domain->pd, c->mem, (size_t)n * FI_XNIC_RDM_BUF,
			  XNIC_ACCESS_LOCAL_WRITE, &c->mr);
	if (err)
		goto err;
	err = xnic_rdm_cqe_take(ep, FI_XNIC_RDM_SQ + n);
	if (err)
		return err;
	err = xnic_create_qp_ex(ep->domain->pd, ep->xcq, ep->xcq, &cap, &attr,
				&c->qp);
	if (err) {
		fi_xnic_cqe_give(&ep->cqe_budget, FI_XNIC_RDM_SQ + n);
		goto err;
	}
	for (i = 0; i < n; i++) {
		struct xnic_sge sg = {
			.addr = (uintptr_t)c->mem + (size_t)i * FI_XNIC_RDM_BUF,
			.length = FI_XNIC_RDM_BUF,
			.lkey = c->mr->lkey,
		};

		c->bufs[i].kind = FI_XNIC_RDM_K_RXBUF;
		c->bufs[i].conn = c;
		c->bufs[i].buf = (void *)(uintptr_t)sg.addr;
		err = xnic_post_recv(c->qp, &sg, 1, (uintptr_t)&c->bufs[i]);
		if (err)
			goto err;
	}
	return 0;
err:
	XNIC_WARN(FI_LOG_EP_CTRL, "RDM connection set-up: %s\n",
		  xnic_strerror(err));
	return fi_xnic_err(err);
}

/* @c connected (@err 0) or not: tell the waiters. Lock held. */
static void xnic_rdm_conn_done(struct fi_xnic_rdm_ep *ep,
			       struct fi_xnic_rdm_conn *c, int err)
{
	if (err) {
		c->dead = true;
		/* Kept for the flushed CQEs that may name it, then freed. */
		fi_xnic_rdm_conn_retire(ep, c);
	} else {
		c->state = FI_XNIC_RDM_READY;
	}
	pthread_cond_broadcast(&ep->conn_cond);
}

static void xnic_rdm_accept(struct fi_xnic_rdm_ep *ep, struct xnic_cm_req *req)
{
	const struct fi_xnic_rdm_creq *cr = (const void *)req->private_data;
	struct fi_xnic_rdm_creq me = {
		.magic = FI_XNIC_RDM_MAGIC,
		.port = fi_xnic_addr_port(&ep->addr),
		.inc = ep->inc,
	};
	uint32_t rej = FI_XNIC_RDM_COLLISION;
	struct fi_xnic_rdm_conn *c;
	bool refuse;
	int err;

	if (req->private_len < sizeof(*cr) || cr->magic != FI_XNIC_RDM_MAGIC) {
		XNIC_WARN(FI_LOG_EP_CTRL,
			  "node %u: not an xnic RDM connection: refused\n",
			  req->remote_node);
		xnic_cm_reject(req, NULL, 0);
		return;
	}
	pthread_mutex_lock(&ep->lock);
	c = xnic_rdm_find(ep, req->remote_node, cr->port);
	if (c && c->state == FI_XNIC_RDM_CONNECTING)
		/* A collision: the lower address's connection wins. */
		refuse = xnic_rdm_lower(ep, req->remote_node, cr->port);
	else
		/*
		 * A second REQ of the endpoint we are connected to (it lost a
		 * collision, or its reconnection crossed the one we made)
		 * uses ours; a new endpoint at that address, one whose
		 * connection to our QP failed, or ours failed: replaced.
		 */
		refuse = c && !xnic_rdm_conn_broken(c) &&
			 cr->inc == c->peer_inc &&
			 !((cr->flags & FI_XNIC_RDM_CREQ_RECONNECT) &&
			   c->qp && cr->replaces == c->qp->qpn);
	if (refuse) {
		pthread_mutex_unlock(&ep->lock);
		xnic_cm_reject(req, &rej, sizeof(rej));
		return;
	}
	if (c && c->state == FI_XNIC_RDM_CONNECTING)
		c->superseded = true;	/* theirs wins: our REQ is refused */
	else if (c)
		fi_xnic_rdm_conn_retire(ep, c);
	c = xnic_rdm_conn_add(ep, req->remote_node, cr->port,
			      FI_XNIC_RDM_ACCEPTING);
	if (c) {
		c->peer_inc = cr->inc;
		c->peer_qpn = req->remote_qpn;
	}
	pthread_mutex_unlock(&ep->lock);
	if (!c) {
		xnic_cm_reject(req, NULL, 0);
		return;
	}
	err = xnic_rdm_conn_setup(ep, c);
	if (err)
		xnic_cm_reject(req, NULL, 0);
	else
		err = xnic_cm_accept(req, c->qp, &me, sizeof(me),
				     fi_xnic_timeout_ms());
	if (err)
		XNIC_WARN(FI_LOG_EP_CTRL, "accept node %u: %s\n",
			  req->remote_node, xnic_strerror(err));
	pthread_mutex_lock(&ep->lock);
	xnic_rdm_conn_done(ep, c, err);
	pthread_mutex_unlock(&ep->lock);
}

static void *xnic_rdm_cm_thread(void *arg)
{
	struct fi_xnic_rdm_ep *ep = arg;
	int fd = xnic_cm_listener_fd(ep->listener);

	while (fi_xnic_thread_wait(fd, ep->cm_stop_fd)) {
		struct xnic_cm_disconnect d;
		struct xnic_cm_req req;

		while (!xnic_cm_get_request(ep->listener, &req, 0))
			xnic_rdm_accept(ep, &req);
		/* A peer's disconnect fails the QP: its CQEs report it. */
		while (!xnic_cm_get_disconnect(ep->listener, &d, 0))
			;
	}
	return NULL;
}

/*
 * Connect @c (CONNECTING, on the list) to @a; @old: the connection it
 * replaces (failed), or NULL. Lock held, dropped inside. Return: 0, 1
 * when the peer's connection won a collision (@c is gone: the peer's
 * comes), or a negative FI_ errno (@c is gone).
 */
static int xnic_rdm_connect(struct fi_xnic_rdm_ep *ep,
			    struct fi_xnic_rdm_conn *c,
			    const struct fi_xnic_addr *a,
			    const struct fi_xnic_rdm_conn *old)
{
	struct fi_xnic_rdm_creq cr = {
		.magic = FI_XNIC_RDM_MAGIC,
		.port = fi_xnic_addr_port(&ep->addr),
		.flags = old ? FI_XNIC_RDM_CREQ_RECONNECT : 0,
		.inc = ep->inc,
		.replaces = old ? old->peer_qpn : 0,
	}, pc;
	struct xnic_cm_reply rep;
	uint32_t why = 0;
	int err;

	pthread_mutex_unlock(&ep->lock);
	err = xnic_rdm_conn_setup(ep, c);
	memset(&rep, 0, sizeof(rep));
	if (!err)
		err = xnic_cm_connect(ep->domain->ctx, c->qp, c->node,
				      fi_xnic_addr_sid(a), &cr, sizeof(cr),
				      fi_xnic_timeout_ms(), &rep);
	pthread_mutex_lock(&ep->lock);
	if (err == -ECONNREFUSED && rep.private_len >= sizeof(why))
		memcpy(&why, rep.private_data, sizeof(why));
	if (why == FI_XNIC_RDM_COLLISION) {
		/* The peer's connection is (or will be) the one. */
		c->superseded = true;
		xnic_rdm_conn_drop(ep, c);
		return 1;
	}
	if (err) {
		XNIC_WARN(FI_LOG_EP_CTRL, "connect to node %u port %u: %s\n",
			  c->node, c->port, xnic_strerror(err));
		c->superseded = true;	/* a later send may try again */
		pthread_cond_broadcast(&ep->conn_cond);
		xnic_rdm_conn_drop(ep, c);
		return err == -ECONNREFUSED ? -FI_ECONNREFUSED :
		       fi_xnic_err(err);
	}
	if (c->superseded) {	/* theirs was accepted meanwhile: ours too */
		XNIC_WARN(FI_LOG_EP_CTRL, "node %u: two connections\n",
			  c->node);
		c->superseded = false;	/* both work; ours is used */
	}
	if (rep.private_len >= sizeof(pc)) {
		memcpy(&pc, rep.private_data, sizeof(pc));
		if (pc.magic == FI_XNIC_RDM_MAGIC)
			c->peer_inc = pc.inc;
	}
	c->peer_qpn = rep.remote_qpn;
	xnic_rdm_conn_done(ep, c, 0);
	return 0;
}

/*
 * Wait for news of a connection (conn_cond) until @end, or for @ms if not
 * 0: true once @end has passed. Lock held.
 */
static bool xnic_rdm_wait(struct fi_xnic_rdm_ep *ep,
			  const struct timespec *end, int ms)
{
	struct timespec t = *end, now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (ms) {
		now.tv_nsec += ms * 1000000L;
		if (now.tv_nsec >= 1000000000L) {
			now.tv_sec++;
			now.tv_nsec -= 1000000000L;
		}
		if (now.tv_sec < t.tv_sec ||
		    (now.tv_sec == t.tv_sec && now.tv_nsec < t.tv_nsec))
			t = now;
	}
	pthread_cond_timedwait(&ep->conn_cond, &ep->lock, &t);
	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec > end->tv_sec ||
	       (now.tv_sec == end->tv_sec && now.tv_nsec >= end->tv_nsec);
}

/**
 * fi_xnic_rdm_av_sync() - forget the fi_addrs the AV no longer has
 * @ep: endpoint, its lock held
 *
 * After an fi_av_remove of the endpoint's AV, the connections cached by
 * fi_addr (@tx), the fi_addr each connection reports as its messages'
 * source and that of the unexpected messages are looked up in the AV
 * again, so that a removed fi_addr is neither sent to nor reported. The
 * connections themselves stay: the peer may still send on them, and the
 * address inserted again uses them. One atomic load when nothing was
 * removed.
 */
void fi_xnic_rdm_av_sync(struct fi_xnic_rdm_ep *ep)
{
	struct fi_xnic_rdm_conn *c;
	struct fi_xnic_rdm_req *u;
	unsigned long removed;
	int i;

	if (!ep->av)
		return;
	removed = __atomic_load_n(&ep->av->removed, __ATOMIC_ACQUIRE);
	if (removed == ep->av_removed)
		return;
	ep->av_removed = removed;
	if (ep->ntx)
		memset(ep->tx, 0, ep->ntx * sizeof(*ep->tx));
	for (c = ep->conns; c; c = c->next)
		c->peer = FI_ADDR_NOTAVAIL;
	for (i = 0; i < 2; i++)
		for (u = ep->unexp[i].head; u; u = u->next)
			u->addr = FI_ADDR_NOTAVAIL;
}

/**
 * fi_xnic_rdm_conn_get() - the connection to @dest
 * @ep: endpoint, its lock held (dropped while connecting or waiting)
 * @dest: an fi_addr of the endpoint's AV
 * @connp: the connection; NULL when @dest is this endpoint (loopback)
 *
 * The first call for a peer connects to it, or waits for the connection
 * the peer is making (blocking, up to the provider's timeout_ms). A
 * connection that failed is replaced by a new one the same way (ofi_rxm
 * reconnects on demand too): the sends on the old one failed, the next
 * goes on the new one.
 * Return: 0; -FI_EINVAL: @dest is not in the AV; -FI_EHOSTUNREACH:
 * another endpoint of this device (the CM has no loopback);
 * -FI_ECONNREFUSED: no endpoint there; -FI_ETIMEDOUT; -FI_ECONNRESET:
 * the new connection failed too; -FI_ENOMEM.
 */
int fi_xnic_rdm_conn_get(struct fi_xnic_rdm_ep *ep, fi_addr_t dest,
			 struct fi_xnic_rdm_conn **connp)
{
	struct fi_xnic_rdm_conn *c;
	bool reconnect = false;
	struct fi_xnic_addr a;
	struct timespec end;
	int err;

	*connp = NULL;
	fi_xnic_rdm_av_sync(ep);	/* @tx holds no removed fi_addr */
	if (dest < ep->ntx && ep->tx[dest] && !ep->tx[dest]->dead) {
		*connp = ep->tx[dest];
		return 0;
	}
	err = fi_xnic_av_get(ep->av, dest, &a);
	if (err)
		return err;
	if (fi_xnic_addr_node(&a) == fi_xnic_addr_node(&ep->addr))
		return fi_xnic_addr_port(&a) == fi_xnic_addr_port(&ep->addr) ?
		       0 : -FI_EHOSTUNREACH;
	if (dest >= ep->ntx) {
		size_t n = ep->ntx ? ep->ntx : 16;
		struct fi_xnic_rdm_conn **t;

		while (n <= dest)
			n *= 2;
		t = realloc(ep->tx, n * sizeof(*t));
		if (!t)
			return -FI_ENOMEM;
		memset(t + ep->ntx, 0, (n - ep->ntx) * sizeof(*t));
		ep->tx = t;
		ep->ntx = n;
	}
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += fi_xnic_timeout_ms() / 1000 + 1;
	for (;;) {
		c = xnic_rdm_find(ep, fi_xnic_addr_node(&a),
				  fi_xnic_addr_port(&a));
		if (!c) {
			c = xnic_rdm_conn_add(ep, fi_xnic_addr_node(&a),
					      fi_xnic_addr_port(&a),
					      FI_XNIC_RDM_CONNECTING);
			if (!c)
				return -FI_ENOMEM;
			err = xnic_rdm_connect(ep, c, &a,
					       xnic_rdm_replaced(ep, c->node,
								 c->port));
			if (err < 0)
				return err;
			/* Lost a collision: wait a little for the peer's. */
			if (err && xnic_rdm_wait(ep, &end, 10))
				return -FI_ETIMEDOUT;
			continue;
		}
		if (c->dead) {
			if (reconnect)
				return -FI_ECONNRESET;
			fi_xnic_rdm_conn_retire(ep, c);
			reconnect = true;
			continue;
		}
		if (c->state == FI_XNIC_RDM_READY)
			break;
		/* Being connected or accepted by another thread: wait. */
		if (xnic_rdm_wait(ep, &end, 0))
			return -FI_ETIMEDOUT;
	}
	c->peer = dest;
	ep->tx[dest] = c;
	*connp = c;
	return 0;
}

/* ------------------------- object plumbing -------------------------- */

/*
 * Entries of the endpoint's CQ (the rdm_cq_size parameter): a connection
 * takes FI_XNIC_RDM_SQ + FI_XNIC_RDM_RX_BUFS of them, so this bounds the
 * peers it can have at once; at least one, at most the device's max_cqe.
 */
static unsigned int xnic_rdm_cq_size(const struct fi_xnic_rdm_ep *ep)
{
	size_t n = FI_XNIC_RDM_CQ;

	fi_param_get_size_t(&fi_xnic_prov, "rdm_cq_size", &n);
	if (n < FI_XNIC_RDM_SQ + FI_XNIC_RDM_RX_BUFS)
		n = FI_XNIC_RDM_SQ + FI_XNIC_RDM_RX_BUFS;
	if (n > ep->domain->lim.attr.max_cqe)
		n = ep->domain->lim.attr.max_cqe;
	return (unsigned int)n;
}

static int xnic_rdm_enable(struct fi_xnic_rdm_ep *ep)
{
	size_t txsize = (size_t)FI_XNIC_RDM_TX_BUFS * FI_XNIC_RDM_BUF;
	int err, i;

	if (ep->enabled)
		return 0;
	if (!ep->tx_cq || !ep->rx_cq)
		return -FI_ENOCQ;
	if (!ep->av)
		return -FI_ENOAV;
	ep->cqe_budget = xnic_rdm_cq_size(ep);
	err = xnic_create_cq(ep->domain->ctx, ep->cqe_budget, &ep->xcq);
	if (err)
		return fi_xnic_err(err);
	ep->txmem = malloc(txsize);
	if (!ep->txmem) {
		err = -ENOMEM;
		goto err_cq;
	}
	err = xnic_reg_mr(ep->domain->pd, ep->txmem, txsize,
			  XNIC_ACCESS_LOCAL_WRITE, &ep->txmr);
	if (err)
		goto err_mem;
	for (i = 0; i < FI_XNIC_RDM_TX_BUFS; i++)
		ep->txfree[i] = i;
	ep->ntxfree = FI_XNIC_RDM_TX_BUFS;
	if (getrandom(&ep->inc, sizeof(ep->inc), GRND_NONBLOCK) !=
	    sizeof(ep->inc))
		ep->inc = (uint32_t)getpid() ^ (uint32_t)time(NULL) ^
			  (uint32_t)(uintptr_t)ep;
	err = fi_xnic_listen(ep->domain->ctx, &ep->addr, &ep->listener);
	if (err)
		goto err_mr;
	ep->cm_stop_fd = eventfd(0, EFD_CLOEXEC);
	err = -FI_ENOMEM;
	if (ep->cm_stop_fd < 0)
		goto err_listen;
	err = -pthread_create(&ep->cm_thread, NULL, xnic_rdm_cm_thread, ep);
	if (err) {
		close(ep->cm_stop_fd);
		goto err_listen;
	}
	ep->enabled = true;
	return 0;
err_listen:
	xnic_cm_unlisten(ep->listener);
	ep->listener = NULL;
err_mr:
	xnic_dereg_mr(ep->txmr);
	ep->txmr = NULL;
err_mem:
	free(ep->txmem);
	ep->txmem = NULL;
err_cq:
	xnic_destroy_cq(ep->xcq);
	ep->xcq = NULL;
	XNIC_WARN(FI_LOG_EP_CTRL, "RDM endpoint: %s\n", xnic_strerror(err));
	return err == -EADDRINUSE ? -FI_EADDRINUSE : fi_xnic_err(err);
}

static int xnic_rdm_control(struct fid *fid, int command, void *arg)
{
	struct fi_xnic_rdm_ep *ep = container_of(fid, struct fi_xnic_rdm_ep,
						 ep_fid.fid);

	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	return xnic_rdm_enable(ep);
}

static int xnic_rdm_bind_cq(struct fi_xnic_rdm_ep *ep, struct fi_xnic_cq *cq,
			    uint64_t flags)
{
	int err;

	err = fi_xnic_cq_bind_check(cq, ep->domain, flags, ep->tx_cq,
				    ep->rx_cq);
	if (err)
		return err;
	err = fi_xnic_cq_add_rdm(cq, ep);
	if (err)
		return err;
	if (flags & FI_TRANSMIT) {
		ep->tx_cq = cq;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		ep->rx_cq = cq;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

static int xnic_rdm_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fi_xnic_rdm_ep *ep = container_of(fid, struct fi_xnic_rdm_ep,
						 ep_fid.fid);

	if (!bfid)
		return -FI_EINVAL;
	if (ep->enabled)
		return -FI_EOPBADSTATE;	/* bind before fi_enable */
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (ep->av)
			return -FI_EBUSY;
		ep->av = container_of(bfid, struct fi_xnic_av, av_fid.fid);
		__atomic_fetch_add(&ep->av->refs, 1, __ATOMIC_RELAXED);
		return 0;
	case FI_CLASS_CQ:
		return xnic_rdm_bind_cq(ep, container_of(bfid,
					struct fi_xnic_cq, cq_fid.fid), flags);
	case FI_CLASS_EQ:
		return 0;	/* RDM endpoints report no CM events */
	default:
		return -FI_ENOSYS;	/* no counter or SRX */
	}
}

static void xnic_rdm_free_queue(struct fi_xnic_rdm_queue *q)
{
	struct fi_xnic_rdm_req *r, *n;

	for (r = q->head; r; r = n) {
		n = r->next;
		free(r->payload);
		free(r);
	}
	q->head = q->tail = NULL;
}

static int xnic_rdm_close(struct fid *fid)
{
	struct fi_xnic_rdm_ep *ep = container_of(fid, struct fi_xnic_rdm_ep,
						 ep_fid.fid);
	struct fi_xnic_rdm_conn *c, *n;
	int q;

	/* No fi_cq_read of another thread progresses it after this. */
	if (ep->tx_cq)
		fi_xnic_cq_del_rdm(ep->tx_cq, ep);
	if (ep->rx_cq && ep->rx_cq != ep->tx_cq)
		fi_xnic_cq_del_rdm(ep->rx_cq, ep);
	if (ep->enabled) {
		fi_xnic_thread_stop(ep->cm_thread, ep->cm_stop_fd);
		xnic_cm_unlisten(ep->listener);
	}
	/* The QPs go first: then no READ lands in an MR the flush frees. */
	for (c = ep->conns; c; c = n) {
		n = c->next;
		xnic_rdm_conn_free(c);
	}
	fi_xnic_rdm_flush(ep);
	fi_xnic_rdm_spare_free(ep);
	free(ep->tx);
	for (q = 0; q < 2; q++) {
		xnic_rdm_free_queue(&ep->posted[q]);
		xnic_rdm_free_queue(&ep->unexp[q]);
	}
	if (ep->txmr)
		xnic_dereg_mr(ep->txmr);
	free(ep->txmem);
	if (ep->xcq)
		xnic_destroy_cq(ep->xcq);
	if (ep->av)
		__atomic_fetch_sub(&ep->av->refs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&ep->domain->refs, 1, __ATOMIC_RELAXED);
	pthread_cond_destroy(&ep->conn_cond);
	pthread_mutex_destroy(&ep->lock);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int xnic_rdm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct fi_xnic_rdm_ep *ep = container_of(fid, struct fi_xnic_rdm_ep,
						 ep_fid.fid);
	size_t have;

	if (!addrlen)
		return -FI_EINVAL;
	if (!ep->enabled)
		return -FI_EOPBADSTATE;	/* the port is chosen by fi_enable */
	have = *addrlen;
	*addrlen = sizeof(ep->addr);
	if (!addr || have < sizeof(ep->addr))
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->addr, sizeof(ep->addr));
	return 0;
}

static int xnic_rdm_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct fi_xnic_rdm_ep *ep = container_of(fid, struct fi_xnic_rdm_ep,
						 ep_fid.fid);

	if (ep->enabled)
		return -FI_EOPBADSTATE;
	if (fi_xnic_addr_check(addr, addrlen) ||
	    fi_xnic_addr_node(addr) != fi_xnic_addr_node(&ep->addr))
		return -FI_EINVAL;
	memcpy(&ep->addr, addr, sizeof(ep->addr));
	return 0;
}

static struct fi_ops xnic_rdm_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_rdm_close,
	.bind = xnic_rdm_bind,
	.control = xnic_rdm_control,
	.ops_open = fi_xnic_no_ops_open,
};

static struct fi_ops_cm xnic_rdm_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = xnic_rdm_setname,
	.getname = xnic_rdm_getname,
	.getpeer = fi_xnic_no_getpeer,
	.connect = fi_xnic_no_connect,
	.listen = fi_xnic_no_listen,
	.accept = fi_xnic_no_accept,
	.reject = fi_xnic_no_reject,
	.shutdown = fi_xnic_no_shutdown,
	.join = fi_xnic_no_join,
};

extern struct fi_ops_ep fi_xnic_rdm_ep_ops;

/**
 * fi_xnic_rdm_endpoint() - fi_endpoint(3) for FI_EP_RDM
 * @domain: domain
 * @info: from fi_getinfo, ep_attr->type FI_EP_RDM
 * @epp: the new endpoint
 * @context: its context
 * Return: 0; -FI_EINVAL; -FI_ENOMEM.
 */
int fi_xnic_rdm_endpoint(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **epp, void *context)
{
	struct fi_xnic_domain *d = container_of(domain, struct fi_xnic_domain,
						domain_fid);
	struct fi_xnic_rdm_ep *ep;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	ep->domain = d;
	fi_xnic_addr_init(&ep->addr, d->lim.attr.node_id,
			  info->src_addr &&
			  !fi_xnic_addr_check(info->src_addr,
					      info->src_addrlen) ?
			  fi_xnic_addr_port(info->src_addr) : 0);
	ep->directed = info->caps & FI_DIRECTED_RECV;
	pthread_mutex_init(&ep->lock, NULL);
	pthread_cond_init(&ep->conn_cond, NULL);
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &xnic_rdm_fi_ops;
	ep->ep_fid.ops = &fi_xnic_rdm_ep_ops;
	ep->ep_fid.cm = &xnic_rdm_cm_ops;
	ep->ep_fid.msg = &fi_xnic_rdm_msg_ops;
	ep->ep_fid.tagged = &fi_xnic_rdm_tagged_ops;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*epp = &ep->ep_fid;
	return 0;
}
