// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - generic netlink family "xnic" (uapi/xnic-netlink.h): devices,
 * member links, peers, parameters and counters, and the "events" multicast
 * group. Documentation/xnictl.rst describes its reference client.
 *
 * Namespaces: the family is netnsok; a request sees the devices visible
 * from its socket's namespace only, events go where the device is visible
 * (netns.c).
 *
 * Locking: the family has parallel_ops (genetlink's mutex is not taken);
 * every request runs under RTNL, which guards the device list, the member
 * links, the parameters and xnic_dev.peers. A device found under RTNL stays
 * valid until RTNL is dropped (xnic_dealloc_driver() takes RTNL to leave
 * the list).
 *
 * Events come from the netdev notifier (RTNL) and from the transport
 * (engine thread or workqueue, under the peer table's spinlock): they are
 * built with GFP_ATOMIC inside an RCU read-side section that also checks
 * xnic_nl_live, so that xnic_nl_exit() can fence them with
 * synchronize_rcu() before the family goes away.
 */
#include <linux/etherdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "xnic.h"
#include "bond.h"
#include "verbs.h"
#include "transport.h"
#include "cm.h"
#include "wire.h"
#include "credit_logic.h"
#include "../uapi/xnic-netlink.h"

static_assert(XNIC_NR_TCLASSES == XNIC_NR_CLASSES);

/* Room for a notification: device, event and one link or peer nest. */
#define XNIC_NL_NTF_SIZE	512

enum xnic_nl_mcgrp {
	XNIC_NL_MCGRP_EVENTS,
};

/* Events may be sent (RCU: see the comment at the top). */
static bool xnic_nl_live;

/* ------------------------------ policies ------------------------------ */

/* XNIC_NODE_BROADCAST is no node's id (the wire never has it as source). */
static struct netlink_range_validation xnic_range_node_id = {
	.min = 0, .max = XNIC_NODE_BROADCAST - 1,
};

static struct netlink_range_validation xnic_range_max_peers = {
	.min = 1, .max = XNIC_NODE_BROADCAST - 1,
};

static struct netlink_range_validation xnic_range_idle_us = {
	.min = 0, .max = XNIC_MAX_IDLE_US,
};

/* What a grant can be: xnic_credit_share() */
static struct netlink_range_validation xnic_range_credit_window = {
	.min = XNIC_CREDIT_MIN, .max = XNIC_RX_WINDOW,
};

static struct netlink_range_validation xnic_range_bond_ms = {
	.min = 0, .max = 600000,
};

/* Beyond the s16 bounds of NLA_POLICY_MAX. */
static struct netlink_range_validation xnic_range_temp_hyst = {
	.min = 0, .max = XNIC_THERMAL_HYST_MAX_MC,
};

#define XNIC_NL_DEV_POLICY						\
	[XNIC_A_DEV_INDEX] = { .type = NLA_U32 },			\
	[XNIC_A_DEV_NAME] = { .type = NLA_NUL_STRING,			\
			      .len = IB_DEVICE_NAME_MAX - 1 }

/* Requests that name a device (or none, for dumps) and nothing else. */
static const struct nla_policy xnic_dev_policy[XNIC_A_MAX + 1] = {
	XNIC_NL_DEV_POLICY,
};

/* What LINK_ADD, LINK_DEL and LINK_SET take in XNIC_A_LINK. */
static const struct nla_policy xnic_link_req_policy[XNIC_LINK_A_MAX + 1] = {
	[XNIC_LINK_A_IFNAME] = { .type = NLA_NUL_STRING, .len = IFNAMSIZ - 1 },
	[XNIC_LINK_A_IFINDEX] = NLA_POLICY_MIN(NLA_U32, 1),
	[XNIC_LINK_A_TEMP_WARN_MC] = { .type = NLA_U32 },
	[XNIC_LINK_A_TEMP_CRIT_MC] = { .type = NLA_U32 },
	[XNIC_LINK_A_TEMP_INJECT_MC] = { .type = NLA_S32 },
	[XNIC_LINK_A_TEMP_HYST_MC] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_temp_hyst),
	[XNIC_LINK_A_TEMP_SOURCE] =
		NLA_POLICY_MAX(NLA_U8, XNIC_TEMP_SRC_MODULE),
	[XNIC_LINK_A_TEMP_SENSOR_MC] = { .type = NLA_S32 },
	[XNIC_LINK_A_TEMP_READ_ERROR] = { .type = NLA_FLAG },
};

static const struct nla_policy xnic_link_mod_policy[XNIC_A_MAX + 1] = {
	XNIC_NL_DEV_POLICY,
	[XNIC_A_LINK] = NLA_POLICY_NESTED(xnic_link_req_policy),
};

static const struct nla_policy xnic_param_policy[XNIC_PARAM_A_MAX + 1] = {
	[XNIC_PARAM_A_NODE_ID] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_node_id),
	[XNIC_PARAM_A_IDLE_US] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_idle_us),
	[XNIC_PARAM_A_HB_INTERVAL_MS] = NLA_POLICY_RANGE(NLA_U32, 1, 10000),
	[XNIC_PARAM_A_HB_MISS] = NLA_POLICY_RANGE(NLA_U32, 1, 255),
	[XNIC_PARAM_A_CREDIT_WINDOW] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_credit_window),
	[XNIC_PARAM_A_CLASS0_WEIGHT] = NLA_POLICY_RANGE(NLA_U32, 1, 255),
	[XNIC_PARAM_A_CLASS1_WEIGHT] = NLA_POLICY_RANGE(NLA_U32, 1, 255),
	[XNIC_PARAM_A_BOND_POLICY] =
		NLA_POLICY_MAX(NLA_U32, XNIC_BOND_POLICY_MAX - 1),
	[XNIC_PARAM_A_PEER_TIMEOUT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_bond_ms),
	[XNIC_PARAM_A_BOND_HOLD_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_bond_ms),
	[XNIC_PARAM_A_MAX_PEERS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_range_max_peers),
};

