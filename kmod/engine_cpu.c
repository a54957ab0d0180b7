// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - where engine threads run. The engines of the devices share the
 * CPUs out: with E engines and N CPUs (online, and taking kernel threads:
 * not isolcpus=/nohz_full=), E <= N gives each engine its own slice of
 * N/E CPUs, in the order the devices were made; E > N leaves every engine
 * to the scheduler. One engine on a host thus runs anywhere, two on two
 * CPUs run apart, as a NIC driver spreads its queues' interrupts over the
 * CPUs.
 *
 * Why: two devices that exchange data form a pipeline, one engine
 * transmitting while the other receives and copies. Left to the
 * scheduler, a wakeup tends to put the woken engine on the CPU of the
 * softirq that woke it, which is the other engine's (wake-affine), and the
 * two then run one after the other. Measured in the test VM (2 vCPUs,
 * fi_pingpong -e msg 1 MiB, 100 round trips, six rounds alternated in one
 * boot; Documentation/libfabric.rst): 473-718 MB/s placed by the
 * scheduler, 393-487 with both engines on one CPU, 612-917 apart. Pinning
 * more engines than CPUs would force pairs onto one CPU for good (the
 * 4-node demo's pairs sharing a vCPU then ran at half speed), hence the
 * scheduler when they do not fit.
 *
 * A slice is a CPU affinity, not a binding (no PF_NO_SETAFFINITY):
 * `taskset -p` moves an engine until the next device comes or goes.
 * Module parameter engine_spread=N leaves the engines of new devices out
 * of the sharing.
 */
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>

#include "engine.h"

static bool engine_spread = true;
module_param(engine_spread, bool, 0644);
MODULE_PARM_DESC(engine_spread,
		 "Share the CPUs out among the engine threads of new devices, a slice each while they fit (default Y; N: the scheduler places them)");

/* The engines sharing the CPUs, in the order they came (the lock). */
static LIST_HEAD(xnic_engines);
static unsigned int xnic_nr_engines;
static DEFINE_MUTEX(xnic_engine_cpu_lock);

/*
 * Give each engine on the list its slice of @all (weight @n), or all of
 * it when they do not fit. An affinity that cannot be set (its CPUs went
 * offline meanwhile) is left as it was. Context: the lock held.
 */
static void xnic_engine_cpus_share(const struct cpumask *all,
				   unsigned int n, struct cpumask *slice)
{
	struct xnic_engine_cpus *ec;
	unsigned int k = 0, i, cpu;

	list_for_each_entry(ec, &xnic_engines, node) {
		cpumask_copy(slice, all);
		if (xnic_nr_engines <= n) {
			i = 0;
			for_each_cpu(cpu, all) {
				if (i < k * n / xnic_nr_engines ||
				    i >= (k + 1) * n / xnic_nr_engines)
					cpumask_clear_cpu(cpu, slice);
				i++;
			}
		}
		set_cpus_allowed_ptr(ec->task, slice);
		k++;
	}
}

/* Share the CPUs out again after the list changed. Context: the lock. */
static void xnic_engine_cpus_reshare(void)
{
	cpumask_var_t all, slice;

	if (!alloc_cpumask_var(&all, GFP_KERNEL))
		return;
	if (alloc_cpumask_var(&slice, GFP_KERNEL)) {
		cpumask_and(all, cpu_online_mask,
			    housekeeping_cpumask(HK_TYPE_KTHREAD));
		xnic_engine_cpus_share(all, cpumask_weight(all), slice);
		free_cpumask_var(slice);
	}
	free_cpumask_var(all);
}

/**
 * xnic_engine_cpus_add() - a new engine thread joins the CPU sharing
 * @ec: its place, in the engine (zeroed)
 * @task: the engine thread, created, not necessarily woken
 *
 * Every engine's slice is worked out again (module comment). Nothing
 * happens with engine_spread off: the thread keeps kthread_create()'s
 * affinity.
 *
 * Context: process context, may sleep.
 */
void xnic_engine_cpus_add(struct xnic_engine_cpus *ec,
			  struct task_struct *task)
{
	if (!READ_ONCE(engine_spread))
		return;
	mutex_lock(&xnic_engine_cpu_lock);
	ec->task = task;
	list_add_tail(&ec->node, &xnic_engines);
	ec->placed = true;
	xnic_nr_engines++;
	xnic_engine_cpus_reshare();
	mutex_unlock(&xnic_engine_cpu_lock);
}

/**
 * xnic_engine_cpus_del() - an engine thread leaves the CPU sharing
 * @ec: its place, as xnic_engine_cpus_add() left it
 *
 * The others share its CPUs. Call before the thread is stopped: the task
 * must still exist.
 *
 * Context: process context, may sleep.
 */
void xnic_engine_cpus_del(struct xnic_engine_cpus *ec)
{
	if (!ec->placed)
		return;
	mutex_lock(&xnic_engine_cpu_lock);
	list_del(&ec->node);
	ec->placed = false;
	xnic_nr_engines--;
	xnic_engine_cpus_reshare();
	mutex_unlock(&xnic_engine_cpu_lock);
}
