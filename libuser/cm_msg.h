/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxnic internals: decoding the connection manager's netlink messages
 * (cm_msg.c), apart from the sockets (cm.c) so that a fuzz target
 * (selftests/fuzz/fuzz_cm_reply.c) can feed it arbitrary bytes.
 */
#ifndef XNIC_LIB_CM_MSG_H
#define XNIC_LIB_CM_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <linux/netlink.h>

#include "xnic.h"

/* A CM_EVENT, decoded. */
struct xnic_cm_ev {
	struct xnic_cm_ev *next;
	uint8_t event;
	uint8_t reason;
	uint32_t id;
	uint32_t node;
	uint64_t service_id;
	uint32_t qpn;
	uint32_t psn;
	uint32_t private_len;	/* at most XNIC_CM_PRIVATE_MAX */
	uint8_t private_data[XNIC_CM_PRIVATE_MAX];
};

/* What xnic_cm_msg_parse() found. */
enum xnic_cm_msg {
	XNIC_CM_MSG_EVENT = 1,	/* a CM_EVENT, in *ev */
	XNIC_CM_MSG_CONNECT,	/* the reply to CM_CONNECT: ev->id */
	XNIC_CM_MSG_OTHER,	/* another reply of the family */
};

int xnic_cm_msg_parse(struct nlmsghdr *nlh, size_t len, int family,
		      struct xnic_cm_ev *ev);

#endif