static const struct nla_policy xnic_param_set_policy[XNIC_A_MAX + 1] = {
	XNIC_NL_DEV_POLICY,
	[XNIC_A_PARAMS] = NLA_POLICY_NESTED(xnic_param_policy),
};

/* ------------------------------ helpers ------------------------------ */

/*
 * The device a request from namespace @net names by XNIC_A_DEV_NAME and/or
 * XNIC_A_DEV_INDEX; a device @net cannot see is not found (netns.c).
 * Context: RTNL held. Return: the device or an ERR_PTR (-ENODEV, -EINVAL).
 */
static struct xnic_dev *xnic_nl_dev(const struct net *net,
				    struct nlattr **attrs,
				    struct netlink_ext_ack *extack)
{
	struct nlattr *name = attrs[XNIC_A_DEV_NAME];
	struct nlattr *index = attrs[XNIC_A_DEV_INDEX];
	struct xnic_dev *xdev;

	if (!name && !index) {
		NL_SET_ERR_MSG(extack, "no xnic device given");
		NL_SET_ERR_ATTR_MISS(extack, NULL, XNIC_A_DEV_NAME);
		return ERR_PTR(-EINVAL);
	}
	if (name) {
		xdev = xnic_dev_find(net, nla_data(name));
		if (!xdev) {
			NL_SET_ERR_MSG_ATTR(extack, name, "no such xnic device");
			return ERR_PTR(-ENODEV);
		}
		if (index && xdev->ibdev.index != nla_get_u32(index)) {
			NL_SET_ERR_MSG_ATTR(extack, index,
					    "device index does not match the device name");
			return ERR_PTR(-EINVAL);
		}
		return xdev;
	}
	xdev = xnic_dev_find_index(net, nla_get_u32(index));
	if (!xdev) {
		NL_SET_ERR_MSG_ATTR(extack, index,
				    "no xnic device with this index");
		return ERR_PTR(-ENODEV);
	}
	return xdev;
}

static int xnic_nl_put_dev_id(struct sk_buff *skb, struct xnic_dev *xdev)
{
	if (nla_put_u32(skb, XNIC_A_DEV_INDEX, xdev->ibdev.index) ||
	    nla_put_string(skb, XNIC_A_DEV_NAME, xdev->ibdev.name))
		return -EMSGSIZE;
	return 0;
}

/* The member link of @xdev with @ifindex. Context: RCU read or RTNL. */
static struct xnic_link *xnic_nl_link_by_ifindex(struct xnic_dev *xdev,
						 int ifindex)
{
	struct xnic_link *link;

	list_for_each_entry_rcu(link, &xdev->links, list, lockdep_rtnl_is_held())
		if (link->ndev->ifindex == ifindex)
			return link;
	return NULL;
}

/* Count distinct peers: xnic_tp_peers_walk() visits a node's paths in a row. */
struct xnic_nl_peer_count {
	u32 n;
	int last;
};

static int xnic_nl_count_peer(const struct xnic_tp_peer_info *pi, void *arg)
{
	struct xnic_nl_peer_count *c = arg;

	if (pi->node != c->last) {
		c->n++;
		c->last = pi->node;
	}
	return 0;
}

/* Number of peers with at least one path. Context: RTNL held. */
static u32 xnic_nl_nr_peers(struct xnic_dev *xdev)
{
	struct xnic_nl_peer_count c = { .n = 0, .last = -1 };
	unsigned long pos = 0;

	xnic_tp_peers_walk(xdev, &pos, xnic_nl_count_peer, &c);
	return c.n;
}

/* ------------------------------ devices ------------------------------ */

