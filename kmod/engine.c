// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the engine: one kernel thread per device that plays the NIC.
 *
 * Each pass of its loop
 *  1. consumes the doorbells of every context (uapi/xnic-abi.h rule D2):
 *     xchg db_summary to 0, xchg each word it names to 0, and activates the
 *     QP of every bit set. The cost depends on the contexts and the bits
 *     rung, never on the number of idle QPs;
 *  2. hands up to XNIC_ENGINE_RX_BUDGET queued frames to xnic_tp_rx();
 *  3. runs every active QP: a QP that entered the error state is flushed
 *     once (xnic_tp_qp_flush()); otherwise xnic_tp_qp_process() says
 *     whether it stays active (BUSY, WAIT with a deadline) or leaves the
 *     list (IDLE);
 *  4. when no pass made progress for idle_us microseconds (busy polling
 *     until then), goes to sleep with the NEED_WAKEUP protocol: set the
 *     flag in every context page, full barrier, re-check every doorbell
 *     summary, and sleep until kicked or until the earliest WAIT deadline.
 *     A process that posts after the barrier sees the flag and makes the
 *     wakeup syscall, which kicks the engine (io_uring SQPOLL model).
 *
 * Active QPs: a QP is on at most one of the engine's lists (pending, then
 * active) and the list holds one reference. Activating a listed QP sets
 * XNIC_QP_ENG_RERUN instead, so work that arrives while the engine runs
 * the QP is never lost: a QP leaves the list only when the transport said
 * IDLE and nobody activated it since.
 *
 * Locking (in this order):
 *  - ctx_mutex: the context list; held while the engine reads or writes a
 *    context page, so xnic_engine_del_context() returning means the engine
 *    no longer touches the page;
 *  - the contexts' QP xarray locks (doorbell lookups);
 *  - lock (BH): the pending list and the LISTED and BLOCKED bits of QPs;
 *  - rxq.lock (IRQ): the receive queue and @stopping.
 * The active list, and every QP's transport state, belong to the thread.
 */
#include <linux/bitops.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "xnic.h"
#include "verbs.h"
#include "engine.h"
#include "transport.h"

static unsigned int idle_us = 1000;
module_param(idle_us, uint, 0644);
MODULE_PARM_DESC(idle_us,
		 "Microseconds the engine busy-polls without work before sleeping (default 1000)");

/* Frames handed to the transport per pass, and queued at most. */
#define XNIC_ENGINE_RX_BUDGET	64
#define XNIC_ENGINE_RXQ_MAX	8192

/* xnic_qp.eng_flags */
enum {
	XNIC_QP_ENG_LISTED,	/* on pending or active, holds a ref (lock) */
	XNIC_QP_ENG_RERUN,	/* activated again while listed */
	XNIC_QP_ENG_BLOCKED,	/* being destroyed: never listed again (lock) */
	XNIC_QP_ENG_RESET,	/* modify_qp waits for xnic_qp_do_reset() */
	XNIC_QP_ENG_FLUSHED,	/* flushed since it last entered ERR */
};

/* xnic_engine.flags */
enum {
	XNIC_ENG_KICK,		/* there may be work: do not sleep */
};

/**
 * struct xnic_engine - state of a device's engine thread
 * @xdev: the device
 * @task: the thread
 * @flags: XNIC_ENG_* (atomic bitops)
 * @wq: the thread sleeps here
 * @ctx_mutex: guards @contexts and every access to a context's page
 * @contexts: struct xnic_ucontext.engine_node list (@ctx_mutex)
 * @asleep: NEED_WAKEUP is set in the pages of @contexts (@ctx_mutex)
 * @lock: guards @pending and the QPs' LISTED and BLOCKED bits (BH)
 * @pending: QPs activated since the thread last looked (@lock)
 * @active: QPs the thread runs (thread only)
 * @reset_wq: modify_qp waits here for the thread to reset a QP
 * @rxq: frames from the member links (its own lock, IRQ safe)
 * @stopping: refuse new frames (@rxq.lock)
 * @activations: QPs put on @pending (@lock)
 * @iterations: loop passes (thread only, like the next four)
 * @sleeps: times the thread went to sleep
 * @wakeups: times it woke up again
 * @doorbells: doorbell bits consumed
 * @rx_frames: frames handed to the transport
 * @kicks: xnic_engine_kick() calls
 * @rx_dropped: frames dropped, queue full or engine stopping
 */
