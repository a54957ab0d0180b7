// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_nl - minimal RDMA netlink client for the selftests (see rdma_nl.h).
 *
 * One socket per request. Errors are taken from the kernel's struct
 * nlmsgerr through a custom NL_CB_ERR callback, so callers see the exact
 * errno the kernel returned (libnl's own codes would fold e.g. ENFILE and
 * EEXIST into unrelated values).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <rdma/rdma_netlink.h>

#include "rdma_nl.h"

/* How often a dump interrupted by a concurrent change is retried. */
#define DUMP_RETRIES	5

struct nl_req {
	bool done;		/* ACK, error or end of dump seen */
	int err;		/* the kernel's errno (negative), or 0 */
	const char *name;	/* dump: device name to look for */
	bool found;
	uint32_t index;
};

/* A libnl NLE_* code (positive or negative) as a negative errno. */
static int nle_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_AF_NOSUPPORT:
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_DUMP_INTR:
		return -EINTR;
	default:
		return -EIO;
	}
}

static int err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_req *r = arg;

	(void)nla;
	r->err = e->error < 0 ? e->error : -e->error;
	r->done = true;
	return NL_STOP;
}

static int done_cb(struct nl_msg *msg, void *arg)
{
	struct nl_req *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

/* One RDMA_NLDEV_CMD_GET dump entry: remember the index of r->name. */
static int dev_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct nl_req *r = arg;
	struct nlattr *name, *index;

	if (nlmsg_parse(nlmsg_hdr(msg), 0, tb, RDMA_NLDEV_ATTR_MAX - 1,
			NULL) < 0)
		return NL_OK;
	name = tb[RDMA_NLDEV_ATTR_DEV_NAME];
	index = tb[RDMA_NLDEV_ATTR_DEV_INDEX];
	if (!name || !index || nla_len(index) < (int)sizeof(uint32_t))
		return NL_OK;
	if (!nla_strcmp(name, r->name)) {
		r->found = true;
		r->index = nla_get_u32(index);
	}
	return NL_OK;
}

/*
 * Send @msg on a new NETLINK_RDMA socket and read replies until the ACK,
 * an error or the end of a dump. Frees @msg.
 * Return: 0, the kernel's negative errno, or a local negative errno.
 */
static int nl_transact(struct nl_msg *msg, struct nl_req *r)
{
	struct nl_sock *sk;
	struct nl_cb *cb = NULL;
	int ret;

	sk = nl_socket_alloc();
	if (!sk) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = nl_connect(sk, NETLINK_RDMA);
	if (ret < 0) {
		ret = nle_errno(ret);
		goto out;
	}
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		ret = -ENOMEM;
		goto out;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, err_cb, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, done_cb, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, done_cb, r);
	if (r->name)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, dev_cb, r);

	/* Adds NLM_F_REQUEST and NLM_F_ACK. */
	ret = nl_send_auto(sk, msg);
	if (ret < 0) {
		ret = nle_errno(ret);
		goto out;
	}
	ret = 0;
	while (!r->done) {
		int rc = nl_recvmsgs(sk, cb);

		/* NLE_DUMP_INTR comes with the end of an interrupted dump. */
		if (rc == -NLE_DUMP_INTR) {
			ret = -EINTR;
			break;
		}
		if (r->done)
			break;
		if (rc < 0) {
			ret = nle_errno(rc);
			break;
		}
	}
	if (!ret)
		ret = r->err;
out:
	nl_cb_put(cb);
	nl_socket_free(sk);
	nlmsg_free(msg);
	return ret;
}

int xnic_nl_dev_index(const char *ibdev, uint32_t *index)
{
	int tries, ret = -EINTR;

	if (!ibdev || !index)
		return -EINVAL;
	for (tries = 0; tries < DUMP_RETRIES && ret == -EINTR; tries++) {
		struct nl_req r = { .name = ibdev };
		struct nl_msg *msg;

		msg = nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
							  RDMA_NLDEV_CMD_GET),
					 NLM_F_DUMP);
		if (!msg)
			return -ENOMEM;
		ret = nl_transact(msg, &r);
		if (!ret && !r.found)
			ret = -ENODEV;
		if (!ret)
			*index = r.index;
	}
	return ret;
}

int xnic_nl_link_add(const char *ibdev, const char *type, const char *netdev)
{
	struct nl_req r = {};
	struct nl_msg *msg;

	if (!ibdev || !type || !netdev)
		return -EINVAL;
	msg = nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
						  RDMA_NLDEV_CMD_NEWLINK), 0);
	if (!msg)
		return -ENOMEM;
	if (nla_put_string(msg, RDMA_NLDEV_ATTR_DEV_NAME, ibdev) < 0 ||
	    nla_put_string(msg, RDMA_NLDEV_ATTR_LINK_TYPE, type) < 0 ||
	    nla_put_string(msg, RDMA_NLDEV_ATTR_NDEV_NAME, netdev) < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nl_transact(msg, &r);
}

int xnic_nl_link_del(const char *ibdev)
{
	struct nl_req r = {};
	struct nl_msg *msg;
	uint32_t index;
	int ret;

	ret = xnic_nl_dev_index(ibdev, &index);
	if (ret)
		return ret;
	msg = nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
						  RDMA_NLDEV_CMD_DELLINK), 0);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, index) < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return nl_transact(msg, &r);
}
