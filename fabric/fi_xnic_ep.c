// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FI_EP_MSG endpoint: one reliable connected xnic QP. Sends, receives and
 * RMA post WQEs on libxnic's rings: no system call (fi_endpoint(3),
 * fi_msg(3), fi_rma(3)). Local buffers need a descriptor (FI_MR_LOCAL:
 * fi_mr_desc()) unless the data fits inline (inject, or up to
 * inject_size bytes with no descriptor). The completion's op_context is
 * the operation's context.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fi_xnic.h"

/* Local buffers -> SGEs; a buffer with no descriptor only inline. */
static int xnic_sges(const struct iovec *iov, void **desc, size_t count,
		     unsigned int max, struct xnic_sge *sg, bool *need_inline)
{
	size_t i;

	if (count > max || (count && !iov))
		return -FI_EINVAL;
	*need_inline = false;
	for (i = 0; i < count; i++) {
		struct fi_xnic_mr *mr = desc ? desc[i] : NULL;

		if (iov[i].iov_len > UINT32_MAX)
			return -FI_EMSGSIZE;
		if (iov[i].iov_len && !iov[i].iov_base)
			return -FI_EINVAL;
		sg[i].addr = (uintptr_t)iov[i].iov_base;
		sg[i].length = (uint32_t)iov[i].iov_len;
		sg[i].lkey = mr ? mr->lkey : 0;
		if (!mr && iov[i].iov_len)
			*need_inline = true;
	}
	return 0;
}

static int xnic_errno_post(int err)
{
	switch (err) {
	case 0:
		return 0;
	case -EAGAIN:
		return -FI_EAGAIN;
	case -ENOTCONN:
		return -FI_ENOTCONN;
	default:
		return fi_xnic_err(err);
	}
}

/*
 * FI_RM_ENABLED: each WQE holds an entry of the CQ it completes on until
 * fi_cq_read takes its CQE (fi_xnic.h), so the CQ cannot overflow: with
 * none left the post is -FI_EAGAIN. The CQs are the QP's (xnic_ep_enable).
 */
static struct fi_xnic_cq *xnic_ep_scq(struct fi_xnic_ep *ep)
{
	return ep->tx_cq ? ep->tx_cq : ep->rx_cq;
}

static struct fi_xnic_cq *xnic_ep_rcq(struct fi_xnic_ep *ep)
{
	return ep->rx_cq ? ep->rx_cq : ep->tx_cq;
}

/* The endpoint's count of WQEs in flight on its receive CQ. */
static unsigned int *xnic_ep_rout(struct fi_xnic_ep *ep)
{
	return &ep->out[xnic_ep_rcq(ep) != xnic_ep_scq(ep)];
}

/* Whether a post that returned @err left no WQE (its entry comes back). */
static bool xnic_post_none(int err)
{
	/* Any other error is the doorbell's: the WQE was published. */
	return err == -EAGAIN || err == -ENOTCONN || err == -EINVAL ||
	       err == -EOVERFLOW;
}

/* libxnic's post function of @opcode. */
static int xnic_post_op(struct xnic_qp *qp, uint8_t opcode,
			const struct xnic_sge *sg, unsigned int nsge,
			uint64_t raddr, uint32_t rkey, uint32_t imm,
			uint64_t wr_id, unsigned int flags)
{
	switch (opcode) {
	case XNIC_WR_SEND:
		return xnic_post_send(qp, sg, nsge, wr_id, flags);
	case XNIC_WR_SEND_WITH_IMM:
		return xnic_post_send_imm(qp, sg, nsge, imm, wr_id, flags);
	case XNIC_WR_RDMA_WRITE:
		return xnic_post_write(qp, sg, nsge, raddr, rkey, wr_id, flags);
	case XNIC_WR_RDMA_WRITE_WITH_IMM:
		return xnic_post_write_imm(qp, sg, nsge, raddr, rkey, imm,
					   wr_id, flags);
	default:
		return xnic_post_read(qp, sg, nsge, raddr, rkey, wr_id, flags);
	}
}

