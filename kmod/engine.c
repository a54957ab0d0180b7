// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the engine: one kernel thread per device that plays the NIC's
 * doorbell poller, and the wakeup syscall that stands in for it while it
 * sleeps.
 *
 * Who runs the transport (transport_priv.h has the whole model):
 *  - received frames: the member links' packet handler, in softirq; it
 *    also sends what an ACK lets through (bounded);
 *  - the wakeup syscall (a zero-WR POST_SEND, rule D1) runs the QP's
 *    requester inline, bounded, and hands the QP to the engine only when
 *    work remains;
 *  - the engine thread: QPs whose doorbell it sees while polling, work the
 *    other two left over, expired timers, flushes and resets.
 *
 * Each pass of the engine's loop
 *  1. consumes the doorbells of every context (uapi/xnic-abi.h rule D2):
 *     xchg db_summary to 0, xchg each word it names to 0, and activates the
 *     QP of every bit set. The cost depends on the contexts and the bits
 *     rung, never on the number of idle QPs;
 *  2. hands up to XNIC_ENGINE_RX_BUDGET frames the receive path deferred
 *     (HELLOs, bulk data) to xnic_tp_rx_deferred();
 *  3. runs every active QP: a QP that entered the error state is flushed
 *     once (xnic_tp_qp_flush()); otherwise xnic_tp_qp_process() says
 *     whether it stays active (BUSY) or leaves the list (IDLE: its timer,
 *     ACKs or a doorbell bring it back);
 *  4. when no pass found work for idle_us microseconds (busy polling
 *     until then), goes to sleep with the NEED_WAKEUP protocol: set the
 *     flag in every context page, full barrier, re-check every doorbell
 *     summary, and sleep until kicked. A process that posts after the
 *     barrier sees the flag and makes the wakeup syscall (io_uring SQPOLL
 *     model).
 *
 * Idle policy: idle_us is short by default, so that a ping-pong (one
 * doorbell per round trip) leaves the engine asleep and every post goes
 * through the wakeup syscall, which does the work inline with no thread
 * handoff; when the syscall leaves work (large messages, a full window)
 * the engine takes over, and while doorbells keep coming within idle_us
 * it stays awake and the datapath needs no system call. A stream (posts
 * of a QP in a row, closer than XNIC_ENGINE_STREAM_NS, with nothing
 * received in between: xnic_engine_stream()) makes the engine nap instead
 * of sleep between them: NEED_WAKEUP stays clear, a timer of
 * XNIC_ENGINE_NAP_NS brings it back, and the stream's posts need no
 * system call either. An idle_us of XNIC_ENGINE_POLL_IDLE_US or more asks
 * for a polling engine: every wakeup syscall wakes it.
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
 *    taken under a QP's tp lock (activation from the transport), never
 *    the other way round;
 *  - rxq.lock (IRQ): the deferred frames and @stopping.
 * The active list belongs to the thread.
 */
#include <linux/bitops.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>

#include "xnic.h"
#include "verbs.h"
#include "engine.h"
#include "transport.h"
#include "credit.h"

static struct xnic_uint_param idle_us = {
	.val = XNIC_DEF_IDLE_US, .min = 0, .max = XNIC_MAX_IDLE_US,
};
module_param_cb(idle_us, &xnic_uint_param_ops, &idle_us, 0644);
MODULE_PARM_DESC(idle_us,
		 "Default for new devices of the microseconds their engine busy-polls without work before sleeping, 0 to 10000000 (default 20; per device: netlink parameter idle_us)");

/**
 * xnic_engine_default_idle_us() - the idle period a new device starts with
 *
 * Return: the module parameter idle_us (microseconds), which accepts what
 * the netlink parameter accepts (at most XNIC_MAX_IDLE_US).
 */
u32 xnic_engine_default_idle_us(void)
{
	return READ_ONCE(idle_us.val);
}