/* One DEV_GET message. Context: RTNL held. */
static int xnic_nl_fill_dev(struct sk_buff *skb, struct xnic_dev *xdev,
			    u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &xnic_nl_family, flags,
			  XNIC_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (xnic_nl_put_dev_id(skb, xdev) ||
	    nla_put_u32(skb, XNIC_A_NODE_ID, READ_ONCE(xdev->node_id)) ||
	    nla_put_u64_64bit(skb, XNIC_A_NODE_GUID,
			      be64_to_cpu(xdev->ibdev.node_guid), XNIC_A_PAD) ||
	    nla_put_u8(skb, XNIC_A_PORT_STATE,
		       xdev->port_active ? XNIC_PORT_STATE_ACTIVE :
					   XNIC_PORT_STATE_DOWN) ||
	    nla_put_u32(skb, XNIC_A_NR_LINKS, xdev->nr_links) ||
	    nla_put_u32(skb, XNIC_A_PAYLOAD_MTU, xnic_dev_payload_mtu(xdev)) ||
	    nla_put_string(skb, XNIC_A_DRV_NAME, XNIC_DRV_NAME) ||
	    nla_put_string(skb, XNIC_A_DRV_VERSION, XNIC_DRV_VERSION) ||
	    nla_put_string(skb, XNIC_A_FW_VERSION, XNIC_FW_VERSION) ||
	    nla_put_u32(skb, XNIC_A_NR_PEERS, xnic_nl_nr_peers(xdev))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int xnic_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct xnic_dev *xdev;
	struct sk_buff *msg;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rtnl_lock();
	xdev = xnic_nl_dev(genl_info_net(info), info->attrs, info->extack);
	if (IS_ERR(xdev))
		err = PTR_ERR(xdev);
	else
		err = xnic_nl_fill_dev(msg, xdev, info->snd_portid,
				       info->snd_seq, 0);
	rtnl_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int xnic_nl_dev_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	unsigned long n = cb->args[0];
	struct xnic_dev *xdev;
	int err = 0;

	rtnl_lock();
	for (; (xdev = xnic_dev_nth(sock_net(skb->sk), n)); n++) {
		err = xnic_nl_fill_dev(skb, xdev, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err)
			break;
	}
	rtnl_unlock();
	cb->args[0] = n;
	if (err && !skb->len)
		return err;
	return skb->len;
}

/*
 * Dump something of every device (or of the one the request names): @fn
 * fills @skb with the entries of one device from *@pos on, advancing
 * *@pos, and returns -EMSGSIZE when @skb is full. cb->args[0] is the
 * device's position, cb->args[1] the position within the device.
 */
static int xnic_nl_dump_devs(struct sk_buff *skb, struct netlink_callback *cb,
			     int (*fn)(struct sk_buff *skb,
				       struct netlink_callback *cb,
				       struct xnic_dev *xdev,
				       unsigned long *pos))
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	unsigned long d = cb->args[0], pos = cb->args[1];
	struct xnic_dev *xdev;
	int err = 0;

	rtnl_lock();
	if (info->attrs[XNIC_A_DEV_NAME] || info->attrs[XNIC_A_DEV_INDEX]) {
		/* One device: d is 1 once it is done. */
		xdev = d ? NULL : xnic_nl_dev(sock_net(skb->sk), info->attrs,
					      cb->extack);
		if (IS_ERR(xdev))
			err = PTR_ERR(xdev);
		else if (xdev)
			err = fn(skb, cb, xdev, &pos);
		if (!err)
			d = 1;
	} else {
		for (; (xdev = xnic_dev_nth(sock_net(skb->sk), d));
		     d++, pos = 0) {
			err = fn(skb, cb, xdev, &pos);
			if (err)
				break;
		}
	}
	rtnl_unlock();
	cb->args[0] = d;
	cb->args[1] = pos;
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ? err : skb->len;
}

/* ------------------------------ links ------------------------------ */

struct xnic_nl_link_peers {
	struct sk_buff *skb;
	int ifindex;
};

static int xnic_nl_put_link_peer(const struct xnic_tp_peer_info *pi,
				 void *arg)
{
	struct xnic_nl_link_peers *lp = arg;

	if (pi->ifindex != lp->ifindex)
		return 0;
	return nla_put_u32(lp->skb, XNIC_LINK_A_PEER_NODE, pi->node);
}

/*
 * One message about a member link: LINK_GET (@event 0; lists the peers
 * heard on the link, under RTNL) or LINK_NTF (@event XNIC_EVENT_LINK_*;
 * RTNL held too).
 */