/*
 * One SQ operation. flags: FI_INJECT (copy now, no descriptor needed),
 * FI_COMPLETION, FI_REMOTE_CQ_DATA (with @data); @signal is whether a
 * successful completion is wanted. -FI_EAGAIN when the SQ or its CQ is
 * full.
 */
static ssize_t xnic_post_sq(struct fi_xnic_ep *ep, uint8_t opcode,
			    const struct iovec *iov, void **desc,
			    size_t count, uint64_t raddr, uint64_t key,
			    uint64_t data, uint64_t flags, bool signal,
			    void *context)
{
	struct xnic_sge sg[XNIC_MAX_SGE];
	/* Signalled always: its CQE gives back its entry (FI_XNIC_WR_QUIET). */
	unsigned int xf = XNIC_WQE_F_SIGNALED;
	struct fi_xnic_cq *cq;
	bool need_inline;
	uint64_t len = 0;
	size_t i;
	int err;

	if (!ep->qp)
		return -FI_EOPBADSTATE;
	err = xnic_sges(iov, desc, count, ep->domain->lim.attr.max_sge, sg,
			&need_inline);
	if (err)
		return err;
	for (i = 0; i < count; i++)
		len += iov[i].iov_len;
	if (len > ep->domain->lim.attr.max_msg_size)
		return -FI_EMSGSIZE;
	if (key > UINT32_MAX)
		return -FI_EINVAL;	/* mr_key_size is 4 */
	if ((flags & FI_INJECT) || need_inline) {
		if (len > ep->qp->max_inline || opcode == XNIC_WR_RDMA_READ)
			return need_inline && !(flags & FI_INJECT) ?
			       -FI_EINVAL : -FI_EMSGSIZE;
		xf |= XNIC_WQE_F_INLINE;
	}
	if (opcode == XNIC_WR_SEND && (flags & FI_REMOTE_CQ_DATA))
		opcode = XNIC_WR_SEND_WITH_IMM;
	if (opcode == XNIC_WR_RDMA_WRITE && (flags & FI_REMOTE_CQ_DATA)) {
		if (!ep->rx_cq_data)
			return -FI_EOPNOTSUPP;	/* needs FI_RX_CQ_DATA */
		opcode = XNIC_WR_RDMA_WRITE_WITH_IMM;
	}
	if (data > UINT32_MAX)
		return -FI_EINVAL;	/* cq_data_size is 4 */
	cq = xnic_ep_scq(ep);
	if (fi_xnic_cqe_take(&cq->cqe_budget, 1))
		return -FI_EAGAIN;
	__atomic_fetch_add(&ep->out[0], 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ep->tx_lock);
	err = xnic_post_op(ep->qp, opcode, sg, (unsigned int)count, raddr,
			   (uint32_t)key, htonl((uint32_t)data),
			   signal ? (uintptr_t)context : FI_XNIC_WR_QUIET,
			   xf);
	pthread_mutex_unlock(&ep->tx_lock);
	if (xnic_post_none(err)) {
		__atomic_fetch_sub(&ep->out[0], 1, __ATOMIC_RELAXED);
		fi_xnic_cqe_give(&cq->cqe_budget, 1);
	}
	return xnic_errno_post(err);
}

