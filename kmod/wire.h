/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic wire format: raw Ethernet frames, EtherType 0x88B5 (IEEE 802
 * "local experimental"), no IP or UDP. See
 * Documentation/wire-protocol.rst. All multi-byte fields are big endian.
 *
 * This header has no kernel dependency beyond fixed-width types so that
 * userspace unit tests and fuzz targets can include it. Everything below
 * is pure: encoding and decoding of headers, validation of a decoded
 * header, PSN serial arithmetic and the receive window bitmap.
 */
#ifndef XNIC_WIRE_H
#define XNIC_WIRE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <asm/byteorder.h>
#define xnic_wire_be16(x)	cpu_to_be16(x)
#define xnic_wire_be32(x)	cpu_to_be32(x)
#define xnic_wire_be64(x)	cpu_to_be64(x)
#define xnic_wire_h16(x)	be16_to_cpu(x)
#define xnic_wire_h32(x)	be32_to_cpu(x)
#define xnic_wire_h64(x)	be64_to_cpu(x)
#else
#include <stdbool.h>
#include <stdint.h>
#include <endian.h>
#include <linux/types.h>
#define xnic_wire_be16(x)	((__be16)htobe16(x))
#define xnic_wire_be32(x)	((__be32)htobe32(x))
#define xnic_wire_be64(x)	((__be64)htobe64(x))
#define xnic_wire_h16(x)	be16toh((__u16)(x))
#define xnic_wire_h32(x)	be32toh((__u32)(x))
#define xnic_wire_h64(x)	be64toh((__u64)(x))
#endif

#include "wire_check.h"

#define XNIC_ETH_P		0x88B5
#define XNIC_WIRE_VERSION	3

/* dst_node of a HELLO sent to every node on a link */
#define XNIC_NODE_BROADCAST	0xffff
/* QP numbers are 24 bits on the wire */
#define XNIC_QPN_MASK		0xffffffU
/* Largest message, bytes (offset and length fields are 32 bit). */
#define XNIC_WIRE_MAX_MSG	0x80000000U
/* Smallest segment size a READ_REQ may ask for, bytes. */
#define XNIC_WIRE_MIN_SEG	64
/* Most READ_RESP frames one READ_REQ asks for. */
#define XNIC_WIRE_READ_SEGS	64
/* PSNs the selective ACK bitmap covers after the cumulative ACK PSN. */
#define XNIC_WIRE_SACK_BITS	256
/* Bytes of a CM frame's payload (struct xnic_wire_cm, kmod/cm_wire.h). */
#define XNIC_WIRE_CM_LEN	96

/**
 * enum xnic_wire_op - frame opcodes
 * @XNIC_OP_HELLO: neighbour discovery; payload struct xnic_wire_hello
 * @XNIC_OP_WRITE: RDMA WRITE data, placed at @raddr + @offset
 * @XNIC_OP_SEND: SEND data, scattered into a receive WQE at @offset
 * @XNIC_OP_READ_REQ: RDMA READ request; payload struct xnic_wire_read_req
 * @XNIC_OP_READ_RESP: RDMA READ response data, @psn of the request
 * @XNIC_OP_ACK: acknowledgment; payload struct xnic_wire_ack
 * @XNIC_OP_NAK: negative acknowledgment; payload struct xnic_wire_ack
 * @XNIC_OP_CREDIT: credit update (@psn cumulative ACK PSN, @credits past
 *	it) or, with XNIC_WF_CREDIT_REQ, a credit request; no payload
 * @XNIC_OP_HEARTBEAT: member link heartbeat (XNIC_WF_REPLY: its echo);
 *	payload struct xnic_wire_heartbeat
 * @XNIC_OP_CM: connection manager message; payload struct xnic_wire_cm
 *	(kmod/cm_wire.h), XNIC_WIRE_CM_LEN bytes
 * @XNIC_OP_MAX: first value that is not an opcode
 */
enum xnic_wire_op {
	XNIC_OP_HELLO		= 1,
	XNIC_OP_WRITE		= 2,
	XNIC_OP_SEND		= 3,
	XNIC_OP_READ_REQ	= 4,
	XNIC_OP_READ_RESP	= 5,
	XNIC_OP_ACK		= 6,
	XNIC_OP_NAK		= 7,
	XNIC_OP_CREDIT		= 8,
	XNIC_OP_HEARTBEAT	= 9,
	XNIC_OP_CM		= 11,
	XNIC_OP_MAX,
};