static int xnic_nl_fill_link(struct sk_buff *skb, struct xnic_link *link,
			     u32 portid, u32 seq, int flags, int event)
{
	struct net_device *ndev = link->ndev;
	struct xnic_nl_link_peers lp = { .skb = skb, .ifindex = ndev->ifindex };
	struct nlattr *nest, *peers;
	unsigned long pos = 0;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &xnic_nl_family, flags,
			  event ? XNIC_CMD_LINK_NTF : XNIC_CMD_LINK_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (xnic_nl_put_dev_id(skb, link->xdev) ||
	    (event && nla_put_u8(skb, XNIC_A_EVENT, event)))
		goto cancel;
	nest = nla_nest_start(skb, XNIC_A_LINK);
	if (!nest ||
	    nla_put_string(skb, XNIC_LINK_A_IFNAME, ndev->name) ||
	    nla_put_u32(skb, XNIC_LINK_A_IFINDEX, ndev->ifindex) ||
	    nla_put_u8(skb, XNIC_LINK_A_UP, xnic_link_is_up(link)) ||
	    nla_put_u8(skb, XNIC_LINK_A_CARRIER, netif_carrier_ok(ndev)) ||
	    nla_put_u32(skb, XNIC_LINK_A_MTU, READ_ONCE(ndev->mtu)) ||
	    xnic_bond_nl_put(skb, link))
		goto cancel;
	if (!event) {
		peers = nla_nest_start(skb, XNIC_LINK_A_PEERS);
		if (!peers ||
		    xnic_tp_peers_walk(link->xdev, &pos, xnic_nl_put_link_peer,
				       &lp))
			goto cancel;
		nla_nest_end(skb, peers);
	}
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int xnic_nl_dump_dev_links(struct sk_buff *skb,
				  struct netlink_callback *cb,
				  struct xnic_dev *xdev, unsigned long *pos)
{
	struct xnic_link *link;
	unsigned long i = 0;
	int err;

	list_for_each_entry(link, &xdev->links, list) {
		if (i++ < *pos)
			continue;
		err = xnic_nl_fill_link(skb, link, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI, 0);
		if (err)
			return err;
		(*pos)++;
	}
	return 0;
}

static int xnic_nl_link_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	return xnic_nl_dump_devs(skb, cb, xnic_nl_dump_dev_links);
}

/* LINK_SET of the member link on @ndev. Context: RTNL held. */
static int xnic_nl_link_set(struct xnic_dev *xdev, struct net_device *ndev,
			    struct nlattr **tb, struct netlink_ext_ack *extack)
{
	struct xnic_link *link;

	list_for_each_entry(link, &xdev->links, list)
		if (link->ndev == ndev)
			return xnic_bond_thermal_set(link, tb, extack);
	NL_SET_ERR_MSG(extack, "netdev is not a member link of the device");
	return -ENOENT;
}

/* LINK_ADD, LINK_DEL and LINK_SET (@cmd). */
static int xnic_nl_link_mod(struct genl_info *info, u8 cmd)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[XNIC_LINK_A_MAX + 1];
	struct net_device *ndev = NULL;
	struct xnic_dev *xdev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, XNIC_A_LINK)) {
		NL_SET_ERR_MSG(extack, "no member link given");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, XNIC_LINK_A_MAX, info->attrs[XNIC_A_LINK],
			       xnic_link_req_policy, extack);
	if (err)
		return err;
	if (!tb[XNIC_LINK_A_IFNAME] && !tb[XNIC_LINK_A_IFINDEX]) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[XNIC_A_LINK],
				    "no netdev name or index given");
		NL_SET_ERR_ATTR_MISS(extack, info->attrs[XNIC_A_LINK],
				     XNIC_LINK_A_IFNAME);
		return -EINVAL;
	}

	rtnl_lock();
	xdev = xnic_nl_dev(genl_info_net(info), info->attrs, extack);
	if (IS_ERR(xdev)) {
		err = PTR_ERR(xdev);
		goto out;
	}
	if (tb[XNIC_LINK_A_IFNAME]) {
		ndev = __dev_get_by_name(genl_info_net(info),
					 nla_data(tb[XNIC_LINK_A_IFNAME]));
		if (!ndev) {
			NL_SET_ERR_MSG_ATTR(extack, tb[XNIC_LINK_A_IFNAME],
					    "no such netdev");
			err = -ENODEV;
			goto out;
		}
	}
	if (tb[XNIC_LINK_A_IFINDEX]) {
		u32 ifindex = nla_get_u32(tb[XNIC_LINK_A_IFINDEX]);

		if (ndev && ndev->ifindex != ifindex) {
			NL_SET_ERR_MSG_ATTR(extack, tb[XNIC_LINK_A_IFINDEX],
					    "netdev index does not match the netdev name");
			err = -EINVAL;
			goto out;
		}
		ndev = __dev_get_by_index(genl_info_net(info), ifindex);
		if (!ndev) {
			NL_SET_ERR_MSG_ATTR(extack, tb[XNIC_LINK_A_IFINDEX],
					    "no netdev with this index");
			err = -ENODEV;
			goto out;
		}
	}
	if (cmd == XNIC_CMD_LINK_ADD)
		err = xnic_link_add(xdev, ndev, extack);
	else if (cmd == XNIC_CMD_LINK_DEL)
		err = xnic_link_del(xdev, ndev, extack);
	else
		err = xnic_nl_link_set(xdev, ndev, tb, extack);
out:
	rtnl_unlock();
	return err;
}

static int xnic_nl_link_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_nl_link_mod(info, XNIC_CMD_LINK_ADD);
}

static int xnic_nl_link_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_nl_link_mod(info, XNIC_CMD_LINK_DEL);
}

static int xnic_nl_link_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_nl_link_mod(info, XNIC_CMD_LINK_SET);
}