/* @flags: the operation's, or the endpoint's op_flags for calls with none. */
static bool xnic_tx_signal(struct fi_xnic_ep *ep, uint64_t flags)
{
	if (flags & FI_INJECT && !(flags & FI_COMPLETION) && ep->tx_selective)
		return false;
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

/* The same for the calls without flags: the endpoint's op_flags. */
static bool xnic_tx_dflt(struct fi_xnic_ep *ep)
{
	return xnic_tx_signal(ep, ep->info->tx_attr->op_flags);
}

/* ------------------------------ FI_MSG ------------------------------ */

static ssize_t xnic_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t src,
			  void *context)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct xnic_sge sg[XNIC_MAX_RECV_SGE];
	struct fi_xnic_cq *cq;
	bool need_inline;
	int err;

	(void)src;
	if (!ep->qp)
		return -FI_EOPBADSTATE;
	err = xnic_sges(iov, desc, count, ep->domain->lim.attr.max_recv_sge, sg,
			&need_inline);
	if (err)
		return err;
	if (need_inline)
		return -FI_EINVAL;	/* a receive buffer needs its desc */
	cq = xnic_ep_rcq(ep);
	if (fi_xnic_cqe_take(&cq->cqe_budget, 1))
		return -FI_EAGAIN;
	__atomic_fetch_add(xnic_ep_rout(ep), 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ep->rx_lock);
	err = xnic_post_recv(ep->qp, sg, (unsigned int)count,
			     (uintptr_t)context);
	pthread_mutex_unlock(&ep->rx_lock);
	if (xnic_post_none(err)) {
		__atomic_fetch_sub(xnic_ep_rout(ep), 1, __ATOMIC_RELAXED);
		fi_xnic_cqe_give(&cq->cqe_budget, 1);
	}
	return xnic_errno_post(err);
}

static ssize_t xnic_recv(struct fid_ep *ep, void *buf, size_t len,
			 void *desc, fi_addr_t src, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return xnic_recvv(ep, &iov, &desc, 1, src, context);
}

static ssize_t xnic_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			    uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)FI_COMPLETION)
		return -FI_EBADFLAGS;
	return xnic_recvv(ep, msg->msg_iov, msg->desc, msg->iov_count,
			  msg->addr, msg->context);
}

static ssize_t xnic_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  void *context)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_SEND, iov, desc, count, 0, 0, 0, 0,
			    xnic_tx_dflt(ep), context);
}

static ssize_t xnic_send(struct fid_ep *ep, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return xnic_sendv(ep, &iov, &desc, 1, dest, context);
}

#define XNIC_TX_FLAGS (FI_COMPLETION | FI_INJECT | FI_REMOTE_CQ_DATA | \
		       FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
		       FI_INJECT_COMPLETE | FI_FENCE | FI_MORE)

static ssize_t xnic_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *msg,
			    uint64_t flags)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);

	if (!msg)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)XNIC_TX_FLAGS)
		return -FI_EBADFLAGS;
	return xnic_post_sq(ep, XNIC_WR_SEND, msg->msg_iov, msg->desc,
			    msg->iov_count, 0, 0, msg->data, flags,
			    xnic_tx_signal(ep, flags), msg->context);
}

static ssize_t xnic_inject(struct fid_ep *ep_fid, const void *buf,
			   size_t len, fi_addr_t dest)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_SEND, &iov, NULL, 1, 0, 0, 0,
			    FI_INJECT, false, NULL);
}

static ssize_t xnic_senddata(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, uint64_t data,
			     fi_addr_t dest, void *context)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_SEND, &iov, &desc, 1, 0, 0, data,
			    FI_REMOTE_CQ_DATA, xnic_tx_dflt(ep), context);
}

static ssize_t xnic_injectdata(struct fid_ep *ep_fid, const void *buf,
			       size_t len, uint64_t data, fi_addr_t dest)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_SEND, &iov, NULL, 1, 0, 0, data,
			    FI_INJECT | FI_REMOTE_CQ_DATA, false, NULL);
}

static struct fi_ops_msg xnic_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = xnic_recv,
	.recvv = xnic_recvv,
	.recvmsg = xnic_recvmsg,
	.send = xnic_send,
	.sendv = xnic_sendv,
	.sendmsg = xnic_sendmsg,
	.inject = xnic_inject,
	.senddata = xnic_senddata,
	.injectdata = xnic_injectdata,
};

/* ------------------------------ FI_RMA ------------------------------ */

static ssize_t xnic_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t src,
			  uint64_t addr, uint64_t key, void *context)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);

	(void)src;
	return xnic_post_sq(ep, XNIC_WR_RDMA_READ, iov, desc, count, addr,
			    key, 0, 0, xnic_tx_dflt(ep), context);
}