/* Deferred frames handled per pass, and queued at most. */
#define XNIC_ENGINE_RX_BUDGET	64
#define XNIC_ENGINE_RXQ_MAX	1024
/* Frames one QP sends per pass of the engine, and per wakeup syscall. */
#define XNIC_ENGINE_QP_BUDGET	32
#define XNIC_ENGINE_SYSCALL_BUDGET	32
/*
 * From this idle period on (us) the engine is meant to poll: the wakeup
 * syscall wakes it even when it left no work, so that the posts that
 * follow need no system call (io_uring SQPOLL's behaviour).
 */
#define XNIC_ENGINE_POLL_IDLE_US	1000
/*
 * Streams (xnic_engine_stream()): XNIC_ENGINE_STREAM_POSTS posts of a QP
 * in a row, each less than XNIC_ENGINE_STREAM_NS after the last with
 * nothing received in between. The engine then naps (XNIC_ENGINE_NAP_NS
 * at a time, doubling while the naps find nothing; NEED_WAKEUP clear)
 * instead of sleeping, until XNIC_ENGINE_STREAM_NS after the stream's
 * last post.
 */
#define XNIC_ENGINE_STREAM_NS		(10 * NSEC_PER_MSEC)
#define XNIC_ENGINE_STREAM_POSTS	8
#define XNIC_ENGINE_NAP_NS		(20 * NSEC_PER_USEC)
/* Naps double while they find nothing, up to this. */
#define XNIC_ENGINE_NAP_MAX_NS		(160 * NSEC_PER_USEC)
/* Off the CPU this long (ns) between passes, the engine is starved. */
#define XNIC_ENGINE_STARVED_NS		(200 * NSEC_PER_USEC)
/*
 * The engine's nice value while it sleeps when idle. A NIC's engines never
 * wait for the host's CPUs; this one is a thread that shares them with the
 * applications, so it takes a larger CFS share than they do (weight 3121
 * against 1024 at nice 0), not all of it. Measured in the test VM:
 * fi_pingpong -e msg, 1 MiB, whose client and server busy-poll their CQs
 * on the two vCPUs: nice 0 140-290 MB/s, -5 300-490, -20 380-580; but at
 * -10 and below, one thread posting 8 KiB WRITEs on four QPs beside a
 * 1 MiB stream got too little CPU to keep their queues full, and the
 * 1 MiB QP took 2.4-3.6 equal shares (xnic_credit_test large_vs_small;
 * 0.97 at -5 and 0). A polling engine (idle_us >=
 * XNIC_ENGINE_POLL_IDLE_US) never sleeps and runs at nice 0, like any
 * busy poller.
 */
#define XNIC_ENGINE_NICE		(-5)

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
	XNIC_ENG_CLASS0,	/* a class 0 QP was activated: class 1 yields */
};

/**
 * struct xnic_engine - state of a device's engine thread
 * @xdev: the device
 * @task: the thread
 * @cpus: its part in the sharing of the CPUs among engines
 * @flags: XNIC_ENG_* (atomic bitops)
 * @wq: the thread sleeps here
 * @ctx_mutex: guards @contexts and every access to a context's page
 * @contexts: struct xnic_ucontext.engine_node list (@ctx_mutex)
 * @asleep: NEED_WAKEUP is set in the pages of @contexts (@ctx_mutex)
 * @lock: guards @pending and the QPs' LISTED and BLOCKED bits (BH)
 * @pending: QPs activated since the thread last looked (@lock)
 * @active: QPs the thread runs (thread only)
 * @reset_wq: modify_qp waits here for the thread to reset a QP
 * @rxq: frames deferred by the receive path (its own lock, IRQ safe)
 * @stopping: refuse new frames (@rxq.lock)
 * @activations: QPs put on @pending (@lock)
 * @iterations: loop passes (thread only, like the next four)
 * @sleeps: times the thread went to sleep
 * @naps: times it napped in a stream (xnic_engine_nap())
 * @wakeups: times it woke up again
 * @doorbells: doorbell bits consumed
 * @rx_frames: deferred frames handled
 * @kicks: xnic_engine_kick() calls and wakeup syscalls
 * @rx_dropped: deferred frames dropped, queue full or engine stopping
 * @listed0: class 0 QPs on @pending or @active (changed under @lock, read
 *	without it: xnic_engine_class0_backlogged())
 * @stream_until: local_clock() ns until which the engine naps rather than
 *	sleeps (wakeup syscalls and the thread write it, unlocked)
 */