/* ------------------------------ peers ------------------------------ */

/*
 * One message about a path to a peer: PEER_GET (@event 0) or PEER_NTF.
 * Context: RCU read (the member links of @xdev).
 */
static int xnic_nl_fill_peer(struct sk_buff *skb, struct xnic_dev *xdev,
			     const struct xnic_tp_peer_info *pi, u32 portid,
			     u32 seq, int flags, int event)
{
	struct xnic_link *link = NULL;
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &xnic_nl_family, flags,
			  event ? XNIC_CMD_PEER_NTF : XNIC_CMD_PEER_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (xnic_nl_put_dev_id(skb, xdev) ||
	    (event && nla_put_u8(skb, XNIC_A_EVENT, event)))
		goto cancel;
	nest = nla_nest_start(skb, XNIC_A_PEER);
	if (!nest ||
	    nla_put_u32(skb, XNIC_PEER_A_NODE_ID, pi->node) ||
	    nla_put_u64_64bit(skb, XNIC_PEER_A_NODE_GUID, pi->guid,
			      XNIC_PEER_A_PAD))
		goto cancel;
	if (pi->ifindex) {
		link = xnic_nl_link_by_ifindex(xdev, pi->ifindex);
		if (nla_put(skb, XNIC_PEER_A_MAC, ETH_ALEN, pi->mac) ||
		    nla_put_u32(skb, XNIC_PEER_A_IFINDEX, pi->ifindex) ||
		    nla_put_u32(skb, XNIC_PEER_A_LAST_SEEN_MS, pi->age_ms))
			goto cancel;
	}
	if (link &&
	    (nla_put_string(skb, XNIC_PEER_A_IFNAME, link->ndev->name) ||
	     nla_put_u8(skb, XNIC_PEER_A_PATH_STATE,
			pi->lost ? XNIC_LINK_STATE_DOWN :
				   xnic_bond_link_state(link)) ||
	     nla_put_u8(skb, XNIC_PEER_A_ANSWERED, pi->answered)))
		goto cancel;
	if (pi->rtt_us && nla_put_u32(skb, XNIC_PEER_A_RTT_US, pi->rtt_us))
		goto cancel;
	if (pi->lost && nla_put_u32(skb, XNIC_PEER_A_DOWN_MS, pi->down_ms))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

struct xnic_nl_peer_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
	struct xnic_dev *xdev;
};

static int xnic_nl_put_peer(const struct xnic_tp_peer_info *pi, void *arg)
{
	struct xnic_nl_peer_dump *pd = arg;

	return xnic_nl_fill_peer(pd->skb, pd->xdev, pi,
				 NETLINK_CB(pd->cb->skb).portid,
				 pd->cb->nlh->nlmsg_seq, NLM_F_MULTI, 0);
}

static int xnic_nl_dump_dev_peers(struct sk_buff *skb,
				  struct netlink_callback *cb,
				  struct xnic_dev *xdev, unsigned long *pos)
{
	struct xnic_nl_peer_dump pd = { .skb = skb, .cb = cb, .xdev = xdev };

	return xnic_tp_peers_walk(xdev, pos, xnic_nl_put_peer, &pd);
}

static int xnic_nl_peer_get_dumpit(struct sk_buff *skb,
				   struct netlink_callback *cb)
{
	return xnic_nl_dump_devs(skb, cb, xnic_nl_dump_dev_peers);
}

/* ------------------------------ parameters ------------------------------ */

static int xnic_nl_param_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	const struct xnic_params *pa;
	struct xnic_dev *xdev;
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rtnl_lock();
	xdev = xnic_nl_dev(genl_info_net(info), info->attrs, info->extack);
	if (IS_ERR(xdev)) {
		err = PTR_ERR(xdev);
		goto err_unlock;
	}
	pa = &xdev->params;
	err = -EMSGSIZE;
	hdr = genlmsg_put_reply(msg, info, &xnic_nl_family, 0,
				XNIC_CMD_PARAM_GET);
	if (!hdr || xnic_nl_put_dev_id(msg, xdev))
		goto err_unlock;
	nest = nla_nest_start(msg, XNIC_A_PARAMS);
	if (!nest ||
	    nla_put_u32(msg, XNIC_PARAM_A_NODE_ID, READ_ONCE(xdev->node_id)) ||
	    nla_put_u32(msg, XNIC_PARAM_A_IDLE_US, pa->idle_us) ||
	    nla_put_u32(msg, XNIC_PARAM_A_HB_INTERVAL_MS, pa->hb_interval_ms) ||
	    nla_put_u32(msg, XNIC_PARAM_A_HB_MISS, pa->hb_miss) ||
	    nla_put_u32(msg, XNIC_PARAM_A_CREDIT_WINDOW, pa->credit_window) ||
	    nla_put_u32(msg, XNIC_PARAM_A_CLASS0_WEIGHT, pa->class_weight[0]) ||
	    nla_put_u32(msg, XNIC_PARAM_A_CLASS1_WEIGHT, pa->class_weight[1]) ||
	    nla_put_u32(msg, XNIC_PARAM_A_BOND_POLICY, pa->bond_policy) ||
	    nla_put_u32(msg, XNIC_PARAM_A_PEER_TIMEOUT_MS,
			pa->peer_timeout_ms) ||
	    nla_put_u32(msg, XNIC_PARAM_A_BOND_HOLD_MS, pa->bond_hold_ms) ||
	    nla_put_u32(msg, XNIC_PARAM_A_MAX_PEERS, pa->max_peers))
		goto err_unlock;
	nla_nest_end(msg, nest);
	rtnl_unlock();
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_unlock:
	rtnl_unlock();
	nlmsg_free(msg);
	return err;
}

