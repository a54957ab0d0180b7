// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider's entry point (fi_prov_ini), fi_getinfo and the fabric.
 *
 * fi_getinfo offers one fi_info per xnic RDMA device (the domain name is
 * the device name), in /sys/class/infiniband order; FI_XNIC_DOMAIN keeps
 * only the device it names when the hints name no domain.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fi_xnic.h"

static int xnic_limits(const char *name, struct fi_xnic_limits *lim)
{
	struct xnic_ctx *ctx;
	int err;

	err = xnic_open(name, &ctx);
	if (err)
		return err;
	memset(lim, 0, sizeof(*lim));
	if (strlen(name) >= sizeof(lim->name)) {
		xnic_close(ctx);
		return -EINVAL;
	}
	memcpy(lim->name, name, strlen(name) + 1);
	lim->attr = *xnic_ctx_info(ctx);
	xnic_close(ctx);
	return 0;
}

/* node: a node id (decimal or 0x hex); service: a port. */
static int xnic_parse_node(const char *node, const char *service,
			   struct fi_xnic_addr *a)
{
	unsigned long n = 0, p = 0;
	char *end;

	if (node) {
		n = strtoul(node, &end, 0);
		if (!*node || *end || n > 65534)
			return -FI_ENODATA;
	}
	if (service) {
		p = strtoul(service, &end, 0);
		if (!*service || *end || p > 0xffff)
			return -FI_ENODATA;
	}
	fi_xnic_addr_init(a, (uint32_t)n, (uint16_t)p);
	return 0;
}

static int xnic_getinfo(uint32_t version, const char *node,
			const char *service, uint64_t flags,
			const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *head = NULL, **tailp = &head, *fi, *h = NULL;
	const char *want = NULL;
	struct fi_xnic_addr na;
	char *env = NULL;
	bool want_rdm, want_msg;
	enum fi_ep_type ep_type;
	int rxm = 0;
	struct dirent *de;
	DIR *dir;
	int ret, t;

	*info = NULL;
	if (FI_VERSION_LT(FI_XNIC_API, version))
		return -FI_ENODATA;
	/*
	 * A utility provider (ofi_rxm, ofi_rxd) asks for core providers
	 * only, to layer FI_EP_RDM on our FI_EP_MSG: our own FI_EP_RDM is
	 * faster, so that layering is off unless the rxm parameter asks for
	 * it (libfabric does the same for its providers with a native RDM).
	 */
	if ((flags & FI_XNIC_CORE_PROV_ONLY) &&
	    (fi_param_get_bool(&fi_xnic_prov, "rxm", &rxm) || !rxm))
		return -FI_ENODATA;
	/* The native RDM endpoint first, then MSG (ofi_rxm's base). */
	ep_type = hints && hints->ep_attr ? hints->ep_attr->type : FI_EP_UNSPEC;
	want_rdm = ep_type == FI_EP_UNSPEC || ep_type == FI_EP_RDM;
	want_msg = !fi_xnic_check_hints(version, hints);
	if (!want_rdm && !want_msg)
		return -FI_ENODATA;
	if (hints && hints->domain_attr && hints->domain_attr->name)
		want = hints->domain_attr->name;
	else if (!fi_param_get_str(&fi_xnic_prov, "domain", &env) && env &&
		 *env)
		want = env;

	/* node/service become the source (FI_SOURCE) or destination. */
	if (node || service) {
		ret = xnic_parse_node(node, service, &na);
		if (ret)
			return ret;
		h = hints ? fi_dupinfo(hints) : fi_allocinfo();
		if (!h)
			return -FI_ENOMEM;
		if (flags & FI_SOURCE) {
			free(h->src_addr);
			h->src_addr = NULL;
			h->src_addrlen = 0;
			if (node) {
				h->src_addr = malloc(sizeof(na));
				if (!h->src_addr) {
					fi_freeinfo(h);
					return -FI_ENOMEM;
				}
				memcpy(h->src_addr, &na, sizeof(na));
				h->src_addrlen = sizeof(na);
			}
		} else if (node) {
			free(h->dest_addr);
			h->dest_addr = malloc(sizeof(na));
			if (!h->dest_addr) {
				fi_freeinfo(h);
				return -FI_ENOMEM;
			}
			memcpy(h->dest_addr, &na, sizeof(na));
			h->dest_addrlen = sizeof(na);
		}
		hints = h;
	}

	dir = opendir("/sys/class/infiniband");
	if (!dir) {
		fi_freeinfo(h);
		return -FI_ENODATA;
	}
	while ((de = readdir(dir))) {
		struct fi_xnic_limits lim;

		if (de->d_name[0] == '.')
			continue;
		if (want && strcmp(want, de->d_name))
			continue;
		if (xnic_limits(de->d_name, &lim))
			continue;	/* not an xnic device, or no uverbs */
		for (t = 0; t < 2; t++) {
			if (!(t ? want_msg : want_rdm) ||
			    fi_xnic_info_for(version, t ? FI_EP_MSG : FI_EP_RDM,
					     &lim, hints, &fi))
				continue;
			if ((flags & FI_SOURCE) && service && !node) {
				struct fi_xnic_addr *s = fi->src_addr;

				s->sin6_port = na.sin6_port;
			}
			*tailp = fi;
			tailp = &fi->next;
		}
	}
	closedir(dir);
	fi_freeinfo(h);
	if (!head)
		return -FI_ENODATA;
	*info = head;
	return 0;
}