static ssize_t xnic_read(struct fid_ep *ep, void *buf, size_t len,
			 void *desc, fi_addr_t src, uint64_t addr,
			 uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return xnic_readv(ep, &iov, &desc, 1, src, addr, key, context);
}

static int xnic_rma_iov(const struct fi_msg_rma *msg, uint64_t *addr,
			uint64_t *key)
{
	if (!msg || msg->rma_iov_count > 1 ||
	    (msg->rma_iov_count && !msg->rma_iov))
		return -FI_EINVAL;	/* rma_iov_limit is 1 */
	*addr = msg->rma_iov_count ? msg->rma_iov[0].addr : 0;
	*key = msg->rma_iov_count ? msg->rma_iov[0].key : 0;
	return 0;
}

static ssize_t xnic_readmsg(struct fid_ep *ep_fid,
			    const struct fi_msg_rma *msg, uint64_t flags)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	uint64_t addr, key;
	int err;

	err = xnic_rma_iov(msg, &addr, &key);
	if (err)
		return err;
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_FENCE | FI_MORE))
		return -FI_EBADFLAGS;
	return xnic_post_sq(ep, XNIC_WR_RDMA_READ, msg->msg_iov, msg->desc,
			    msg->iov_count, addr, key, 0, flags,
			    xnic_tx_signal(ep, flags), msg->context);
}

static ssize_t xnic_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			   void **desc, size_t count, fi_addr_t dest,
			   uint64_t addr, uint64_t key, void *context)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_RDMA_WRITE, iov, desc, count, addr,
			    key, 0, 0, xnic_tx_dflt(ep), context);
}

static ssize_t xnic_write(struct fid_ep *ep, const void *buf, size_t len,
			  void *desc, fi_addr_t dest, uint64_t addr,
			  uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return xnic_writev(ep, &iov, &desc, 1, dest, addr, key, context);
}

static ssize_t xnic_writemsg(struct fid_ep *ep_fid,
			     const struct fi_msg_rma *msg, uint64_t flags)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	uint64_t addr, key;
	int err;

	err = xnic_rma_iov(msg, &addr, &key);
	if (err)
		return err;
	if (flags & ~(uint64_t)XNIC_TX_FLAGS)
		return -FI_EBADFLAGS;
	return xnic_post_sq(ep, XNIC_WR_RDMA_WRITE, msg->msg_iov, msg->desc,
			    msg->iov_count, addr, key, msg->data, flags,
			    xnic_tx_signal(ep, flags), msg->context);
}

static ssize_t xnic_inject_write(struct fid_ep *ep_fid, const void *buf,
				 size_t len, fi_addr_t dest, uint64_t addr,
				 uint64_t key)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_RDMA_WRITE, &iov, NULL, 1, addr, key,
			    0, FI_INJECT, false, NULL);
}

static ssize_t xnic_writedata(struct fid_ep *ep_fid, const void *buf,
			      size_t len, void *desc, uint64_t data,
			      fi_addr_t dest, uint64_t addr, uint64_t key,
			      void *context)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_RDMA_WRITE, &iov, &desc, 1, addr, key,
			    data, FI_REMOTE_CQ_DATA, xnic_tx_dflt(ep),
			    context);
}

static ssize_t xnic_inject_writedata(struct fid_ep *ep_fid, const void *buf,
				     size_t len, uint64_t data,
				     fi_addr_t dest, uint64_t addr,
				     uint64_t key)
{
	struct fi_xnic_ep *ep = container_of(ep_fid, struct fi_xnic_ep, ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	(void)dest;
	return xnic_post_sq(ep, XNIC_WR_RDMA_WRITE, &iov, NULL, 1, addr, key,
			    data, FI_INJECT | FI_REMOTE_CQ_DATA, false, NULL);
}

static struct fi_ops_rma xnic_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = xnic_read,
	.readv = xnic_readv,
	.readmsg = xnic_readmsg,
	.write = xnic_write,
	.writev = xnic_writev,
	.writemsg = xnic_writemsg,
	.inject = xnic_inject_write,
	.writedata = xnic_writedata,
	.injectdata = xnic_inject_writedata,
};

