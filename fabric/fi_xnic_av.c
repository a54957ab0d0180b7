// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address vector (fi_av(3)) of RDM endpoints: a table of xnic addresses
 * (struct fi_xnic_addr); an fi_addr_t is an index into it, for FI_AV_MAP
 * and FI_AV_TABLE alike (a map may hand out any value). Inserting is
 * synchronous: no EQ is needed or taken.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fi_xnic_rdm.h"

#define XNIC_AV_DEF_SIZE	64
/*
 * fi_av_open's count is only a hint (fi_av(3): the expected number of
 * addresses): the table is made for at most this many up front and grows
 * on insert, so a huge hint neither fails nor zeroes gigabytes.
 */
#define XNIC_AV_MAX_HINT	65536
/* The most entries the table can have: its bytes fit a ptrdiff_t. */
#define XNIC_AV_MAX_SIZE	(PTRDIFF_MAX / sizeof(struct fi_xnic_addr))

/*
 * Grow the table to at least @want entries; called with the lock held.
 * Return: 0; -FI_ENOMEM when @want entries cannot be allocated (above
 * XNIC_AV_MAX_SIZE, or realloc failed): the table is left as it was.
 */
static int xnic_av_grow(struct fi_xnic_av *av, size_t want)
{
	struct fi_xnic_addr *a;
	size_t size = av->size ? av->size : XNIC_AV_DEF_SIZE;

	/* Bounded, so that doubling cannot wrap size (to 0) nor the bytes. */
	if (want > XNIC_AV_MAX_SIZE)
		return -FI_ENOMEM;
	while (size < want)
		size = size > XNIC_AV_MAX_SIZE / 2 ? XNIC_AV_MAX_SIZE :
		       size * 2;
	if (size == av->size)
		return 0;
	/* size >= XNIC_AV_DEF_SIZE: never realloc(p, 0), which frees p. */
	a = realloc(av->addrs, size * sizeof(*a));
	if (!a)
		return -FI_ENOMEM;
	memset(a + av->size, 0, (size - av->size) * sizeof(*a));
	av->addrs = a;
	av->size = size;
	return 0;
}

static int xnic_av_insert(struct fid_av *av_fid, const void *addr,
			  size_t count, fi_addr_t *fi_addr, uint64_t flags,
			  void *context)
{
	struct fi_xnic_av *av = container_of(av_fid, struct fi_xnic_av, av_fid);
	const struct fi_xnic_addr *in = addr;
	int done = 0, err;
	size_t i;

	(void)context;
	if (flags & ~(uint64_t)FI_MORE)
		return -FI_EBADFLAGS;
	if (count && !addr)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	/* av->count + count must not wrap (count is the caller's). */
	err = count > XNIC_AV_MAX_SIZE - av->count ? -FI_ENOMEM :
	      xnic_av_grow(av, av->count + count);
	if (err) {
		pthread_mutex_unlock(&av->lock);
		return err;
	}
	for (i = 0; i < count; i++) {
		if (fi_xnic_addr_check(&in[i], sizeof(in[i]))) {
			if (fi_addr)
				fi_addr[i] = FI_ADDR_NOTAVAIL;
			continue;
		}
		av->addrs[av->count] = in[i];
		if (fi_addr)
			fi_addr[i] = av->count;
		av->count++;
		done++;
	}
	pthread_mutex_unlock(&av->lock);
	return done;
}

static int xnic_av_remove(struct fid_av *av_fid, fi_addr_t *fi_addr,
			  size_t count, uint64_t flags)
{
	struct fi_xnic_av *av = container_of(av_fid, struct fi_xnic_av, av_fid);
	bool removed = false;
	int ret = 0;
	size_t i;

	if (flags)
		return -FI_EBADFLAGS;
	if (count && !fi_addr)
		return -FI_EINVAL;
	pthread_mutex_lock(&av->lock);
	for (i = 0; i < count; i++) {
		if (fi_addr[i] >= av->count ||
		    !av->addrs[fi_addr[i]].sin6_family) {
			ret = -FI_EINVAL;
			continue;
		}
		av->addrs[fi_addr[i]].sin6_family = 0;
		removed = true;
	}
	/*
	 * Endpoints cache connections by fi_addr: the count tells them to
	 * look again (fi_xnic_rdm_av_sync()); release: after the entries.
	 */
	if (removed)
		__atomic_fetch_add(&av->removed, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&av->lock);
	return ret;
}

/**
 * fi_xnic_av_get() - the address of an fi_addr
 * @av: AV
 * @fi_addr: index
 * @addr: filled with the address
 * Return: 0; -FI_EINVAL when @fi_addr is not in the AV.
 */
int fi_xnic_av_get(struct fi_xnic_av *av, fi_addr_t fi_addr,
		   struct fi_xnic_addr *addr)
{
	int ret = -FI_EINVAL;

