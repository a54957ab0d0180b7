// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - which nodes a device reaches over its appliance's mesh,
 * from the kernel: a LINK_GET dump of the generic netlink family "xnic"
 * (uapi/xnic-netlink.h) lists, per member link, the peers heard on it; a
 * link on which one peer alone is heard is a mesh link (a switched link,
 * a leaf's segment, hears every node behind the switch). Reading needs no
 * privilege. libnl-3, as libxnic's connection manager.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include "priv.h"
#include "../uapi/xnic-netlink.h"

struct xnic_coll_mesh_dump {
	uint32_t *nodes;
	unsigned int max;
	unsigned int n;
	bool overflow;
};

/* What is read of a reply: unlisted attributes are not looked at. */
static struct nla_policy xnic_coll_reply_policy[XNIC_A_MAX + 1] = {
	[XNIC_A_LINK] = { .type = NLA_NESTED },
};

static struct nla_policy xnic_coll_link_policy[XNIC_LINK_A_MAX + 1] = {
	[XNIC_LINK_A_PEERS] = { .type = NLA_NESTED },
};

/* One link: its peer, when it has exactly one. */
static int xnic_coll_mesh_link_cb(struct nl_msg *msg, void *arg)
{
	struct xnic_coll_mesh_dump *d = arg;
	struct nlattr *tb[XNIC_A_MAX + 1], *l[XNIC_LINK_A_MAX + 1], *a;
	uint32_t node = 0;
	unsigned int k;
	int rem, peers = 0;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, XNIC_A_MAX,
			  xnic_coll_reply_policy) ||
	    !tb[XNIC_A_LINK] ||
	    nla_parse_nested(l, XNIC_LINK_A_MAX, tb[XNIC_A_LINK],
			     xnic_coll_link_policy) ||
	    !l[XNIC_LINK_A_PEERS])
		return NL_SKIP;
	nla_for_each_nested(a, l[XNIC_LINK_A_PEERS], rem) {
		if (nla_type(a) != XNIC_LINK_A_PEER_NODE ||
		    nla_len(a) < (int)sizeof(uint32_t))
			continue;
		node = nla_get_u32(a);
		peers++;
	}
	if (peers != 1)
		return NL_OK;
	for (k = 0; k < d->n && d->nodes[k] != node; k++)
		;
	if (k < d->n)
		return NL_OK;	/* several mesh links to one peer */
	if (d->n == d->max)
		d->overflow = true;
	else
		d->nodes[d->n++] = node;
	return NL_OK;
}

/**
 * xnic_coll_mesh_nodes() - the nodes a device reaches over mesh links
 * @device: xnic device name
 * @nodes: filled with up to @max node ids, each once
 * @max: room in @nodes
 * Return: how many, or a negative errno: -ENOENT when the kernel has no
 * xnic family or no such device, -ENOBUFS for more than @max, -EIO (or
 * -ENOMEM) for a netlink failure.
 */
int xnic_coll_mesh_nodes(const char *device, uint32_t *nodes,
			 unsigned int max)
{
	struct xnic_coll_mesh_dump d = { .nodes = nodes, .max = max };
	struct nl_sock *sk = nl_socket_alloc();
	struct nl_msg *msg = NULL;
	int family, err = -EIO;

	if (!sk)
		return -ENOMEM;
	if (genl_connect(sk) < 0)
		goto out;
	family = genl_ctrl_resolve(sk, XNIC_GENL_NAME);
	if (family < 0) {
		err = -ENOENT;
		goto out;
	}
	msg = nlmsg_alloc();
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP,
			 XNIC_CMD_LINK_GET, XNIC_GENL_VERSION) ||
	    nla_put_string(msg, XNIC_A_DEV_NAME, device))
		goto out;
	if (nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM,
				xnic_coll_mesh_link_cb, &d) < 0 ||
	    nl_send_auto(sk, msg) < 0)
		goto out;
	err = nl_recvmsgs_default(sk);
	if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NODEV)
		err = -ENOENT;
	else if (err < 0)
		err = -EIO;
	else
		err = d.overflow ? -ENOBUFS : (int)d.n;
out:
	nlmsg_free(msg);
	nl_socket_free(sk);
	return err;
}
