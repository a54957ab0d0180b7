// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the native FI_EP_RDM endpoint offers (fi_xnic_rdm.h), and its hint
 * matching: as for FI_EP_MSG (fi_xnic_attr.c), a hint asks for a subset
 * of the offer or gets -FI_ENODATA. RMA and atomics over RDM are not
 * offered natively: libfabric's ofi_rxm, layered on our FI_EP_MSG, serves
 * them ("xnic;ofi_rxm"). Pure functions: unit-tested on the host.
 */
#include <string.h>

#include "fi_xnic_rdm.h"

#define XNIC_RDM_TX_CAPS	(FI_MSG | FI_TAGGED | FI_SEND)
#define XNIC_RDM_RX_CAPS	(FI_MSG | FI_TAGGED | FI_RECV | FI_SOURCE | \
				 FI_DIRECTED_RECV)
#define XNIC_RDM_CAPS		(XNIC_RDM_TX_CAPS | XNIC_RDM_RX_CAPS | \
				 FI_REMOTE_COMM | FI_LOCAL_COMM)
#define XNIC_RDM_TX_FLAGS	(FI_COMPLETION | FI_INJECT | \
				 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
				 FI_INJECT_COMPLETE)
#define XNIC_RDM_TX_SIZE	FI_XNIC_RDM_SQ
#define XNIC_RDM_RX_SIZE	1024

static int xnic_rdm_nodata(int line)
{
	FI_INFO(&fi_xnic_prov, FI_LOG_CORE,
		"RDM: hints not supported (fi_xnic_rdm_attr.c:%d)\n", line);
	return -FI_ENODATA;
}

static bool xnic_rdm_sub(uint64_t want, uint64_t have)
{
	return !(want & ~have);
}

static int xnic_rdm_check_hints(const struct fi_info *h)
{
	if (!h)
		return 0;
	if (!xnic_rdm_sub(h->caps, XNIC_RDM_CAPS))
		return xnic_rdm_nodata(__LINE__);
	if (h->addr_format != FI_FORMAT_UNSPEC &&
	    h->addr_format != FI_SOCKADDR_IN6 && h->addr_format != FI_SOCKADDR)
		return xnic_rdm_nodata(__LINE__);
	if (h->fabric_attr && h->fabric_attr->name &&
	    strcmp(h->fabric_attr->name, FI_XNIC_NAME))
		return xnic_rdm_nodata(__LINE__);
	if (h->ep_attr) {
		const struct fi_ep_attr *e = h->ep_attr;

		if ((e->type != FI_EP_UNSPEC && e->type != FI_EP_RDM) ||
		    e->protocol != FI_PROTO_UNSPEC || e->tx_ctx_cnt > 1 ||
		    e->rx_ctx_cnt > 1 || e->auth_key_size)
			return xnic_rdm_nodata(__LINE__);
	}
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (!xnic_rdm_sub(d->caps, FI_REMOTE_COMM | FI_LOCAL_COMM) ||
		    d->data_progress == FI_PROGRESS_AUTO ||
		    (d->mr_mode & FI_MR_SCALABLE) || d->cq_data_size > 4)
			return xnic_rdm_nodata(__LINE__);
		if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_MAP &&
		    d->av_type != FI_AV_TABLE)
			return xnic_rdm_nodata(__LINE__);
	}
	if (h->tx_attr) {
		const struct fi_tx_attr *t = h->tx_attr;

		if (!xnic_rdm_sub(t->caps, XNIC_RDM_TX_CAPS | FI_REMOTE_COMM |
				  FI_LOCAL_COMM) ||
		    !xnic_rdm_sub(t->msg_order, FI_ORDER_SAS) ||
		    t->comp_order & ~(uint64_t)FI_ORDER_NONE ||
		    t->inject_size > FI_XNIC_RDM_EAGER ||
		    t->size > XNIC_RDM_TX_SIZE || t->iov_limit > 1 ||
		    t->rma_iov_limit ||
		    !xnic_rdm_sub(t->op_flags, XNIC_RDM_TX_FLAGS))
			return xnic_rdm_nodata(__LINE__);
	}
	if (h->rx_attr) {
		const struct fi_rx_attr *r = h->rx_attr;

		if (!xnic_rdm_sub(r->caps, XNIC_RDM_RX_CAPS | FI_REMOTE_COMM |
				  FI_LOCAL_COMM) ||
		    !xnic_rdm_sub(r->msg_order, FI_ORDER_SAS) ||
		    r->comp_order & ~(uint64_t)FI_ORDER_NONE ||
		    r->size > XNIC_RDM_RX_SIZE || r->iov_limit > 1 ||
		    r->total_buffered_recv ||
		    !xnic_rdm_sub(r->op_flags, FI_COMPLETION))
			return xnic_rdm_nodata(__LINE__);
	}
	return 0;
}