/* ------------------------- object plumbing -------------------------- */

static int xnic_ep_enable(struct fi_xnic_ep *ep)
{
	struct fi_xnic_cq *scq = ep->tx_cq ? ep->tx_cq : ep->rx_cq;
	struct fi_xnic_cq *rcq = ep->rx_cq ? ep->rx_cq : ep->tx_cq;
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_RNR_RETRY,
		.rnr_retry = XNIC_QP_RNR_INFINITE,	/* FI_RM_ENABLED */
	};
	struct xnic_qp_cap cap = {
		.max_send_wr = (uint32_t)ep->info->tx_attr->size,
		.max_recv_wr = (uint32_t)ep->info->rx_attr->size,
		.max_inline_data = ep->domain->lim.attr.max_inline,
	};
	int err;

	if (ep->qp)
		return 0;
	if (!scq)
		return -FI_ENOCQ;
	if (!ep->eq)
		return -FI_ENOEQ;
	if (cap.max_send_wr > ep->domain->lim.attr.max_qp_wr)
		cap.max_send_wr = ep->domain->lim.attr.max_qp_wr;
	if (cap.max_recv_wr > ep->domain->lim.attr.max_qp_wr)
		cap.max_recv_wr = ep->domain->lim.attr.max_qp_wr;
	err = xnic_create_qp_ex(ep->domain->pd, scq->cq, rcq->cq, &cap, &attr,
				&ep->qp);
	if (err) {
		XNIC_WARN(FI_LOG_EP_CTRL, "xnic_create_qp(%u/%u WRs): %s\n",
			  cap.max_send_wr, cap.max_recv_wr,
			  xnic_strerror(err));
		return fi_xnic_err(err);
	}
	err = fi_xnic_cq_add_qp(scq, ep->qp->qpn, &ep->out[0]);
	if (!err && rcq != scq) {
		err = fi_xnic_cq_add_qp(rcq, ep->qp->qpn, &ep->out[1]);
		if (err)
			fi_xnic_cq_del_qp(scq, ep->qp->qpn, false);
	}
	if (err) {
		xnic_destroy_qp(ep->qp);
		ep->qp = NULL;
		return err;
	}
	fi_xnic_domain_add_ep(ep->domain, ep);
	return 0;
}

static int xnic_ep_control(struct fid *fid, int command, void *arg)
{
	struct fi_xnic_ep *ep = container_of(fid, struct fi_xnic_ep,
					     ep_fid.fid);

	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	return xnic_ep_enable(ep);
}

static int xnic_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fi_xnic_ep *ep = container_of(fid, struct fi_xnic_ep,
					     ep_fid.fid);
	struct fi_xnic_cq *cq;
	int ret;

	if (!bfid)
		return -FI_EINVAL;
	if (ep->qp)
		return -FI_EOPBADSTATE;	/* bind before fi_enable */
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		if (ep->eq)
			return -FI_EBUSY;
		ep->eq = container_of(bfid, struct fi_xnic_eq, eq_fid.fid);
		__atomic_fetch_add(&ep->eq->refs, 1, __ATOMIC_RELAXED);
		return 0;
	case FI_CLASS_CQ:
		cq = container_of(bfid, struct fi_xnic_cq, cq_fid.fid);
		ret = fi_xnic_cq_bind_check(cq, ep->domain, flags, ep->tx_cq,
					    ep->rx_cq);
		if (ret)
			return ret;
		if (cq->nrdm)
			return -FI_EINVAL;	/* not mixed with RDM */
		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
			__atomic_fetch_add(&cq->refs, 1, __ATOMIC_RELAXED);
		}
		if (flags & FI_RECV) {
			ep->rx_cq = cq;
			__atomic_fetch_add(&cq->refs, 1, __ATOMIC_RELAXED);
		}
		return 0;
	default:
		return -FI_ENOSYS;	/* no AV, counter or SRX */
	}
}

