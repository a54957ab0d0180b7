// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic - decoding the connection manager's netlink messages: replies
 * and CM_EVENTs of the generic netlink family "xnic"
 * (uapi/xnic-netlink.h). Each attribute's size is checked against the
 * policies below (libnl: and that a string ends in its NUL) before it is
 * read.
 */
#include <errno.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "cm_msg.h"
#include "../uapi/xnic-netlink.h"

static struct nla_policy xnic_cm_top_policy[XNIC_A_MAX + 1] = {
	[XNIC_A_CM] = { .type = NLA_NESTED },
};

static struct nla_policy xnic_cm_policy[XNIC_CM_A_MAX + 1] = {
	[XNIC_CM_A_SERVICE_ID] = { .type = NLA_U64 },
	[XNIC_CM_A_ID] = { .type = NLA_U32 },
	[XNIC_CM_A_NODE] = { .type = NLA_U32 },
	[XNIC_CM_A_QPN] = { .type = NLA_U32 },
	[XNIC_CM_A_PSN] = { .type = NLA_U32 },
	[XNIC_CM_A_PRIVATE] = { .type = NLA_UNSPEC },
	[XNIC_CM_A_EVENT] = { .type = NLA_U8 },
	[XNIC_CM_A_REASON] = { .type = NLA_U8 },
};

/**
 * xnic_cm_msg_parse() - decode one netlink message to a CM socket
 * @nlh: the message, any bytes
 * @len: bytes readable at @nlh (the message must fit: nlmsg_len <= @len)
 * @family: the "xnic" family's id; other messages are not ours
 * @ev: zeroed, then filled: the whole event for XNIC_CM_MSG_EVENT, the
 *	connection's id for XNIC_CM_MSG_CONNECT. Private data longer than
 *	XNIC_CM_PRIVATE_MAX is cut there.
 *
 * Return: enum xnic_cm_msg, or -EINVAL for a message that is not the
 * family's, malformed, or an event without its EVENT and ID (skip it).
 */
int xnic_cm_msg_parse(struct nlmsghdr *nlh, size_t len, int family,
		      struct xnic_cm_ev *ev)
{
	struct nlattr *tb[XNIC_A_MAX + 1];
	struct nlattr *cm[XNIC_CM_A_MAX + 1];
	struct genlmsghdr *gh;
	int plen;

	memset(ev, 0, sizeof(*ev));
	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
	    nlh->nlmsg_len > len || nlh->nlmsg_type != family ||
	    genlmsg_parse(nlh, 0, tb, XNIC_A_MAX, xnic_cm_top_policy) ||
	    !tb[XNIC_A_CM] ||
	    nla_parse_nested(cm, XNIC_CM_A_MAX, tb[XNIC_A_CM], xnic_cm_policy))
		return -EINVAL;
	gh = nlmsg_data(nlh);
	if (gh->cmd == XNIC_CMD_CM_CONNECT) {
		if (!cm[XNIC_CM_A_ID])
			return XNIC_CM_MSG_OTHER;
		ev->id = nla_get_u32(cm[XNIC_CM_A_ID]);
		return XNIC_CM_MSG_CONNECT;
	}
	if (gh->cmd != XNIC_CMD_CM_EVENT)
		return XNIC_CM_MSG_OTHER;
	if (!cm[XNIC_CM_A_EVENT] || !cm[XNIC_CM_A_ID])
		return -EINVAL;
	ev->event = nla_get_u8(cm[XNIC_CM_A_EVENT]);
	ev->id = nla_get_u32(cm[XNIC_CM_A_ID]);
	if (cm[XNIC_CM_A_NODE])
		ev->node = nla_get_u32(cm[XNIC_CM_A_NODE]);
	if (cm[XNIC_CM_A_SERVICE_ID])
		ev->service_id = nla_get_u64(cm[XNIC_CM_A_SERVICE_ID]);
	if (cm[XNIC_CM_A_QPN])
		ev->qpn = nla_get_u32(cm[XNIC_CM_A_QPN]);
	if (cm[XNIC_CM_A_PSN])
		ev->psn = nla_get_u32(cm[XNIC_CM_A_PSN]);
	if (cm[XNIC_CM_A_REASON])
		ev->reason = nla_get_u8(cm[XNIC_CM_A_REASON]);
	if (cm[XNIC_CM_A_PRIVATE]) {
		plen = nla_len(cm[XNIC_CM_A_PRIVATE]);
		if (plen > XNIC_CM_PRIVATE_MAX)
			plen = XNIC_CM_PRIVATE_MAX;
		ev->private_len = (uint32_t)plen;
		memcpy(ev->private_data, nla_data(cm[XNIC_CM_A_PRIVATE]),
		       (size_t)plen);
	}
	return XNIC_CM_MSG_EVENT;
}
