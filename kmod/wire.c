// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - frames: allocation of the frames we send (linear, or with the
 * payload attached as page fragments of a pinned MR: zero copy), their
 * header and crc32c, and the crc32c check of received frames.
 *
 * crc32c has two implementations in the kernel: crc32c() (the crypto API:
 * crc32c-intel's CRC32 instruction where the CPU has it) and __crc32c_le()
 * (lib/crc32.c, slice-by-8 tables). On real hardware the instruction wins
 * by far; an emulated CPU (QEMU TCG) runs the instruction ~6 times slower
 * than the tables. Like the RAID6 and XOR code, xnic_crc_select() times
 * both once and keeps the faster. Both compute the same function.
 */
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "transport_priv.h"

/* Use __crc32c_le() rather than crc32c(); set by xnic_crc_select(). */
static bool xnic_crc_tables __read_mostly;

static u32 xnic_crc(u32 crc, const void *p, unsigned int len)
{
	if (READ_ONCE(xnic_crc_tables))
		return __crc32c_le(crc, p, len);
	return crc32c(crc, p, len);
}

/* Best of three runs of 8 x 4 KiB, ns. */
static u64 xnic_crc_time(const u8 *buf, bool tables, u32 *crc)
{
	u64 best = U64_MAX, t;
	int run, k;

	for (run = 0; run < 3; run++) {
		t = ktime_get_ns();
		for (k = 0; k < 8; k++)
			*crc = tables ? __crc32c_le(*crc, buf, PAGE_SIZE) :
					crc32c(*crc, buf, PAGE_SIZE);
		best = min(best, ktime_get_ns() - t);
		cond_resched();
	}
	return best ?: 1;
}

/**
 * xnic_crc_select() - time both crc32c implementations, keep the faster
 *
 * Runs once (later calls return at once). Until it ran, crc32c() is used.
 *
 * Context: process context, may sleep.
 */
void xnic_crc_select(void)
{
	static DEFINE_MUTEX(lock);
	static bool done;
	u32 crc_api = 0, crc_tab = 0;
	u64 t_api, t_tab;
	u8 *buf;
	int k;

	if (READ_ONCE(done))
		return;
	mutex_lock(&lock);
	if (done)
		goto out;
	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		goto out;
	for (k = 0; k < PAGE_SIZE; k++)
		buf[k] = k * 131 + 7;
	t_api = xnic_crc_time(buf, false, &crc_api);
	t_tab = xnic_crc_time(buf, true, &crc_tab);
	kfree(buf);
	if (crc_api != crc_tab) {
		pr_warn("xnic: crc32c implementations disagree; using crc32c()\n");
	} else {
		WRITE_ONCE(xnic_crc_tables, t_tab < t_api);
		pr_info("xnic: crc32c: %s (crc32c() %llu MB/s, tables %llu MB/s)\n",
			t_tab < t_api ? "tables" : "crc32c()",
			8ULL * PAGE_SIZE * 1000 / t_api,
			8ULL * PAGE_SIZE * 1000 / t_tab);
	}
	WRITE_ONCE(done, true);
out:
	mutex_unlock(&lock);
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
 * xnic_frame_add_mr() - append registered memory to a frame, zero copy
 * @skb: a frame from xnic_frame_alloc()
 * @mr: the MR, referenced, with the range validated by xnic_mr_get()
 * @addr: first byte, virtual address in the MR
 * @len: bytes
 *
 * The bytes become page fragments of @skb; each page gets a reference of
 * its own, so the frame may outlive the MR. What the frame carries is
 * what the memory holds when it is read (crc32c, the receiver's copy):
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
 * crc32c of @len bytes of @skb from @offset on, chained from @crc (raw, no
 * inversion). The caller checked that the bytes are there.
 */
static u32 xnic_skb_crc(const struct sk_buff *skb, int offset, int len,
			u32 crc)
{
	int start = skb_headlen(skb), i, n;
	const struct sk_buff *frag_iter;

	n = start - offset;
	if (n > 0) {
		n = min(n, len);
		crc = xnic_crc(crc, skb->data + offset, n);
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
				crc = xnic_crc(crc, va + p_off, p_len);
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
			crc = xnic_skb_crc(frag_iter, offset - start, n, crc);
			len -= n;
			offset += n;
		}
		start = end;
	}
	return crc;
}

/**
 * xnic_frame_seal() - write the crc32c of a frame whose header is written
 * @skb: a frame from xnic_frame_alloc() with its payload in place; its
 *	header written by xnic_wire_encode() (crc zero), possibly changed
 *	since (the link sequence, once the link is chosen)
 *
 * Context: any context but hard IRQ.
 */
void xnic_frame_seal(struct sk_buff *skb)
{
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)skb->data;

	h->crc = cpu_to_be32(~xnic_skb_crc(skb, 0, skb->len, ~0U));
}

/**
 * xnic_frame_finish() - write the header and crc32c of a frame to send
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
 * xnic_frame_crc_ok() - check the crc32c of a received frame
 * @skb: the frame, data at the xnic header; its length was checked
 * @hdr: the header copied out of @skb; its @crc is left unchanged
 *
 * Context: any context but hard IRQ.
 * Return: true when the crc32c over the header (crc field zero) and the
 * payload matches @hdr->crc.
 */
bool xnic_frame_crc_ok(const struct sk_buff *skb, struct xnic_wire_hdr *hdr)
{
	__be32 want = hdr->crc;
	u32 crc;

	hdr->crc = 0;
	crc = xnic_crc(~0U, hdr, XNIC_WIRE_HDR_LEN);
	hdr->crc = want;
	crc = xnic_skb_crc(skb, XNIC_WIRE_HDR_LEN,
			   skb->len - XNIC_WIRE_HDR_LEN, crc);
	return ~crc == be32_to_cpu(want);
}
