// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - the device's counters by name: the transport's (peer.c), the
 * engine's (engine.c), flow control's (credit.c), then the connection
 * manager's (cm.c), read through the RDMA core's hw_stats
 * (`rdma statistic show link xnic0/1`,
 * /sys/class/infiniband/xnic0/ports/1/hw_counters/) and netlink's
 * STATS_GET (`xnictl -S xnic0`). Every counter is real and free running;
 * none is a placeholder.
 */
#include <linux/stddef.h>
#include <rdma/ib_verbs.h>

#include "xnic.h"
#include "engine.h"
#include "transport.h"
#include "credit.h"
#include "cm.h"

/* Engine counters: name and place in struct xnic_engine_stats. */
static const struct {
	const char *name;
	size_t offset;
} xnic_engine_counters[] = {
	{ "engine_iterations", offsetof(struct xnic_engine_stats, iterations) },
	{ "engine_sleeps", offsetof(struct xnic_engine_stats, sleeps) },
	{ "engine_naps", offsetof(struct xnic_engine_stats, naps) },
	{ "engine_wakeups", offsetof(struct xnic_engine_stats, wakeups) },
	{ "engine_kicks", offsetof(struct xnic_engine_stats, kicks) },
	{ "engine_doorbells", offsetof(struct xnic_engine_stats, doorbells) },
	{ "engine_rx_frames", offsetof(struct xnic_engine_stats, rx_frames) },
	{ "engine_rx_dropped", offsetof(struct xnic_engine_stats, rx_dropped) },
	{ "engine_qp_activations",
	  offsetof(struct xnic_engine_stats, qp_activations) },
};

#define XNIC_NR_ENGINE_COUNTERS	ARRAY_SIZE(xnic_engine_counters)
#define XNIC_NR_COUNTERS	(XNIC_TP_NR_COUNTERS + XNIC_NR_ENGINE_COUNTERS + \
				 XNIC_CREDIT_NR_COUNTERS + XNIC_CM_NR_COUNTERS + \
				 XNIC_LCNT_MAX)

/* Names for rdma_alloc_hw_stats_struct(), filled by xnic_counters_init(). */
static struct rdma_stat_desc xnic_stat_descs[XNIC_NR_COUNTERS] __ro_after_init;

/**
 * xnic_counters_init() - build the counter name table (module load)
 *
 * Context: module init, before any device exists.
 */
void __init xnic_counters_init(void)
{
	unsigned int i;

	for (i = 0; i < XNIC_NR_COUNTERS; i++)
		xnic_stat_descs[i].name = xnic_counter_name(i);
}

/**
 * xnic_counters_num() - number of counters of a device
 *
 * Return: the number of names xnic_counter_name() knows.
 */
unsigned int xnic_counters_num(void)
{
	return XNIC_NR_COUNTERS;
}

/**
 * xnic_counter_name() - name of a counter
 * @i: counter number, below xnic_counters_num()
 *
 * Return: the name (static storage), or NULL for an @i out of range.
 */
const char *xnic_counter_name(unsigned int i)
{
	if (i < XNIC_TP_NR_COUNTERS)
		return xnic_tp_counter_names[i];
	i -= XNIC_TP_NR_COUNTERS;
	if (i < XNIC_NR_ENGINE_COUNTERS)
		return xnic_engine_counters[i].name;
	i -= XNIC_NR_ENGINE_COUNTERS;
	if (i < XNIC_CREDIT_NR_COUNTERS)
		return xnic_credit_counter_names[i];
	i -= XNIC_CREDIT_NR_COUNTERS;
	if (i < XNIC_CM_NR_COUNTERS)
		return xnic_cm_counter_names[i];
	i -= XNIC_CM_NR_COUNTERS;
	if (i < XNIC_LCNT_MAX)
		return xnic_lcr_counter_names[i];
	return NULL;
}

/**
 * xnic_counters_read() - read every counter of a device
 * @xdev: the device
 * @vals: filled with up to @n values in xnic_counter_name() order
 * @n: room in @vals
 *
 * The values are read without stopping the device: each one is exact,
 * the set is not a snapshot. Counters of a transport or engine not running
 * read as 0.
 *
 * Context: any but hard IRQ.
 * Return: the number of values written, min(@n, xnic_counters_num()).
 */
unsigned int xnic_counters_read(struct xnic_dev *xdev, u64 *vals,
				unsigned int n)
{
	u64 tp[XNIC_TP_NR_COUNTERS] = {};
	u64 cr[XNIC_CREDIT_NR_COUNTERS] = {};
	u64 cm[XNIC_CM_NR_COUNTERS] = {};
	u64 lcr[XNIC_LCNT_MAX];
	const unsigned int cr0 = XNIC_TP_NR_COUNTERS + XNIC_NR_ENGINE_COUNTERS;
	const unsigned int cm0 = cr0 + XNIC_CREDIT_NR_COUNTERS;
	const unsigned int lcr0 = cm0 + XNIC_CM_NR_COUNTERS;
	struct xnic_engine_stats es;
	unsigned int i;

	n = min_t(unsigned int, n, XNIC_NR_COUNTERS);
	xnic_tp_counters(xdev, tp, XNIC_TP_NR_COUNTERS);
	xnic_engine_get_stats(xdev, &es);
	xnic_credit_counters(xdev, cr, XNIC_CREDIT_NR_COUNTERS);
	xnic_cm_counters(xdev, cm);
	xnic_lcr_counters(xdev, lcr);
	for (i = 0; i < n; i++) {
		if (i < XNIC_TP_NR_COUNTERS)
			vals[i] = tp[i];
		else if (i < cr0)
			vals[i] = *(u64 *)((u8 *)&es +
				xnic_engine_counters[i - XNIC_TP_NR_COUNTERS].offset);
		else if (i < cm0)
			vals[i] = cr[i - cr0];
		else if (i < lcr0)
			vals[i] = cm[i - cm0];
		else
			vals[i] = lcr[i - lcr0];
	}
	return n;
}

/**
 * xnic_alloc_hw_port_stats() - ib_device_ops.alloc_hw_port_stats
 * @ibdev: the device
 * @port: port number (only XNIC_PORT exists)
 *
 * The port's counters are the device's: every counter there is.
 *
 * Context: process context (device registration).
 * Return: the stats struct the RDMA core owns and frees, or NULL.
 */
struct rdma_hw_stats *xnic_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(xnic_stat_descs, XNIC_NR_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * xnic_get_hw_stats() - ib_device_ops.get_hw_stats
 * @ibdev: the device
 * @stats: from xnic_alloc_hw_port_stats(); its mutex is held by the core
 * @port: port number
 * @index: the counter asked for; all of them are read anyway
 *
 * Context: process context.
 * Return: the number of counters updated (all of them).
 */
int xnic_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	return xnic_counters_read(to_xdev(ibdev), stats->value,
				  stats->num_counters);
}