struct xnic_engine {
	struct xnic_dev *xdev;
	struct task_struct *task;
	unsigned long flags;
	wait_queue_head_t wq;

	struct mutex ctx_mutex;		/* @contexts and their pages */
	struct list_head contexts;
	bool asleep;

	spinlock_t lock;		/* @pending, LISTED and BLOCKED bits */
	struct list_head pending;
	struct list_head active;
	wait_queue_head_t reset_wq;

	struct sk_buff_head rxq;
	bool stopping;

	u64 activations;
	u64 iterations;
	u64 sleeps;
	u64 wakeups;
	u64 doorbells;
	u64 rx_frames;
	atomic64_t kicks;
	atomic64_t rx_dropped;
};

static void xnic_engine_wake(struct xnic_engine *eng)
{
	if (!test_bit(XNIC_ENG_KICK, &eng->flags))
		set_bit(XNIC_ENG_KICK, &eng->flags);
	/* Full barrier, then look: pairs with the sleeper's prepare_to_wait. */
	if (wq_has_sleeper(&eng->wq))
		wake_up(&eng->wq);
}

/**
 * xnic_engine_kick() - make sure the engine looks for work soon
 * @xdev: the device
 *
 * Called by the wakeup syscall (a zero-WR POST_SEND), and by everything
 * that queues work for the engine. Cheap when the engine is awake.
 *
 * Context: any context but hard IRQ.
 */
void xnic_engine_kick(struct xnic_dev *xdev)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);

	if (!eng)
		return;
	atomic64_inc(&eng->kicks);
	xnic_engine_wake(eng);
}

static void __xnic_engine_activate(struct xnic_engine *eng, struct xnic_qp *qp,
				   bool kick)
{
	spin_lock_bh(&eng->lock);
	if (test_bit(XNIC_QP_ENG_BLOCKED, &qp->eng_flags)) {
		spin_unlock_bh(&eng->lock);
		return;
	}
	if (test_bit(XNIC_QP_ENG_LISTED, &qp->eng_flags)) {
		set_bit(XNIC_QP_ENG_RERUN, &qp->eng_flags);
	} else {
		set_bit(XNIC_QP_ENG_LISTED, &qp->eng_flags);
		refcount_inc(&qp->ref);
		list_add_tail(&qp->engine_node, &eng->pending);
		eng->activations++;
	}
	spin_unlock_bh(&eng->lock);
	if (kick)
		xnic_engine_wake(eng);
}

/**
 * xnic_engine_activate_qp() - have the engine run a QP
 * @xdev: the device
 * @qp: the QP; the caller holds a reference or is a verb on it
 *
 * The engine calls xnic_tp_qp_process() (or flushes the QP when it is in
 * the error state) in its next pass, and keeps doing so until the QP is
 * idle. Activating a QP the engine is running makes it run again. A QP
 * being destroyed is not activated.
 *
 * Context: any context but hard IRQ.
 */
void xnic_engine_activate_qp(struct xnic_dev *xdev, struct xnic_qp *qp)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);

	if (eng)
		__xnic_engine_activate(eng, qp, true);
}

/**
 * xnic_engine_detach_qp() - make the engine let go of a QP for good
 * @xdev: the device
 * @qp: the QP, no longer findable in the QP tables
 *
 * The QP is never activated again; if it is on the engine's lists the
 * engine drops it, and its reference, in its next pass. The caller then
 * waits for the QP's references (destroy_qp).
 *
 * Context: process context.
 */