/* Set the node id while the device has no QP. Context: RTNL held. */
static int xnic_nl_set_node_id(struct xnic_dev *xdev, struct nlattr *attr,
			       struct netlink_ext_ack *extack)
{
	u16 node = nla_get_u32(attr);
	bool busy;

	/* QP creation allocates its QPN under this lock. */
	xa_lock_bh(&xdev->qps);
	busy = !xa_empty(&xdev->qps);
	if (!busy)
		WRITE_ONCE(xdev->node_id, node);
	xa_unlock_bh(&xdev->qps);
	if (busy) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "node id cannot change while the device has QPs");
		return -EBUSY;
	}
	/* Announce the new id on every member link now. */
	xnic_tp_link_changed(xdev);
	return 0;
}

static void xnic_nl_set_u32(u32 *param, struct nlattr *attr)
{
	if (attr)
		WRITE_ONCE(*param, nla_get_u32(attr));
}

static int xnic_nl_param_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr *tb[XNIC_PARAM_A_MAX + 1];
	struct xnic_params *pa;
	struct xnic_dev *xdev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, XNIC_A_PARAMS)) {
		NL_SET_ERR_MSG(extack, "no parameters given");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, XNIC_PARAM_A_MAX,
			       info->attrs[XNIC_A_PARAMS], xnic_param_policy,
			       extack);
	if (err)
		return err;

	rtnl_lock();
	xdev = xnic_nl_dev(genl_info_net(info), info->attrs, extack);
	if (IS_ERR(xdev)) {
		err = PTR_ERR(xdev);
		goto out;
	}
	/* The only refusal after the policy: check it before any change. */
	if (tb[XNIC_PARAM_A_NODE_ID]) {
		err = xnic_nl_set_node_id(xdev, tb[XNIC_PARAM_A_NODE_ID],
					  extack);
		if (err)
			goto out;
	}
	pa = &xdev->params;
	xnic_nl_set_u32(&pa->idle_us, tb[XNIC_PARAM_A_IDLE_US]);
	xnic_nl_set_u32(&pa->hb_interval_ms, tb[XNIC_PARAM_A_HB_INTERVAL_MS]);
	xnic_nl_set_u32(&pa->hb_miss, tb[XNIC_PARAM_A_HB_MISS]);
	xnic_nl_set_u32(&pa->credit_window, tb[XNIC_PARAM_A_CREDIT_WINDOW]);
	xnic_nl_set_u32(&pa->class_weight[0], tb[XNIC_PARAM_A_CLASS0_WEIGHT]);
	xnic_nl_set_u32(&pa->class_weight[1], tb[XNIC_PARAM_A_CLASS1_WEIGHT]);
	xnic_nl_set_u32(&pa->bond_policy, tb[XNIC_PARAM_A_BOND_POLICY]);
	xnic_nl_set_u32(&pa->peer_timeout_ms, tb[XNIC_PARAM_A_PEER_TIMEOUT_MS]);
	xnic_nl_set_u32(&pa->bond_hold_ms, tb[XNIC_PARAM_A_BOND_HOLD_MS]);
	xnic_nl_set_u32(&pa->max_peers, tb[XNIC_PARAM_A_MAX_PEERS]);
	if (tb[XNIC_PARAM_A_HB_INTERVAL_MS])
		xnic_bond_params_changed(xdev);
out:
	rtnl_unlock();
	return err;
}

/* ------------------------------ statistics ------------------------------ */

static int xnic_nl_put_stats(struct sk_buff *msg, struct xnic_dev *xdev)
{
	unsigned int i, n = xnic_counters_num();
	struct nlattr *stats, *entry;
	u64 *vals;
	int err = -EMSGSIZE;

	vals = kmalloc_array(n, sizeof(*vals), GFP_KERNEL);
	if (!vals)
		return -ENOMEM;
	n = xnic_counters_read(xdev, vals, n);
	stats = nla_nest_start(msg, XNIC_A_STATS);
	if (!stats)
		goto out;
	for (i = 0; i < n; i++) {
		entry = nla_nest_start(msg, XNIC_A_STATS_ENTRY);
		if (!entry ||
		    nla_put_string(msg, XNIC_STAT_A_NAME,
				   xnic_counter_name(i)) ||
		    nla_put_u64_64bit(msg, XNIC_STAT_A_VALUE, vals[i],
				      XNIC_STAT_A_PAD))
			goto out;
		nla_nest_end(msg, entry);
	}
	nla_nest_end(msg, stats);
	err = 0;
out:
	kfree(vals);
	return err;
}