/* ------------------------------ fabric ------------------------------ */

static int xnic_fabric_close(struct fid *fid)
{
	free(container_of(fid, struct fi_xnic_fabric, fabric_fid.fid));
	return 0;
}

/* Is there anything to read on @fid? Arms a CQ on the way. */
static int xnic_trywait_one(struct fid *fid)
{
	switch (fid->fclass) {
	case FI_CLASS_EQ: {
		struct fi_xnic_eq *eq = container_of(fid, struct fi_xnic_eq,
						     eq_fid.fid);
		int busy;

		pthread_mutex_lock(&eq->lock);
		busy = eq->head != NULL;
		pthread_mutex_unlock(&eq->lock);
		return busy ? -FI_EAGAIN : 0;
	}
	case FI_CLASS_CQ: {
		struct fi_xnic_cq *cq = container_of(fid, struct fi_xnic_cq,
						     cq_fid.fid);
		int ret;

		pthread_mutex_lock(&cq->lock);
		ret = fi_xnic_cq_arm_all(cq);
		pthread_mutex_unlock(&cq->lock);
		return ret == -EAGAIN ? -FI_EAGAIN : fi_xnic_err(ret);
	}
	default:
		return -FI_EINVAL;
	}
}

static int xnic_trywait(struct fid_fabric *fabric, struct fid **fids,
			int count)
{
	int i, ret;

	(void)fabric;
	for (i = 0; i < count; i++) {
		ret = xnic_trywait_one(fids[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static struct fi_ops xnic_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_fabric_close,
	.bind = fi_xnic_no_bind,
	.control = fi_xnic_no_control,
	.ops_open = fi_xnic_no_ops_open,
};

static struct fi_ops_fabric xnic_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = fi_xnic_domain_open,
	.passive_ep = fi_xnic_passive_ep,
	.eq_open = fi_xnic_eq_open,
	.wait_open = fi_xnic_no_wait_open,
	.trywait = xnic_trywait,
};

int fi_xnic_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fab,
			void *context)
{
	struct fi_xnic_fabric *f;

	if (!attr || !fab)
		return -FI_EINVAL;
	if (attr->name && strcmp(attr->name, FI_XNIC_NAME))
		return -FI_EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -FI_ENOMEM;
	f->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	f->fabric_fid.fid.context = context;
	f->fabric_fid.fid.ops = &xnic_fabric_fi_ops;
	f->fabric_fid.ops = &xnic_fabric_ops;
	f->fabric_fid.api_version = attr->api_version;
	*fab = &f->fabric_fid;
	return 0;
}

static void xnic_cleanup(void)
{
}

struct fi_provider fi_xnic_prov = {
	.name = FI_XNIC_NAME,
	.version = FI_XNIC_VERSION,
	.fi_version = FI_XNIC_API,
	.getinfo = xnic_getinfo,
	.fabric = fi_xnic_fabric_open,
	.cleanup = xnic_cleanup,
};

FI_EXT_INI
{
	fi_param_define(&fi_xnic_prov, "domain", FI_PARAM_STRING,
			"xnic device to use when the application names no "
			"domain, e.g. xnic1 (default: every xnic device)");
	fi_param_define(&fi_xnic_prov, "rxm", FI_PARAM_BOOL,
			"let ofi_rxm layer FI_EP_RDM on xnic's FI_EP_MSG "
			"endpoints, listed as xnic;ofi_rxm, e.g. for FI_RMA "
			"over FI_EP_RDM (default: no, FI_EP_RDM is xnic's own)");
	fi_param_define(&fi_xnic_prov, "timeout_ms", FI_PARAM_INT,
			"connect and accept timeout, ms (default: 10000)");
	fi_param_define(&fi_xnic_prov, "mr_cache_max_count", FI_PARAM_SIZE_T,
			"FI_EP_RDM: buffers of large messages kept registered "
			"for reuse, at most (default: 1024; 0: no cache)");
	fi_param_define(&fi_xnic_prov, "mr_cache_max_size", FI_PARAM_SIZE_T,
			"FI_EP_RDM: bytes kept registered for reuse, at most "
			"(default: 536870912)");
	fi_param_define(&fi_xnic_prov, "rdm_cq_size", FI_PARAM_SIZE_T,
			"FI_EP_RDM: CQ entries of an endpoint's connections, "
			"160 a peer connected at once (default: 16384, "
			"at most 65536)");
	return &fi_xnic_prov;
}