void xnic_engine_detach_qp(struct xnic_dev *xdev, struct xnic_qp *qp)
{
	struct xnic_engine *eng = xdev->engine;

	spin_lock_bh(&eng->lock);
	set_bit(XNIC_QP_ENG_BLOCKED, &qp->eng_flags);
	spin_unlock_bh(&eng->lock);
	xnic_engine_wake(eng);
}

/**
 * xnic_engine_reset_qp() - have the engine thread reset a QP, and wait
 * @xdev: the device
 * @qp: the QP, in the RESET state, not being destroyed
 *
 * The engine calls xnic_qp_do_reset() in its thread, where it cannot race
 * with the transport, and forgets that the QP was flushed.
 *
 * Context: process context, may sleep (modify_qp, under qp->mutex).
 */
void xnic_engine_reset_qp(struct xnic_dev *xdev, struct xnic_qp *qp)
{
	struct xnic_engine *eng = xdev->engine;

	set_bit(XNIC_QP_ENG_RESET, &qp->eng_flags);
	__xnic_engine_activate(eng, qp, true);
	wait_event(eng->reset_wq,
		   !test_bit(XNIC_QP_ENG_RESET, &qp->eng_flags));
	/* Pairs with clear_bit_unlock(): see what the reset wrote. */
	smp_mb();
}

/**
 * xnic_engine_rx() - queue a received frame for the engine
 * @xdev: the device
 * @skb: an xnic frame; consumed
 *
 * The queue is bounded: beyond XNIC_ENGINE_RXQ_MAX frames, or while the
 * engine stops, frames are dropped and counted.
 *
 * Context: softirq (the member links' packet handler), under RCU.
 */
void xnic_engine_rx(struct xnic_dev *xdev, struct sk_buff *skb)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);
	unsigned long flags;
	bool queued = false;

	if (!eng) {
		kfree_skb(skb);
		return;
	}
	spin_lock_irqsave(&eng->rxq.lock, flags);
	if (!eng->stopping && skb_queue_len(&eng->rxq) < XNIC_ENGINE_RXQ_MAX) {
		__skb_queue_tail(&eng->rxq, skb);
		queued = true;
	}
	spin_unlock_irqrestore(&eng->rxq.lock, flags);

	if (queued) {
		xnic_engine_wake(eng);
	} else {
		atomic64_inc(&eng->rx_dropped);
		kfree_skb(skb);
	}
}

/**
 * xnic_engine_add_context() - start scanning a context's doorbells
 * @xdev: the device
 * @uctx: the context; its page has XNIC_ENGINE_NEED_WAKEUP set, which is
 *	right while the engine sleeps and cleared here while it polls
 *
 * Context: process context, may sleep.
 */
void xnic_engine_add_context(struct xnic_dev *xdev, struct xnic_ucontext *uctx)
{
	struct xnic_engine *eng = xdev->engine;

	mutex_lock(&eng->ctx_mutex);
	list_add_tail(&uctx->engine_node, &eng->contexts);
	if (!eng->asleep)
		WRITE_ONCE(uctx->page->engine_flags, 0);
	mutex_unlock(&eng->ctx_mutex);
	xnic_engine_wake(eng);
}

/**
 * xnic_engine_del_context() - stop scanning a context's doorbells
 * @xdev: the device
 * @uctx: the context
 *
 * On return the engine no longer reads or writes the context's page.
 *
 * Context: process context, may sleep.
 */
void xnic_engine_del_context(struct xnic_dev *xdev, struct xnic_ucontext *uctx)
{
	struct xnic_engine *eng = xdev->engine;

	mutex_lock(&eng->ctx_mutex);
	list_del_init(&uctx->engine_node);
	mutex_unlock(&eng->ctx_mutex);
	xnic_engine_wake(eng);
}

/* A doorbell bit was set: activate the QP in that slot, if any. */
static void xnic_engine_ring(struct xnic_engine *eng,
			     struct xnic_ucontext *uctx, u32 db_index)
{
	struct xnic_qp *qp;

	xa_lock_bh(&uctx->qps);
	qp = xa_load(&uctx->qps, db_index);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&uctx->qps);
	if (!qp)
		return;
	__xnic_engine_activate(eng, qp, false);
	xnic_qp_put(qp);
}

