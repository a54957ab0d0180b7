// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_memcg_test - CQ and QP memory is charged to the creator's memory
 * cgroup (issue #20). A process in a cgroup v2 with memory.max = 8 MiB
 * creates the largest CQs (or QPs) until libxnic returns -ENOMEM; the
 * cgroup's memory.current must hold at least the rings, memory.events must
 * count the limit ("max") and no OOM kill, and once the objects are
 * destroyed the rings' charge is gone. The same objects, more of
 * them, are created outside the cgroup without error. On a module that
 * does not charge its rings the process creates 128 MiB of CQs in its
 * 8 MiB cgroup and the test fails.
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"

#define XT_TAG		"mc"
#include "xt_harness.h"

#define MC_ROOT		"/sys/fs/cgroup"
#define MC_LIMIT	(8 * MiB)
/* The most objects tried: far more memory than MC_LIMIT. */
#define MC_MAX_OBJS	64
#define MC_QP_WR	4096	/* XNIC_MAX_QP_WR */

enum mc_kind { MC_CQ, MC_QP };

/**
 * struct mc_result - what the process in the cgroup saw
 * @err: 0, or -errno of a setup step (@what says which)
 * @what: the failed setup step
 * @n: objects created before the first failure
 * @fail: -errno of the first failed create (0: none within MC_MAX_OBJS)
 * @before: memory.current before the first create, bytes
 * @full: memory.current with @n objects, bytes
 * @after: memory.current once they are destroyed, bytes
 */
struct mc_result {
	int err;
	char what[64];
	int n;
	int fail;
	long long before, full, after;
};

/* @file of cgroup @cg: its number, or with @key the "KEY N" line's N. */
static long long mc_read_ll(const char *cg, const char *file, const char *key)
{
	char path[256], line[256];
	size_t klen = key ? strlen(key) : 0;
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = atoll(line);
			break;
		}
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			v = atoll(line + klen + 1);
			break;
		}
	}
	fclose(f);
	return v;
}

