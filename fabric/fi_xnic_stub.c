// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Operations the provider does not offer. libfabric's inline wrappers call
 * every base member of an ops table unchecked, so each gets a function
 * that answers -FI_ENOSYS instead of a NULL pointer.
 */
#include "fi_xnic.h"

int fi_xnic_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

int fi_xnic_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int fi_xnic_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			 struct fid_wait **waitset)
{
	(void)fabric; (void)attr; (void)waitset;
	return -FI_ENOSYS;
}

int fi_xnic_no_sep(struct fid_domain *domain, struct fi_info *info,
		   struct fid_ep **sep, void *context)
{
	(void)domain; (void)info; (void)sep; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
			 struct fid_cntr **cntr, void *context)
{
	(void)domain; (void)attr; (void)cntr; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
			 struct fid_poll **pollset)
{
	(void)domain; (void)attr; (void)pollset;
	return -FI_ENOSYS;
}

int fi_xnic_no_stx(struct fid_domain *domain, struct fi_tx_attr *attr,
		   struct fid_stx **stx, void *context)
{
	(void)domain; (void)attr; (void)stx; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_srx(struct fid_domain *domain, struct fi_rx_attr *attr,
		   struct fid_ep **rx_ep, void *context)
{
	(void)domain; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_query_atomic(struct fid_domain *domain,
			    enum fi_datatype datatype, enum fi_op op,
			    struct fi_atomic_attr *attr, uint64_t flags)
{
	(void)domain; (void)datatype; (void)op; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

int fi_xnic_no_query_collective(struct fid_domain *domain,
				enum fi_collective_op coll,
				struct fi_collective_attr *attr, uint64_t flags)
{
	(void)domain; (void)coll; (void)attr; (void)flags;
	return -FI_ENOSYS;
}

ssize_t fi_xnic_no_cancel(fid_t fid, void *context)
{
	(void)fid; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_setopt(fid_t fid, int level, int optname, const void *optval,
		      size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

int fi_xnic_no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **tx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)tx_ep; (void)context;
	return -FI_ENOSYS;
}

int fi_xnic_no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		      struct fid_ep **rx_ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)rx_ep; (void)context;
	return -FI_ENOSYS;
}

ssize_t fi_xnic_no_size_left(struct fid_ep *ep)
{
	(void)ep;
	return -FI_ENOSYS;
}

int fi_xnic_no_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fi_xnic_no_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	(void)ep; (void)addr; (void)addrlen;
	return -FI_ENOSYS;
}

int fi_xnic_no_connect(struct fid_ep *ep, const void *addr, const void *param,
		       size_t paramlen)
{
	(void)ep; (void)addr; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fi_xnic_no_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

int fi_xnic_no_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	(void)ep; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fi_xnic_no_reject(struct fid_pep *pep, fid_t handle, const void *param,
		      size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

int fi_xnic_no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_ENOSYS;
}

int fi_xnic_no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}
