// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - memory regions: pinned user pages (ib_umem), the key table the
 * engine looks keys up in, and copies into and out of registered memory
 * (one MR, or a WQE's scatter list).
 *
 * Keys: lkey == rkey == (table index << 8) | generation. The generation is
 * the low byte of a device-wide counter bumped on every registration, so a
 * key that was deregistered does not name the next MR that reuses its
 * table slot (rxe and siw fix history).
 *
 * Lifetime: the table holds one reference; xnic_mr_get() takes one for the
 * engine under RCU. dereg_mr removes the key from the table, drops the
 * table's reference, waits until the engine has put its own, and only then
 * unpins the pages. The struct itself is freed after an RCU grace period,
 * because a lookup may still be reading it.
 */
#include <linux/highmem.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/uverbs_ioctl.h>

#include "xnic.h"
#include "verbs.h"

/*
 * Access flags we accept. There are no atomic opcodes, so REMOTE_ATOMIC
 * grants nothing, but applications ask for it by habit; optional flags
 * (IB_ACCESS_OPTIONAL) may be ignored by definition.
 */
#define XNIC_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_OPTIONAL)
#define XNIC_MR_INDEX_MAX	((1U << 24) - 1)
#define XNIC_WAIT_WARN		(10 * HZ)

static int xnic_mr_pages(struct xnic_mr *mr)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages),
			     XNIC_GFP_ACCOUNT);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	/* ib_umem_get() pins exactly the pages the range touches. */
	if (WARN_ON_ONCE(i != mr->npages)) {
		kvfree(mr->pages);
		mr->pages = NULL;
		return -EFAULT;
	}
	return 0;
}

/**
 * xnic_reg_user_mr() - ib_device_ops.reg_user_mr: pin and register memory
 * @ibpd: protection domain
 * @start: user virtual address of the first byte
 * @length: bytes, at least 1
 * @virt_addr: the address the region is known by (iova); ib_uverbs has
 *	checked that it has the same offset in its page as @start
 * @access: IB_ACCESS_* flags
 * @udata: driver data: empty or struct xnic_reg_mr_req (mr_watch.c)
 *
 * Context: process context, may sleep.
 * Return: the MR, or ERR_PTR(-EOPNOTSUPP) for unsupported access flags
 * (memory windows, on-demand paging, zero-based MRs),
 * -EINVAL for a bad range, -ENOMEM when the key table is full,
 * xnic_mr_watch_start()'s error for bad driver input, or ib_umem_get()'s.
 */
struct ib_mr *xnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 virt_addr, int access,
			       struct ib_udata *udata)
{
	struct xnic_dev *xdev = to_xdev(ibpd->device);
	struct xnic_mr *mr;
	u64 end;
	u32 idx;
	int err;

	if (!udata)
		return ERR_PTR(-EOPNOTSUPP);
	if (access & ~XNIC_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || check_add_overflow(virt_addr, length, &end) ||
	    check_add_overflow(start, length, &end))
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), XNIC_GFP_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = xnic_mr_watch_start(mr, udata, start, length);
	if (err)
		goto err_free;

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_watch;
	}
	xnic_mr_watch_pinned(mr);
	err = xnic_mr_pages(mr);
	if (err)
		goto err_umem;

	mr->pd = to_xpd(ibpd);
	mr->iova = virt_addr;
	mr->length = length;
	mr->offset = ib_umem_offset(mr->umem);
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);

	/* Reserve a slot, then publish the MR only once its key is set. */
	err = xa_alloc(&xdev->mrs, &idx, NULL, XA_LIMIT(1, XNIC_MR_INDEX_MAX),
		       GFP_KERNEL);
	if (err) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_pages;
	}
	mr->key = (idx << 8) |
		  ((u32)atomic_inc_return(&xdev->mr_gen) & 0xff);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	err = xa_err(xa_store(&xdev->mrs, idx, mr, GFP_KERNEL));
	if (err) {
		xa_erase(&xdev->mrs, idx);
		goto err_pages;
	}
	xnic_dbg(xdev, "key %#x iova %#llx length %llu access %#x\n", mr->key,
		 virt_addr, length, access);
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_umem:
	ib_umem_release(mr->umem);
err_watch:
	xnic_mr_watch_stop(mr);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * xnic_dereg_mr() - ib_device_ops.dereg_mr: unregister and unpin
 * @ibmr: the MR
 * @udata: unused
 *
 * Waits until the engine has put every reference it took.
 *
 * Context: process context, may sleep.
 * Return: 0.
 */
int xnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct xnic_mr *mr = to_xmr(ibmr);
	struct xnic_dev *xdev = to_xdev(ibmr->device);

	xa_erase(&xdev->mrs, mr->key >> 8);
	xnic_mr_put(mr);
	while (!wait_for_completion_timeout(&mr->released, XNIC_WAIT_WARN))
		ibdev_warn(&xdev->ibdev, "MR %#x: still in use by the engine\n",
			   mr->key);

	xnic_mr_watch_stop(mr);
	ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kfree_rcu(mr, rcu);
	return 0;
}

/**
 * xnic_mr_get() - look up and check a memory key for an access
 * @xdev: device
 * @key: lkey or rkey, as given by the WQE or the wire
 * @pd: protection domain the user of the key belongs to
 * @access: IB_ACCESS_* bits the access needs (IB_ACCESS_LOCAL_WRITE,
 *	IB_ACCESS_REMOTE_WRITE, IB_ACCESS_REMOTE_READ), 0 for a local read
 * @addr: first byte accessed (virtual address in the MR's iova space)
 * @len: bytes accessed; 0 is legal (the key is still checked)
 * @status: set to an XNIC_WC_* code on failure: XNIC_WC_LOC_PROT_ERR for a
 *	key that does not exist, belongs to another PD, lacks the access or
 *	does not cover [@addr, @addr + @len). The caller turns it into
 *	XNIC_WC_REM_ACCESS_ERR when the key came from the peer.
 *
 * The range check cannot wrap: @addr - iova and @len are both bounded by
 * the MR's length. A returned MR is referenced; put it with xnic_mr_put().
 *
 * Context: any context but hard IRQ; takes no lock.
 * Return: the MR, or NULL with *@status set.
 */
