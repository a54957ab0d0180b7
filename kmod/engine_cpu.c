// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic - where engine threads run. Each new device's engine thread gets
 * the CPU that has the fewest xnic engines among the online CPUs that take
 * kernel threads (not isolated: isolcpus=, nohz_full=), as a NIC driver
 * spreads its queues' interrupts over the CPUs (cpumask_local_spread()).
 *
 * Why: two devices that exchange data form a pipeline, one engine
 * transmitting while the other receives and copies. Left to the
 * scheduler, a wakeup tends to put the woken engine on the CPU of the
 * softirq that woke it, which is the other engine's (wake-affine), and the
 * two then run one after the other. Measured in the test VM (2 vCPUs,
 * fi_pingpong -e msg 1 MiB, 100 round trips, six rounds alternated in one
 * boot; Documentation/libfabric.rst): 473-718 MB/s placed by the
 * scheduler, 393-487 with both engines on one CPU, 612-917 spread.
 *
 * The placement is a CPU affinity, not a binding (no PF_NO_SETAFFINITY):
 * `taskset -p` moves an engine, and one whose CPU goes offline is moved
 * by the scheduler. Module parameter engine_spread=N leaves the engines
 * of new devices to the scheduler.
 */
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>

#include "engine.h"

static bool engine_spread = true;
module_param(engine_spread, bool, 0644);
MODULE_PARM_DESC(engine_spread,
		 "Place each new device's engine thread on the online CPU with the fewest xnic engines (default Y; N: the scheduler places it)");

/* Engines placed on each CPU (xnic_engine_cpu_lock). */
static DEFINE_PER_CPU(unsigned int, xnic_engines_on);
static DEFINE_MUTEX(xnic_engine_cpu_lock);

/**
 * xnic_engine_cpu_place() - give a new engine thread its CPU
 * @task: the engine thread, created and not yet woken
 *
 * The online CPU with the fewest engines placed, the lowest numbered of
 * those, among the CPUs kernel threads may use (HK_TYPE_KTHREAD: where
 * kthread_create() lets them run).
 *
 * Context: process context, may sleep.
 * Return: the CPU @task may run on from now, or -1 when it is left to
 * the scheduler (engine_spread off, or the affinity could not be set:
 * the CPU went offline meanwhile).
 */
int xnic_engine_cpu_place(struct task_struct *task)
{
	int cpu, best = -1;

	if (!READ_ONCE(engine_spread))
		return -1;
	mutex_lock(&xnic_engine_cpu_lock);
	for_each_cpu_and(cpu, cpu_online_mask,
			 housekeeping_cpumask(HK_TYPE_KTHREAD))
		if (best < 0 || per_cpu(xnic_engines_on, cpu) <
				per_cpu(xnic_engines_on, best))
			best = cpu;
	if (best >= 0 && !set_cpus_allowed_ptr(task, cpumask_of(best)))
		per_cpu(xnic_engines_on, best)++;
	else
		best = -1;
	mutex_unlock(&xnic_engine_cpu_lock);
	return best;
}

/**
 * xnic_engine_cpu_release() - an engine placed by xnic_engine_cpu_place()
 *	has stopped
 * @cpu: what xnic_engine_cpu_place() returned for it; -1 is ignored
 *
 * Context: process context, may sleep.
 */
void xnic_engine_cpu_release(int cpu)
{
	if (cpu < 0)
		return;
	mutex_lock(&xnic_engine_cpu_lock);
	per_cpu(xnic_engines_on, cpu)--;
	mutex_unlock(&xnic_engine_cpu_lock);
}