static int xnic_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct xnic_dev *xdev;
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rtnl_lock();
	xdev = xnic_nl_dev(genl_info_net(info), info->attrs, info->extack);
	if (IS_ERR(xdev)) {
		err = PTR_ERR(xdev);
		goto err_unlock;
	}
	err = -EMSGSIZE;
	hdr = genlmsg_put_reply(msg, info, &xnic_nl_family, 0,
				XNIC_CMD_STATS_GET);
	if (!hdr || xnic_nl_put_dev_id(msg, xdev))
		goto err_unlock;
	err = xnic_nl_put_stats(msg, xdev);
	if (err)
		goto err_unlock;
	rtnl_unlock();
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_unlock:
	rtnl_unlock();
	nlmsg_free(msg);
	return err;
}

/* ------------------------------ events ------------------------------ */

/**
 * xnic_nl_is_live() - whether the family is registered and events may go
 * out
 *
 * An event built in an RCU read-side section (or under a spinlock) that
 * saw true is sent before xnic_nl_exit() returns; none is after.
 *
 * Context: any; RCU read or a spinlock around the event's use of it.
 * Return: false once xnic_nl_exit() started.
 */
bool xnic_nl_is_live(void)
{
	return READ_ONCE(xnic_nl_live);
}

/* Whether an event is worth building. Context: RCU read. */
static bool xnic_nl_want_events(struct xnic_dev *xdev)
{
	return xnic_nl_is_live() && READ_ONCE(xdev->registered) &&
	       xnic_nl_has_listeners(xdev, XNIC_NL_MCGRP_EVENTS);
}

/**
 * xnic_nl_link_event() - announce a member link event on netlink
 * @link: the link
 * @event: XNIC_EVENT_LINK_* (uapi/xnic-netlink.h)
 *
 * Sent to the "events" group as XNIC_CMD_LINK_NTF, only for a registered
 * device. Best effort: dropped when memory is short.
 *
 * Context: RTNL held.
 */
void xnic_nl_link_event(struct xnic_link *link, int event)
{
	ASSERT_RTNL();
	xnic_nl_link_bond_event(link, event);
}

/**
 * xnic_nl_link_bond_event() - announce a member link event on netlink,
 *	without RTNL
 * @link: the link
 * @event: XNIC_EVENT_LINK_* (uapi/xnic-netlink.h)
 *
 * As xnic_nl_link_event(), for the bond's state changes (bond.c).
 *
 * Context: process context or softirq; the caller keeps @link attached
 * (bond.c's work: xnic_bond_link_fini() waits for it).
 */
void xnic_nl_link_bond_event(struct xnic_link *link, int event)
{
	struct sk_buff *skb;

	rcu_read_lock();
	if (!xnic_nl_want_events(link->xdev))
		goto out;
	skb = genlmsg_new(XNIC_NL_NTF_SIZE, GFP_ATOMIC);
	if (!skb)
		goto out;
	if (xnic_nl_fill_link(skb, link, 0, 0, 0, event)) {
		nlmsg_free(skb);
		goto out;
	}
	xnic_nl_multicast(link->xdev, skb, XNIC_NL_MCGRP_EVENTS);
out:
	rcu_read_unlock();
}

/**
 * xnic_nl_link_state() - announce a change of a member link's state
 * @link: the link; its state may or may not have changed
 *
 * Sends XNIC_EVENT_LINK_UP or XNIC_EVENT_LINK_DOWN when xnic_link_is_up()
 * differs from what was announced last.
 *
 * Context: RTNL held (netdev notifier).
 */
void xnic_nl_link_state(struct xnic_link *link)
{
	bool up = xnic_link_is_up(link);

	ASSERT_RTNL();
	if (up == link->nl_up)
		return;
	link->nl_up = up;
	xnic_nl_link_event(link, up ? XNIC_EVENT_LINK_UP :
				      XNIC_EVENT_LINK_DOWN);
}

/**
 * xnic_nl_peer_event() - announce a peer event on netlink
 * @xdev: the device
 * @pi: the peer, and the path it was learned on (for a join)
 * @event: XNIC_EVENT_PEER_JOIN or XNIC_EVENT_PEER_LEAVE
 *
 * Sent to the "events" group as XNIC_CMD_PEER_NTF, only for a registered
 * device. Best effort: dropped when memory is short.
 *
 * Context: any but hard IRQ; may hold spinlocks (GFP_ATOMIC).
 */