struct xnic_mr *xnic_mr_get(struct xnic_dev *xdev, u32 key,
			    struct xnic_pd *pd, int access, u64 addr, u64 len,
			    int *status)
{
	struct xnic_mr *mr;

	rcu_read_lock();
	mr = xa_load(&xdev->mrs, key >> 8);
	if (mr && (mr->key != key || !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		goto err;

	if (mr->pd != pd || (mr->access & access) != access ||
	    addr < mr->iova || len > mr->length ||
	    addr - mr->iova > mr->length - len) {
		xnic_mr_put(mr);
		goto err;
	}
	return mr;

err:
	*status = XNIC_WC_LOC_PROT_ERR;
	return NULL;
}

/**
 * xnic_mr_put() - drop a reference taken by xnic_mr_get()
 * @mr: the MR
 *
 * Context: any context but hard IRQ.
 */
void xnic_mr_put(struct xnic_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/*
 * Walk [addr, addr + len) of @mr page by page. @fn gets the kernel mapping
 * of each piece and its offset within the whole copy.
 */
static int xnic_mr_walk(struct xnic_mr *mr, u64 addr, u32 len,
			int (*fn)(void *va, u32 done, u32 n, void *arg),
			void *arg, bool write)
{
	u64 off;
	u32 done = 0;
	int err = 0;

	if (addr < mr->iova || len > mr->length ||
	    addr - mr->iova > mr->length - len)
		return -EFAULT;
	if (write && !mr->umem->writable)
		return -EACCES;

	off = addr - mr->iova + mr->offset;
	while (done < len) {
		unsigned long idx = off >> PAGE_SHIFT;
		u32 pgoff = off & ~PAGE_MASK;
		u32 n = min_t(u32, len - done, PAGE_SIZE - pgoff);
		struct page *page;
		void *va;

		if (WARN_ON_ONCE(idx >= mr->npages))
			return -EFAULT;
		page = mr->pages[idx];
		va = kmap_local_page(page);
		err = fn(va + pgoff, done, n, arg);
		kunmap_local(va);
		if (err)
			return err;
		if (write)
			flush_dcache_page(page);
		done += n;
		off += n;
	}
	return 0;
}

static int xnic_copy_to_fn(void *va, u32 done, u32 n, void *arg)
{
	memcpy(va, (const u8 *)arg + done, n);
	return 0;
}

static int xnic_copy_from_fn(void *va, u32 done, u32 n, void *arg)
{
	memcpy((u8 *)arg + done, va, n);
	return 0;
}

struct xnic_skb_copy {
	const struct sk_buff *skb;
	int offset;
};

static int xnic_copy_skb_fn(void *va, u32 done, u32 n, void *arg)
{
	struct xnic_skb_copy *c = arg;

	return skb_copy_bits(c->skb, c->offset + done, va, n) ? -EFAULT : 0;
}

/**
 * xnic_mr_copy_to() - copy a kernel buffer into registered memory
 * @mr: the MR, referenced, with the range validated by xnic_mr_get()
 * @addr: destination virtual address in the MR
 * @src: source
 * @len: bytes
 *
 * Context: any context but hard IRQ; does not sleep.
 * Return: 0; -EFAULT when the range is not inside the MR; -EACCES when the
 * pages were not pinned writable.
 */
int xnic_mr_copy_to(struct xnic_mr *mr, u64 addr, const void *src, u32 len)
{
	return xnic_mr_walk(mr, addr, len, xnic_copy_to_fn, (void *)src, true);
}

/**
 * xnic_mr_copy_from() - copy registered memory into a kernel buffer
 * @mr: the MR, referenced, with the range validated by xnic_mr_get()
 * @addr: source virtual address in the MR
 * @dst: destination, @len bytes
 * @len: bytes
 *
 * Context: any context but hard IRQ; does not sleep.
 * Return: 0, or -EFAULT when the range is not inside the MR.
 */
int xnic_mr_copy_from(struct xnic_mr *mr, u64 addr, void *dst, u32 len)
{
	return xnic_mr_walk(mr, addr, len, xnic_copy_from_fn, dst, false);
}

/**
 * xnic_mr_copy_from_skb() - place received payload into registered memory
 * @mr: the MR, referenced, with the range validated by xnic_mr_get()
 * @addr: destination virtual address in the MR
 * @skb: the frame
 * @offset: offset of the payload in @skb, bytes
 * @len: bytes
 *
 * Context: any context but hard IRQ; does not sleep.
 * Return: 0; -EFAULT when the range is not inside the MR or @skb is shorter
 * than @offset + @len; -EACCES when the pages were not pinned writable.
 */
int xnic_mr_copy_from_skb(struct xnic_mr *mr, u64 addr,
			  const struct sk_buff *skb, int offset, u32 len)
{
	struct xnic_skb_copy c = { .skb = skb, .offset = offset };

	if (offset < 0 || len > skb->len || offset > skb->len - len)
		return -EFAULT;
	return xnic_mr_walk(mr, addr, len, xnic_copy_skb_fn, &c, true);
}

/**
 * xnic_mr_scatter_skb() - place a frame's payload into a WQE's buffers
 * @xdev: the device
 * @pd: the protection domain of the QP that owns the WQE
 * @sge: the WQE's scatter list: @num_sge entries, each checked against
 *	its lkey for IB_ACCESS_LOCAL_WRITE (xnic_mr_get())
 * @num_sge: entries of @sge, at most the size of the WQE's array (the
 *	caller validated the WQE)
 * @off: where the payload starts in the message the SGEs describe, bytes
 * @skb: the frame
 * @skb_off: where the payload starts in @skb, bytes
 * @len: payload bytes
 *
 * Used for a SEND into a receive WQE (rx.c) and for a READ response into
 * the READ WQE (tx_ack.c). On an error, the pieces before the failing one
 * are already written (the WQE completes in error, as IBA allows).
 *
 * Context: any context but hard IRQ; does not sleep.
 * Return: 0; XNIC_WC_LOC_PROT_ERR for an lkey that does not allow the
 * access or a copy that fails (@skb shorter than @skb_off + @len, pages
 * not pinned writable); XNIC_WC_LOC_LEN_ERR when the SGEs end before
 * @off + @len.
 */
int xnic_mr_scatter_skb(struct xnic_dev *xdev, struct xnic_pd *pd,
			const struct xnic_sge *sge, unsigned int num_sge,
			u32 off, const struct sk_buff *skb, int skb_off,
			u32 len)
{
	int status = XNIC_WC_LOC_LEN_ERR;
	struct xnic_mr *mr;
	unsigned int k;
	int err;
	u32 c;

	for (k = 0; k < num_sge && len; k++, sge++) {
		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		c = min(len, sge->length - off);
		mr = xnic_mr_get(xdev, sge->lkey, pd, IB_ACCESS_LOCAL_WRITE,
				 sge->addr + off, c, &status);
		if (!mr)
			return status;
		err = xnic_mr_copy_from_skb(mr, sge->addr + off, skb, skb_off,
					    c);
		xnic_mr_put(mr);
		if (err)
			return XNIC_WC_LOC_PROT_ERR;
		skb_off += c;
		len -= c;
		off = 0;
	}
	return len ? status : 0;
}