/* xnic_wire_hdr.flags */
/* WRITE, SEND: @imm is valid; a WRITE with it consumes a receive WQE */
#define XNIC_WF_IMM		0x0001
#define XNIC_WF_SOLICITED	0x0002	/* WRITE, SEND: solicited event */
#define XNIC_WF_ACKREQ		0x0004	/* WRITE, SEND, READ_REQ: ACK now */
#define XNIC_WF_RETX		0x0008	/* WRITE, SEND, READ_REQ: resent */
#define XNIC_WF_REPLY		0x0010	/* HELLO, HEARTBEAT: an answer */
#define XNIC_WF_CREDIT_REQ	0x0020	/* CREDIT: a request; answer it */
/*
 * CREDIT: a link credit sync and update (per path); WRITE, SEND,
 * READ_REQ, READ_RESP: the frame took link credit, @credits is its
 * sequence on the path (link_credit.c)
 */
#define XNIC_WF_LINK		0x0040
/*
 * ACK: the data PSN in struct xnic_wire_ack.nak_psn arrived again (a
 * duplicate, D-SACK as RFC 2883): the requester's resend of it was
 * spurious
 */
#define XNIC_WF_DSACK		0x0080
/*
 * WRITE, SEND, READ_RESP: link checksum (wire-protocol.rst, "Frame
 * check"): check_poly covers the header alone; the payload is protected
 * by a 16-bit Internet checksum that the link computes (checksum
 * offload) into the low half of check_sum, over the frame from there on,
 * or by nothing when the frame never left memory (a veth, CHECKSUM_PARTIAL
 * at the receiver). The high half of check_sum is zero.
 */
#define XNIC_WF_LCSUM		0x0100

/**
 * enum xnic_wire_nak - NAK syndromes (struct xnic_wire_ack.syndrome)
 * @XNIC_NAK_NONE: not a NAK (ACK frames)
 * @XNIC_NAK_PSN_SEQ: PSN outside the receive window: resend from the
 *	cumulative ACK PSN
 * @XNIC_NAK_RNR: receiver not ready (no receive WQE): resend @nak_psn later
 * @XNIC_NAK_INV_REQ: invalid request (bad opcode sequence, message longer
 *	than the receive buffers); fatal
 * @XNIC_NAK_REM_ACCESS: rkey, range or access rights violated; fatal
 * @XNIC_NAK_REM_OP: the receive WQE could not be used; fatal
 * @XNIC_NAK_MAX: first value that is not a syndrome
 */
enum xnic_wire_nak {
	XNIC_NAK_NONE		= 0,
	XNIC_NAK_PSN_SEQ	= 1,
	XNIC_NAK_RNR		= 2,
	XNIC_NAK_INV_REQ	= 3,
	XNIC_NAK_REM_ACCESS	= 4,
	XNIC_NAK_REM_OP		= 5,
	XNIC_NAK_MAX,
};

/**
 * struct xnic_wire_hdr - header that follows the Ethernet header
 * @version: XNIC_WIRE_VERSION
 * @opcode: enum xnic_wire_op
 * @flags: XNIC_WF_* allowed for @opcode
 * @src_node: sender's node id
 * @dst_node: receiver's node id (XNIC_NODE_BROADCAST for a HELLO)
 * @src_qpn: sending QP number (24 bits used)
 * @dst_qpn: destination QP number (24 bits used)
 * @psn: packet sequence number (data, READ_REQ, READ_RESP: the request's)
 *	or cumulative ACK PSN: every PSN before it was received (ACK/NAK)
 * @msn: receive sequence number: index of the message among the QP's
 *	messages that consume a receive WQE (SEND, WRITE with immediate);
 *	ACK/NAK: the responder's count of completed receive WQEs
 * @msg_len: total length of the message, bytes
 * @offset: offset of this frame's payload within the message, bytes
 * @raddr: remote virtual address of the message's first byte
 * @rkey: remote key
 * @imm: immediate data (network order, passed through untouched)
 * @payload_len: payload bytes following this header
 * @credits: ACK, NAK, CREDIT update: PSNs past @psn the peer may send
 *	(credit-based flow control); frames that consume link credit: their
 *	sequence on the path (xnic_lcr_rx_take()); zero in other frames
 * @check_sum: the frame check's word sum (kmod/wire_check.h)
 * @check_poly: the frame check's polynomial hash; both are computed over
 *	this header (with both fields zero) and the payload
 *
 * Every field sits at its natural alignment and the size is a multiple of
 * 8, so the struct has no padding and needs no packing. In a frame it is
 * only 2-byte aligned: receivers copy it out (skb_copy_bits()) before use.
 */
