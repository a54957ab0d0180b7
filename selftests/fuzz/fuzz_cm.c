// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the payload of an XNIC_OP_CM frame as the kernel's CM
 * parses it (kmod/cm_wire.h): xnic_cm_decode() then xnic_cm_check().
 *
 * Invariants (abort() is a finding): an accepted message has at most
 * XNIC_CM_PRIVATE_MAX bytes of private data, 24-bit QPN and PSN and a
 * known type, and survives encoding and decoding again unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmod/cm_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xnic_cm_info c, d;
	struct xnic_wire_cm w;

	if (size != sizeof(w))
		return 0;
	memcpy(&w, data, sizeof(w));
	xnic_cm_decode(&c, &w);
	if (!xnic_cm_check(&c))
		return 0;
	if (c.private_len > XNIC_CM_PRIVATE_MAX ||
	    (c.qpn | c.psn) & ~XNIC_QPN_MASK ||
	    c.type < XNIC_CM_REQ || c.type >= XNIC_CM_TYPE_MAX)
		abort();
	/* Bytes past private_len are not the message's: encoding zeroes them. */
	memset(c.private_data + c.private_len, 0,
	       XNIC_CM_PRIVATE_MAX - c.private_len);
	xnic_cm_encode(&w, &c);
	xnic_cm_decode(&d, &w);
	if (memcmp(&c, &d, sizeof(c)))
		abort();
	return 0;
}
