// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: libxnic's decoding of the connection manager's
 * netlink messages (libuser/cm_msg.c: xnic_cm_msg_parse()), which cm.c
 * calls on every message its CM sockets receive. Input: one receive
 * buffer of netlink messages, walked as libnl walks it; the family id is
 * XNIC_FUZZ_FAMILY (seeds_nl.c uses it).
 *
 * Invariants (abort() is a finding): an event has at most
 * XNIC_CM_PRIVATE_MAX bytes of private data; a message that is not the
 * family's is never decoded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/msg.h>

#include "libuser/cm_msg.h"
#include "selftests/fuzz/seeds_nl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t *buf;	/* malloc()ed: aligned, and ASan sees its end */
	struct xnic_cm_ev ev;
	struct nlmsghdr *nlh;
	int rem, ret;

	if (size > 65536)
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	nlh = (struct nlmsghdr *)buf;
	rem = (int)size;
	while (nlmsg_ok(nlh, rem)) {
		ret = xnic_cm_msg_parse(nlh, (size_t)rem, XNIC_FUZZ_FAMILY, &ev);
		if (ret > 0 && nlh->nlmsg_type != XNIC_FUZZ_FAMILY)
			abort();
		if (ret == XNIC_CM_MSG_EVENT &&
		    ev.private_len > XNIC_CM_PRIVATE_MAX)
			abort();
		nlh = nlmsg_next(nlh, &rem);
	}
	free(buf);
	return 0;
}
