// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - frames: allocation of the frames we send (linear, or with the
 * payload attached as page fragments of a pinned MR: zero copy), their
 * header and frame check, and the check of received frames. The frame
 * check itself (a polynomial hash mod 2^61 - 1 and a word sum) is the pure
 * code of wire_check.h; here it walks an skb's linear part, its page
 * fragments and its frag list.
 */
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/checksum.h>
#include <linux/slab.h>

#include "transport_priv.h"

/*
 * A frame's head of @len bytes (headroom included) in a page fragment of
 * this CPU's cache, as a NAPI driver builds its receive skbs
 * (napi_alloc_frag(), napi_build_skb()): no slab object for the head and
 * no zeroing of a 1 KiB kmalloc one per frame (init_on_alloc), which cost
 * more than any other step of a bulk frame but the copy. Only with bottom
 * halves off outside hard IRQ, as those caches require (the transport
 * sends under its tp lock, _bh, or in the packet handler); NULL
 * otherwise, or without memory, and the caller takes alloc_skb(). The
 * bytes after the headroom are zeroed as alloc_skb()'s would be with
 * init_on_alloc, so that nothing of the kernel's ever reaches the wire.
 */
static struct sk_buff *xnic_frame_alloc_frag(unsigned int len)
{
	unsigned int size = SKB_DATA_ALIGN(len) +
			    SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (!in_softirq() || in_hardirq() || size > PAGE_SIZE)
		return NULL;
	data = napi_alloc_frag(size);
	if (!data)
		return NULL;
	skb = napi_build_skb(data, size);
	if (!skb) {
		skb_free_frag(data);
		return NULL;
	}
	memset(data + XNIC_TX_HEADROOM, 0, len - XNIC_TX_HEADROOM);
	return skb;
}

/**
 * xnic_frame_alloc() - allocate a frame to send
 * @payload_len: payload bytes the caller will skb_put() after the header
 *	(0 when it attaches the payload with xnic_frame_add_mr())
 * @gfp: allocation flags
 *
 * The frame has headroom for a link-layer header, and its data starts
 * with XNIC_WIRE_HDR_LEN bytes reserved for the xnic header.
 *
 * Return: the skb, or NULL when out of memory.
 */
struct sk_buff *xnic_frame_alloc(unsigned int payload_len, gfp_t gfp)
{
	unsigned int len = XNIC_TX_HEADROOM + XNIC_WIRE_HDR_LEN + payload_len;
	struct sk_buff *skb;

	skb = xnic_frame_alloc_frag(len);
	if (!skb)
		skb = alloc_skb(len, gfp | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, XNIC_TX_HEADROOM);
	skb_reset_network_header(skb);
	skb_put(skb, XNIC_WIRE_HDR_LEN);
	return skb;
}

/**
 * xnic_frame_add_mr() - append registered memory to a frame, zero copy
 * @skb: a frame from xnic_frame_alloc()
 * @mr: the MR, referenced, with the range validated by xnic_mr_get()
 * @addr: first byte, virtual address in the MR
 * @len: bytes
 *
 * The bytes become page fragments of @skb; each page gets a reference of
 * its own, so the frame may outlive the MR. What the frame carries is
 * what the memory holds when it is read (frame check, the receiver's copy):
 * like a NIC's DMA, it must not change while the WQE is outstanding.
 *
 * Context: any context but hard IRQ.
 * Return: 0; -EFAULT when the range is not inside the MR; -EMSGSIZE when
 * @skb has no fragment left (it then holds part of the range: free it).
 */