struct xnic_engine {
	struct xnic_dev *xdev;
	struct task_struct *task;
	struct xnic_engine_cpus cpus;
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
	u64 naps;
	u64 wakeups;
	u64 doorbells;
	u64 rx_frames;
	atomic64_t kicks;
	atomic64_t rx_dropped;
	atomic_t listed0;
	u64 stream_until;
};

/* The device's idle period, us (netlink parameter idle_us). */
static u32 xnic_engine_idle_us(const struct xnic_engine *eng)
{
	return READ_ONCE(eng->xdev->params.idle_us);
}

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
 * Called by everything that queues work for the engine. Cheap when the
 * engine is awake.
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
	bool cls0 = !READ_ONCE(qp->tclass);

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
		if (cls0)
			atomic_inc(&eng->listed0);
		eng->activations++;
	}
	if (cls0)
		set_bit(XNIC_ENG_CLASS0, &eng->flags);
	spin_unlock_bh(&eng->lock);
	if (kick)
		xnic_engine_wake(eng);
}

/**
 * xnic_engine_activate_qp() - have the engine run a QP
 * @xdev: the device
 * @qp: the QP; the caller holds a reference, is a verb on it, or holds its
 *	tp lock
 *
 * The engine calls xnic_tp_qp_process() (or flushes the QP when it is in
 * the error state) in its next pass, and keeps doing so while it reports
 * more to do. Activating a QP the engine is running makes it run again. A
 * QP being destroyed is not activated.
 *
 * Context: any context but hard IRQ; may be called under the QP's tp lock.
 */
void xnic_engine_activate_qp(struct xnic_dev *xdev, struct xnic_qp *qp)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);

	if (eng)
		__xnic_engine_activate(eng, qp, true);
}

/**
 * xnic_engine_owns_qp() - leave a QP's transmissions to the engine if it
 *	runs the QP
 * @xdev: the device
 * @qp: the QP
 *
 * One context at a time sends a QP's frames: the engine while the QP is on
 * its lists, else whoever finds work (the wakeup syscall, an ACK). Two
 * senders on two CPUs would reorder the QP's PSNs (veth queues a frame on
 * the sending CPU), and reordering looks like loss. When the engine has
 * the QP, it is made to run it again.
 *
 * Context: any context but hard IRQ; may be called under the QP's tp lock.
 * Return: true when the engine runs the QP (the caller sends nothing).
 */
bool xnic_engine_owns_qp(struct xnic_dev *xdev, struct xnic_qp *qp)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);
	bool listed;

	if (!eng || !test_bit(XNIC_QP_ENG_LISTED, &qp->eng_flags))
		return false;
	spin_lock_bh(&eng->lock);
	listed = test_bit(XNIC_QP_ENG_LISTED, &qp->eng_flags);
	if (listed)
		set_bit(XNIC_QP_ENG_RERUN, &qp->eng_flags);
	spin_unlock_bh(&eng->lock);
	if (listed)
		xnic_engine_wake(eng);
	return listed;
}

/**
 * xnic_engine_class0_backlogged() - whether class 0 QPs wait for the engine
 * @xdev: the device
 *
 * A class 0 (latency-critical) QP is on the engine's lists from its
 * activation until a pass finds it idle: while one is, a class 1 QP
 * leaves its inline sends (wakeup syscall, ACK) to the engine, which
 * serves class 0 first (xnic_credit_inline_begin()). A lockless read: a
 * QP listed or unlisted at the same time may be seen either way.
 *
 * Context: any context but hard IRQ; may be called under a tp lock.
 * Return: true when at least one class 0 QP is listed.
 */
bool xnic_engine_class0_backlogged(struct xnic_dev *xdev)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);

	return eng && atomic_read(&eng->listed0) > 0;
}

