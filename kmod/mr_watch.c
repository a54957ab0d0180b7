// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - watched memory regions: REG_MR with XNIC_REG_MR_REQ_WATCH asks the
 * kernel to tell the process, through a byte of its context page
 * (xnic_ctx_page.mr_stale), when the mapping of the MR's range changes after
 * its pages were pinned. The pinned pages stay what the MR moves; the byte
 * only says that the address range may now hold other memory, so a
 * registration cache must not hand the MR out for that range again.
 *
 * An mmu interval notifier (include/linux/mmu_notifier.h) covers the range
 * from before ib_umem_get() pins the pages until dereg_mr, with the
 * notifier's read flow: insertion does not put the notifier in the mm's
 * interval tree while an invalidation of any range of the process runs
 * (another thread's munmap), so mmu_interval_read_begin() waits until it
 * is in, and mmu_interval_read_retry() after the pinning catches what
 * changed meanwhile. Without the wait an invalidation of the range could
 * pass unseen (found by a test with other threads zapping other watched
 * ranges: 107 of 3000 MADV_DONTNEEDs left the byte 0). A change made while
 * the pages are being pinned marks the MR stale (a false alarm costs one
 * registration, a missed one would move the wrong memory). Every event
 * counts, protection changes included: telling them apart is not worth a
 * wrong answer.
 */
#include <linux/mmu_notifier.h>
#include <rdma/uverbs_ioctl.h>

#include "xnic.h"
#include "verbs.h"

static bool xnic_mr_invalidate(struct mmu_interval_notifier *mni,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq)
{
	struct xnic_mr *mr = container_of(mni, struct xnic_mr, watch);

	mmu_interval_set_seq(mni, cur_seq);
	WRITE_ONCE(*mr->stale, 1);
	return true;
}

static const struct mmu_interval_notifier_ops xnic_mr_watch_ops = {
	.invalidate = xnic_mr_invalidate,
};

/**
 * xnic_mr_watch_start() - read REG_MR's driver input, start watching
 * @mr: the MR being registered (its pages not pinned yet)
 * @udata: REG_MR's driver data: empty, or struct xnic_reg_mr_req (a longer
 *	input must have a zero tail; uapi/xnic-abi.h, versioning)
 * @start: user virtual address of the range
 * @length: its bytes, at least 1, @start + @length not wrapping
 *
 * With XNIC_REG_MR_REQ_WATCH, clears the slot's byte of the caller's
 * context page, inserts an mmu interval notifier on @start..@length of
 * current->mm and waits until it is live; call xnic_mr_watch_pinned() once
 * the pages are pinned, stop it with xnic_mr_watch_stop().
 *
 * Context: process context (the registering process), may sleep.
 * Return: 0 (also when nothing is to be watched), -EOPNOTSUPP for unknown
 * comp_mask bits, -EINVAL for a bad slot or a non-zero unknown tail, -EFAULT
 * when the input cannot be read, or mmu_interval_notifier_insert()'s error.
 */
int xnic_mr_watch_start(struct xnic_mr *mr, struct ib_udata *udata,
			u64 start, u64 length)
{
	struct xnic_reg_mr_req req = {};
	struct xnic_ucontext *uctx;
	int err;

	err = xnic_udata_read(udata, &req, sizeof(req));
	if (err)
		return err;
	if (req.comp_mask & ~XNIC_REG_MR_REQ_WATCH)
		return -EOPNOTSUPP;
	if (!(req.comp_mask & XNIC_REG_MR_REQ_WATCH))
		return req.watch_slot ? -EINVAL : 0;
	if (req.watch_slot >= XNIC_MR_WATCH_SLOTS)
		return -EINVAL;

	uctx = rdma_udata_to_drv_context(udata, struct xnic_ucontext, ibuc);
	mr->stale = &uctx->page->mr_stale[req.watch_slot];
	WRITE_ONCE(*mr->stale, 0);
	err = mmu_interval_notifier_insert(&mr->watch, current->mm, start,
					   length, &xnic_mr_watch_ops);
	if (err) {
		mr->stale = NULL;
		return err;
	}
	mr->watch_seq = mmu_interval_read_begin(&mr->watch);
	return 0;
}

/**
 * xnic_mr_watch_pinned() - the MR's pages are pinned: check the watch
 * @mr: the MR (no-op if unwatched)
 *
 * Marks the MR stale when its range was invalidated since
 * xnic_mr_watch_start() (the notifier's read flow: mmu_notifier.h).
 *
 * Context: process context.
 */
void xnic_mr_watch_pinned(struct xnic_mr *mr)
{
	if (mr->stale && mmu_interval_read_retry(&mr->watch, mr->watch_seq))
		WRITE_ONCE(*mr->stale, 1);
}

/**
 * xnic_mr_watch_stop() - stop watching an MR's range (no-op if unwatched)
 * @mr: the MR
 *
 * Returns once no invalidation callback runs for @mr any more, so the
 * context page it writes may go after this.
 *
 * Context: process context, may sleep.
 */
void xnic_mr_watch_stop(struct xnic_mr *mr)
{
	if (!mr->stale)
		return;
	mmu_interval_notifier_remove(&mr->watch);
	mr->stale = NULL;
}