/* Step 1: rule D2. Returns whether any doorbell was rung. */
static bool xnic_engine_doorbells(struct xnic_engine *eng)
{
	struct xnic_ucontext *uctx;
	u64 rung = 0;

	mutex_lock(&eng->ctx_mutex);
	list_for_each_entry(uctx, &eng->contexts, engine_node) {
		struct xnic_ctx_page *page = uctx->page;
		u64 summary;

		if (!READ_ONCE(page->db_summary))
			continue;
		summary = xchg(&page->db_summary, 0);
		while (summary) {
			unsigned int word = __ffs64(summary);
			u64 bits;

			summary &= summary - 1;
			bits = xchg(&page->db_bits[word], 0);
			while (bits) {
				unsigned int bit = __ffs64(bits);

				bits &= bits - 1;
				xnic_engine_ring(eng, uctx, word * 64 + bit);
				rung++;
			}
		}
	}
	mutex_unlock(&eng->ctx_mutex);
	eng->doorbells += rung;
	return rung;
}

/* Step 2. Returns whether any frame was handled. */
static bool xnic_engine_do_rx(struct xnic_engine *eng)
{
	struct sk_buff_head batch;
	struct sk_buff *skb;
	unsigned int n = 0;

	if (skb_queue_empty_lockless(&eng->rxq))
		return false;

	__skb_queue_head_init(&batch);
	spin_lock_irq(&eng->rxq.lock);
	while (n < XNIC_ENGINE_RX_BUDGET && (skb = __skb_dequeue(&eng->rxq))) {
		__skb_queue_tail(&batch, skb);
		n++;
	}
	spin_unlock_irq(&eng->rxq.lock);

	while ((skb = __skb_dequeue(&batch)))
		xnic_tp_rx(eng->xdev, skb);
	eng->rx_frames += n;
	return n;
}

/*
 * Take a QP off the active list unless it was activated again meanwhile.
 * Returns whether it stays.
 */
static bool xnic_engine_unlist(struct xnic_engine *eng, struct xnic_qp *qp)
{
	spin_lock_bh(&eng->lock);
	if (test_bit(XNIC_QP_ENG_RERUN, &qp->eng_flags) &&
	    !test_bit(XNIC_QP_ENG_BLOCKED, &qp->eng_flags)) {
		spin_unlock_bh(&eng->lock);
		return true;
	}
	list_del_init(&qp->engine_node);
	clear_bit(XNIC_QP_ENG_LISTED, &qp->eng_flags);
	spin_unlock_bh(&eng->lock);
	/* May let destroy_qp proceed: do not touch @qp after this. */
	xnic_qp_put(qp);
	return false;
}

/* Run one active QP; returns its status, *deadline set with WAIT. */
static enum xnic_tp_status xnic_engine_run_qp(struct xnic_engine *eng,
					      struct xnic_qp *qp,
					      unsigned long *deadline)
{
	if (test_bit(XNIC_QP_ENG_BLOCKED, &qp->eng_flags))
		return XNIC_TP_IDLE;

	if (test_bit(XNIC_QP_ENG_RESET, &qp->eng_flags)) {
		xnic_qp_do_reset(qp);
		clear_bit(XNIC_QP_ENG_FLUSHED, &qp->eng_flags);
		clear_bit_unlock(XNIC_QP_ENG_RESET, &qp->eng_flags);
		wake_up_all(&eng->reset_wq);
		return XNIC_TP_IDLE;
	}
	if (!READ_ONCE(qp->tp_ready))
		return XNIC_TP_IDLE;

	/* Pairs with the release in xnic_qp_set_error(). */
	if (smp_load_acquire(&qp->state) == IB_QPS_ERR &&
	    !test_and_set_bit(XNIC_QP_ENG_FLUSHED, &qp->eng_flags)) {
		xnic_tp_qp_flush(qp);
		return XNIC_TP_IDLE;
	}
	return xnic_tp_qp_process(qp, deadline);
}

