// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: a received xnic frame (the bytes after the Ethernet
 * header), as the kernel's receive path parses it (kmod/wire.h): the frame
 * check, xnic_wire_decode() and xnic_wire_check(), then the per-opcode
 * payload checks (READ_REQ, ACK/NAK selective ACK bits) and the receive
 * PSN window driven by the frame's PSN.
 *
 * Invariants (abort() is a finding): the fields of an accepted header
 * survive encoding and decoding again; sealing is deterministic; an
 * accepted READ_REQ stays inside its message; a selective ACK never covers
 * its cumulative PSN or one before it; the PSN window never takes a PSN
 * before its epsn as new, and moves over what it received in order.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmod/wire.h"

#define MY_NODE	1

static void check_read_req(const struct xnic_wire_info *i, const uint8_t *p)
{
	struct xnic_wire_read_req r;

	memcpy(&r, p, sizeof(r));
	if (xnic_wire_check_read_req(i, be32toh(r.length), be32toh(r.seg_size),
				     8936) &&
	    (uint64_t)i->offset + be32toh(r.length) > i->msg_len)
		abort();
}

static void check_ack(const struct xnic_wire_info *i, const uint8_t *p)
{
	struct xnic_wire_ack a;
	__u64 sack[XNIC_WIRE_SACK_BITS / 64];
	struct xnic_psn_win w;
	unsigned int k;

	memcpy(&a, p, sizeof(a));
	for (k = 0; k < XNIC_WIRE_SACK_BITS / 64; k++)
		sack[k] = be64toh(a.sack[k]);
	/* Whatever the bits say, nothing at or before the cumulative PSN. */
	if (xnic_sack_test(sack, i->psn, i->psn) ||
	    xnic_sack_test(sack, i->psn, i->psn - 1))
		abort();
	/* The responder's side: a window fed the ACK's PSNs stays sane. */
	xnic_psn_win_init(&w, i->psn);
	for (k = 0; k < 64; k++)
		if (sack[0] & (1ULL << k) &&
		    xnic_psn_win_classify(&w, i->psn + 1 + k) == XNIC_PSN_NEW)
			xnic_psn_win_set(&w, i->psn + 1 + k);
	if (xnic_psn_win_classify(&w, i->psn - 1) == XNIC_PSN_NEW)
		abort();
	xnic_psn_win_set(&w, i->psn);
	xnic_psn_win_advance(&w);
	if (xnic_psn_before(w.epsn, i->psn + 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[XNIC_WIRE_HDR_LEN + 65536];
	struct xnic_wire_hdr h, h2;
	struct xnic_wire_info i, j;
	bool check_ok;

	if (size < XNIC_WIRE_HDR_LEN || size > sizeof(frame))
		return 0;
	/* The frame check: a sealed copy must pass, the original may not. */
	memcpy(frame, data, size);
	xnic_wire_seal((struct xnic_wire_hdr *)frame, size);
	check_ok = !memcmp(frame, data, size);

	/* Zeroed: the structs have padding, compared with memcmp() below. */
	memset(&i, 0, sizeof(i));
	memset(&j, 0, sizeof(j));
	memcpy(&h, data, sizeof(h));
	xnic_wire_decode(&i, &h);
	if (xnic_wire_check(&i, size, MY_NODE) != XNIC_WIRE_OK)
		return 0;
	/* Accepted: encoding what was decoded gives the same header back. */
	xnic_wire_encode(&h2, &i);
	xnic_wire_decode(&j, &h2);
	if (memcmp(&i, &j, sizeof(i)))
		abort();
	/* A frame that passes its check stays accepted once resealed. */
	if (check_ok) {
		memcpy(frame, data, size);
		xnic_wire_seal((struct xnic_wire_hdr *)frame, size);
		if (memcmp(frame, data, size))
			abort();
	}
	switch (i.opcode) {
	case XNIC_OP_READ_REQ:
		check_read_req(&i, data + XNIC_WIRE_HDR_LEN);
		break;
	case XNIC_OP_ACK:
	case XNIC_OP_NAK:
		check_ack(&i, data + XNIC_WIRE_HDR_LEN);
		break;
	}
	return 0;
}