/* A fresh memory-limited cgroup v2 under MC_ROOT; its path goes to @cg. */
static int mc_cgroup_make(char *cg, size_t len)
{
	char path[256], limit[32];

	if (access(MC_ROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", MC_ROOT, "cgroup2", 0, NULL))
		return -errno;
	if (xt_write_file(MC_ROOT "/cgroup.subtree_control", "+memory"))
		return -EIO;
	snprintf(cg, len, MC_ROOT "/xnic-memcg-%d", getpid());
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/memory.max", cg);
	snprintf(limit, sizeof(limit), "%lu", MC_LIMIT);
	return xt_write_file(path, limit) ? -EIO : 0;
}

/* Create one object of @kind: the largest the device allows. */
static int mc_create(enum mc_kind kind, struct xnic_ctx *ctx,
		     struct xnic_pd *pd, struct xnic_cq *cq, void **obj)
{
	struct xnic_qp_cap cap = {
		.max_send_wr = MC_QP_WR, .max_recv_wr = MC_QP_WR,
		.max_send_sge = 1, .max_recv_sge = 1,
	};

	if (kind == MC_CQ)
		return xnic_create_cq(ctx, XNIC_MAX_CQE, (struct xnic_cq **)obj);
	return xnic_create_qp(pd, cq, cq, &cap, (struct xnic_qp **)obj);
}

static int mc_destroy(enum mc_kind kind, void *obj)
{
	return kind == MC_CQ ? xnic_destroy_cq(obj) : xnic_destroy_qp(obj);
}

/*
 * In the cgroup @cg: open @dev, create objects of @kind until one fails
 * (at most MC_MAX_OBJS), destroy them; fill @r. Runs in a child process.
 */
static void mc_fill(const char *cg, const char *dev, enum mc_kind kind,
		    struct mc_result *r)
{
	char procs[256];
	struct xnic_ctx *ctx;
	struct xnic_pd *pd = NULL;
	struct xnic_cq *cq = NULL;
	void *objs[MC_MAX_OBJS];
	int i;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	if (xt_write_file(procs, "0")) {
		r->err = -EIO;
		snprintf(r->what, sizeof(r->what), "join %s", cg);
		return;
	}
	r->err = xnic_open(dev, &ctx);
	if (r->err) {
		snprintf(r->what, sizeof(r->what), "xnic_open");
		return;
	}
	if (kind == MC_QP) {
		r->err = xnic_alloc_pd(ctx, &pd);
		if (!r->err)
			r->err = xnic_create_cq(ctx, 64, &cq);
		if (r->err) {
			snprintf(r->what, sizeof(r->what), "PD and CQ");
			return;
		}
	}
	r->before = mc_read_ll(cg, "memory.current", NULL);
	for (i = 0; i < MC_MAX_OBJS; i++) {
		r->fail = mc_create(kind, ctx, pd, cq, &objs[i]);
		if (r->fail)
			break;
	}
	r->n = i;
	r->full = mc_read_ll(cg, "memory.current", NULL);
	while (i--)
		mc_destroy(kind, objs[i]);
	r->after = mc_read_ll(cg, "memory.current", NULL);
}

/* Run mc_fill() in a child; 0 once @r holds its result. */
static int mc_run_in_cgroup(const char *cg, const char *dev, enum mc_kind kind,
			    struct mc_result *r)
{
	int fd[2], status;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe(fd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		close(fd[0]);
		mc_fill(cg, dev, kind, r);
		_exit(write(fd[1], r, sizeof(*r)) == sizeof(*r) ? 0 : 1);
	}
	close(fd[1]);
	if (read(fd[0], r, sizeof(*r)) != sizeof(*r))
		r->err = -EPIPE;
	close(fd[0]);
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(r->what, sizeof(r->what), "the child died (status %#x)",
			 status);
		return -ECHILD;
	}
	return 0;
}

/* Bytes of memory one object of @kind needs at least: its rings. */
static long long mc_ring_bytes(enum mc_kind kind)
{
	if (kind == MC_CQ)
		return (long long)XNIC_MAX_CQE * sizeof(struct xnic_cqe);
	return (long long)MC_QP_WR * (sizeof(struct xnic_sq_wqe) +
				      sizeof(struct xnic_rq_wqe));
}

FIXTURE(mc) {
	struct xt_env env;
	char cg[128];
};

FIXTURE_SETUP(mc)
{
	int err;

	ENV_UP(&self->env);
	err = mc_cgroup_make(self->cg, sizeof(self->cg));
	ASSERT_EQ(0, err) TH_LOG("cgroup v2 with memory.max: %s",
				 strerror(-err));
}

FIXTURE_TEARDOWN(mc)
{
	rmdir(self->cg);
	xt_env_teardown(&self->env);
}

static void mc_check(struct __test_metadata *_metadata, struct xt_env *env,
		     const char *cg, enum mc_kind kind)
{
	const char *name = kind == MC_CQ ? "CQ" : "QP";
	long long ring = mc_ring_bytes(kind);
	struct xnic_cq *cq = NULL;
	void *objs[MC_MAX_OBJS];
	struct mc_result r;
	int i, n, err;

	err = mc_run_in_cgroup(cg, env->dev[0].name, kind, &r);
	ASSERT_EQ(0, err) TH_LOG("%s", r.what);
	ASSERT_EQ(0, r.err) TH_LOG("%s: %s", r.what, xnic_strerror(r.err));
	TH_LOG("%ss of %lld KiB in a %lu MiB cgroup: %d created, then %s; memory.current %lld -> %lld -> %lld KiB",
	       name, ring >> 10, MC_LIMIT >> 20, r.n,
	       r.fail ? xnic_strerror(r.fail) : "no error",
	       r.before >> 10, r.full >> 10, r.after >> 10);
	ASSERT_NE(0, r.fail) TH_LOG("%d %ss (%lld MiB of rings) fit in a %lu MiB cgroup: not charged",
				    r.n, name, r.n * ring >> 20, MC_LIMIT >> 20);
	ASSERT_EQ(-ENOMEM, r.fail);
	ASSERT_GE(r.n, 1) TH_LOG("not even one %s fits in %lu MiB",
				 name, MC_LIMIT >> 20);
	/*
	 * The rings were charged while they existed, and uncharged after.
	 * (Reclaim near the limit may take page cache from "before".)
	 */
	ASSERT_GE(r.full, r.n * ring);
	ASSERT_GE(r.full - r.after, r.n * ring);
	ASSERT_GE(mc_read_ll(cg, "memory.events", "max"), 1);
	ASSERT_EQ(0, mc_read_ll(cg, "memory.events", "oom_kill"));

	/* Outside the cgroup, more of the same fit. */
	n = r.n + 2;
	if (kind == MC_QP) {
		err = xnic_create_cq(env->dev[0].ctx, 64, &cq);
		ASSERT_EQ(0, err);
	}
	for (i = 0; i < n; i++) {
		err = mc_create(kind, env->dev[0].ctx, env->dev[0].pd, cq,
				&objs[i]);
		if (err)
			break;
	}
	n = i;
	while (i--)
		EXPECT_EQ(0, mc_destroy(kind, objs[i]));
	if (cq)
		EXPECT_EQ(0, xnic_destroy_cq(cq));
	ASSERT_EQ(0, err) TH_LOG("%s %d outside the cgroup: %s", name, n + 1,
				 xnic_strerror(err));
}

TEST_F(mc, cq_rings_charged)
{
	mc_check(_metadata, &self->env, self->cg, MC_CQ);
}

TEST_F(mc, qp_rings_charged)
{
	mc_check(_metadata, &self->env, self->cg, MC_QP);
}

int main(int argc, char **argv)
{
	return xt_harness_main(argc, argv);
}