/*
 * Whether a post on @qp (a wakeup syscall, or a doorbell of new WQEs the
 * engine found) continues a stream: it is the XNIC_ENGINE_STREAM_POSTS-th
 * or later in a row to come less than XNIC_ENGINE_STREAM_NS after the
 * QP's previous one with nothing from the peer in between (its
 * responder's expected PSN, @epsn, is the same). Posts of a ping-pong (a
 * few per round, fi_pingpong's and MPI's) wait for the peer's message and
 * are best done inline by the syscall: a nap would delay them. Those of a
 * stream come as completions free the SQ, and an engine that naps between
 * them (xnic_engine_nap()) takes them with no system call. Clocks of two
 * CPUs (local_clock()) may differ by a little: this is a hint.
 */
static bool xnic_engine_stream(struct xnic_qp *qp, u32 epsn, u64 now)
{
	u64 last = READ_ONCE(qp->post_ns);
	u32 streak = 0;

	if (now - last < XNIC_ENGINE_STREAM_NS &&
	    epsn == READ_ONCE(qp->post_epsn))
		streak = min(READ_ONCE(qp->post_streak) + 1,
			     XNIC_ENGINE_STREAM_POSTS);
	WRITE_ONCE(qp->post_ns, now);
	WRITE_ONCE(qp->post_epsn, epsn);
	WRITE_ONCE(qp->post_streak, streak);
	return streak >= XNIC_ENGINE_STREAM_POSTS;
}

/* Set or clear NEED_WAKEUP in a context's page. Context: ctx_mutex held. */
static void xnic_engine_page_need_wakeup(struct xnic_ucontext *uctx, bool set)
{
	u32 *flags = &uctx->page->engine_flags;

	if (set)
		WRITE_ONCE(*flags, READ_ONCE(*flags) | XNIC_ENGINE_NEED_WAKEUP);
	else
		WRITE_ONCE(*flags, READ_ONCE(*flags) & ~XNIC_ENGINE_NEED_WAKEUP);
}

/* A post continued a stream: nap rather than sleep for a while. */
static void xnic_engine_stream_extend(struct xnic_engine *eng)
{
	WRITE_ONCE(eng->stream_until, local_clock() + XNIC_ENGINE_STREAM_NS);
}

/*
 * A wakeup syscall continues a stream: the engine is to nap from now on.
 * Kick it, then clear NEED_WAKEUP in the poster's page at once, so that
 * the stream's next posts make no syscall while the thread waits for a
 * CPU. The kick comes first: the thread runs a pass after the flag is
 * clear and finds every doorbell rung meanwhile (rule D2 holds: with the
 * flag clear, the engine is bound to look). ctx_mutex orders this against
 * the thread setting the flag to sleep.
 */
static void xnic_engine_stream_start(struct xnic_engine *eng,
				     struct xnic_ucontext *uctx)
{
	xnic_engine_stream_extend(eng);
	xnic_engine_wake(eng);
	mutex_lock(&eng->ctx_mutex);
	if (!list_empty(&uctx->engine_node))
		xnic_engine_page_need_wakeup(uctx, false);
	mutex_unlock(&eng->ctx_mutex);
}

/**
 * xnic_engine_post_send() - the wakeup syscall of rule D1
 * @xdev: the device
 * @qp: the QP the process posted to
 *
 * Runs the QP's requester inline (xnic_tp_qp_post()), at most
 * XNIC_ENGINE_SYSCALL_BUDGET frames, unless the engine runs it already
 * (xnic_engine_owns_qp()), and activates the QP in the engine (waking it)
 * only when work remains (or remained from before), the QP must be flushed
 * or reset, or its state is not ready.
 * The engine is also woken when the syscall continues a stream
 * (xnic_engine_stream()), so that it polls the posts that follow, and with
 * a long idle period (idle_us >= XNIC_ENGINE_POLL_IDLE_US), where it is
 * meant to poll.
 *
 * Context: process context (the POST_SEND command).
 */
