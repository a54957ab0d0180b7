/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic - the engine: one kernel thread per device that polls the doorbells
 * of its contexts while busy, sleeps after an idle period using the
 * NEED_WAKEUP protocol (uapi/xnic-abi.h rules D1/D2; the io_uring SQPOLL
 * model), and runs the transport for the QPs handed to it. The wakeup
 * syscall (xnic_engine_post_send()) runs a QP inline while it sleeps.
 *
 * What the engine calls, always from its own thread:
 *  - xnic_tp_rx_deferred() for every frame the receive path deferred;
 *  - for every active QP (one that rang its doorbell or was handed to
 *    xnic_engine_activate_qp()):
 *      state ERR, first time since the QP entered it: xnic_tp_qp_flush();
 *      otherwise: xnic_tp_qp_process(), until it returns XNIC_TP_IDLE;
 *  - xnic_tp_qp_stop() then xnic_qp_do_reset() when modify_qp moves a QP
 *    to RESET (which calls xnic_tp_qp_release() and xnic_tp_qp_init()
 *    again);
 * and never any of them for a QP whose transport state is not set up
 * (xnic_qp.tp_ready false) or that is being destroyed.
 */
#ifndef XNIC_ENGINE_H
#define XNIC_ENGINE_H

#include <linux/list.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

struct task_struct;
struct xnic_dev;
struct xnic_qp;
struct xnic_ucontext;

/**
 * struct xnic_engine_stats - engine event counters (free running)
 * @iterations: passes of the main loop
 * @sleeps: times the engine went to sleep
 * @naps: times it napped between the posts of a stream, NEED_WAKEUP clear
 * @wakeups: times it woke up (kick, deadline or stop)
 * @kicks: wakeup syscalls and calls of xnic_engine_kick()
 * @doorbells: doorbell bits consumed
 * @rx_frames: frames the receive path deferred to the engine (HELLOs)
 * @rx_dropped: deferred frames dropped because the queue was full or the
 *	engine was stopping
 * @qp_activations: QPs put on the active list
 */
struct xnic_engine_stats {
	u64 iterations;
	u64 sleeps;
	u64 naps;
	u64 wakeups;
	u64 kicks;
	u64 doorbells;
	u64 rx_frames;
	u64 rx_dropped;
	u64 qp_activations;
};

int xnic_engine_start(struct xnic_dev *xdev, const char *name);
void xnic_engine_stop(struct xnic_dev *xdev);
void xnic_engine_add_context(struct xnic_dev *xdev, struct xnic_ucontext *uctx);
void xnic_engine_del_context(struct xnic_dev *xdev, struct xnic_ucontext *uctx);
void xnic_engine_kick(struct xnic_dev *xdev);
u32 xnic_engine_default_idle_us(void);
void xnic_engine_post_send(struct xnic_dev *xdev, struct xnic_qp *qp);
void xnic_engine_activate_qp(struct xnic_dev *xdev, struct xnic_qp *qp);
bool xnic_engine_owns_qp(struct xnic_dev *xdev, struct xnic_qp *qp);
bool xnic_engine_class0_backlogged(struct xnic_dev *xdev);
void xnic_engine_detach_qp(struct xnic_dev *xdev, struct xnic_qp *qp);
void xnic_engine_reset_qp(struct xnic_dev *xdev, struct xnic_qp *qp);
void xnic_engine_rx(struct xnic_dev *xdev, struct sk_buff *skb);
void xnic_engine_get_stats(struct xnic_dev *xdev,
			   struct xnic_engine_stats *stats);

/**
 * struct xnic_engine_cpus - an engine thread's part in the CPU sharing
 *	(engine_cpu.c)
 * @node: in the list of engines sharing the CPUs
 * @task: the thread
 * @placed: on that list
 */
struct xnic_engine_cpus {
	struct list_head node;
	struct task_struct *task;
	bool placed;
};

void xnic_engine_cpus_add(struct xnic_engine_cpus *ec,
			  struct task_struct *task);
void xnic_engine_cpus_del(struct xnic_engine_cpus *ec);

#endif /* XNIC_ENGINE_H */
