/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xt_flow - the traffic machinery of the flow control selftests
 * (xnic_credit_test, xnic_lcr_test): XT_MESH_NDEV xnic devices in a full
 * mesh of veth pairs (tools/xnic-mesh), and flows, each a QP pair whose
 * sender keeps a window of signaled WRITEs busy into slots at the target.
 *
 * The mesh: devices <prefix><tag>n<k> (k = 0 .. XT_MESH_NDEV - 1), one
 * context and one PD on each; cfg->nlink veth pairs between every two
 * devices, device i's end of pair l towards device j named m<tag>x<i>y<j>
 * for l = 0 and m<tag>x<i>y<j>l<l> after (xt_mesh_ifname()).
 *
 * A flow: qp[0] on its source device WRITEs @msg bytes at a time from slot
 * (seq % depth) of its source buffer into the same slot of its target
 * buffer, keeping @depth WRITEs outstanding. Each WRITE carries its
 * sequence number in the first 8 bytes of its slot (and in the last 8 of
 * a slot of 16 bytes or more), so that xt_flow_verify() finds a slot that
 * missed its last WRITE.
 *
 * Functions return 0 or a negative errno (setup and creation), or -1 when
 * a flow failed (the flow's @err says how); see xt_error() for setup.
 */
#ifndef XT_FLOW_H
#define XT_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "xnic_lib.h"

#define XT_MESH_NDEV	4
/* Flows a fixture holds. */
#define XT_FLOW_MAX	8

/**
 * struct xt_mesh_cfg - what a test's mesh looks like
 * @prefix: device name prefix ("xcr": devices xcr<tag>n0 ..)
 * @nlink: veth pairs between every two devices (mesh_up's K)
 * @psn: first PSN of a flow's sender; its responder starts at
 *	@psn + @psn_back
 * @psn_back: see @psn
 * @pre_up: called before the mesh comes up (module parameters, saved
 *	sysctls), may be NULL; nonzero fails the setup
 * @post_down: called after the mesh is gone, may be NULL; undoes @pre_up
 */
struct xt_mesh_cfg {
	const char *prefix;
	int nlink;
	uint32_t psn;
	uint32_t psn_back;
	int (*pre_up)(void);
	void (*post_down)(void);
};

/**
 * struct xt_mesh - the devices of a test
 * @cfg: how it was made
 * @tag: number in this mesh's netdev and device names
 * @dev: the devices
 */
struct xt_mesh {
	const struct xt_mesh_cfg *cfg;
	int tag;
	struct xt_dev dev[XT_MESH_NDEV];
};

/**
 * struct xt_flow - a QP on device @src writing into a buffer on @dst
 * @src: sending device
 * @dst: receiving device
 * @msg: bytes per WRITE
 * @depth: WRITEs kept outstanding; also the number of buffer slots
 * @cq: CQs of the two QPs
 * @qp: the QPs (qp[0] on @src)
 * @sbuf: source slots on @src
 * @dbuf: target slots on @dst
 * @posted: WRITEs posted
 * @done: WRITEs completed
 * @win_bytes: bytes completed inside the measurement window
 * @err: first error status seen
 * @wakeup: make the wakeup syscall after every post (inline sends)
 */
struct xt_flow {
	int src, dst;
	size_t msg;
	unsigned int depth;
	struct xnic_cq *cq[2];
	struct xnic_qp *qp[2];
	struct xt_buf sbuf, dbuf;
	uint64_t posted, done, win_bytes;
	int err;
	bool wakeup;
};

/* The mesh. xt_mesh_teardown() undoes whatever setup did. */
int xt_mesh_setup(struct xt_mesh *e, const struct xt_mesh_cfg *cfg);
void xt_mesh_teardown(struct xt_mesh *e);
uint64_t xt_mesh_cnt(struct xt_mesh *e, int dev, const char *name);
void xt_mesh_ifname(struct xt_mesh *e, int i, int j, int l, char *buf,
		    size_t len);
unsigned long long xt_mesh_netdev_stat(struct xt_mesh *e, const char *stat);

/* Flows. */
int xt_flow_create(struct xt_mesh *e, struct xt_flow *f, int src, int dst,
		   size_t msg, unsigned int depth, uint32_t tclass);
void xt_flow_destroy(struct xt_flow *f);
int xt_flow_pump(struct xt_flow *f, bool count, bool post);
int xt_flow_drain(struct xt_flow *f);
ssize_t xt_flow_verify(struct xt_flow *f);
int xt_flow_run(struct xt_flow *f, int n, int warm_ms, int ms);
unsigned int xt_flow_jain(const struct xt_flow *f, int n);

/*
 * The fixture of a flow test: FIXTURE(fx) with a mesh made as @cfg says
 * (self->env) and XT_FLOW_MAX flows (self->flow), all destroyed in
 * teardown. Use after including kselftest_harness.h.
 */
#define XT_FLOW_FIXTURE(fx, cfg) \
	FIXTURE(fx) \
	{ \
		struct xt_mesh env; \
		struct xt_flow flow[XT_FLOW_MAX]; \
	}; \
	FIXTURE_SETUP(fx) \
	{ \
		int _err = xt_mesh_setup(&self->env, cfg); \
		if (_err) \
			TH_LOG("setup: %d %s", _err, xt_error()); \
		ASSERT_EQ(0, _err); \
	} \
	FIXTURE_TEARDOWN(fx) \
	{ \
		int _k; \
		for (_k = 0; _k < XT_FLOW_MAX; _k++) \
			xt_flow_destroy(&self->flow[_k]); \
		xt_mesh_teardown(&self->env); \
	}

#endif /* XT_FLOW_H */