static int xnic_ep_close(struct fid *fid)
{
	struct fi_xnic_ep *ep = container_of(fid, struct fi_xnic_ep,
					     ep_fid.fid);
	int err;

	if (ep->cm_thread_running)
		pthread_join(ep->cm_thread, NULL);
	if (ep->qp) {
		uint32_t qpn = ep->qp->qpn;

		fi_xnic_domain_del_ep(ep->domain, ep);
		err = xnic_destroy_qp(ep->qp);
		if (err)
			XNIC_WARN(FI_LOG_EP_CTRL, "destroy QP: %s\n",
				  xnic_strerror(err));
		/* Its work is discarded, its CQ entries come back. */
		fi_xnic_cq_del_qp(xnic_ep_scq(ep), qpn, !err);
		if (xnic_ep_rcq(ep) != xnic_ep_scq(ep))
			fi_xnic_cq_del_qp(xnic_ep_rcq(ep), qpn, !err);
	}
	if (ep->connreq)	/* rejected if never accepted */
		fi_xnic_connreq_release(ep->connreq);
	if (ep->eq) {
		fi_xnic_eq_purge(ep->eq, &ep->ep_fid.fid);
		__atomic_fetch_sub(&ep->eq->refs, 1, __ATOMIC_RELAXED);
	}
	if (ep->tx_cq)
		__atomic_fetch_sub(&ep->tx_cq->refs, 1, __ATOMIC_RELAXED);
	if (ep->rx_cq)
		__atomic_fetch_sub(&ep->rx_cq->refs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&ep->domain->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_destroy(&ep->tx_lock);
	pthread_mutex_destroy(&ep->rx_lock);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static struct fi_ops xnic_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_ep_close,
	.bind = xnic_ep_bind,
	.control = xnic_ep_control,
	.ops_open = fi_xnic_no_ops_open,
};

/* Endpoint ops of active and passive endpoints alike. */
struct fi_ops_ep fi_xnic_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = fi_xnic_no_cancel,
	.getopt = fi_xnic_getopt,
	.setopt = fi_xnic_no_setopt,
	.tx_ctx = fi_xnic_no_tx_ctx,
	.rx_ctx = fi_xnic_no_rx_ctx,
	.rx_size_left = fi_xnic_no_size_left,
	.tx_size_left = fi_xnic_no_size_left,
};

int fi_xnic_endpoint(struct fid_domain *domain, struct fi_info *info,
		     struct fid_ep **epp, void *context)
{
	struct fi_xnic_domain *d = container_of(domain, struct fi_xnic_domain,
						domain_fid);
	struct fi_xnic_connreq *cr = NULL;
	struct fi_xnic_ep *ep;

	if (!info || !epp || !info->ep_attr || !info->tx_attr ||
	    !info->rx_attr)
		return -FI_EINVAL;
	if (info->ep_attr->type != FI_EP_MSG)
		return -FI_EINVAL;
	if (info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, d->lim.name))
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	ep->info->handle = NULL;
	/* Never followed before the registry knows it (a stale handle). */
	if (info->handle) {
		cr = fi_xnic_connreq_take(info->handle);
		if (!cr) {
			fi_freeinfo(ep->info);
			free(ep);
			return -FI_EINVAL;
		}
	}
	ep->domain = d;
	ep->connreq = cr;
	ep->rx_cq_data = info->mode & FI_RX_CQ_DATA;
	if (info->dest_addr &&
	    !fi_xnic_addr_check(info->dest_addr, info->dest_addrlen))
		memcpy(&ep->peer, info->dest_addr, sizeof(ep->peer));
	pthread_mutex_init(&ep->tx_lock, NULL);
	pthread_mutex_init(&ep->rx_lock, NULL);
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &xnic_ep_fi_ops;
	ep->ep_fid.ops = &fi_xnic_ep_ops;
	ep->ep_fid.cm = &fi_xnic_ep_cm_ops;
	ep->ep_fid.msg = &xnic_msg_ops;
	ep->ep_fid.rma = &xnic_rma_ops;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*epp = &ep->ep_fid;
	return 0;
}
