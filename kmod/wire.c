// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - frames: allocation of the frames we send, their header and
 * crc32c, and the crc32c check of received frames (over a possibly
 * non-linear skb, as net/sctp does).
 */
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/skbuff.h>

#include "transport_priv.h"

/**
 * xnic_frame_alloc() - allocate a frame to send
 * @payload_len: payload bytes the caller will skb_put() after the header
 * @gfp: allocation flags
 *
 * The frame is linear, has headroom for a link-layer header, and its data
 * starts with XNIC_WIRE_HDR_LEN bytes reserved for the xnic header.
 *
 * Return: the skb, or NULL when out of memory.
 */
struct sk_buff *xnic_frame_alloc(unsigned int payload_len, gfp_t gfp)
{
	struct sk_buff *skb;

	skb = alloc_skb(XNIC_TX_HEADROOM + XNIC_WIRE_HDR_LEN + payload_len,
			gfp | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, XNIC_TX_HEADROOM);
	skb_reset_network_header(skb);
	skb_put(skb, XNIC_WIRE_HDR_LEN);
	return skb;
}

/**
 * xnic_frame_finish() - write the header and crc32c of a frame to send
 * @skb: a frame from xnic_frame_alloc() with its payload in place
 * @i: header fields; @i->payload_len must match the payload
 */
void xnic_frame_finish(struct sk_buff *skb, const struct xnic_wire_info *i)
{
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)skb->data;
	u32 crc;

	xnic_wire_encode(h, i);
	crc = ~crc32c(~0U, skb->data, skb->len);
	h->crc = cpu_to_be32(crc);
}

static __wsum xnic_crc_update(const void *buf, int len, __wsum sum)
{
	return (__force __wsum)crc32c((__force u32)sum, buf, len);
}

static __wsum xnic_crc_combine(__wsum csum, __wsum csum2, int offset, int len)
{
	return (__force __wsum)__crc32c_le_combine((__force u32)csum,
						   (__force u32)csum2, len);
}

static const struct skb_checksum_ops xnic_crc_ops = {
	.update = xnic_crc_update,
	.combine = xnic_crc_combine,
};

/**
 * xnic_frame_crc_ok() - check the crc32c of a received frame
 * @skb: the frame, data at the xnic header; its length was checked
 * @hdr: the header copied out of @skb; its @crc is left unchanged
 *
 * Return: true when the crc32c over the header (crc field zero) and the
 * payload matches @hdr->crc.
 */
bool xnic_frame_crc_ok(const struct sk_buff *skb, struct xnic_wire_hdr *hdr)
{
	__be32 want = hdr->crc;
	u32 crc;

	hdr->crc = 0;
	crc = crc32c(~0U, hdr, XNIC_WIRE_HDR_LEN);
	hdr->crc = want;
	crc = (__force u32)__skb_checksum(skb, XNIC_WIRE_HDR_LEN,
					  skb->len - XNIC_WIRE_HDR_LEN,
					  (__force __wsum)crc, &xnic_crc_ops);
	return ~crc == be32_to_cpu(want);
}