void xnic_engine_post_send(struct xnic_dev *xdev, struct xnic_qp *qp)
{
	struct xnic_engine *eng = READ_ONCE(xdev->engine);
	enum ib_qp_state state;

	if (!eng)
		return;
	atomic64_inc(&eng->kicks);
	/* Pairs with the store-release of every transition of the state. */
	state = smp_load_acquire(&qp->state);
	if (xnic_engine_owns_qp(xdev, qp))
		return;
	if (!test_bit(XNIC_QP_ENG_RESET, &qp->eng_flags) &&
	    READ_ONCE(qp->tp_ready) && state == IB_QPS_RTS) {
		u64 now = local_clock();
		u32 epsn;

		xnic_tp_qp_post_hint(qp, &epsn);
		if (xnic_engine_stream(qp, epsn, now))
			xnic_engine_stream_start(eng, qp->uctx);
		if (xnic_tp_qp_post(qp, XNIC_ENGINE_SYSCALL_BUDGET, now) ==
		    XNIC_TP_IDLE) {
			if (xnic_engine_idle_us(eng) >= XNIC_ENGINE_POLL_IDLE_US)
				xnic_engine_wake(eng);
			return;
		}
	}
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
 * The engine stops the QP's transport state (xnic_tp_qp_stop(): the
 * receive path and the wakeup syscall leave it alone from then on), calls
 * xnic_qp_do_reset() in its thread, and forgets that the QP was flushed.
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
 * xnic_engine_rx() - defer a received frame to the engine thread
 * @xdev: the device
 * @skb: an xnic frame xnic_tp_rx() checked (a bulk data frame: its
 *	header); consumed
 *
 * For what must not run in softirq (HELLOs: the peer table) and bulk data,
 * which the engine checks and places on its own CPU. The queue is
 * bounded: beyond XNIC_ENGINE_RXQ_MAX frames, or while the engine stops,
 * frames are dropped and counted (a dropped data frame is resent, as a
 * lost one is; link credit keeps senders below the bound).
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
	u32 epsn;

	qp = xnic_uctx_qp_get(uctx, db_index);
	if (!qp)
		return;
	/*
	 * New posts with no syscall may stream; not those a syscall took (a
	 * ping-pong's), but those the engine took already in a stream.
	 */
	if ((xnic_tp_qp_post_hint(qp, &epsn) ||
	     READ_ONCE(qp->post_streak) >= XNIC_ENGINE_STREAM_POSTS) &&
	    xnic_engine_stream(qp, epsn, local_clock()))
		xnic_engine_stream_extend(eng);
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
		xnic_tp_rx_deferred(eng->xdev, skb);
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
	if (!READ_ONCE(qp->tclass))
		atomic_dec(&eng->listed0);
	spin_unlock_bh(&eng->lock);
	/* May let destroy_qp proceed: do not touch @qp after this. */
	xnic_qp_put(qp);
	return false;
}

