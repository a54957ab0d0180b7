// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the connection manager's side of the generic netlink family
 * "xnic": the CM_* requests, the CM_EVENT messages unicast to the socket
 * that owns a listener or a connection, and the NETLINK_URELEASE notifier
 * that drops what a closing socket owned. uapi/xnic-netlink.h documents
 * the messages, Documentation/cm.rst the protocol.
 *
 * The requests need no privilege: what a socket creates belongs to that
 * socket only (its port id in its network namespace), every request
 * on an existing record checks the owner, and a QP is named only by a
 * requester of the uid that created it (or with CAP_NET_ADMIN).
 *
 * Locking: requests run under RTNL (the device lookup of netlink.c), then
 * under the device's CM lock (cm.c). Events are built and sent under the
 * CM lock, GFP_ATOMIC and MSG_DONTWAIT: a full socket loses the event,
 * which cm.c counts and recovers from where it can (see cm.c).
 */
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/rtnetlink.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "xnic.h"
#include "wire.h"
#include "cm.h"

/* Room for an event: device, and a CM nest with private data. */
#define XNIC_CM_NL_EVENT_SIZE	512

static struct netlink_range_validation xnic_cm_range_node = {
	.min = 0, .max = XNIC_NODE_BROADCAST - 1,
};

static struct netlink_range_validation xnic_cm_range_24bit = {
	.min = 0, .max = XNIC_QPN_MASK,
};

static const struct nla_policy xnic_cm_attr_policy[XNIC_CM_A_MAX + 1] = {
	[XNIC_CM_A_SERVICE_ID] = { .type = NLA_U64 },
	[XNIC_CM_A_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[XNIC_CM_A_NODE] = NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_cm_range_node),
	[XNIC_CM_A_QPN] = NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_cm_range_24bit),
	[XNIC_CM_A_PSN] = NLA_POLICY_FULL_RANGE(NLA_U32, &xnic_cm_range_24bit),
	[XNIC_CM_A_PRIVATE] = { .type = NLA_BINARY,
				.len = XNIC_CM_PRIVATE_LEN },
	[XNIC_CM_A_TIMEOUT_MS] = NLA_POLICY_RANGE(NLA_U32, 1, 10000),
	[XNIC_CM_A_RETRIES] = NLA_POLICY_MAX(NLA_U32, 10),
};

/* What every CM request takes: a device and a CM nest. */
const struct nla_policy xnic_cm_nl_policy[XNIC_A_MAX + 1] = {
	[XNIC_A_DEV_INDEX] = { .type = NLA_U32 },
	[XNIC_A_DEV_NAME] = { .type = NLA_NUL_STRING,
			      .len = IB_DEVICE_NAME_MAX - 1 },
	[XNIC_A_CM] = NLA_POLICY_NESTED(xnic_cm_attr_policy),
};

/* The device a request names. Context: RTNL. Return: it or an ERR_PTR. */
static struct xnic_dev *xnic_cm_nl_dev(struct genl_info *info)
{
	struct nlattr *name = info->attrs[XNIC_A_DEV_NAME];
	struct nlattr *index = info->attrs[XNIC_A_DEV_INDEX];
	struct xnic_dev *xdev;

	if (!name && !index) {
		NL_SET_ERR_MSG(info->extack, "no xnic device given");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, XNIC_A_DEV_NAME);
		return ERR_PTR(-EINVAL);
	}
	/* A device in another namespace is not found (netns.c). */
	xdev = name ? xnic_dev_find(genl_info_net(info), nla_data(name)) :
		      xnic_dev_find_index(genl_info_net(info),
					  nla_get_u32(index));
	if (!xdev || (name && index &&
		      xdev->ibdev.index != nla_get_u32(index))) {
		NL_SET_ERR_MSG(info->extack, "no such xnic device");
		return ERR_PTR(-ENODEV);
	}
	return xdev;
}

static int xnic_cm_nl_put_dev_id(struct sk_buff *skb, struct xnic_dev *xdev)
{
	if (nla_put_u32(skb, XNIC_A_DEV_INDEX, xdev->ibdev.index) ||
	    nla_put_string(skb, XNIC_A_DEV_NAME, xdev->ibdev.name))
		return -EMSGSIZE;
	return 0;
}

/*
 * Parse the CM nest of @info into @tb and check that it has the @need
 * attributes (a bitmask of enum xnic_cm_attr).
 */