void xnic_nl_peer_event(struct xnic_dev *xdev,
			const struct xnic_tp_peer_info *pi, int event)
{
	struct sk_buff *skb;

	rcu_read_lock();
	if (!xnic_nl_want_events(xdev))
		goto out;
	skb = genlmsg_new(XNIC_NL_NTF_SIZE, GFP_ATOMIC);
	if (!skb)
		goto out;
	if (xnic_nl_fill_peer(skb, xdev, pi, 0, 0, 0, event)) {
		nlmsg_free(skb);
		goto out;
	}
	xnic_nl_multicast(xdev, skb, XNIC_NL_MCGRP_EVENTS);
out:
	rcu_read_unlock();
}

/* ------------------------------ family ------------------------------ */

static const struct genl_ops xnic_nl_ops[] = {
	{
		.cmd = XNIC_CMD_DEV_GET,
		.doit = xnic_nl_dev_get_doit,
		.dumpit = xnic_nl_dev_get_dumpit,
		.policy = xnic_dev_policy,
		.maxattr = ARRAY_SIZE(xnic_dev_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_LINK_GET,
		.dumpit = xnic_nl_link_get_dumpit,
		.policy = xnic_dev_policy,
		.maxattr = ARRAY_SIZE(xnic_dev_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_LINK_ADD,
		.flags = GENL_ADMIN_PERM,
		.doit = xnic_nl_link_add_doit,
		.policy = xnic_link_mod_policy,
		.maxattr = ARRAY_SIZE(xnic_link_mod_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_LINK_DEL,
		.flags = GENL_ADMIN_PERM,
		.doit = xnic_nl_link_del_doit,
		.policy = xnic_link_mod_policy,
		.maxattr = ARRAY_SIZE(xnic_link_mod_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_LINK_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = xnic_nl_link_set_doit,
		.policy = xnic_link_mod_policy,
		.maxattr = ARRAY_SIZE(xnic_link_mod_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_PEER_GET,
		.dumpit = xnic_nl_peer_get_dumpit,
		.policy = xnic_dev_policy,
		.maxattr = ARRAY_SIZE(xnic_dev_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_PARAM_GET,
		.doit = xnic_nl_param_get_doit,
		.policy = xnic_dev_policy,
		.maxattr = ARRAY_SIZE(xnic_dev_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_PARAM_SET,
		.flags = GENL_ADMIN_PERM,
		.doit = xnic_nl_param_set_doit,
		.policy = xnic_param_set_policy,
		.maxattr = ARRAY_SIZE(xnic_param_set_policy) - 1,
	},
	{
		.cmd = XNIC_CMD_STATS_GET,
		.doit = xnic_nl_stats_get_doit,
		.policy = xnic_dev_policy,
		.maxattr = ARRAY_SIZE(xnic_dev_policy) - 1,
	},
	/* Connection manager (cm_netlink.c): no privilege needed. */
	XNIC_CM_NL_OP(XNIC_CMD_CM_LISTEN, xnic_cm_nl_listen_doit),
	XNIC_CM_NL_OP(XNIC_CMD_CM_UNLISTEN, xnic_cm_nl_unlisten_doit),
	XNIC_CM_NL_OP(XNIC_CMD_CM_CONNECT, xnic_cm_nl_connect_doit),
	XNIC_CM_NL_OP(XNIC_CMD_CM_ACCEPT, xnic_cm_nl_accept_doit),
	XNIC_CM_NL_OP(XNIC_CMD_CM_REJECT, xnic_cm_nl_reject_doit),
	XNIC_CM_NL_OP(XNIC_CMD_CM_RTU, xnic_cm_nl_rtu_doit),
};

static const struct genl_multicast_group xnic_nl_mcgrps[] = {
	[XNIC_NL_MCGRP_EVENTS] = { .name = XNIC_GENL_MCGRP_EVENTS },
};

/* Not static: cm_netlink.c builds the CM messages. */
struct genl_family xnic_nl_family __ro_after_init = {
	.name = XNIC_GENL_NAME,
	.version = XNIC_GENL_VERSION,
	.module = THIS_MODULE,
	.parallel_ops = true,
	/* Requests see the devices of their namespace only (netns.c). */
	.netnsok = true,
	.ops = xnic_nl_ops,
	.n_ops = ARRAY_SIZE(xnic_nl_ops),
	.mcgrps = xnic_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(xnic_nl_mcgrps),
};

/**
 * xnic_nl_init() - register the generic netlink family (module load)
 *
 * Return: 0 or genl_register_family()'s error.
 */
int __init xnic_nl_init(void)
{
	int err;

	err = xnic_cm_nl_init();
	if (err)
		return err;
	err = genl_register_family(&xnic_nl_family);
	if (!err)
		WRITE_ONCE(xnic_nl_live, true);
	else
		xnic_cm_nl_exit();
	return err;
}

/**
 * xnic_nl_exit() - unregister the family (module unload)
 *
 * Fences the events first: none is being built or sent once this returns.
 * Waits for running requests (genl_unregister_family()).
 *
 * Context: process context, RTNL not held.
 */
void xnic_nl_exit(void)
{
	WRITE_ONCE(xnic_nl_live, false);
	synchronize_rcu();
	genl_unregister_family(&xnic_nl_family);
	xnic_cm_nl_exit();
}
