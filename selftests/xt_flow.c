// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xt_flow - the mesh and the WRITE flows of the flow control selftests;
 * see xt_flow.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rdma_nl.h"
#include "xt_flow.h"
#include "kmod/credit_logic.h"

/**
 * xt_mesh_setup() - bring up the devices of a test
 * @e: the mesh, filled in
 * @cfg: its shape; must outlive @e
 *
 * Runs @cfg->pre_up, then tools/xnic-mesh's mesh_up and mesh_wait_peers
 * (every device has learned every other), then opens a context and a PD
 * on each device.
 *
 * Return: 0, -EIO when @cfg->pre_up or the mesh script failed, or the
 * errno of xnic_open()/xnic_alloc_pd(). Call xt_mesh_teardown() either way.
 */
int xt_mesh_setup(struct xt_mesh *e, const struct xt_mesh_cfg *cfg)
{
	int k, err;

	memset(e, 0, sizeof(*e));
	e->cfg = cfg;
	e->tag = 10 + getpid() % 80;
	if (cfg->pre_up && cfg->pre_up())
		return -EIO;
	if (xt_sh("bash -c '. ../tools/xnic-mesh && mesh_up %d %s%dn %d %d && mesh_wait_peers 30'",
		  XT_MESH_NDEV, cfg->prefix, e->tag, e->tag, cfg->nlink))
		return -EIO;
	for (k = 0; k < XT_MESH_NDEV; k++) {
		struct xt_dev *d = &e->dev[k];

		snprintf(d->name, sizeof(d->name), "%s%dn%d", cfg->prefix,
			 e->tag, k);
		err = xnic_open(d->name, &d->ctx);
		if (!err)
			err = xnic_alloc_pd(d->ctx, &d->pd);
		if (err)
			return err;
		d->node_id = xnic_ctx_info(d->ctx)->node_id;
		d->payload_mtu = xnic_ctx_info(d->ctx)->payload_mtu;
	}
	return 0;
}

/**
 * xt_mesh_teardown() - undo xt_mesh_setup(), however far it got
 * @e: the mesh
 *
 * Closes the contexts, deletes the devices and the veth pairs, then runs
 * @cfg->post_down. Flows must be destroyed first.
 */
void xt_mesh_teardown(struct xt_mesh *e)
{
	char name[32], del[768] = "";
	size_t n = 0;
	int i, j, l;

	if (!e->cfg)
		return;
	for (i = 0; i < XT_MESH_NDEV; i++)
		if (e->dev[i].ctx)
			xnic_close(e->dev[i].ctx);
	for (i = 0; i < XT_MESH_NDEV; i++) {
		snprintf(name, sizeof(name), "%s%dn%d", e->cfg->prefix, e->tag,
			 i);
		xnic_nl_link_del(name);
	}
	/* one ip for all: under TCG every program started costs ~0.2 s */
	for (i = 0; i < XT_MESH_NDEV; i++)
		for (j = i + 1; j < XT_MESH_NDEV; j++)
			for (l = 0; l < e->cfg->nlink; l++) {
				xt_mesh_ifname(e, i, j, l, name, sizeof(name));
				if (n < sizeof(del))
					n += snprintf(del + n, sizeof(del) - n,
						      "link del %s\n", name);
			}
	xt_sh("ip -force -batch - <<'EOF'\n%sEOF", del);
	if (e->cfg->post_down)
		e->cfg->post_down();
}

/**
 * xt_mesh_cnt() - a transport counter of a device
 * @e: the mesh
 * @dev: device index
 * @name: counter name in debugfs xnic/<dev>/counters
 *
 * Return: its value, or ~0 when it cannot be read.
 */
uint64_t xt_mesh_cnt(struct xt_mesh *e, int dev, const char *name)
{
	uint64_t v = ~0ULL;

	xt_counter(e->dev[dev].name, name, &v);
	return v;
}

/**
 * xt_mesh_ifname() - device @i's member netdev number @l towards device @j
 * @e: the mesh
 * @i: device index
 * @j: peer device index
 * @l: link number, below @e->cfg->nlink
 * @buf: the name, NUL-terminated
 * @len: bytes at @buf
 */
void xt_mesh_ifname(struct xt_mesh *e, int i, int j, int l, char *buf,
		    size_t len)
{
	if (l)
		snprintf(buf, len, "m%dx%dy%dl%d", e->tag, i, j, l);
	else
		snprintf(buf, len, "m%dx%dy%d", e->tag, i, j);
}