static int xnic_cm_nl_parse(struct genl_info *info, struct nlattr **tb,
			    unsigned long need)
{
	struct nlattr *nest = info->attrs[XNIC_A_CM];
	unsigned int a;
	int err;

	if (!nest) {
		NL_SET_ERR_MSG(info->extack, "no CM attributes");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, XNIC_A_CM);
		return -EINVAL;
	}
	err = nla_parse_nested(tb, XNIC_CM_A_MAX, nest, xnic_cm_attr_policy,
			       info->extack);
	if (err)
		return err;
	for (a = 1; a <= XNIC_CM_A_MAX; a++) {
		if ((need & BIT(a)) && !tb[a]) {
			NL_SET_ERR_MSG(info->extack,
				       "a required CM attribute is missing");
			NL_SET_ERR_ATTR_MISS(info->extack, nest, a);
			return -EINVAL;
		}
	}
	return 0;
}

static void xnic_cm_nl_owner(struct genl_info *info, struct xnic_cm_owner *o)
{
	o->net = genl_info_net(info);
	o->portid = info->snd_portid;
	/* A generic netlink request runs in its sender's context. */
	o->uid = current_euid();
	o->admin = capable(CAP_NET_ADMIN);
}

static int xnic_cm_nl_listen_common(struct genl_info *info, bool listen)
{
	struct nlattr *tb[XNIC_CM_A_MAX + 1];
	struct xnic_cm_owner o;
	struct xnic_dev *xdev;
	u64 sid;
	int err;

	err = xnic_cm_nl_parse(info, tb, BIT(XNIC_CM_A_SERVICE_ID));
	if (err)
		return err;
	sid = nla_get_u64(tb[XNIC_CM_A_SERVICE_ID]);
	xnic_cm_nl_owner(info, &o);
	rtnl_lock();
	xdev = xnic_cm_nl_dev(info);
	if (IS_ERR(xdev))
		err = PTR_ERR(xdev);
	else if (listen)
		err = xnic_cm_listen(xdev, &o, sid);
	else
		err = xnic_cm_unlisten(xdev, &o, sid);
	rtnl_unlock();
	if (err == -EADDRINUSE)
		NL_SET_ERR_MSG_ATTR(info->extack, tb[XNIC_CM_A_SERVICE_ID],
				    "service id already listened on");
	return err;
}

/**
 * xnic_cm_nl_listen_doit() - XNIC_CMD_CM_LISTEN
 * @skb: the request
 * @info: its parsed attributes (policy xnic_cm_nl_policy)
 *
 * Context: process context (the requesting socket's sendmsg()).
 * Return: 0 or -errno: EINVAL (attributes), ENODEV, and those of
 * xnic_cm_listen().
 */
int xnic_cm_nl_listen_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_cm_nl_listen_common(info, true);
}

/**
 * xnic_cm_nl_unlisten_doit() - XNIC_CMD_CM_UNLISTEN
 * @skb: the request
 * @info: its parsed attributes
 *
 * Context: process context.
 * Return: 0 or -errno: EINVAL, ENODEV, ENOENT (xnic_cm_unlisten()).
 */
int xnic_cm_nl_unlisten_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_cm_nl_listen_common(info, false);
}

static void xnic_cm_nl_private(struct nlattr **tb, const u8 **data, u8 *len)
{
	struct nlattr *a = tb[XNIC_CM_A_PRIVATE];

	*data = a ? nla_data(a) : NULL;
	*len = a ? nla_len(a) : 0;
}

/**
 * xnic_cm_nl_connect_doit() - XNIC_CMD_CM_CONNECT
 * @skb: the request
 * @info: its parsed attributes
 *
 * Replies with the connection's id; the outcome is a CM_EVENT later.
 *
 * Context: process context.
 * Return: 0 or -errno: EINVAL (attributes, own node id), ENODEV,
 * EHOSTUNREACH (a node the peer table does not know), ENOBUFS, ENOMEM.
 */