/* Run one active QP, at most @budget frames; returns its status. */
static enum xnic_tp_status xnic_engine_run_qp(struct xnic_engine *eng,
					      struct xnic_qp *qp,
					      unsigned int budget)
{
	if (test_bit(XNIC_QP_ENG_BLOCKED, &qp->eng_flags))
		return XNIC_TP_IDLE;

	if (test_bit(XNIC_QP_ENG_RESET, &qp->eng_flags)) {
		/* Nobody else touches the rings or the state after this. */
		xnic_tp_qp_stop(qp);
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
	return xnic_tp_qp_process(qp, budget);
}

/*
 * Before a class 1 QP's turn: whether a class 0 QP was rung or activated
 * since the pass began (also one still listed from an earlier WQE), and
 * the pass should end so that it runs first.
 */
static bool xnic_engine_class1_yield(struct xnic_engine *eng)
{
	xnic_engine_doorbells(eng);
	return test_bit(XNIC_ENG_CLASS0, &eng->flags);
}

/*
 * Step 3. Returns whether any QP has more to do. Traffic classes
 * (credit.c): class 0 QPs run first, then class 1 QPs with the budget
 * xnic_credit_budget() gives them (about one frame while class 0 is
 * idle); QPs of a class run round robin. Between two class 1 turns the
 * engine looks at the doorbells: a class 0 QP rung meanwhile ends the
 * pass after the first class 1 turn (so class 1 always progresses), and
 * the next pass starts with the class 1 QP that was cut. A latency-critical
 * WQE so waits for about one bulk frame (VL arbitration, IBA vol 1
 * section 7.6.9).
 */
static bool xnic_engine_run_qps(struct xnic_engine *eng)
{
	struct xnic_qp *qp, *tmp;
	bool busy = false, busy0 = false, turn1 = false;
	unsigned int budget;
	u8 cls;

	clear_bit(XNIC_ENG_CLASS0, &eng->flags);
	if (!list_empty(&eng->pending)) {
		spin_lock_bh(&eng->lock);
		list_splice_tail_init(&eng->pending, &eng->active);
		spin_unlock_bh(&eng->lock);
		busy = true;
	}

	for (cls = 0; cls < XNIC_CREDIT_NR_CLASSES; cls++) {
		budget = xnic_credit_budget(eng->xdev, cls,
					    XNIC_ENGINE_QP_BUDGET, busy0);
		list_for_each_entry_safe(qp, tmp, &eng->active, engine_node) {
			if (READ_ONCE(qp->tclass) != cls)
				continue;
			if (cls && turn1 && xnic_engine_class1_yield(eng)) {
				list_rotate_to_front(&qp->engine_node,
						     &eng->active);
				return true;
			}
			if (cls)
				turn1 = true;
			clear_bit(XNIC_QP_ENG_RERUN, &qp->eng_flags);
			if (xnic_engine_run_qp(eng, qp, budget) ==
			    XNIC_TP_BUSY) {
				busy = true;
				busy0 |= !cls;
			} else {
				busy |= xnic_engine_unlist(eng, qp);
			}
		}
	}
	return busy;
}

static void xnic_engine_set_need_wakeup(struct xnic_engine *eng, bool set)
{
	struct xnic_ucontext *uctx;

	list_for_each_entry(uctx, &eng->contexts, engine_node)
		xnic_engine_page_need_wakeup(uctx, set);
}

/* Step 4: sleep unless a doorbell, a frame or a kick came in meanwhile. */
static void xnic_engine_sleep(struct xnic_engine *eng)
{
	struct xnic_ucontext *uctx;
	bool quiet = true;

	mutex_lock(&eng->ctx_mutex);
	eng->asleep = true;
	xnic_engine_set_need_wakeup(eng, true);
	/* Rule D2: the flag is visible before we look at the doorbells. */
	smp_mb();
	list_for_each_entry(uctx, &eng->contexts, engine_node)
		if (READ_ONCE(uctx->page->db_summary))
			quiet = false;
	mutex_unlock(&eng->ctx_mutex);

	if (quiet && skb_queue_empty_lockless(&eng->rxq) &&
	    list_empty(&eng->active)) {
		eng->sleeps++;
		wait_event_idle(eng->wq,
				test_bit(XNIC_ENG_KICK, &eng->flags) ||
				kthread_should_stop());
		eng->wakeups++;
	}

	mutex_lock(&eng->ctx_mutex);
	xnic_engine_set_need_wakeup(eng, false);
	eng->asleep = false;
	mutex_unlock(&eng->ctx_mutex);
}

/*
 * Step 4 in a stream: sleep @nap ns at most, or until kicked, with
 * NEED_WAKEUP clear. The posts of the stream ring their doorbells with no
 * system call; the pass after the nap finds them. An interrupt coalescing
 * timer's idea: a post waits at most a nap, and the stream costs no CPU
 * between its posts.
 */
static void xnic_engine_nap(struct xnic_engine *eng, u64 nap)
{
	eng->naps++;
	if (!test_bit(XNIC_ENG_KICK, &eng->flags))
		__wait_event_hrtimeout(eng->wq,
				       test_bit(XNIC_ENG_KICK, &eng->flags) ||
				       kthread_should_stop(),
				       ns_to_ktime(nap), TASK_IDLE);
}

/*
 * The idle policy of step 4. An engine that was kept off the CPU for
 * longer than it may idle (the scheduler gave the CPUs to busy-polling
 * applications) always finds work when it runs again, so idle_us alone
 * would keep it awake, and every post would wait for its next time slice.
 * Such an engine goes to sleep once it has nothing left in hand: the
 * posts then take the wakeup syscall, which does the work at once on the
 * poster's CPU.
 */
static bool xnic_engine_should_sleep(const struct xnic_engine *eng,
				     u64 now, u64 pass_start, u64 last_pass,
				     u64 last_busy, bool busy, bool in_hand)
{
	u64 idle = (u64)xnic_engine_idle_us(eng) * NSEC_PER_USEC;

	if (in_hand)
		return false;
	if (pass_start - last_pass > max_t(u64, idle, XNIC_ENGINE_STARVED_NS))
		return true;
	return !busy && now - last_busy >= idle;
}

/* Sets the engine's nice value for its idle policy (XNIC_ENGINE_NICE). */
static void xnic_engine_set_nice(const struct xnic_engine *eng)
{
	int nice = XNIC_ENGINE_NICE;

	if (xnic_engine_idle_us(eng) >= XNIC_ENGINE_POLL_IDLE_US)
		nice = 0;
	if (task_nice(current) != nice)
		set_user_nice(current, nice);
}

static int xnic_engine_thread(void *arg)
{
	struct xnic_engine *eng = arg;
	u64 last_busy = local_clock(), last_pass = last_busy;
	u64 nap = XNIC_ENGINE_NAP_NS;

	xnic_engine_set_nice(eng);
	/* A nap's timer may fire this late (the default is 50 us). */
	current->timer_slack_ns = XNIC_ENGINE_NAP_NS / 4;
	while (!kthread_should_stop()) {
		u64 now, start = local_clock();
		bool busy;

		busy = test_and_clear_bit(XNIC_ENG_KICK, &eng->flags);
		busy |= xnic_engine_doorbells(eng);
		busy |= xnic_engine_do_rx(eng);
		busy |= xnic_engine_run_qps(eng);
		eng->iterations++;

		/* local_clock(): cheap, unlike ktime_get() on HPET. */
		now = local_clock();
		if (busy) {
			last_busy = now;
			nap = XNIC_ENGINE_NAP_NS;
		}
		if (xnic_engine_should_sleep(eng, now, start, last_pass, last_busy,
					     busy, !list_empty(&eng->active))) {
			if (now < READ_ONCE(eng->stream_until)) {
				xnic_engine_nap(eng, nap);
				nap = min(2 * nap, XNIC_ENGINE_NAP_MAX_NS);
			} else {
				xnic_engine_sleep(eng);
				last_busy = local_clock();
			}
			now = local_clock();
		}
		last_pass = now;
		xnic_engine_set_nice(eng);
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
	atomic_set(&eng->listed0, 0);

	eng->task = kthread_create(xnic_engine_thread, eng, "xnic_eng/%s",
				   name);
	if (IS_ERR(eng->task)) {
		int err = PTR_ERR(eng->task);

		mutex_destroy(&eng->ctx_mutex);
		kfree(eng);
		return err;
	}
	xnic_engine_cpus_add(&eng->cpus, eng->task);
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
	xnic_engine_cpus_del(&eng->cpus);
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
	stats->naps = READ_ONCE(eng->naps);
	stats->wakeups = READ_ONCE(eng->wakeups);
	stats->kicks = atomic64_read(&eng->kicks);
	stats->doorbells = READ_ONCE(eng->doorbells);
	stats->rx_frames = READ_ONCE(eng->rx_frames);
	stats->rx_dropped = atomic64_read(&eng->rx_dropped);
	stats->qp_activations = READ_ONCE(eng->activations);
}