/**
 * xt_mesh_netdev_stat() - a statistic summed over every member netdev
 * @e: the mesh
 * @stat: file name in /sys/class/net/<if>/statistics
 *
 * Return: the sum; netdevs whose statistic cannot be read count as 0.
 */
unsigned long long xt_mesh_netdev_stat(struct xt_mesh *e, const char *stat)
{
	unsigned long long sum = 0, v;
	char ifn[32], path[128], buf[64];
	int i, j, l;

	for (i = 0; i < XT_MESH_NDEV; i++)
		for (j = 0; j < XT_MESH_NDEV; j++)
			for (l = 0; i != j && l < e->cfg->nlink; l++) {
				xt_mesh_ifname(e, i, j, l, ifn, sizeof(ifn));
				snprintf(path, sizeof(path),
					 "/sys/class/net/%s/statistics/%s",
					 ifn, stat);
				if (!xt_read_file(path, buf, sizeof(buf)) &&
				    sscanf(buf, "%llu", &v) == 1)
					sum += v;
			}
	return sum;
}

/* The 8-byte stamp at both ends of a slot: which WRITE filled it. */
static void xt_flow_stamp(struct xt_flow *f, uint64_t seq)
{
	uint8_t *p = f->sbuf.p + (seq % f->depth) * f->msg;

	memcpy(p, &seq, sizeof(seq));
	if (f->msg >= 16)
		memcpy(p + f->msg - 8, &seq, sizeof(seq));
}

/**
 * xt_flow_create() - a connected QP pair and its buffers
 * @e: the mesh
 * @f: the flow, filled in (destroy it with xt_flow_destroy() either way)
 * @src: sending device index
 * @dst: receiving device index
 * @msg: bytes per WRITE, at least 8
 * @depth: WRITEs outstanding and buffer slots
 * @tclass: traffic class of both QPs, XNIC_TCLASS_*
 *
 * Return: 0 or the negative errno of the verb that failed.
 */
int xt_flow_create(struct xt_mesh *e, struct xt_flow *f, int src, int dst,
		   size_t msg, unsigned int depth, uint32_t tclass)
{
	struct xnic_qp_attr attr = {
		.comp_mask = XNIC_QP_ATTR_TCLASS | XNIC_QP_ATTR_RNR_RETRY,
		.tclass = tclass,
		.rnr_retry = XNIC_QP_RNR_INFINITE,
	};
	struct xnic_qp_cap cap = { 0 };
	int side[2] = { src, dst }, k, err;
	uint32_t psn = e->cfg->psn, back = psn + e->cfg->psn_back;
	unsigned int s;

	memset(f, 0, sizeof(*f));
	f->src = src;
	f->dst = dst;
	f->msg = msg;
	f->depth = depth;
	for (k = 0; k < 2; k++) {
		struct xt_dev *d = &e->dev[side[k]];

		err = xnic_create_cq(d->ctx, depth * 2 + 16, &f->cq[k]);
		if (err)
			return err;
		cap.max_send_wr = depth;
		cap.max_recv_wr = 1;
		cap.max_send_sge = 1;
		cap.max_recv_sge = 1;
		err = xnic_create_qp_ex(d->pd, f->cq[k], f->cq[k], &cap, &attr,
					&f->qp[k]);
		if (err)
			return err;
	}
	err = xnic_connect_qp(f->qp[0], e->dev[dst].node_id, f->qp[1]->qpn,
			      psn, back);
	if (!err)
		err = xnic_connect_qp(f->qp[1], e->dev[src].node_id,
				      f->qp[0]->qpn, back, psn);
	if (err)
		return err;
	err = xt_buf_alloc(&e->dev[src], &f->sbuf, msg * depth,
			   XT_ACCESS_ALL);
	if (!err)
		err = xt_buf_alloc(&e->dev[dst], &f->dbuf, msg * depth,
				   XT_ACCESS_ALL);
	if (err)
		return err;
	for (s = 0; s < depth; s++)
		xt_fill(f->sbuf.p + s * msg, msg,
			(uint64_t)f->qp[0]->qpn << 16 | s);
	return 0;
}

/**
 * xt_flow_destroy() - free what xt_flow_create() made, however far it got
 * @f: the flow; zeroed (destroying it again does nothing)
 */