/* Step 3. Returns whether any QP made progress; tracks the first deadline. */
static bool xnic_engine_run_qps(struct xnic_engine *eng, bool *have_deadline,
				unsigned long *first_deadline)
{
	struct xnic_qp *qp, *tmp;
	bool busy = false;

	*have_deadline = false;
	if (!list_empty(&eng->pending)) {
		spin_lock_bh(&eng->lock);
		list_splice_tail_init(&eng->pending, &eng->active);
		spin_unlock_bh(&eng->lock);
	}

	list_for_each_entry_safe(qp, tmp, &eng->active, engine_node) {
		unsigned long deadline = 0;

		clear_bit(XNIC_QP_ENG_RERUN, &qp->eng_flags);
		switch (xnic_engine_run_qp(eng, qp, &deadline)) {
		case XNIC_TP_BUSY:
			busy = true;
			break;
		case XNIC_TP_WAIT:
			if (!*have_deadline ||
			    time_before(deadline, *first_deadline)) {
				*first_deadline = deadline;
				*have_deadline = true;
			}
			break;
		case XNIC_TP_IDLE:
		default:
			busy |= xnic_engine_unlist(eng, qp);
			break;
		}
	}
	return busy;
}

static void xnic_engine_set_need_wakeup(struct xnic_engine *eng, bool set)
{
	struct xnic_ucontext *uctx;

	list_for_each_entry(uctx, &eng->contexts, engine_node) {
		u32 *flags = &uctx->page->engine_flags;

		if (set)
			WRITE_ONCE(*flags, READ_ONCE(*flags) |
					   XNIC_ENGINE_NEED_WAKEUP);
		else
			WRITE_ONCE(*flags, READ_ONCE(*flags) &
					   ~XNIC_ENGINE_NEED_WAKEUP);
	}
}

/* Step 4: sleep unless a doorbell, a frame or a kick came in meanwhile. */
static void xnic_engine_sleep(struct xnic_engine *eng, bool have_deadline,
			      unsigned long deadline)
{
	long timeout = MAX_SCHEDULE_TIMEOUT;
	struct xnic_ucontext *uctx;
	bool quiet = true;

	if (have_deadline) {
		timeout = (long)(deadline - jiffies);
		if (timeout <= 0)
			return;
	}

	mutex_lock(&eng->ctx_mutex);
	eng->asleep = true;
	xnic_engine_set_need_wakeup(eng, true);
	/* Rule D2: the flag is visible before we look at the doorbells. */
	smp_mb();
	list_for_each_entry(uctx, &eng->contexts, engine_node)
		if (READ_ONCE(uctx->page->db_summary))
			quiet = false;
	mutex_unlock(&eng->ctx_mutex);

	if (quiet && skb_queue_empty_lockless(&eng->rxq)) {
		eng->sleeps++;
		wait_event_idle_timeout(eng->wq,
					test_bit(XNIC_ENG_KICK, &eng->flags) ||
					kthread_should_stop(), timeout);
		eng->wakeups++;
	}

	mutex_lock(&eng->ctx_mutex);
	xnic_engine_set_need_wakeup(eng, false);
	eng->asleep = false;
	mutex_unlock(&eng->ctx_mutex);
}

static int xnic_engine_thread(void *arg)
{
	struct xnic_engine *eng = arg;
	u64 last_busy = ktime_get_ns();

	while (!kthread_should_stop()) {
		unsigned long deadline = 0;
		bool have_deadline, busy;
		u64 now;

		busy = test_and_clear_bit(XNIC_ENG_KICK, &eng->flags);
		busy |= xnic_engine_doorbells(eng);
		busy |= xnic_engine_do_rx(eng);
		busy |= xnic_engine_run_qps(eng, &have_deadline, &deadline);
		eng->iterations++;

		now = ktime_get_ns();
		if (busy) {
			last_busy = now;
		} else if (now - last_busy >=
			   (u64)READ_ONCE(idle_us) * NSEC_PER_USEC) {
			xnic_engine_sleep(eng, have_deadline, deadline);
			last_busy = ktime_get_ns();
		}
		cond_resched();
	}
	return 0;
}

