// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the xnic provider offers, and fi_getinfo's hint matching: a hint
 * asks for a subset of what we offer or gets -FI_ENODATA (fi_getinfo(3):
 * "hints ... serve as a filter"). Pure functions of their arguments: the
 * unit test runs them on the host (selftests/unit/fabric_attr_test.c).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "fi_xnic.h"

#define XNIC_TX_CAPS	(FI_MSG | FI_RMA | FI_SEND | FI_READ | FI_WRITE)
#define XNIC_RX_CAPS	(FI_MSG | FI_RMA | FI_RECV | FI_REMOTE_READ | \
			 FI_REMOTE_WRITE)
#define XNIC_CAPS	(XNIC_TX_CAPS | XNIC_RX_CAPS | FI_REMOTE_COMM)
#define XNIC_MSG_ORDER	FI_ORDER_SAS
#define XNIC_MR_MAP	(FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)
/* Optional mode bits we can use when the application accepts them. */
#define XNIC_MODE_OPT	FI_RX_CQ_DATA

static const uint8_t xnic_addr_prefix[12] = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 'x', 'n', 'i', 'c',
};

void fi_xnic_addr_init(struct fi_xnic_addr *a, uint32_t node, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(port);
	memcpy(a->sin6_addr.s6_addr, xnic_addr_prefix, sizeof(xnic_addr_prefix));
	a->sin6_addr.s6_addr[12] = (uint8_t)(node >> 24);
	a->sin6_addr.s6_addr[13] = (uint8_t)(node >> 16);
	a->sin6_addr.s6_addr[14] = (uint8_t)(node >> 8);
	a->sin6_addr.s6_addr[15] = (uint8_t)node;
}

/* Return: 0 when @addr is an xnic address of @len bytes, else -FI_EINVAL. */
int fi_xnic_addr_check(const void *addr, size_t len)
{
	const struct fi_xnic_addr *a = addr;

	if (!addr || len < sizeof(*a) || a->sin6_family != AF_INET6 ||
	    memcmp(a->sin6_addr.s6_addr, xnic_addr_prefix,
		   sizeof(xnic_addr_prefix)))
		return -FI_EINVAL;
	return 0;
}