int xnic_cm_nl_connect_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[XNIC_CM_A_MAX + 1];
	struct xnic_cm_connect_args a = {};
	struct xnic_cm_owner o;
	struct xnic_dev *xdev;
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;
	u32 id = 0;
	int err;

	err = xnic_cm_nl_parse(info, tb, BIT(XNIC_CM_A_NODE) |
			       BIT(XNIC_CM_A_SERVICE_ID) | BIT(XNIC_CM_A_QPN) |
			       BIT(XNIC_CM_A_PSN));
	if (err)
		return err;
	a.node = nla_get_u32(tb[XNIC_CM_A_NODE]);
	a.service_id = nla_get_u64(tb[XNIC_CM_A_SERVICE_ID]);
	a.qpn = nla_get_u32(tb[XNIC_CM_A_QPN]);
	a.psn = nla_get_u32(tb[XNIC_CM_A_PSN]);
	a.timeout_ms = tb[XNIC_CM_A_TIMEOUT_MS] ?
		       nla_get_u32(tb[XNIC_CM_A_TIMEOUT_MS]) :
		       XNIC_CM_DEF_TIMEOUT_MS;
	a.retries = tb[XNIC_CM_A_RETRIES] ?
		    nla_get_u32(tb[XNIC_CM_A_RETRIES]) : XNIC_CM_DEF_RETRIES;
	xnic_cm_nl_private(tb, &a.private_data, &a.private_len);
	xnic_cm_nl_owner(info, &o);

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	rtnl_lock();
	xdev = xnic_cm_nl_dev(info);
	if (IS_ERR(xdev)) {
		err = PTR_ERR(xdev);
	} else {
		err = xnic_cm_connect(xdev, &o, &a, &id);
		if (err == -EINVAL)
			NL_SET_ERR_MSG_ATTR(info->extack, tb[XNIC_CM_A_NODE],
					    "cannot connect to the own node");
		else if (err == -EHOSTUNREACH)
			NL_SET_ERR_MSG_ATTR(info->extack, tb[XNIC_CM_A_NODE],
					    "no such node in the peer table");
	}
	if (err)
		goto out;
	err = -EMSGSIZE;
	hdr = genlmsg_put(msg, info->snd_portid, info->snd_seq,
			  &xnic_nl_family, 0, XNIC_CMD_CM_CONNECT);
	if (!hdr || xnic_cm_nl_put_dev_id(msg, xdev))
		goto out;
	nest = nla_nest_start(msg, XNIC_A_CM);
	if (!nest || nla_put_u32(msg, XNIC_CM_A_ID, id))
		goto out;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	err = 0;
out:
	rtnl_unlock();
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

enum xnic_cm_answer {
	XNIC_CM_ANSWER_ACCEPT,
	XNIC_CM_ANSWER_REJECT,
	XNIC_CM_ANSWER_RTU,
};

static int xnic_cm_nl_answer(struct genl_info *info, enum xnic_cm_answer how)
{
	bool accept = how == XNIC_CM_ANSWER_ACCEPT;
	struct nlattr *tb[XNIC_CM_A_MAX + 1];
	struct xnic_cm_owner o;
	struct xnic_dev *xdev;
	const u8 *priv;
	u8 priv_len;
	int err;

	err = xnic_cm_nl_parse(info, tb, accept ? BIT(XNIC_CM_A_ID) |
			       BIT(XNIC_CM_A_QPN) | BIT(XNIC_CM_A_PSN) :
			       BIT(XNIC_CM_A_ID));
	if (err)
		return err;
	xnic_cm_nl_private(tb, &priv, &priv_len);
	xnic_cm_nl_owner(info, &o);
	rtnl_lock();
	xdev = xnic_cm_nl_dev(info);
	if (IS_ERR(xdev))
		err = PTR_ERR(xdev);
	else if (how == XNIC_CM_ANSWER_RTU)
		err = xnic_cm_rtu(xdev, &o, nla_get_u32(tb[XNIC_CM_A_ID]));
	else if (accept)
		err = xnic_cm_accept(xdev, &o, nla_get_u32(tb[XNIC_CM_A_ID]),
				     nla_get_u32(tb[XNIC_CM_A_QPN]),
				     nla_get_u32(tb[XNIC_CM_A_PSN]),
				     priv, priv_len);
	else
		err = xnic_cm_reject(xdev, &o, nla_get_u32(tb[XNIC_CM_A_ID]),
				     priv, priv_len);
	rtnl_unlock();
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, tb[XNIC_CM_A_ID],
				    "no such connection of this socket");
	else if (err == -EINVAL)
		NL_SET_ERR_MSG_ATTR(info->extack, tb[XNIC_CM_A_ID],
				    "connection not waiting for this answer");
	return err;
}

/**
 * xnic_cm_nl_accept_doit() - XNIC_CMD_CM_ACCEPT
 * @skb: the request
 * @info: its parsed attributes
 *
 * Context: process context.
 * Return: 0 or -errno: EINVAL, ENODEV, ENOENT (xnic_cm_accept()).
 */
int xnic_cm_nl_accept_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_cm_nl_answer(info, XNIC_CM_ANSWER_ACCEPT);
}