/**
 * xnic_engine_start() - create and start a device's engine thread
 * @xdev: the device; sets xdev->engine
 * @name: the RDMA device name, for the thread's name "xnic_eng/<name>"
 *
 * Context: process context, may sleep.
 * Return: 0, -ENOMEM, or kthread_create()'s error.
 */
int xnic_engine_start(struct xnic_dev *xdev, const char *name)
{
	struct xnic_engine *eng;

	eng = kzalloc(sizeof(*eng), GFP_KERNEL);
	if (!eng)
		return -ENOMEM;
	eng->xdev = xdev;
	init_waitqueue_head(&eng->wq);
	mutex_init(&eng->ctx_mutex);
	INIT_LIST_HEAD(&eng->contexts);
	spin_lock_init(&eng->lock);
	INIT_LIST_HEAD(&eng->pending);
	INIT_LIST_HEAD(&eng->active);
	init_waitqueue_head(&eng->reset_wq);
	skb_queue_head_init(&eng->rxq);
	atomic64_set(&eng->kicks, 0);
	atomic64_set(&eng->rx_dropped, 0);

	eng->task = kthread_create(xnic_engine_thread, eng, "xnic_eng/%s",
				   name);
	if (IS_ERR(eng->task)) {
		int err = PTR_ERR(eng->task);

		mutex_destroy(&eng->ctx_mutex);
		kfree(eng);
		return err;
	}
	xdev->engine = eng;
	wake_up_process(eng->task);
	return 0;
}

/**
 * xnic_engine_stop() - stop and free a device's engine
 * @xdev: the device; xdev->engine may be NULL (never started)
 *
 * Every context and QP must be gone, and the member links detached, so
 * that nothing queues new work. Frames still queued are freed.
 *
 * Context: process context, may sleep.
 */
void xnic_engine_stop(struct xnic_dev *xdev)
{
	struct xnic_engine *eng = xdev->engine;
	struct xnic_qp *qp, *tmp;

	if (!eng)
		return;

	spin_lock_irq(&eng->rxq.lock);
	eng->stopping = true;
	spin_unlock_irq(&eng->rxq.lock);
	kthread_stop(eng->task);

	WRITE_ONCE(xdev->engine, NULL);
	/* Packet handlers that still saw the engine are done after this. */
	synchronize_net();
	skb_queue_purge(&eng->rxq);

	list_splice_tail_init(&eng->pending, &eng->active);
	list_for_each_entry_safe(qp, tmp, &eng->active, engine_node) {
		WARN_ON_ONCE(1);
		list_del_init(&qp->engine_node);
		clear_bit(XNIC_QP_ENG_LISTED, &qp->eng_flags);
		xnic_qp_put(qp);
	}
	WARN_ON(!list_empty(&eng->contexts));
	mutex_destroy(&eng->ctx_mutex);
	kfree(eng);
}

/**
 * xnic_engine_get_stats() - read the engine's counters
 * @xdev: the device
 * @stats: filled; all zero when the engine is not running
 *
 * Counters are read without stopping the engine: each is exact, the set
 * is not a snapshot.
 *
 * Context: any context but hard IRQ.
 */
void xnic_engine_get_stats(struct xnic_dev *xdev,
			   struct xnic_engine_stats *stats)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);

	memset(stats, 0, sizeof(*stats));
	if (!eng)
		return;
	stats->iterations = READ_ONCE(eng->iterations);
	stats->sleeps = READ_ONCE(eng->sleeps);
	stats->wakeups = READ_ONCE(eng->wakeups);
	stats->kicks = atomic64_read(&eng->kicks);
	stats->doorbells = READ_ONCE(eng->doorbells);
	stats->rx_frames = READ_ONCE(eng->rx_frames);
	stats->rx_dropped = atomic64_read(&eng->rx_dropped);
	stats->qp_activations = READ_ONCE(eng->activations);
}