/**
 * fi_xnic_rdm_fill() - fill @fi with what an RDM endpoint offers
 * @version: the application's API version
 * @lim: the device
 * @h: the application's hints (may be NULL)
 * @fi: from fi_allocinfo()
 * Return: 0; -FI_ENODATA when @h asks for more; -FI_ENOMEM.
 */
int fi_xnic_rdm_fill(uint32_t version, const struct fi_xnic_limits *lim,
		     const struct fi_info *h, struct fi_info *fi)
{
	struct fi_domain_attr *d = fi->domain_attr;
	uint64_t caps = h && h->caps ? h->caps : XNIC_RDM_CAPS;
	int ret;

	ret = xnic_rdm_check_hints(h);
	if (ret)
		return ret;
	if (h && h->ep_attr && h->ep_attr->max_msg_size > lim->attr.max_msg_size)
		return xnic_rdm_nodata(__LINE__);
	if (h && h->domain_attr && h->domain_attr->name &&
	    strcmp(h->domain_attr->name, lim->name))
		return xnic_rdm_nodata(__LINE__);
	/* Primary caps are implied by their secondaries (fi_getinfo(3)). */
	if (!(caps & (FI_MSG | FI_TAGGED)))
		caps |= FI_MSG | FI_TAGGED;
	if (!(caps & (FI_SEND | FI_RECV)))
		caps |= FI_SEND | FI_RECV;
	caps |= FI_REMOTE_COMM | FI_LOCAL_COMM;

	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_SOCKADDR_IN6;
	fi->fabric_attr->name = strdup(FI_XNIC_NAME);
	fi->fabric_attr->prov_version = FI_XNIC_VERSION;
	fi->fabric_attr->api_version = version;

	d->name = strdup(lim->name);
	d->threading = FI_THREAD_SAFE;
	d->control_progress = FI_PROGRESS_AUTO;	/* the CM thread */
	d->data_progress = FI_PROGRESS_MANUAL;	/* fi_cq_read */
	d->resource_mgmt = FI_RM_ENABLED;
	d->av_type = h && h->domain_attr ? h->domain_attr->av_type :
					   FI_AV_UNSPEC;
	/* No memory registration is needed: buffers need no descriptor. */
	d->mr_mode = FI_VERSION_LT(version, FI_VERSION(1, 5)) ?
		     FI_MR_BASIC : 0;
	d->mr_key_size = 4;
	d->cq_data_size = 4;
	d->cq_cnt = 1024;
	d->ep_cnt = 1024;
	d->tx_ctx_cnt = 1024;
	d->rx_ctx_cnt = 1024;
	d->max_ep_tx_ctx = 1;
	d->max_ep_rx_ctx = 1;
	d->mr_iov_limit = 1;
	d->caps = FI_REMOTE_COMM | FI_LOCAL_COMM;
	d->mr_cnt = 65536;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = lim->attr.max_msg_size;
	/* fi_endpoint(3)'s generic format: all 64 bits are the user's. */
	fi->ep_attr->mem_tag_format = 0xAAAAAAAAAAAAAAAAULL;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->tx_attr->caps = caps & (XNIC_RDM_TX_CAPS | FI_REMOTE_COMM |
				    FI_LOCAL_COMM);
	fi->tx_attr->msg_order = FI_ORDER_SAS;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = FI_XNIC_RDM_EAGER;
	fi->tx_attr->size = XNIC_RDM_TX_SIZE;
	fi->tx_attr->iov_limit = 1;
	fi->tx_attr->rma_iov_limit = 0;
	fi->tx_attr->op_flags = h && h->tx_attr ? h->tx_attr->op_flags : 0;

	fi->rx_attr->caps = caps & (XNIC_RDM_RX_CAPS | FI_REMOTE_COMM |
				    FI_LOCAL_COMM);
	fi->rx_attr->msg_order = FI_ORDER_SAS;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->size = XNIC_RDM_RX_SIZE;
	fi->rx_attr->iov_limit = 1;
	fi->rx_attr->op_flags = h && h->rx_attr ? h->rx_attr->op_flags : 0;

	if (h && h->domain_attr) {
		if (h->domain_attr->threading)
			d->threading = h->domain_attr->threading;
		if (h->domain_attr->control_progress)
			d->control_progress = h->domain_attr->control_progress;
		if (h->domain_attr->resource_mgmt)
			d->resource_mgmt = h->domain_attr->resource_mgmt;
	}
	if (!fi->fabric_attr->name || !d->name)
		return -FI_ENOMEM;
	return 0;
}