/**
 * xnic_cm_nl_reject_doit() - XNIC_CMD_CM_REJECT
 * @skb: the request
 * @info: its parsed attributes
 *
 * Context: process context.
 * Return: 0 or -errno: EINVAL, ENODEV, ENOENT (xnic_cm_reject()).
 */
int xnic_cm_nl_reject_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_cm_nl_answer(info, XNIC_CM_ANSWER_REJECT);
}

/**
 * xnic_cm_nl_rtu_doit() - XNIC_CMD_CM_RTU
 * @skb: the request
 * @info: its parsed attributes
 *
 * Context: process context.
 * Return: 0 or -errno: EINVAL, ENODEV, ENOENT (xnic_cm_rtu()).
 */
int xnic_cm_nl_rtu_doit(struct sk_buff *skb, struct genl_info *info)
{
	return xnic_cm_nl_answer(info, XNIC_CM_ANSWER_RTU);
}

/**
 * xnic_cm_nl_event() - unicast a CM_EVENT to the owner of a record
 * @xdev: the device
 * @o: the owning socket
 * @ev: what to say
 *
 * Nothing is sent once module unload began (xnic_nl_is_live()): the
 * owner's network namespace, which the record does not reference, may be
 * gone by then (its socket's release is no longer watched).
 *
 * Context: any but hard IRQ, under the CM lock; does not sleep
 * (GFP_ATOMIC, MSG_DONTWAIT).
 * Return: 0 when queued on the socket; -ESHUTDOWN during module unload;
 * -ENOMEM, -EMSGSIZE, or the unicast's error (-EAGAIN: receive buffer
 * full, -ECONNREFUSED: no such socket).
 */
int xnic_cm_nl_event(struct xnic_dev *xdev, const struct xnic_cm_owner *o,
		     const struct xnic_cm_event_info *ev)
{
	struct nlattr *nest;
	struct sk_buff *msg;
	void *hdr;

	if (!xnic_nl_is_live())
		return -ESHUTDOWN;
	msg = genlmsg_new(XNIC_CM_NL_EVENT_SIZE, GFP_ATOMIC);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, 0, 0, &xnic_nl_family, 0, XNIC_CMD_CM_EVENT);
	if (!hdr || xnic_cm_nl_put_dev_id(msg, xdev))
		goto err;
	nest = nla_nest_start(msg, XNIC_A_CM);
	if (!nest ||
	    nla_put_u8(msg, XNIC_CM_A_EVENT, ev->event) ||
	    nla_put_u32(msg, XNIC_CM_A_ID, ev->id) ||
	    nla_put_u32(msg, XNIC_CM_A_NODE, ev->node) ||
	    nla_put_u64_64bit(msg, XNIC_CM_A_SERVICE_ID, ev->service_id,
			      XNIC_CM_A_PAD))
		goto err;
	if ((ev->event == XNIC_CM_EVENT_REQ ||
	     ev->event == XNIC_CM_EVENT_REP) &&
	    (nla_put_u32(msg, XNIC_CM_A_QPN, ev->qpn) ||
	     nla_put_u32(msg, XNIC_CM_A_PSN, ev->psn)))
		goto err;
	if (ev->event == XNIC_CM_EVENT_DISCONNECTED &&
	    nla_put_u32(msg, XNIC_CM_A_QPN, ev->qpn))
		goto err;
	if (ev->event == XNIC_CM_EVENT_REJ &&
	    nla_put_u8(msg, XNIC_CM_A_REASON, ev->reason))
		goto err;
	if (ev->private_len &&
	    nla_put(msg, XNIC_CM_A_PRIVATE, ev->private_len, ev->private_data))
		goto err;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_unicast(o->net, msg, o->portid);
err:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int xnic_cm_nl_notify(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct netlink_notify *n = ptr;

	if (event == NETLINK_URELEASE && n->protocol == NETLINK_GENERIC &&
	    n->portid)
		xnic_cm_release_owner(n->net, n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block xnic_cm_nl_notifier = {
	.notifier_call = xnic_cm_nl_notify,
};

/**
 * xnic_cm_nl_init() - watch for closing netlink sockets (module load)
 *
 * Return: 0 or netlink_register_notifier()'s error.
 */
int xnic_cm_nl_init(void)
{
	return netlink_register_notifier(&xnic_cm_nl_notifier);
}

/**
 * xnic_cm_nl_exit() - stop watching (module unload)
 *
 * Context: process context.
 */
void xnic_cm_nl_exit(void)
{
	netlink_unregister_notifier(&xnic_cm_nl_notifier);
}