struct xnic_wire_hdr {
	__u8 version;
	__u8 opcode;
	__be16 flags;
	__be16 src_node;
	__be16 dst_node;
	__be32 src_qpn;
	__be32 dst_qpn;
	__be32 psn;
	__be32 msn;
	__be32 msg_len;
	__be32 offset;
	__be64 raddr;
	__be32 rkey;
	__be32 imm;
	__be16 payload_len;
	__be16 credits;
	__be32 check_sum;
	__be64 check_poly;
};

/* Bytes of a member link's MTU taken by the xnic header. */
#define XNIC_WIRE_HDR_LEN	64

/**
 * struct xnic_wire_hello - HELLO payload (16 bytes)
 * @node_guid: the sender's node GUID (as ib_device.node_guid)
 * @link_mtu: the sending netdev's MTU, bytes
 * @reserved: zero
 */
struct xnic_wire_hello {
	__be64 node_guid;
	__be32 link_mtu;
	__be32 reserved;
};

/* xnic_wire_heartbeat.health: the sender's own measurements find the link
 * bad (loss or CRC errors over threshold, or heartbeats missed).
 */
#define XNIC_HB_BAD		0x01

/**
 * struct xnic_wire_heartbeat - HEARTBEAT payload (16 bytes)
 * @seq: the request's sequence number (a reply echoes it)
 * @health: XNIC_HB_* flags: the sender's view of the link
 * @reserved: zero
 * @tstamp: the requester's clock when it sent the request, ns (a reply
 *	echoes it; only the requester interprets it)
 */
struct xnic_wire_heartbeat {
	__be32 seq;
	__u8 health;
	__u8 reserved[3];
	__be64 tstamp;
};

/**
 * struct xnic_wire_read_req - READ_REQ payload (8 bytes)
 * @length: bytes asked for, starting at the header's @offset of the
 *	message; at most XNIC_WIRE_READ_SEGS * @seg_size
 * @seg_size: payload bytes per READ_RESP frame (the last may be shorter)
 *
 * The header's @raddr, @rkey and @msg_len describe the whole READ; the
 * data asked for is at @raddr + @offset.
 */
struct xnic_wire_read_req {
	__be32 length;
	__be32 seg_size;
};

/**
 * struct xnic_wire_ack - ACK and NAK payload (40 bytes)
 * @nak_psn: NAK: the PSN the syndrome is about; ACK: zero
 * @syndrome: enum xnic_wire_nak; XNIC_NAK_NONE in an ACK
 * @rnr_timer: RNR NAK: how long to wait before resending, IBTA encoding
 *	(xnic_wire_rnr_us()); otherwise zero
 * @reserved: zero
 * @sack: selective ACK: bit (i % 64) of word (i / 64) set when PSN
 *	(header psn + 1 + i) was received
 */
struct xnic_wire_ack {
	__be32 nak_psn;
	__u8 syndrome;
	__u8 rnr_timer;
	__u8 reserved[2];
	__be64 sack[XNIC_WIRE_SACK_BITS / 64];
};

/**
 * struct xnic_wire_info - a header in host byte order
 * @opcode: enum xnic_wire_op
 * @flags: XNIC_WF_*
 * @src_node: sender's node id
 * @dst_node: receiver's node id
 * @src_qpn: sending QP number
 * @dst_qpn: destination QP number
 * @psn: PSN (see struct xnic_wire_hdr)
 * @msn: receive sequence number
 * @msg_len: message length, bytes
 * @offset: payload offset within the message, bytes
 * @raddr: remote virtual address
 * @rkey: remote key
 * @imm: immediate data, network order
 * @payload_len: payload bytes
 * @credits: flow-control credits
 * @version: protocol version (decoded only; encoding writes the current)
 */
struct xnic_wire_info {
	__u8 opcode;
	__u16 flags;
	__u16 src_node;
	__u16 dst_node;
	__u32 src_qpn;
	__u32 dst_qpn;
	__u32 psn;
	__u32 msn;
	__u32 msg_len;
	__u32 offset;
	__u64 raddr;
	__u32 rkey;
	__be32 imm;
	__u16 payload_len;
	__u16 credits;
	__u8 version;
};