uint32_t fi_xnic_addr_node(const struct fi_xnic_addr *a)
{
	const uint8_t *b = a->sin6_addr.s6_addr;

	return (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
	       (uint32_t)b[14] << 8 | b[15];
}

uint16_t fi_xnic_addr_port(const struct fi_xnic_addr *a)
{
	return ntohs(a->sin6_port);
}

uint64_t fi_xnic_addr_sid(const struct fi_xnic_addr *a)
{
	return FI_XNIC_PS << 16 | fi_xnic_addr_port(a);
}

static int xnic_nodata(int line)
{
	FI_INFO(&fi_xnic_prov, FI_LOG_CORE,
		"hints not supported (fi_xnic_attr.c:%d)\n", line);
	return -FI_ENODATA;
}

/* Required MR mode bits: FI_MR_LOCAL always, the map bits for RMA targets. */
static uint64_t xnic_mr_mode(uint64_t caps)
{
	if (caps && !(caps & (FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA)))
		return FI_MR_LOCAL;
	return FI_MR_LOCAL | XNIC_MR_MAP;
}

static bool xnic_sub(uint64_t want, uint64_t have)
{
	return !(want & ~have);
}

/*
 * Hints we can never satisfy, whatever the device: 0 or -FI_ENODATA.
 * (Per-device limits are checked by fi_xnic_info_for().)
 */
int fi_xnic_check_hints(uint32_t version, const struct fi_info *h)
{
	uint64_t mr;

	if (!h)
		return 0;
	if (!xnic_sub(h->caps, XNIC_CAPS))
		return xnic_nodata(__LINE__);
	if (h->addr_format != FI_FORMAT_UNSPEC &&
	    h->addr_format != FI_SOCKADDR_IN6 && h->addr_format != FI_SOCKADDR)
		return xnic_nodata(__LINE__);
	if (h->fabric_attr) {
		/* prov_name: libfabric matched it (maybe "xnic;ofi_rxm"). */
		if (h->fabric_attr->name &&
		    strcmp(h->fabric_attr->name, FI_XNIC_NAME))
			return xnic_nodata(__LINE__);
	}
	if (h->ep_attr) {
		if (h->ep_attr->type != FI_EP_UNSPEC &&
		    h->ep_attr->type != FI_EP_MSG)
			return xnic_nodata(__LINE__);
		if (h->ep_attr->protocol != FI_PROTO_UNSPEC)
			return xnic_nodata(__LINE__);
		if (h->ep_attr->tx_ctx_cnt > 1 ||
		    h->ep_attr->rx_ctx_cnt > 1)	/* also FI_SHARED_CONTEXT */
			return xnic_nodata(__LINE__);
		if (h->ep_attr->auth_key_size)
			return xnic_nodata(__LINE__);
	}
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (!xnic_sub(d->caps, FI_REMOTE_COMM))
			return xnic_nodata(__LINE__);
		if (d->av_type != FI_AV_UNSPEC)
			return xnic_nodata(__LINE__);
		/*
		 * mr_mode lists what the application can handle (FI_MR_RAW
		 * too: we just never ask for it); FI_MR_BASIC and
		 * FI_MR_SCALABLE are the old exclusive modes.
		 */
		mr = xnic_mr_mode(h->caps);
		if (d->mr_mode & FI_MR_BASIC) {
			if (d->mr_mode != FI_MR_BASIC || !(h->mode & FI_LOCAL_MR))
				return xnic_nodata(__LINE__);
		} else if (d->mr_mode & FI_MR_SCALABLE) {
			return xnic_nodata(__LINE__);
		} else if (d->mr_mode != FI_MR_UNSPEC ||
			   FI_VERSION_GE(version, FI_VERSION(1, 5))) {
			uint64_t have = d->mr_mode;

			if (h->mode & FI_LOCAL_MR)
				have |= FI_MR_LOCAL;
			if ((have & mr) != mr)
				return xnic_nodata(__LINE__);
		}
		if (d->cq_data_size > 4 || d->mr_key_size > 4 ||
		    d->mr_iov_limit > 1)
			return xnic_nodata(__LINE__);
	}
	if (h->tx_attr) {
		if (!xnic_sub(h->tx_attr->caps, XNIC_TX_CAPS | FI_REMOTE_COMM) ||
		    !xnic_sub(h->tx_attr->msg_order, XNIC_MSG_ORDER) ||
		    h->tx_attr->comp_order & ~(uint64_t)FI_ORDER_STRICT ||
		    h->tx_attr->rma_iov_limit > 1)
			return xnic_nodata(__LINE__);
		if (h->tx_attr->op_flags & ~(uint64_t)(FI_COMPLETION |
				FI_INJECT | FI_TRANSMIT_COMPLETE |
				FI_DELIVERY_COMPLETE | FI_INJECT_COMPLETE))
			return xnic_nodata(__LINE__);
	}
	if (h->rx_attr) {
		if (!xnic_sub(h->rx_attr->caps, XNIC_RX_CAPS | FI_REMOTE_COMM) ||
		    !xnic_sub(h->rx_attr->msg_order, XNIC_MSG_ORDER) ||
		    h->rx_attr->comp_order & ~(uint64_t)FI_ORDER_STRICT ||
		    h->rx_attr->total_buffered_recv)
			return xnic_nodata(__LINE__);
		if (h->rx_attr->op_flags & ~(uint64_t)FI_COMPLETION)
			return xnic_nodata(__LINE__);
	}
	return 0;
}

