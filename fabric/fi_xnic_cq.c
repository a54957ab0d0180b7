// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queue: an xnic CQ read without a system call; each CQE
 * becomes an fi_cq_*_entry of the CQ's format. An error CQE stops the
 * read: fi_cq_read returns -FI_EAVAIL and fi_cq_readerr hands it out with
 * prov_errno = the xnic completion status (fi_cq_strerror names it).
 * wr_id is the operation's context, or FI_XNIC_WR_QUIET for an operation
 * posted without a completion wanted: its successful CQE is dropped. Each
 * CQE taken off the ring gives its entry back to cqe_budget (FI_EP_MSG
 * posts take them: fi_xnic_ep.c) and counts off its endpoint's WQEs in
 * flight; the CQEs of a closed endpoint are dropped (fi_close discards
 * its work), and the entries its WQEs that never complete held come back
 * at its close (fi_xnic_cq_del_qp()).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fi_xnic_rdm.h"

#define XNIC_CQ_DEF_SIZE	1024

/* A completion an RDM endpoint made (fi_xnic_cq_put()). */
struct fi_xnic_cq_sw {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	int err;			/* positive FI_ errno, 0: success */
	int prov_errno;
	size_t olen;
};

static uint64_t xnic_cqe_flags(const struct xnic_cqe *c)
{
	uint64_t f;

	switch (c->opcode) {
	case XNIC_WC_SEND:
		return FI_MSG | FI_SEND;
	case XNIC_WC_RDMA_WRITE:
		return FI_RMA | FI_WRITE;
	case XNIC_WC_RDMA_READ:
		return FI_RMA | FI_READ;
	case XNIC_WC_RECV:
		f = FI_MSG | FI_RECV;
		break;
	case XNIC_WC_RECV_RDMA_WITH_IMM:
		f = FI_RMA | FI_REMOTE_WRITE;
		break;
	default:
		return 0;
	}
	if (c->flags & XNIC_CQE_F_IMM)
		f |= FI_REMOTE_CQ_DATA;
	return f;
}

/* An xnic completion status as an FI_ errno (positive). */
static int xnic_status_errno(unsigned int status)
{
	switch (status) {
	case XNIC_WC_LOC_LEN_ERR:
		return FI_ETRUNC;
	case XNIC_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case XNIC_WC_LOC_PROT_ERR:
	case XNIC_WC_LOC_ACCESS_ERR:
	case XNIC_WC_REM_ACCESS_ERR:
		return FI_EACCES;
	case XNIC_WC_REM_INV_REQ_ERR:
	case XNIC_WC_LOC_QP_OP_ERR:
		return FI_EINVAL;
	case XNIC_WC_RETRY_EXC_ERR:
	case XNIC_WC_RNR_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	case XNIC_WC_REM_OP_ERR:
		return FI_EREMOTEIO;
	default:
		return FI_EIO;
	}
}

static size_t xnic_entry_size(enum fi_cq_format f)
{
	switch (f) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	case FI_CQ_FORMAT_TAGGED:
		return sizeof(struct fi_cq_tagged_entry);
	default:
		return 0;
	}
}

static void xnic_fill_entry(struct fi_xnic_cq *cq, void *buf, size_t i,
			    const struct xnic_cqe *c)
{
	struct fi_cq_tagged_entry e = {
		.op_context = (void *)(uintptr_t)c->wr_id,
		.flags = xnic_cqe_flags(c),
		.len = c->byte_len,
		.data = (c->flags & XNIC_CQE_F_IMM) ? ntohl(c->imm_data) : 0,
	};
	size_t sz = xnic_entry_size(cq->format);

	/* The formats are prefixes of one another (fi_cq(3)). */
	memcpy((char *)buf + i * sz, &e, sz);
}

/* The address of a WQE's wr_id that wants no completion (fi_xnic.h). */
const char fi_xnic_wr_quiet;

/**
 * fi_xnic_cqe_take() - promise @need entries of a CQ
 * @budget: the CQ's entries not promised yet
 * @need: entries wanted
 * Return: 0, or -FI_EAGAIN when fewer than @need are left (none taken).
 */