/**
 * xnic_wire_encode() - build a header from host-order fields
 * @h: header to fill; its check fields are set to zero
 * @i: the fields (@i->version is ignored)
 */
static inline void xnic_wire_encode(struct xnic_wire_hdr *h,
				    const struct xnic_wire_info *i)
{
	h->version = XNIC_WIRE_VERSION;
	h->opcode = i->opcode;
	h->flags = xnic_wire_be16(i->flags);
	h->src_node = xnic_wire_be16(i->src_node);
	h->dst_node = xnic_wire_be16(i->dst_node);
	h->src_qpn = xnic_wire_be32(i->src_qpn);
	h->dst_qpn = xnic_wire_be32(i->dst_qpn);
	h->psn = xnic_wire_be32(i->psn);
	h->msn = xnic_wire_be32(i->msn);
	h->msg_len = xnic_wire_be32(i->msg_len);
	h->offset = xnic_wire_be32(i->offset);
	h->raddr = xnic_wire_be64(i->raddr);
	h->rkey = xnic_wire_be32(i->rkey);
	h->imm = i->imm;
	h->payload_len = xnic_wire_be16(i->payload_len);
	h->credits = xnic_wire_be16(i->credits);
	h->check_sum = 0;
	h->check_poly = 0;
}

/**
 * xnic_wire_put_check() - finish a frame check into a header's fields
 * @h: the header whose check fields get the values
 * @c: the check, fed with the whole frame (check fields zero)
 */
static inline void xnic_wire_put_check(struct xnic_wire_hdr *h,
				       struct xnic_check *c)
{
	__u64 poly;
	__u32 sum;

	xnic_check_final(c, &poly, &sum);
	h->check_sum = xnic_wire_be32(sum);
	h->check_poly = xnic_wire_be64(poly);
}

/*
 * Where the link checksum of an XNIC_WF_LCSUM frame goes and starts: the
 * low half of check_sum (bytes 2-3 of the big-endian field).
 */
#define XNIC_WIRE_LCSUM_OFF	54

/**
 * xnic_wire_csum16() - the Internet checksum (RFC 1071) of a buffer
 * @buf: the bytes, its checksum field zero
 * @len: how many
 *
 * Return: the value to store big-endian in the field: the complement of
 * the ones' complement sum of the big-endian 16-bit words (the last one
 * zero-padded). What a link's checksum offload (skb_checksum_help())
 * writes.
 */
