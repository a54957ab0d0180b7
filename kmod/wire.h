/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic wire format: raw Ethernet frames, EtherType 0x88B5 (IEEE 802
 * "local experimental"), no IP or UDP. See
 * Documentation/wire-protocol.rst. All multi-byte fields are big endian.
 *
 * This header has no kernel dependency beyond fixed-width types so that
 * userspace unit tests and fuzz targets can include it.
 */
#ifndef XNIC_WIRE_H
#define XNIC_WIRE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#include <linux/types.h>
#endif

#define XNIC_ETH_P		0x88B5
#define XNIC_WIRE_VERSION	1

/**
 * struct xnic_wire_hdr - header that follows the Ethernet header
 * @version: XNIC_WIRE_VERSION
 * @opcode: enum xnic_wire_op
 * @flags: per-opcode flags
 * @src_node: sender's node id
 * @dst_node: receiver's node id
 * @src_qpn: sending QP number (24 bits used)
 * @dst_qpn: destination QP number (24 bits used)
 * @psn: packet sequence number (data) or cumulative ACK PSN (ACK/NAK)
 * @msn: message sequence number within the QP
 * @msg_len: total length of the message, bytes
 * @offset: offset of this frame's payload within the message, bytes
 * @raddr: remote virtual address of the message's first byte
 * @rkey: remote key
 * @imm: immediate data (network order, passed through untouched)
 * @payload_len: payload bytes following this header
 * @credits: flow-control credits returned to the peer
 * @crc: crc32c over this header (with @crc zero) and the payload
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
	__be32 crc;
};

/* Bytes of a member link's MTU taken by the xnic header. */
#define XNIC_WIRE_HDR_LEN	56

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

#endif /* XNIC_WIRE_H */