int xnic_frame_add_mr(struct sk_buff *skb, struct xnic_mr *mr, u64 addr,
		      u32 len)
{
	int nr = skb_shinfo(skb)->nr_frags;
	u64 off;

	if (addr < mr->iova || len > mr->length ||
	    addr - mr->iova > mr->length - len)
		return -EFAULT;
	off = addr - mr->iova + mr->offset;
	while (len) {
		unsigned long idx = off >> PAGE_SHIFT;
		u32 pgoff = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - pgoff);
		struct page *page;

		if (WARN_ON_ONCE(idx >= mr->npages))
			return -EFAULT;
		page = mr->pages[idx];
		if (nr && skb_can_coalesce(skb, nr, page, pgoff)) {
			skb_frag_size_add(&skb_shinfo(skb)->frags[nr - 1], n);
		} else {
			if (nr >= MAX_SKB_FRAGS)
				return -EMSGSIZE;
			get_page(page);
			skb_fill_page_desc_noacc(skb, nr++, page, pgoff, n);
		}
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Add @len bytes of @skb from @offset on to the frame check @c. The caller
 * checked that the bytes are there.
 */
static void xnic_skb_check(const struct sk_buff *skb, int offset, int len,
			   struct xnic_check *c)
{
	int start = skb_headlen(skb), i, n;
	const struct sk_buff *frag_iter;

	n = start - offset;
	if (n > 0) {
		n = min(n, len);
		xnic_check_update(c, skb->data + offset, n);
		len -= n;
		offset += n;
	}
	for (i = 0; i < skb_shinfo(skb)->nr_frags && len > 0; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
		int end = start + skb_frag_size(frag);

		n = end - offset;
		if (n > 0) {
			u32 p_off, p_len, copied;
			struct page *p;
			u8 *va;

			n = min(n, len);
			skb_frag_foreach_page(frag,
					      skb_frag_off(frag) + offset - start,
					      n, p, p_off, p_len, copied) {
				va = kmap_local_page(p);
				xnic_check_update(c, va + p_off, p_len);
				kunmap_local(va);
			}
			len -= n;
			offset += n;
		}
		start = end;
	}
	skb_walk_frags(skb, frag_iter) {
		int end = start + frag_iter->len;

		if (len <= 0)
			break;
		n = end - offset;
		if (n > 0) {
			n = min(n, len);
			xnic_skb_check(frag_iter, offset - start, n, c);
			len -= n;
			offset += n;
		}
		start = end;
	}
}

/**
 * xnic_frame_seal() - write the frame check of a frame whose header is
 * written
 * @skb: a frame from xnic_frame_alloc() with its payload in place; its
 *	header written by xnic_wire_encode() (check fields zero), possibly
 *	changed since (the link sequence, once the link is chosen)
 *
 * Context: any context but hard IRQ.
 */
void xnic_frame_seal(struct sk_buff *skb)
{
	struct xnic_check c;

	xnic_check_init(&c);
	xnic_skb_check(skb, 0, skb->len, &c);
	xnic_wire_put_check((struct xnic_wire_hdr *)skb->data, &c);
}

static bool link_csum = true;
module_param(link_csum, bool, 0644);
MODULE_PARM_DESC(link_csum,
		 "Data frames leaving on a link with checksum offload (NETIF_F_HW_CSUM: veth, virtio-net, most NICs) have their payload protected by the link's checksum, the header by the frame check (XNIC_WF_LCSUM); 0: every frame carries the full frame check (default 1)");

/**
 * xnic_frame_seal_link() - seal a data frame for a link, with its payload
 *	protected by the link's checksum offload when the link offers it
 * @skb: as for xnic_frame_seal(), data at the xnic header
 * @ndev: the member link it leaves on
 *
 * A WRITE, SEND or READ_RESP with payload leaving on a link whose device
 * checksums any protocol (NETIF_F_HW_CSUM) gets XNIC_WF_LCSUM: the frame
 * check covers the header alone, and the skb asks for a 16-bit Internet
 * checksum (CHECKSUM_PARTIAL) from XNIC_WIRE_LCSUM_OFF to its end. A
 * device (or the stack, skb_checksum_help(), where a qdisc or a link
 * needs the bytes final) writes it; a veth delivers the skb unchanged, its
 * bytes never having left memory, as TCP's are. Other frames get the full
 * frame check (xnic_frame_seal()). Under TCG the check's two passes over
 * the payload (sender and receiver) cost as much as the rest of a bulk
 * frame's handling.
 *
 * Context: any context but hard IRQ.
 */
void xnic_frame_seal_link(struct sk_buff *skb, const struct net_device *ndev)
{
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)skb->data;
	struct xnic_check c;

	if (!READ_ONCE(link_csum) || !(ndev->features & NETIF_F_HW_CSUM) ||
	    skb->len == XNIC_WIRE_HDR_LEN ||
	    !(xnic_wire_allowed_flags(h->opcode) & XNIC_WF_LCSUM)) {
		xnic_frame_seal(skb);
		return;
	}
	h->flags |= cpu_to_be16(XNIC_WF_LCSUM);
	xnic_check_init(&c);
	xnic_check_update(&c, h, XNIC_WIRE_HDR_LEN);
	xnic_wire_put_check(h, &c);
	h->check_sum = 0;
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_headroom(skb) + XNIC_WIRE_LCSUM_OFF;
	skb->csum_offset = 0;
}

/**
 * xnic_frame_finish() - write the header and frame check of a frame to send
 * @skb: a frame from xnic_frame_alloc() with its payload in place (linear,
 *	or page fragments)
 * @i: header fields; @i->payload_len must match the payload
 *
 * Context: any context but hard IRQ.
 */
void xnic_frame_finish(struct sk_buff *skb, const struct xnic_wire_info *i)
{
	xnic_wire_encode((struct xnic_wire_hdr *)skb->data, i);
	xnic_frame_seal(skb);
}

/**
 * xnic_frame_check_ok() - verify the frame check of a received frame
 * @skb: the frame, data at the xnic header; its length was checked
 * @hdr: the header copied out of @skb; left unchanged
 *
 * Context: any context but hard IRQ.
 * Return: true when both check values computed over the header (check
 * fields zero) and the payload match those @hdr carries; for a frame
 * with XNIC_WF_LCSUM (xnic_frame_seal_link()), when the header's
 * check_poly matches and the link checksum holds, or the skb never left
 * memory (CHECKSUM_PARTIAL).
 */
bool xnic_frame_check_ok(const struct sk_buff *skb,
			 const struct xnic_wire_hdr *hdr)
{
	struct xnic_wire_hdr h = *hdr;
	struct xnic_check c;

	h.check_sum = 0;
	h.check_poly = 0;
	xnic_check_init(&c);
	xnic_check_update(&c, &h, XNIC_WIRE_HDR_LEN);
	if (hdr->flags & cpu_to_be16(XNIC_WF_LCSUM)) {
		/* xnic_frame_seal_link(): the header, then the link's part. */
		xnic_wire_put_check(&h, &c);
		if (h.check_poly != hdr->check_poly ||
		    (be32_to_cpu(hdr->check_sum) >> 16))
			return false;
		/* Never left memory: no link had to checksum it. */
		if (skb->ip_summed == CHECKSUM_PARTIAL)
			return true;
		return !csum_fold(skb_checksum(skb, XNIC_WIRE_LCSUM_OFF,
					       skb->len - XNIC_WIRE_LCSUM_OFF,
					       0));
	}
	xnic_skb_check(skb, XNIC_WIRE_HDR_LEN, skb->len - XNIC_WIRE_HDR_LEN,
		       &c);
	xnic_wire_put_check(&h, &c);
	return h.check_poly == hdr->check_poly &&
	       h.check_sum == hdr->check_sum;
}