int fi_xnic_cqe_take(unsigned int *budget, unsigned int need)
{
	unsigned int left = __atomic_load_n(budget, __ATOMIC_RELAXED);

	do {
		if (left < need)
			return -FI_EAGAIN;
	} while (!__atomic_compare_exchange_n(budget, &left, left - need,
					      false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 0;
}

/**
 * fi_xnic_cqe_give() - give back entries fi_xnic_cqe_take() promised
 * @budget: as for fi_xnic_cqe_take()
 * @n: entries: read from the CQ, or never to be written
 */
void fi_xnic_cqe_give(unsigned int *budget, unsigned int n)
{
	__atomic_fetch_add(budget, n, __ATOMIC_RELAXED);
}

/* Index of @qpn in @cq->qps, or where it would go. Lock held. */
static unsigned int xnic_cq_qp_index(const struct fi_xnic_cq *cq,
				     uint32_t qpn)
{
	unsigned int lo = 0, hi = cq->nqps;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (cq->qps[mid].qpn < qpn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The in-flight count of the endpoint whose QP @qpn a CQE names, or NULL
 * when that endpoint was closed. Lock held.
 */
static unsigned int *xnic_cq_qp_out(struct fi_xnic_cq *cq, uint32_t qpn)
{
	unsigned int i = cq->qps_last;

	if (i < cq->nqps && cq->qps[i].qpn == qpn)
		return cq->qps[i].out;
	i = xnic_cq_qp_index(cq, qpn);
	if (i == cq->nqps || cq->qps[i].qpn != qpn)
		return NULL;
	cq->qps_last = i;
	return cq->qps[i].out;
}

/**
 * fi_xnic_cq_add_qp() - an FI_EP_MSG endpoint's QP completes on @cq
 * @cq: CQ
 * @qpn: the QP's number
 * @out: the endpoint's count of its WQEs in flight on @cq: incremented by
 *	its posts, decremented by fi_cq_read as it takes their CQEs
 * Return: 0 or -FI_ENOMEM.
 */
int fi_xnic_cq_add_qp(struct fi_xnic_cq *cq, uint32_t qpn, unsigned int *out)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&cq->lock);
	if (cq->nqps == cq->qps_size) {
		unsigned int n = cq->qps_size ? cq->qps_size * 2 : 4;
		struct fi_xnic_cq_qp *t = realloc(cq->qps, n * sizeof(*t));

		if (!t) {
			ret = -FI_ENOMEM;
			goto out;
		}
		cq->qps = t;
		cq->qps_size = n;
	}
	i = xnic_cq_qp_index(cq, qpn);
	memmove(cq->qps + i + 1, cq->qps + i,
		(cq->nqps - i) * sizeof(cq->qps[0]));
	cq->qps[i].qpn = qpn;
	cq->qps[i].out = out;
	cq->nqps++;
out:
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

/**
 * fi_xnic_cq_del_qp() - an FI_EP_MSG endpoint's QP was destroyed
 * @cq: CQ it completed on
 * @qpn: its number
 * @destroyed: xnic_destroy_qp() succeeded; if not, the kernel may still
 *	write CQEs of it, and no entry comes back but as they are read
 *
 * Its CQEs still in the ring will be dropped as fi_cq_read takes them,
 * each giving its entry back; the entries its other WQEs in flight held
 * (the kernel writes no CQE after xnic_destroy_qp()) come back now.
 */
void fi_xnic_cq_del_qp(struct fi_xnic_cq *cq, uint32_t qpn, bool destroyed)
{
	unsigned int i, out;
	int left;

	pthread_mutex_lock(&cq->lock);
	i = xnic_cq_qp_index(cq, qpn);
	if (i < cq->nqps && cq->qps[i].qpn == qpn) {
		out = __atomic_load_n(cq->qps[i].out, __ATOMIC_RELAXED);
		memmove(cq->qps + i, cq->qps + i + 1,
			(cq->nqps - i - 1) * sizeof(cq->qps[0]));
		cq->nqps--;
		left = destroyed ? xnic_cq_count_qp(cq->cq, qpn) : -1;
		if (left >= 0 && (unsigned int)left < out)
			fi_xnic_cqe_give(&cq->cqe_budget,
					 out - (unsigned int)left);
	}
	pthread_mutex_unlock(&cq->lock);
}

static ssize_t xnic_cq_read_locked(struct fi_xnic_cq *cq, void *buf,
				   size_t count, fi_addr_t *src)
{
	size_t i = 0;

	if (cq->err_pending)
		return -FI_EAVAIL;
	while (i < count) {
		unsigned int *out;
		struct xnic_cqe c;
		int n = xnic_poll_cq(cq->cq, &c, 1);

		if (n < 0) {
			cq->cq_err = n;
			break;
		}
		if (!n)
			break;
		/* Its ring entry is free again. */
		fi_xnic_cqe_give(&cq->cqe_budget, 1);
		out = xnic_cq_qp_out(cq, c.qp_num);
		if (!out)
			continue;	/* its endpoint was closed */
		__atomic_fetch_sub(out, 1, __ATOMIC_RELAXED);
		if (c.status != XNIC_WC_SUCCESS) {
			if (c.wr_id == FI_XNIC_WR_QUIET)
				c.wr_id = 0;
			cq->err = c;
			cq->err_pending = true;
			break;
		}
		if (c.wr_id == FI_XNIC_WR_QUIET)
			continue;	/* no completion was asked for */
		xnic_fill_entry(cq, buf, i, &c);
		if (src)
			src[i] = FI_ADDR_NOTAVAIL;
		i++;
	}
	if (i)
		return (ssize_t)i;
	if (cq->err_pending)
		return -FI_EAVAIL;
	/* libxnic: -EOVERFLOW, the CQ overflowed; anything else is corrupt. */
	if (cq->cq_err)
		return cq->cq_err == -EOVERFLOW ? -FI_EOVERRUN : -FI_EIO;
	return -FI_EAGAIN;
}

/**
 * fi_xnic_cq_put() - queue a completion an RDM endpoint made
 * @cq: CQ
 * @e: the entry (its prefix of the CQ's format is reported)
 * @src: the source address (fi_cq_readfrom), or FI_ADDR_NOTAVAIL
 * @err: 0, or a positive FI_ errno: an error entry for fi_cq_readerr
 * @prov_errno: with @err: an xnic completion status, or 0
 * @olen: with FI_ETRUNC: the bytes that did not fit
 * Return: 0 or -FI_ENOMEM (the ring could not grow).
 */
int fi_xnic_cq_put(struct fi_xnic_cq *cq, const struct fi_cq_tagged_entry *e,
		   fi_addr_t src, int err, int prov_errno, size_t olen)
{
	struct fi_xnic_cq_sw *s;

	pthread_mutex_lock(&cq->lock);
	if (cq->sw_count == cq->sw_size) {
		size_t n = cq->sw_size ? cq->sw_size * 2 : 256, i;
		struct fi_xnic_cq_sw *ring = malloc(n * sizeof(*ring));

		if (!ring) {
			pthread_mutex_unlock(&cq->lock);
			return -FI_ENOMEM;
		}
		for (i = 0; i < cq->sw_count; i++)
			ring[i] = cq->sw[(cq->sw_head + i) % cq->sw_size];
		free(cq->sw);
		cq->sw = ring;
		cq->sw_size = n;
		cq->sw_head = 0;
	}
	s = &cq->sw[(cq->sw_head + cq->sw_count) % cq->sw_size];
	s->e = *e;
	s->src = src;
	s->err = err;
	s->prov_errno = prov_errno;
	s->olen = olen;
	cq->sw_count++;
	/* A waiter armed the CQ (fi_xnic_cq_arm_all()): wake it, once. */
	if (cq->sw_armed) {
		uint64_t one = 1;

		cq->sw_armed = false;
		if (write(cq->sw_fd, &one, sizeof(one)) < 0)
			XNIC_WARN(FI_LOG_CQ, "eventfd write: %s\n",
				  strerror(errno));
	}
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/**
 * fi_xnic_cq_bind_check() - what fi_ep_bind(ep, cq, flags) checks for any
 *	endpoint
 * @cq: CQ
 * @d: the endpoint's domain
 * @flags: FI_TRANSMIT and/or FI_RECV, FI_SELECTIVE_COMPLETION
 * @tx: the endpoint's send CQ so far (NULL: none)
 * @rx: its receive CQ so far
 * Return: 0; -FI_EBADFLAGS; -FI_EINVAL: another domain's CQ; -FI_EBUSY:
 * that direction has a CQ already.
 */
int fi_xnic_cq_bind_check(const struct fi_xnic_cq *cq,
			  const struct fi_xnic_domain *d, uint64_t flags,
			  const struct fi_xnic_cq *tx,
			  const struct fi_xnic_cq *rx)
{
	if (flags & ~(uint64_t)(FI_TRANSMIT | FI_RECV |
				FI_SELECTIVE_COMPLETION) ||
	    !(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (cq->domain != d)
		return -FI_EINVAL;
	if (((flags & FI_TRANSMIT) && tx) || ((flags & FI_RECV) && rx))
		return -FI_EBUSY;
	return 0;
}

/**
 * fi_xnic_cq_add_rdm() - an RDM endpoint binds to @cq
 * @cq: CQ (no FI_EP_MSG endpoint may be bound to it)
 * @ep: endpoint; bound once even for both directions
 * Return: 0; -FI_EINVAL: a MSG endpoint uses @cq; -FI_ENOSPC: too many.
 */
int fi_xnic_cq_add_rdm(struct fi_xnic_cq *cq, struct fi_xnic_rdm_ep *ep)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&cq->lock);
	for (i = 0; i < cq->nrdm; i++)
		if (cq->rdm[i] == ep)
			goto out;
	if (__atomic_load_n(&cq->refs, __ATOMIC_RELAXED))
		ret = -FI_EINVAL;
	else if (cq->nrdm == FI_XNIC_CQ_MAX_RDM)
		ret = -FI_ENOSPC;
	else
		cq->rdm[cq->nrdm++] = ep;
out:
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

/**
 * fi_xnic_cq_del_rdm() - an RDM endpoint is being closed
 * @cq: CQ it was bound to
 * @ep: endpoint
 *
 * Returns once no other thread's fi_cq_read progresses @ep any more (the
 * endpoint may then be torn down), and @cq's wait fd arms its xnic CQ no
 * more.
 */
void fi_xnic_cq_del_rdm(struct fi_xnic_cq *cq, struct fi_xnic_rdm_ep *ep)
{
	unsigned int i;

	pthread_rwlock_wrlock(&cq->rdm_lock);
	pthread_mutex_lock(&cq->lock);
	for (i = 0; i < cq->nrdm; i++) {
		if (cq->rdm[i] == ep) {
			cq->rdm[i] = cq->rdm[--cq->nrdm];
			break;
		}
	}
	pthread_mutex_unlock(&cq->lock);
	pthread_rwlock_unlock(&cq->rdm_lock);
}

/*
 * Progress the bound RDM endpoints (without @cq's lock: they take it;
 * @rdm_lock keeps them from being closed meanwhile).
 */
static void xnic_cq_progress(struct fi_xnic_cq *cq)
{
	struct fi_xnic_rdm_ep *eps[FI_XNIC_CQ_MAX_RDM];
	unsigned int i, n;

	pthread_rwlock_rdlock(&cq->rdm_lock);
	pthread_mutex_lock(&cq->lock);
	n = cq->nrdm;
	memcpy(eps, cq->rdm, n * sizeof(eps[0]));
	pthread_mutex_unlock(&cq->lock);
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&eps[i]->lock);
		fi_xnic_rdm_progress(eps[i]);
		pthread_mutex_unlock(&eps[i]->lock);
	}
	pthread_rwlock_unlock(&cq->rdm_lock);
}

static ssize_t xnic_cq_read_sw(struct fi_xnic_cq *cq, void *buf, size_t count,
			       fi_addr_t *src)
{
	size_t i, sz = xnic_entry_size(cq->format);

	if (!count)
		return 0;	/* progress only */
	for (i = 0; i < count && cq->sw_count; i++) {
		struct fi_xnic_cq_sw *s = &cq->sw[cq->sw_head];

		if (s->err)
			break;
		/* The formats are prefixes of one another (fi_cq(3)). */
		memcpy((char *)buf + i * sz, &s->e, sz);
		if (src)
			src[i] = s->src;
		cq->sw_head = (cq->sw_head + 1) % cq->sw_size;
		cq->sw_count--;
	}
	if (i)
		return (ssize_t)i;
	return cq->sw_count ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t xnic_cq_readerr_sw(struct fi_xnic_cq *cq,
				  struct fi_cq_err_entry *e)
{
	struct fi_xnic_cq_sw *s;

	if (!cq->sw_count || !cq->sw[cq->sw_head].err)
		return -FI_EAGAIN;
	s = &cq->sw[cq->sw_head];
	e->op_context = s->e.op_context;
	e->flags = s->e.flags;
	e->len = s->e.len;
	e->buf = s->e.buf;
	e->data = s->e.data;
	e->tag = s->e.tag;
	e->olen = s->olen;
	e->err = s->err;
	e->prov_errno = s->prov_errno;
	e->err_data_size = 0;
	cq->sw_head = (cq->sw_head + 1) % cq->sw_size;
	cq->sw_count--;
	return 1;
}

static ssize_t xnic_cq_readfrom(struct fid_cq *cq_fid, void *buf,
				size_t count, fi_addr_t *src)
{
	struct fi_xnic_cq *cq = container_of(cq_fid, struct fi_xnic_cq, cq_fid);
	ssize_t ret;

	if (!buf && count)
		return -FI_EINVAL;
	if (cq->nrdm)
		xnic_cq_progress(cq);
	pthread_mutex_lock(&cq->lock);
	if (cq->nrdm || cq->sw_count)
		ret = xnic_cq_read_sw(cq, buf, count, src);
	else
		ret = xnic_cq_read_locked(cq, buf, count, src);
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

static ssize_t xnic_cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return xnic_cq_readfrom(cq_fid, buf, count, NULL);
}

static ssize_t xnic_cq_readerr(struct fid_cq *cq_fid,
			       struct fi_cq_err_entry *e, uint64_t flags)
{
	struct fi_xnic_cq *cq = container_of(cq_fid, struct fi_xnic_cq, cq_fid);
	const struct xnic_cqe *c = &cq->err;

	(void)flags;
	if (!e)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->lock);
	if (cq->nrdm || cq->sw_count) {
		ssize_t ret = xnic_cq_readerr_sw(cq, e);

		pthread_mutex_unlock(&cq->lock);
		return ret;
	}
	if (!cq->err_pending) {
		pthread_mutex_unlock(&cq->lock);
		return -FI_EAGAIN;
	}
	e->op_context = (void *)(uintptr_t)c->wr_id;
	e->flags = xnic_cqe_flags(c);
	e->len = 0;
	e->buf = NULL;
	e->data = 0;
	e->tag = 0;
	e->olen = 0;
	e->err = xnic_status_errno(c->status);
	e->prov_errno = c->status;
	/* API >= 1.5: err_data is the caller's buffer; we give none. */
	e->err_data_size = 0;
	cq->err_pending = false;
	pthread_mutex_unlock(&cq->lock);
	return 1;
}

/* Consume @x's completion events, ask for the next; whether it has CQEs. */
static int xnic_cq_arm_one(struct xnic_cq *x, bool *ready)
{
	int err;

	xnic_cq_read_events(x);
	err = xnic_cq_arm(x, 0);
	/* A CQE written before the arm raises no event. */
	*ready |= xnic__cq_ready(x);
	return err;
}

/**
 * fi_xnic_cq_arm_all() - make @cq's wait fd (FI_GETWAIT: an epoll set of
 *	its xnic CQs' completion channels and an eventfd of its software
 *	entries) readable on its next completion, fi_trywait()'s protocol
 * @cq: CQ, its lock held
 *
 * An RDM endpoint's xnic CQ joins the set here once it exists (each
 * endpoint bound has its own; a closed one leaves it with its fd).
 *
 * Return: 0 when there is nothing to read; -EAGAIN when there is; a
 * negative errno of REQ_NOTIFY_CQ.
 */
int fi_xnic_cq_arm_all(struct fi_xnic_cq *cq)
{
	bool ready = cq->err_pending || cq->sw_count;
	uint64_t v;
	unsigned int i;
	int err;

	if (read(cq->sw_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	err = xnic_cq_arm_one(cq->cq, &ready);
	for (i = 0; !err && i < cq->nrdm; i++) {
		struct xnic_cq *x = cq->rdm[i]->xcq;
		struct epoll_event ev = { .events = EPOLLIN };

		if (!x)
			continue;	/* not enabled yet */
		if (epoll_ctl(cq->wait_fd, EPOLL_CTL_ADD, xnic_cq_fd(x), &ev) &&
		    errno != EEXIST)
			return -errno;
		err = xnic_cq_arm_one(x, &ready);
	}
	if (err)
		return err;
	cq->sw_armed = true;
	return ready ? -EAGAIN : 0;
}

/* Sleep until @cq may have something to read: 0, -ETIMEDOUT, -errno. */
static int xnic_cq_wait_any(struct fi_xnic_cq *cq, int timeout_ms)
{
	struct pollfd p = { .fd = cq->wait_fd, .events = POLLIN };
	int err;

	/* Armed under the lock, the sleep without: other threads read on. */
	pthread_mutex_lock(&cq->lock);
	err = fi_xnic_cq_arm_all(cq);
	pthread_mutex_unlock(&cq->lock);
	if (err)
		return err == -EAGAIN ? 0 : err;
	err = poll(&p, 1, timeout_ms);
	if (err < 0)
		return -errno;
	return err ? 0 : -ETIMEDOUT;
}

static ssize_t xnic_cq_sreadfrom(struct fid_cq *cq_fid, void *buf,
				 size_t count, fi_addr_t *src,
				 const void *cond, int timeout)
{
	struct fi_xnic_cq *cq = container_of(cq_fid, struct fi_xnic_cq, cq_fid);
	int waited = 0;
	ssize_t ret;

	(void)cond;
	for (;;) {
		int slice, err;

		ret = xnic_cq_readfrom(cq_fid, buf, count, src);
		if (ret != -FI_EAGAIN)
			return ret;
		if (timeout >= 0 && waited >= timeout)
			return -FI_EAGAIN;
		slice = timeout < 0 || timeout - waited > 100 ? 100 :
			timeout - waited;
		err = xnic_cq_wait_any(cq, slice);
		if (err == -ETIMEDOUT)
			waited += slice;
		else if (err && err != -EINTR)
			return fi_xnic_err(err);
	}
}

static ssize_t xnic_cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			     const void *cond, int timeout)
{
	return xnic_cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int xnic_cq_signal(struct fid_cq *cq)
{
	(void)cq;
	return -FI_ENOSYS;
}

static const char *xnic_cq_strerror(struct fid_cq *cq, int prov_errno,
				    const void *err_data, char *buf,
				    size_t len)
{
	const char *s = xnic_wc_status_str((unsigned int)prov_errno);

	(void)cq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static int xnic_cq_close(struct fid *fid)
{
	struct fi_xnic_cq *cq = container_of(fid, struct fi_xnic_cq,
					     cq_fid.fid);
	int err;

	if (__atomic_load_n(&cq->refs, __ATOMIC_RELAXED) || cq->nrdm)
		return -FI_EBUSY;
	err = xnic_destroy_cq(cq->cq);
	if (err)
		return fi_xnic_err(err);
	close(cq->wait_fd);
	close(cq->sw_fd);
	__atomic_fetch_sub(&cq->domain->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_destroy(&cq->lock);
	pthread_rwlock_destroy(&cq->rdm_lock);
	free(cq->sw);
	free(cq->qps);
	free(cq);
	return 0;
}

static int xnic_cq_control(struct fid *fid, int command, void *arg)
{
	struct fi_xnic_cq *cq = container_of(fid, struct fi_xnic_cq,
					     cq_fid.fid);

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (!arg)
		return -FI_EINVAL;
	/* One fd for the CQ's life: it gains the RDM endpoints' CQs. */
	*(int *)arg = cq->wait_fd;
	return 0;
}

static struct fi_ops xnic_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_cq_close,
	.bind = fi_xnic_no_bind,
	.control = xnic_cq_control,
	.ops_open = fi_xnic_no_ops_open,
};

static struct fi_ops_cq xnic_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = xnic_cq_read,
	.readfrom = xnic_cq_readfrom,
	.readerr = xnic_cq_readerr,
	.sread = xnic_cq_sread,
	.sreadfrom = xnic_cq_sreadfrom,
	.signal = xnic_cq_signal,
	.strerror = xnic_cq_strerror,
};

/* @cq's wait fd: an epoll set of its xnic CQ and its software eventfd. */
static int xnic_cq_wait_set(struct fi_xnic_cq *cq)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	cq->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	if (cq->wait_fd < 0)
		return -errno;
	cq->sw_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->sw_fd < 0) {
		err = -errno;
		close(cq->wait_fd);
		return err;
	}
	if (epoll_ctl(cq->wait_fd, EPOLL_CTL_ADD, cq->sw_fd, &ev) ||
	    epoll_ctl(cq->wait_fd, EPOLL_CTL_ADD, xnic_cq_fd(cq->cq), &ev)) {
		err = -errno;
		close(cq->sw_fd);
		close(cq->wait_fd);
		return err;
	}
	return 0;
}

int fi_xnic_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		    struct fid_cq **cqp, void *context)
{
	struct fi_xnic_domain *d = container_of(domain, struct fi_xnic_domain,
						domain_fid);
	struct fi_xnic_cq *cq;
	size_t size;
	int err;

	if (!attr || !cqp)
		return -FI_EINVAL;
	if (attr->flags & ~(uint64_t)FI_AFFINITY)
		return -FI_EBADFLAGS;
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->wait_cond != FI_CQ_COND_NONE)
		return -FI_ENOSYS;
	size = attr->size ? attr->size : XNIC_CQ_DEF_SIZE;
	if (size > d->lim.attr.max_cqe) {
		/* ofi_rxm asks for rx+tx sizes times the universe size. */
		FI_INFO(&fi_xnic_prov, FI_LOG_CQ,
			"CQ size %zu clamped to the device's %u\n", size,
			d->lim.attr.max_cqe);
		size = d->lim.attr.max_cqe;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ?
		     FI_CQ_FORMAT_CONTEXT : attr->format;
	if (!xnic_entry_size(cq->format)) {
		free(cq);
		return -FI_ENOSYS;
	}
	err = xnic_create_cq(d->ctx, (unsigned int)size, &cq->cq);
	if (err) {
		XNIC_WARN(FI_LOG_CQ, "xnic_create_cq(%zu): %s\n", size,
			  xnic_strerror(err));
		free(cq);
		return fi_xnic_err(err);
	}
	err = xnic_cq_wait_set(cq);
	if (err) {
		xnic_destroy_cq(cq->cq);
		free(cq);
		return fi_xnic_err(err);
	}
	pthread_mutex_init(&cq->lock, NULL);
	pthread_rwlock_init(&cq->rdm_lock, NULL);
	cq->domain = d;
	cq->cqe_budget = (unsigned int)size;
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &xnic_cq_fi_ops;
	cq->cq_fid.ops = &xnic_cq_ops;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*cqp = &cq->cq_fid;
	return 0;
}