void xt_flow_destroy(struct xt_flow *f)
{
	struct xt_conn c = {
		.cq = { f->cq[0], f->cq[1] },
		.qp = { f->qp[0], f->qp[1] },
	};

	xt_conn_destroy(&c);
	xt_buf_free(&f->sbuf);
	xt_buf_free(&f->dbuf);
	memset(f, 0, sizeof(*f));
}

/**
 * xt_flow_pump() - reap completions and keep the window full
 * @f: the flow
 * @count: add the bytes of the WRITEs reaped now to @f->win_bytes
 * @post: post WRITEs until @f->depth are outstanding or the SQ is full
 *
 * With @f->wakeup each post is followed by the wakeup syscall.
 *
 * Return: 0, or -1 with @f->err set on an error completion or a failed
 * verb.
 */
int xt_flow_pump(struct xt_flow *f, bool count, bool post)
{
	struct xnic_cqe cqe[32];
	int n, k, err;

	n = xnic_poll_cq(f->cq[0], cqe, 32);
	if (n < 0) {
		f->err = n;
		return -1;
	}
	for (k = 0; k < n; k++) {
		if (cqe[k].status) {
			f->err = cqe[k].status;
			return -1;
		}
		f->done++;
		if (count)
			f->win_bytes += f->msg;
	}
	while (post && f->posted - f->done < f->depth) {
		uint64_t seq = f->posted;
		size_t off = (seq % f->depth) * f->msg;
		struct xnic_sge sge = {
			.addr = (uintptr_t)(f->sbuf.p + off),
			.length = (uint32_t)f->msg,
			.lkey = f->sbuf.mr->lkey,
		};

		xt_flow_stamp(f, seq);
		err = xnic_post_write(f->qp[0], &sge, 1,
				      (uintptr_t)(f->dbuf.p + off),
				      f->dbuf.mr->rkey, seq, XNIC_WQE_F_SIGNALED);
		if (err == -EAGAIN)
			break;
		if (!err && f->wakeup)
			err = xnic_qp_wakeup(f->qp[0]);
		if (err) {
			f->err = err;
			return -1;
		}
		f->posted++;
	}
	return 0;
}

/**
 * xt_flow_drain() - wait for every WRITE posted to complete
 * @f: the flow
 *
 * Return: 0, or -1 on an error or when they are not done in XT_WAIT_MS.
 */
int xt_flow_drain(struct xt_flow *f)
{
	long long end = xt_now_ms() + XT_WAIT_MS;

	while (f->done != f->posted) {
		if (xt_flow_pump(f, false, false) || xt_now_ms() > end)
			return -1;
	}
	return 0;
}

/**
 * xt_flow_verify() - every slot at the target holds what its last WRITE
 * carried
 * @f: the flow, drained
 *
 * Return: -1 when all match, else the offset of the first differing byte.
 */
ssize_t xt_flow_verify(struct xt_flow *f)
{
	unsigned int s;

	for (s = 0; s < f->depth && s < f->posted; s++) {
		ssize_t d = xt_diff(f->sbuf.p + s * f->msg,
				    f->dbuf.p + s * f->msg, f->msg);

		if (d >= 0)
			return (ssize_t)(s * f->msg) + d;
	}
	return -1;
}

/**
 * xt_flow_run() - keep flows busy for a while, then drain them
 * @f: the flows
 * @n: how many
 * @warm_ms: bytes completed after this many ms count in each @win_bytes
 * @ms: how long to post, ms (the flows are pumped at least once)
 *
 * Return: 0, or -1 when a flow failed or did not drain.
 */
int xt_flow_run(struct xt_flow *f, int n, int warm_ms, int ms)
{
	long long start = xt_now_ms(), now;
	int k;

	do {
		now = xt_now_ms();
		for (k = 0; k < n; k++)
			if (xt_flow_pump(&f[k], now - start >= warm_ms, true))
				return -1;
	} while (now - start < ms);
	for (k = 0; k < n; k++)
		if (xt_flow_drain(&f[k]))
			return -1;
	return 0;
}

/**
 * xt_flow_jain() - Jain's index of the flows' @win_bytes
 * @f: the flows
 * @n: how many, at most XT_FLOW_MAX
 *
 * Return: the index times 1000 (xnic_credit_jain()).
 */
unsigned int xt_flow_jain(const struct xt_flow *f, int n)
{
	double x[XT_FLOW_MAX];
	int k;

	for (k = 0; k < n && k < XT_FLOW_MAX; k++)
		x[k] = (double)f[k].win_bytes;
	return xnic_credit_jain(x, k);
}