static inline __u16 xnic_wire_csum16(const void *buf, unsigned long len)
{
	const __u8 *p = (const __u8 *)buf;
	__u64 sum = 0;
	unsigned long k;

	for (k = 0; k + 1 < len; k += 2)
		sum += (__u32)p[k] << 8 | p[k + 1];
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/**
 * xnic_wire_seal() - write the frame check of a frame held in one buffer
 * @h: the frame's header, followed by its payload
 * @len: bytes of header and payload
 *
 * The kernel checks frames held in skbs (kmod/wire.c); this is the same
 * function over a flat buffer, for tests and tools that build frames. A
 * frame with XNIC_WF_LCSUM gets its link checksum computed here, as a
 * link without checksum offload would.
 */
static inline void xnic_wire_seal(struct xnic_wire_hdr *h, unsigned long len)
{
	struct xnic_check c;
	__u16 cs;

	h->check_sum = 0;
	h->check_poly = 0;
	xnic_check_init(&c);
	if (!(xnic_wire_h16(h->flags) & XNIC_WF_LCSUM)) {
		xnic_check_update(&c, h, len);
		xnic_wire_put_check(h, &c);
		return;
	}
	xnic_check_update(&c, h, XNIC_WIRE_HDR_LEN);
	xnic_wire_put_check(h, &c);
	h->check_sum = 0;
	cs = xnic_wire_csum16((__u8 *)h + XNIC_WIRE_LCSUM_OFF,
			      len - XNIC_WIRE_LCSUM_OFF);
	((__u8 *)h)[XNIC_WIRE_LCSUM_OFF] = (__u8)(cs >> 8);
	((__u8 *)h)[XNIC_WIRE_LCSUM_OFF + 1] = (__u8)cs;
}

/**
 * xnic_wire_decode() - read a header into host-order fields
 * @i: fields to fill
 * @h: the header, already copied out of the frame
 */
static inline void xnic_wire_decode(struct xnic_wire_info *i,
				    const struct xnic_wire_hdr *h)
{
	i->version = h->version;
	i->opcode = h->opcode;
	i->flags = xnic_wire_h16(h->flags);
	i->src_node = xnic_wire_h16(h->src_node);
	i->dst_node = xnic_wire_h16(h->dst_node);
	i->src_qpn = xnic_wire_h32(h->src_qpn);
	i->dst_qpn = xnic_wire_h32(h->dst_qpn);
	i->psn = xnic_wire_h32(h->psn);
	i->msn = xnic_wire_h32(h->msn);
	i->msg_len = xnic_wire_h32(h->msg_len);
	i->offset = xnic_wire_h32(h->offset);
	i->raddr = xnic_wire_h64(h->raddr);
	i->rkey = xnic_wire_h32(h->rkey);
	i->imm = h->imm;
	i->payload_len = xnic_wire_h16(h->payload_len);
	i->credits = xnic_wire_h16(h->credits);
}

/**
 * enum xnic_wire_verdict - result of xnic_wire_check()
 * @XNIC_WIRE_OK: well formed and addressed to us
 * @XNIC_WIRE_BAD_VERSION: unknown protocol version
 * @XNIC_WIRE_BAD_OPCODE: unknown opcode
 * @XNIC_WIRE_BAD_FLAGS: flags not allowed for the opcode
 * @XNIC_WIRE_BAD_LEN: payload length does not match the frame or opcode
 * @XNIC_WIRE_BAD_RANGE: offset/length outside the message, or the message
 *	too long
 * @XNIC_WIRE_BAD_QPN: a QP number wider than 24 bits
 * @XNIC_WIRE_BAD_SRC: source node is ours or the broadcast id
 * @XNIC_WIRE_NOT_FOR_US: destination node is not ours
 */
enum xnic_wire_verdict {
	XNIC_WIRE_OK = 0,
	XNIC_WIRE_BAD_VERSION,
	XNIC_WIRE_BAD_OPCODE,
	XNIC_WIRE_BAD_FLAGS,
	XNIC_WIRE_BAD_LEN,
	XNIC_WIRE_BAD_RANGE,
	XNIC_WIRE_BAD_QPN,
	XNIC_WIRE_BAD_SRC,
	XNIC_WIRE_NOT_FOR_US,
};

/**
 * xnic_wire_op_data() - whether an opcode is a QP's data-bearing frame
 * @opcode: enum xnic_wire_op
 *
 * Return: true for WRITE, SEND, READ_REQ and READ_RESP; false for the
 * control frames.
 */
static inline bool xnic_wire_op_data(__u8 opcode)
{
	return opcode == XNIC_OP_WRITE || opcode == XNIC_OP_SEND ||
	       opcode == XNIC_OP_READ_REQ || opcode == XNIC_OP_READ_RESP;
}

/**
 * xnic_wire_allowed_flags() - flags an opcode may carry
 * @opcode: enum xnic_wire_op
 *
 * Return: mask of XNIC_WF_* bits; 0 for an unknown opcode.
 */
static inline __u16 xnic_wire_allowed_flags(__u8 opcode)
{
	switch (opcode) {
	case XNIC_OP_WRITE:
	case XNIC_OP_SEND:
		return XNIC_WF_IMM | XNIC_WF_SOLICITED | XNIC_WF_ACKREQ |
		       XNIC_WF_RETX | XNIC_WF_LINK | XNIC_WF_LCSUM;
	case XNIC_OP_READ_REQ:
		return XNIC_WF_ACKREQ | XNIC_WF_RETX | XNIC_WF_LINK;
	case XNIC_OP_READ_RESP:
		return XNIC_WF_LINK | XNIC_WF_LCSUM;
	case XNIC_OP_HELLO:
	case XNIC_OP_HEARTBEAT:
		return XNIC_WF_REPLY;
	case XNIC_OP_CREDIT:
		return XNIC_WF_CREDIT_REQ | XNIC_WF_LINK;
	case XNIC_OP_ACK:
		return XNIC_WF_DSACK;
	default:
		return 0;
	}
}

/**
 * xnic_wire_check() - validate a decoded header against its frame
 * @i: the decoded header
 * @frame_len: bytes after the Ethernet header (header plus payload)
 * @my_node: the receiving device's node id
 *
 * Checks everything that can be checked without per-QP state: version,
 * opcode, flags, payload length against the frame and the opcode,
 * offset + payload_len <= msg_len without overflow, msg_len at most
 * XNIC_WIRE_MAX_MSG, 24-bit QP numbers, and the addressing.
 *
 * Return: XNIC_WIRE_OK or the first problem found.
 */
static inline enum xnic_wire_verdict
xnic_wire_check(const struct xnic_wire_info *i, __u32 frame_len,
		__u16 my_node)
{
	__u64 end = (__u64)i->offset + i->payload_len;

	if (i->version != XNIC_WIRE_VERSION)
		return XNIC_WIRE_BAD_VERSION;
	if (i->opcode < XNIC_OP_HELLO || i->opcode >= XNIC_OP_MAX)
		return XNIC_WIRE_BAD_OPCODE;
	if (i->flags & ~xnic_wire_allowed_flags(i->opcode))
		return XNIC_WIRE_BAD_FLAGS;
	if (frame_len < XNIC_WIRE_HDR_LEN ||
	    frame_len - XNIC_WIRE_HDR_LEN != i->payload_len)
		return XNIC_WIRE_BAD_LEN;
	if (i->src_node == XNIC_NODE_BROADCAST || i->src_node == my_node)
		return XNIC_WIRE_BAD_SRC;
	if (i->dst_node != my_node &&
	    !(i->opcode == XNIC_OP_HELLO && i->dst_node == XNIC_NODE_BROADCAST))
		return XNIC_WIRE_NOT_FOR_US;
	if ((i->src_qpn | i->dst_qpn) & ~XNIC_QPN_MASK)
		return XNIC_WIRE_BAD_QPN;

	switch (i->opcode) {
	case XNIC_OP_HELLO:
		if (i->payload_len != sizeof(struct xnic_wire_hello))
			return XNIC_WIRE_BAD_LEN;
		break;
	case XNIC_OP_WRITE:
	case XNIC_OP_SEND:
	case XNIC_OP_READ_RESP:
		if (i->msg_len > XNIC_WIRE_MAX_MSG || end > i->msg_len)
			return XNIC_WIRE_BAD_RANGE;
		/* Only an empty message has an empty frame. */
		if (!i->payload_len && (i->msg_len || i->offset))
			return XNIC_WIRE_BAD_LEN;
		break;
	case XNIC_OP_READ_REQ:
		if (i->payload_len != sizeof(struct xnic_wire_read_req))
			return XNIC_WIRE_BAD_LEN;
		if (i->msg_len > XNIC_WIRE_MAX_MSG || i->offset > i->msg_len)
			return XNIC_WIRE_BAD_RANGE;
		break;
	case XNIC_OP_ACK:
	case XNIC_OP_NAK:
		if (i->payload_len != sizeof(struct xnic_wire_ack))
			return XNIC_WIRE_BAD_LEN;
		break;
	case XNIC_OP_CREDIT:
		if (i->payload_len)
			return XNIC_WIRE_BAD_LEN;
		break;
	case XNIC_OP_HEARTBEAT:
		if (i->payload_len != sizeof(struct xnic_wire_heartbeat))
			return XNIC_WIRE_BAD_LEN;
		break;
	case XNIC_OP_CM:
		if (i->payload_len != XNIC_WIRE_CM_LEN)
			return XNIC_WIRE_BAD_LEN;
		break;
	default:
		/* A value below XNIC_OP_MAX that no opcode uses (yet). */
		return XNIC_WIRE_BAD_OPCODE;
	}
	return XNIC_WIRE_OK;
}

/**
 * xnic_wire_check_read_req() - validate a READ_REQ's payload
 * @i: the request's header, already accepted by xnic_wire_check()
 * @length: struct xnic_wire_read_req.length, host order
 * @seg_size: struct xnic_wire_read_req.seg_size, host order
 * @max_seg: largest segment the responder can send in one frame, bytes
 *
 * Return: true when @offset + @length fits in the message, @length is
 * zero only for an empty message, and @seg_size is in
 * [XNIC_WIRE_MIN_SEG, @max_seg] with @length at most
 * XNIC_WIRE_READ_SEGS segments.
 */
static inline bool xnic_wire_check_read_req(const struct xnic_wire_info *i,
					    __u32 length, __u32 seg_size,
					    __u32 max_seg)
{
	if ((__u64)i->offset + length > i->msg_len)
		return false;
	if (!length && i->msg_len)
		return false;
	if (seg_size < XNIC_WIRE_MIN_SEG || seg_size > max_seg)
		return false;
	return length <= (__u64)seg_size * XNIC_WIRE_READ_SEGS;
}

/**
 * xnic_wire_payload_mtu() - payload bytes one frame carries on a link
 * @link_mtu: the member netdev's MTU, bytes (Ethernet header excluded)
 *
 * Return: @link_mtu less the xnic header, or 0 when it leaves no room.
 */
static inline unsigned int xnic_wire_payload_mtu(unsigned int link_mtu)
{
	return link_mtu > XNIC_WIRE_HDR_LEN ? link_mtu - XNIC_WIRE_HDR_LEN : 0;
}

/**
 * xnic_wire_ib_mtu() - the IB MTU enum value a payload MTU supports
 * @payload_mtu: payload bytes per frame
 *
 * Maps to enum ib_mtu (IBTA 1.4 section 14.2.5.6: 1 = 256 ... 5 = 4096
 * bytes), the largest that fits; 256-byte payloads are the floor.
 * Return: 1..5.
 */
static inline int xnic_wire_ib_mtu(unsigned int payload_mtu)
{
	int e = 5;

	while (e > 1 && payload_mtu < (128U << e))
		e--;
	return e;
}

/**
 * xnic_wire_rnr_us() - RNR NAK timer value in microseconds
 * @code: IBTA encoding (1.4, section 9.7.5.2.8, table 45), 0..31; only the
 *	low 5 bits are used
 *
 * Return: the delay, microseconds (code 0 is the longest, 655.36 ms).
 */
static inline __u32 xnic_wire_rnr_us(__u8 code)
{
	static const __u32 us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120,
		160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return us[code & 31];
}

/**
 * xnic_wire_ack_timeout_us() - local ACK timeout in microseconds
 * @code: IBTA encoding 4.096 us * 2^@code (1.4, section 11.2.4.2), 0..31;
 *	0 means "no timeout"
 *
 * Return: the timeout, microseconds (rounded down); 0 for @code 0.
 */
static inline __u64 xnic_wire_ack_timeout_us(__u8 code)
{
	if (!code)
		return 0;
	return (4096ULL << (code & 31)) / 1000;
}

/* ------------------------- PSN serial arithmetic ------------------------- */

/*
 * PSNs are full 32-bit serial numbers (RFC 1982 style): a is before b when
 * the signed 32-bit difference a - b is negative. Windows are far smaller
 * than 2^31, so comparisons within a window are unambiguous.
 */

/**
 * xnic_psn_diff() - signed distance from @b to @a
 * @a: a PSN
 * @b: a PSN
 *
 * Return: a - b as a signed 32-bit value.
 */
static inline __s32 xnic_psn_diff(__u32 a, __u32 b)
{
	return (__s32)(a - b);
}

/**
 * xnic_psn_before() - serial "less than"
 * @a: a PSN
 * @b: a PSN
 *
 * Return: true when @a comes before @b.
 */
static inline bool xnic_psn_before(__u32 a, __u32 b)
{
	return xnic_psn_diff(a, b) < 0;
}

/**
 * xnic_psn_in() - whether a PSN lies in a window
 * @psn: the PSN
 * @start: first PSN of the window
 * @n: window size
 *
 * Return: true when @psn is in [@start, @start + @n).
 */
static inline bool xnic_psn_in(__u32 psn, __u32 start, __u32 n)
{
	return psn - start < n;
}

/* ------------------------- receive window bitmap ------------------------- */

/* PSNs a responder accepts at or after its expected PSN. */
#define XNIC_RX_WINDOW		1024

/**
 * struct xnic_psn_win - PSNs received in [epsn, epsn + XNIC_RX_WINDOW)
 * @epsn: expected PSN: every PSN before it was received
 * @bits: bit (psn % XNIC_RX_WINDOW) set when psn (at or after @epsn) was
 *	received; the bit of @epsn itself is always clear
 */
struct xnic_psn_win {
	__u32 epsn;
	__u64 bits[XNIC_RX_WINDOW / 64];
};

/**
 * enum xnic_psn_class - where a PSN falls relative to a receive window
 * @XNIC_PSN_NEW: in the window and not received yet
 * @XNIC_PSN_DUP: received already (before epsn, or its bit is set)
 * @XNIC_PSN_AHEAD: at or after epsn + XNIC_RX_WINDOW
 */
enum xnic_psn_class {
	XNIC_PSN_NEW,
	XNIC_PSN_DUP,
	XNIC_PSN_AHEAD,
};

static inline bool xnic_psn_win_test(const struct xnic_psn_win *w,
				     __u32 psn)
{
	__u32 b = psn % XNIC_RX_WINDOW;

	return (w->bits[b / 64] >> (b % 64)) & 1;
}

/**
 * xnic_psn_win_init() - empty window expecting a PSN
 * @w: the window
 * @epsn: first expected PSN
 */
static inline void xnic_psn_win_init(struct xnic_psn_win *w, __u32 epsn)
{
	unsigned int k;

	w->epsn = epsn;
	for (k = 0; k < XNIC_RX_WINDOW / 64; k++)
		w->bits[k] = 0;
}

/**
 * xnic_psn_win_classify() - classify a received PSN
 * @w: the window
 * @psn: the PSN
 *
 * Return: enum xnic_psn_class.
 */
static inline enum xnic_psn_class
xnic_psn_win_classify(const struct xnic_psn_win *w, __u32 psn)
{
	if (xnic_psn_before(psn, w->epsn))
		return XNIC_PSN_DUP;
	if (!xnic_psn_in(psn, w->epsn, XNIC_RX_WINDOW))
		return XNIC_PSN_AHEAD;
	return xnic_psn_win_test(w, psn) ? XNIC_PSN_DUP : XNIC_PSN_NEW;
}

/**
 * xnic_psn_win_set() - record a PSN as received
 * @w: the window
 * @psn: a PSN xnic_psn_win_classify() found XNIC_PSN_NEW
 *
 * Does not move the window; call xnic_psn_win_advance() after.
 */
static inline void xnic_psn_win_set(struct xnic_psn_win *w, __u32 psn)
{
	__u32 b = psn % XNIC_RX_WINDOW;

	w->bits[b / 64] |= 1ULL << (b % 64);
}

/**
 * xnic_psn_win_advance() - move epsn over the PSNs received in order
 * @w: the window
 *
 * Return: how many PSNs epsn moved.
 */
static inline __u32 xnic_psn_win_advance(struct xnic_psn_win *w)
{
	__u32 n = 0;

	while (xnic_psn_win_test(w, w->epsn)) {
		__u32 b = w->epsn % XNIC_RX_WINDOW;

		w->bits[b / 64] &= ~(1ULL << (b % 64));
		w->epsn++;
		n++;
	}
	return n;
}

/**
 * xnic_psn_win_sack() - selective ACK bitmap of a window
 * @w: the window
 * @sack: filled: bit i set when PSN epsn + 1 + i was received
 *	(i < XNIC_WIRE_SACK_BITS), host order
 */
static inline void xnic_psn_win_sack(const struct xnic_psn_win *w,
				     __u64 sack[XNIC_WIRE_SACK_BITS / 64])
{
	const unsigned int nw = XNIC_RX_WINDOW / 64;
	unsigned int k, q, o;
	__u64 any = 0;

	/* An ACK is written per message: no bit past epsn is the rule. */
	for (k = 0; k < nw; k++)
		any |= w->bits[k];
	for (k = 0; k < XNIC_WIRE_SACK_BITS / 64; k++) {
		/* 64 window bits from bit b, wrapping round the ring */
		__u32 b = (w->epsn + 1 + 64 * k) % XNIC_RX_WINDOW;

		q = b / 64;
		o = b % 64;
		sack[k] = any ? w->bits[q] >> o : 0;
		if (any && o)
			sack[k] |= w->bits[(q + 1) % nw] << (64 - o);
	}
}

/**
 * xnic_sack_test() - whether a selective ACK bitmap covers a PSN
 * @sack: bitmap in host order (struct xnic_wire_ack.sack decoded)
 * @cum: the cumulative ACK PSN the bitmap is relative to
 * @psn: the PSN
 *
 * Return: true when @psn is after @cum and its bit is set.
 */
static inline bool xnic_sack_test(const __u64 sack[XNIC_WIRE_SACK_BITS / 64],
				  __u32 cum, __u32 psn)
{
	__u32 k = psn - cum - 1;

	if (!xnic_psn_before(cum, psn) || k >= XNIC_WIRE_SACK_BITS)
		return false;
	return (sack[k / 64] >> (k % 64)) & 1;
}

#endif /* XNIC_WIRE_H */