static int xnic_fill(uint32_t version, const struct fi_xnic_limits *lim,
		     const struct fi_info *h, struct fi_info *fi)
{
	struct fi_domain_attr *d = fi->domain_attr;
	uint64_t caps = h && h->caps ? h->caps : XNIC_CAPS;
	uint64_t mode_ok = h ? h->mode : XNIC_MODE_OPT;

	/* Primary caps are implied by their secondaries (fi_getinfo(3)). */
	if (caps & (FI_SEND | FI_RECV))
		caps |= FI_MSG;
	if (caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE))
		caps |= FI_RMA;
	if (!(caps & (FI_SEND | FI_RECV)) && (caps & FI_MSG))
		caps |= FI_SEND | FI_RECV;
	if (!(caps & (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)) &&
	    (caps & FI_RMA))
		caps |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	caps |= FI_REMOTE_COMM;

	fi->caps = caps;
	fi->mode = mode_ok & XNIC_MODE_OPT;
	fi->addr_format = FI_SOCKADDR_IN6;

	fi->fabric_attr->name = strdup(FI_XNIC_NAME);
	/* prov_name stays NULL: libfabric names the (layered) provider. */
	fi->fabric_attr->prov_version = FI_XNIC_VERSION;
	fi->fabric_attr->api_version = version;

	d->name = strdup(lim->name);
	d->threading = FI_THREAD_SAFE;
	d->control_progress = FI_PROGRESS_AUTO;
	d->data_progress = FI_PROGRESS_AUTO;
	d->resource_mgmt = FI_RM_ENABLED;
	d->av_type = FI_AV_UNSPEC;
	if (h && h->domain_attr && h->domain_attr->mr_mode == FI_MR_BASIC) {
		d->mr_mode = FI_MR_BASIC;
		fi->mode |= FI_LOCAL_MR;
	} else if (FI_VERSION_LT(version, FI_VERSION(1, 5)) &&
		   (!h || !h->domain_attr || !h->domain_attr->mr_mode)) {
		d->mr_mode = FI_MR_BASIC;
		fi->mode |= FI_LOCAL_MR;
	} else {
		d->mr_mode = (int)xnic_mr_mode(caps);
	}
	d->mr_key_size = 4;
	d->cq_data_size = 4;
	d->cq_cnt = 1024;
	d->ep_cnt = XNIC_MAX_QP_PER_CTX;
	d->tx_ctx_cnt = XNIC_MAX_QP_PER_CTX;
	d->rx_ctx_cnt = XNIC_MAX_QP_PER_CTX;
	d->max_ep_tx_ctx = 1;
	d->max_ep_rx_ctx = 1;
	d->mr_iov_limit = 1;
	d->caps = FI_REMOTE_COMM;
	d->mr_cnt = 65536;

	fi->ep_attr->type = FI_EP_MSG;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->protocol_version = 1;
	fi->ep_attr->max_msg_size = lim->attr.max_msg_size;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->tx_attr->caps = caps & (XNIC_TX_CAPS | FI_REMOTE_COMM);
	fi->tx_attr->mode = fi->mode;
	fi->tx_attr->msg_order = XNIC_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_STRICT;
	fi->tx_attr->inject_size = lim->attr.max_inline;
	fi->tx_attr->size = lim->attr.max_qp_wr;
	fi->tx_attr->iov_limit = lim->attr.max_sge;
	fi->tx_attr->rma_iov_limit = 1;

	fi->rx_attr->caps = caps & (XNIC_RX_CAPS | FI_REMOTE_COMM);
	fi->rx_attr->mode = fi->mode;
	fi->rx_attr->msg_order = XNIC_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_STRICT;
	fi->rx_attr->size = lim->attr.max_qp_wr;
	fi->rx_attr->iov_limit = lim->attr.max_recv_sge;

	if (h && h->tx_attr) {
		if (h->tx_attr->size > lim->attr.max_qp_wr ||
		    h->tx_attr->iov_limit > lim->attr.max_sge ||
		    h->tx_attr->inject_size > lim->attr.max_inline)
			return xnic_nodata(__LINE__);
		if (h->tx_attr->size)
			fi->tx_attr->size = h->tx_attr->size;
		fi->tx_attr->op_flags = h->tx_attr->op_flags;
	}
	if (h && h->rx_attr) {
		if (h->rx_attr->size > lim->attr.max_qp_wr ||
		    h->rx_attr->iov_limit > lim->attr.max_recv_sge)
			return xnic_nodata(__LINE__);
		if (h->rx_attr->size)
			fi->rx_attr->size = h->rx_attr->size;
		fi->rx_attr->op_flags = h->rx_attr->op_flags;
	}
	if (h && h->ep_attr && h->ep_attr->max_msg_size > lim->attr.max_msg_size)
		return xnic_nodata(__LINE__);
	if (h && h->domain_attr) {
		if (h->domain_attr->name &&
		    strcmp(h->domain_attr->name, lim->name))
			return xnic_nodata(__LINE__);
		if (h->domain_attr->threading)
			d->threading = h->domain_attr->threading;
		if (h->domain_attr->control_progress)
			d->control_progress = h->domain_attr->control_progress;
		if (h->domain_attr->data_progress)
			d->data_progress = h->domain_attr->data_progress;
		if (h->domain_attr->resource_mgmt)
			d->resource_mgmt = h->domain_attr->resource_mgmt;
	}
	if (!fi->fabric_attr->name || !d->name)
		return -FI_ENOMEM;
	return 0;
}