	pthread_mutex_lock(&av->lock);
	if (fi_addr < av->count && av->addrs[fi_addr].sin6_family) {
		*addr = av->addrs[fi_addr];
		ret = 0;
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

/**
 * fi_xnic_av_find() - the fi_addr of an endpoint address (FI_SOURCE)
 * @av: AV (may be NULL)
 * @node: its node id
 * @port: its port
 * Return: the first entry with that address, or FI_ADDR_NOTAVAIL.
 */
fi_addr_t fi_xnic_av_find(struct fi_xnic_av *av, uint32_t node,
			  uint16_t port)
{
	fi_addr_t ret = FI_ADDR_NOTAVAIL;
	size_t i;

	if (!av)
		return ret;
	pthread_mutex_lock(&av->lock);
	for (i = 0; i < av->count; i++) {
		const struct fi_xnic_addr *a = &av->addrs[i];

		if (a->sin6_family && fi_xnic_addr_node(a) == node &&
		    fi_xnic_addr_port(a) == port) {
			ret = i;
			break;
		}
	}
	pthread_mutex_unlock(&av->lock);
	return ret;
}

static int xnic_av_lookup(struct fid_av *av_fid, fi_addr_t fi_addr,
			  void *addr, size_t *addrlen)
{
	struct fi_xnic_av *av = container_of(av_fid, struct fi_xnic_av, av_fid);
	struct fi_xnic_addr a;
	size_t have;
	int err;

	if (!addrlen)
		return -FI_EINVAL;
	err = fi_xnic_av_get(av, fi_addr, &a);
	if (err)
		return err;
	have = *addrlen;
	*addrlen = sizeof(a);
	if (!addr || have < sizeof(a))
		return -FI_ETOOSMALL;
	memcpy(addr, &a, sizeof(a));
	return 0;
}

static const char *xnic_av_straddr(struct fid_av *av, const void *addr,
				   char *buf, size_t *len)
{
	const struct fi_xnic_addr *a = addr;
	char s[48];
	int n;

	(void)av;
	if (!buf || !len || fi_xnic_addr_check(addr, sizeof(*a)))
		return NULL;
	n = snprintf(s, sizeof(s), "fi_sockaddr_in6://xnic-node%u:%u",
		     fi_xnic_addr_node(a), fi_xnic_addr_port(a));
	if (*len) {
		strncpy(buf, s, *len - 1);
		buf[*len - 1] = '\0';
	}
	*len = (size_t)n + 1;
	return buf;
}

static int xnic_av_close(struct fid *fid)
{
	struct fi_xnic_av *av = container_of(fid, struct fi_xnic_av,
					     av_fid.fid);

	if (__atomic_load_n(&av->refs, __ATOMIC_RELAXED))
		return -FI_EBUSY;
	__atomic_fetch_sub(&av->domain->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_destroy(&av->lock);
	free(av->addrs);
	free(av);
	return 0;
}

static struct fi_ops xnic_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = xnic_av_close,
	.bind = fi_xnic_no_bind,
	.control = fi_xnic_no_control,
	.ops_open = fi_xnic_no_ops_open,
};

static int xnic_av_insertsvc(struct fid_av *av, const char *node,
			     const char *service, fi_addr_t *fi_addr,
			     uint64_t flags, void *context)
{
	(void)av; (void)node; (void)service; (void)fi_addr; (void)flags;
	(void)context;
	return -FI_ENOSYS;
}

static int xnic_av_insertsym(struct fid_av *av, const char *node,
			     size_t nodecnt, const char *service,
			     size_t svccnt, fi_addr_t *fi_addr,
			     uint64_t flags, void *context)
{
	(void)av; (void)node; (void)nodecnt; (void)service; (void)svccnt;
	(void)fi_addr; (void)flags; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_av xnic_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = xnic_av_insert,
	.insertsvc = xnic_av_insertsvc,
	.insertsym = xnic_av_insertsym,
	.remove = xnic_av_remove,
	.lookup = xnic_av_lookup,
	.straddr = xnic_av_straddr,
};

/**
 * fi_xnic_av_open() - fi_av_open(3)
 * @domain: domain
 * @attr: FI_AV_MAP, FI_AV_TABLE or FI_AV_UNSPEC; count is a size hint
 *	(room for at most XNIC_AV_MAX_HINT entries is made up front, any
 *	larger hint is taken as that; the table grows on insert); no
 *	flags (no FI_EVENT, FI_READ, FI_SYMMETRIC), no name
 * @avp: the new AV
 * @context: its context
 * Return: 0; -FI_EINVAL; -FI_ENOSYS for what is not offered; -FI_ENOMEM.
 */
int fi_xnic_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		    struct fid_av **avp, void *context)
{
	struct fi_xnic_domain *d = container_of(domain, struct fi_xnic_domain,
						domain_fid);
	struct fi_xnic_av *av;

	if (!attr || !avp)
		return -FI_EINVAL;
	if (attr->type != FI_AV_UNSPEC && attr->type != FI_AV_MAP &&
	    attr->type != FI_AV_TABLE)
		return -FI_EINVAL;
	if (attr->flags || attr->name || attr->rx_ctx_bits)
		return -FI_ENOSYS;
	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	if (attr->count && xnic_av_grow(av, attr->count < XNIC_AV_MAX_HINT ?
					 attr->count : XNIC_AV_MAX_HINT)) {
		free(av);
		return -FI_ENOMEM;
	}
	if (attr->type == FI_AV_UNSPEC)
		attr->type = FI_AV_TABLE;
	pthread_mutex_init(&av->lock, NULL);
	av->domain = d;
	av->av_fid.fid.fclass = FI_CLASS_AV;
	av->av_fid.fid.context = context;
	av->av_fid.fid.ops = &xnic_av_fi_ops;
	av->av_fid.ops = &xnic_av_ops;
	__atomic_fetch_add(&d->refs, 1, __ATOMIC_RELAXED);
	*avp = &av->av_fid;
	return 0;
}