static void *xnic_memdup(const void *p, size_t n)
{
	void *q = malloc(n);

	if (q)
		memcpy(q, p, n);
	return q;
}

/**
 * fi_xnic_info_for() - the fi_info a device offers under @hints
 * @version: the application's API version
 * @type: FI_EP_MSG (@hints already passed fi_xnic_check_hints()) or
 *	FI_EP_RDM (fi_xnic_rdm_fill() checks them)
 * @lim: the device
 * @hints: the application's hints (may be NULL)
 * @infop: the new fi_info on success
 *
 * A src_addr in the hints must name this device's node; a dest_addr must
 * be an xnic address (it is copied into the result).
 * Return: 0; -FI_ENODATA when this device cannot satisfy @hints;
 * -FI_ENOMEM.
 */
int fi_xnic_info_for(uint32_t version, enum fi_ep_type type,
		     const struct fi_xnic_limits *lim,
		     const struct fi_info *hints, struct fi_info **infop)
{
	struct fi_xnic_addr src;
	struct fi_info *fi;
	int ret;

	fi_xnic_addr_init(&src, lim->attr.node_id, 0);
	if (hints && hints->src_addr) {
		if (fi_xnic_addr_check(hints->src_addr, hints->src_addrlen) ||
		    fi_xnic_addr_node(hints->src_addr) != lim->attr.node_id)
			return xnic_nodata(__LINE__);
		src.sin6_port = ((const struct fi_xnic_addr *)
				 hints->src_addr)->sin6_port;
	}
	if (hints && hints->dest_addr &&
	    fi_xnic_addr_check(hints->dest_addr, hints->dest_addrlen))
		return xnic_nodata(__LINE__);

	fi = fi_allocinfo();
	if (!fi)
		return -FI_ENOMEM;
	ret = type == FI_EP_RDM ? fi_xnic_rdm_fill(version, lim, hints, fi) :
				  xnic_fill(version, lim, hints, fi);
	if (ret)
		goto err;
	ret = -FI_ENOMEM;
	fi->src_addr = xnic_memdup(&src, sizeof(src));
	if (!fi->src_addr)
		goto err;
	fi->src_addrlen = sizeof(src);
	if (hints && hints->dest_addr) {
		fi->dest_addr = xnic_memdup(hints->dest_addr,
					    sizeof(struct fi_xnic_addr));
		if (!fi->dest_addr)
			goto err;
		fi->dest_addrlen = sizeof(struct fi_xnic_addr);
	}
	*infop = fi;
	return 0;
err:
	fi_freeinfo(fi);
	return ret;
}
