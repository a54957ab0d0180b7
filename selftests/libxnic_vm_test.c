// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnic_vm_test - libxnic against the real kernel module: the control
 * path (every uverbs command the library sends, the errors it returns,
 * closing with objects alive) and the datapath between two xnic devices
 * on a veth pair (RDMA WRITE, READ, SEND with and without immediate data,
 * batches with one doorbell, blocking waits, error completions, flushes)
 * and the registration cache (MRs reused, never after their range changed).
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded. Each
 * test gets a veth pair and two xnic devices of its own; the teardown
 * removes them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "rdma_nl.h"
#include "xnic.h"
#include "xnic_lib.h"

#define BUF_SIZE	(256 * 1024)
#define WAIT_MS		5000
/* MACs end in 00:0a and 00:0b: node ids 10 and 11. */
#define NODE_A		10
#define NODE_B		11

/* One side: a context with a PD, a registered buffer, a CQ and a QP. */
struct side {
	char netdev[16];
	char dev[32];
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_mr *mr;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	uint8_t *buf;
};

static int side_open(struct side *s)
{
	struct xnic_device_info info;
	long long end = xt_now_ms() + WAIT_MS;
	int err;

	/* The uverbs node appears asynchronously. */
	while ((err = xnic_device_lookup(s->dev, &info)) && xt_now_ms() < end)
		usleep(20000);
	if (err)
		return err;
	err = xnic_open(s->dev, &s->ctx);
	if (err)
		return err;
	err = xnic_alloc_pd(s->ctx, &s->pd);
	if (err)
		return err;
	s->buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->buf == MAP_FAILED)
		return -errno;
	memset(s->buf, 0, BUF_SIZE);
	err = xnic_reg_mr(s->pd, s->buf, BUF_SIZE,
			  XNIC_ACCESS_LOCAL_WRITE | XNIC_ACCESS_REMOTE_WRITE |
			  XNIC_ACCESS_REMOTE_READ, &s->mr);
	if (err)
		return err;
	err = xnic_create_cq(s->ctx, 256, &s->cq);
	if (err)
		return err;
	return xnic_create_qp(s->pd, s->cq, s->cq, NULL, &s->qp);
}

FIXTURE(pair) {
	struct side a, b;
};

FIXTURE_SETUP(pair)
{
	int pid = getpid() % 10000;

	memset(&self->a, 0, sizeof(self->a));
	memset(&self->b, 0, sizeof(self->b));
	snprintf(self->a.netdev, sizeof(self->a.netdev), "lxa%d", pid);
	snprintf(self->b.netdev, sizeof(self->b.netdev), "lxb%d", pid);
	snprintf(self->a.dev, sizeof(self->a.dev), "lxnic%da", pid);
	snprintf(self->b.dev, sizeof(self->b.dev), "lxnic%db", pid);
	ASSERT_EQ(0, xt_sh("ip link add %s address 02:00:00:00:00:%02x mtu 9000 type veth peer name %s address 02:00:00:00:00:%02x mtu 9000",
			self->a.netdev, NODE_A, self->b.netdev, NODE_B));
	ASSERT_EQ(0, xt_sh("ip link set %s up && ip link set %s up",
			self->a.netdev, self->b.netdev));
	ASSERT_EQ(0, xnic_nl_link_add(self->a.dev, "xnic", self->a.netdev));
	ASSERT_EQ(0, xnic_nl_link_add(self->b.dev, "xnic", self->b.netdev));
	ASSERT_EQ(0, side_open(&self->a));
	ASSERT_EQ(0, side_open(&self->b));
}

FIXTURE_TEARDOWN(pair)
{
	xnic_close(self->a.ctx);
	xnic_close(self->b.ctx);
	xnic_nl_link_del(self->a.dev);
	xnic_nl_link_del(self->b.dev);
	xt_sh("ip link del %s", self->a.netdev);
	if (self->a.buf && self->a.buf != MAP_FAILED)
		munmap(self->a.buf, BUF_SIZE);
	if (self->b.buf && self->b.buf != MAP_FAILED)
		munmap(self->b.buf, BUF_SIZE);
}

static int connect_pair(struct side *a, struct side *b)
{
	const struct xnic_ctx_attr *ia = xnic_ctx_info(a->ctx);
	const struct xnic_ctx_attr *ib = xnic_ctx_info(b->ctx);
	int err;

	err = xnic_connect_qp(a->qp, ib->node_id, b->qp->qpn, 100, 200);
	if (err)
		return err;
	return xnic_connect_qp(b->qp, ia->node_id, a->qp->qpn, 200, 100);
}

/* Reap exactly one CQE, waiting up to WAIT_MS; 0, -ETIMEDOUT or -EIO. */
static int reap_one(struct xnic_cq *cq, struct xnic_cqe *c)
{
	long long end = xt_now_ms() + WAIT_MS;
	int n, err;

	for (;;) {
		n = xnic_poll_cq(cq, c, 1);
		if (n)
			return n < 0 ? n : 0;
		if (xt_now_ms() >= end)
			return -ETIMEDOUT;
		err = xnic_cq_wait(cq, 100);
		if (err && err != -ETIMEDOUT)
			return err;
	}
}

static struct xnic_sge sge_of(struct side *s, size_t off, uint32_t len)
{
	struct xnic_sge sge = {
		.addr = (uintptr_t)(s->buf + off),
		.length = len,
		.lkey = s->mr->lkey,
	};

	return sge;
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* ------------------------------------------------------ control path -- */

TEST(open_errors)
{
	struct xnic_ctx *ctx = NULL;

	EXPECT_EQ(-ENODEV, xnic_open("no_such_dev", &ctx));
	EXPECT_EQ(-EINVAL, xnic_open("", &ctx));
	EXPECT_EQ(-EINVAL, xnic_open("a/b", &ctx));
	EXPECT_EQ(NULL, ctx);
}

TEST_F(pair, context_info)
{
	const struct xnic_ctx_attr *a = xnic_ctx_info(self->a.ctx);
	const struct xnic_ctx_attr *b = xnic_ctx_info(self->b.ctx);
	struct xnic_port_attr port;
	struct xnic_async_event ev;

	EXPECT_EQ(NODE_A, a->node_id);
	EXPECT_EQ(NODE_B, b->node_id);
	EXPECT_LT(8000, a->payload_mtu);
	EXPECT_GE(9000, a->payload_mtu);
	EXPECT_EQ(XNIC_MAX_SGE, a->max_sge);
	EXPECT_EQ(XNIC_MAX_RECV_SGE, a->max_recv_sge);
	EXPECT_EQ(XNIC_MAX_INLINE, a->max_inline);
	EXPECT_EQ(4096, a->active_mtu);
	ASSERT_EQ(0, xnic_query_port(self->a.ctx, &port));
	EXPECT_EQ(XNIC_PORT_ACTIVE, port.state);
	EXPECT_EQ(4096, port.active_mtu);
	EXPECT_LT(0, xnic_async_fd(self->a.ctx));
	EXPECT_EQ(-EAGAIN, xnic_get_async_event(self->a.ctx, &ev));
}

TEST_F(pair, objects_in_use_refuse_to_go)
{
	struct side *s = &self->a;

	EXPECT_EQ(-EBUSY, xnic_dealloc_pd(s->pd));
	EXPECT_EQ(-EBUSY, xnic_destroy_cq(s->cq));
	ASSERT_EQ(0, xnic_destroy_qp(s->qp));
	s->qp = NULL;
	EXPECT_EQ(-EBUSY, xnic_dealloc_pd(s->pd));
	ASSERT_EQ(0, xnic_destroy_cq(s->cq));
	s->cq = NULL;
	ASSERT_EQ(0, xnic_dereg_mr(s->mr));
	s->mr = NULL;
	ASSERT_EQ(0, xnic_dealloc_pd(s->pd));
	s->pd = NULL;
}

TEST_F(pair, reg_mr_errors)
{
	struct side *s = &self->a;
	struct xnic_mr *mr = NULL;
	void *hole;

	EXPECT_EQ(-EINVAL, xnic_reg_mr(s->pd, s->buf, 0,
				       XNIC_ACCESS_LOCAL_WRITE, &mr));
	EXPECT_EQ(-EINVAL, xnic_reg_mr(s->pd, s->buf, 4096,
				       XNIC_ACCESS_REMOTE_WRITE, &mr));
	EXPECT_EQ(-EINVAL, xnic_reg_mr(s->pd, s->buf, 4096, 1U << 12, &mr));
	hole = mmap(NULL, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, 65536);
	EXPECT_GT(0, xnic_reg_mr(s->pd, hole, 65536, XNIC_ACCESS_LOCAL_WRITE,
				 &mr));
	EXPECT_EQ(NULL, mr);
	/* Unaligned start and length are fine; keys differ per MR. */
	ASSERT_EQ(0, xnic_reg_mr(s->pd, s->buf + 100, 5000,
				 XNIC_ACCESS_LOCAL_WRITE, &mr));
	EXPECT_NE(s->mr->lkey, mr->lkey);
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_EQ(0, xnic_dereg_mr(mr));
}

TEST_F(pair, qp_caps)
{
	struct side *s = &self->a;
	struct xnic_qp_cap cap = { .max_send_wr = 100, .max_recv_wr = 3 };
	struct xnic_qp *qp;

	ASSERT_EQ(0, xnic_create_qp(s->pd, s->cq, s->cq, &cap, &qp));
	EXPECT_EQ(128, cap.max_send_wr);
	EXPECT_EQ(4, cap.max_recv_wr);
	EXPECT_EQ(128, qp->sq.entries);
	EXPECT_EQ(4, qp->rq.entries);
	EXPECT_NE(s->qp->qpn, qp->qpn);
	EXPECT_EQ(0, xnic_destroy_qp(qp));

	cap = (struct xnic_qp_cap){ .max_send_wr = XNIC_MAX_QP_WR + 1 };
	EXPECT_EQ(-EINVAL, xnic_create_qp(s->pd, s->cq, s->cq, &cap, &qp));
	cap = (struct xnic_qp_cap){ .max_inline_data = XNIC_MAX_INLINE + 1 };
	EXPECT_EQ(-EINVAL, xnic_create_qp(s->pd, s->cq, s->cq, &cap, &qp));
	EXPECT_EQ(-EINVAL, xnic_create_cq(s->ctx, 0, &s->cq));
}

/*
 * Issue 22 case 7: one max_cqe everywhere (the device's, XNIC_MAX_CQE and
 * what create accepts), sizes rounded up to >= the request (an exact power
 * of two is kept), and zero in a struct xnic_qp_cap field means the
 * default, as NULL does.
 */
TEST_F(pair, limits_agree)
{
	static const unsigned int want[][2] = {
		{ 1, 1 }, { 2, 2 }, { 64, 64 }, { 65, 128 },
		{ XNIC_MAX_CQE, XNIC_MAX_CQE },
	};
	const struct xnic_ctx_attr *a = xnic_ctx_info(self->a.ctx);
	struct side *s = &self->a;
	struct xnic_qp_cap cap, def;
	struct xnic_cq *cq = NULL;
	struct xnic_qp *qp;
	size_t k;

	EXPECT_EQ(XNIC_MAX_CQE, a->max_cqe);
	EXPECT_EQ(XNIC_MAX_QP_WR, a->max_qp_wr);
	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		ASSERT_EQ(0, xnic_create_cq(s->ctx, want[k][0], &cq))
			TH_LOG("CQ of %u", want[k][0]);
		EXPECT_EQ(want[k][1], cq->entries) TH_LOG("CQ of %u", want[k][0]);
		EXPECT_EQ(0, xnic_destroy_cq(cq));
	}
	EXPECT_EQ(-EINVAL, xnic_create_cq(s->ctx, XNIC_MAX_CQE + 1, &cq));

	/* Queue sizes: an exact power of two is what you get. */
	cap = (struct xnic_qp_cap){ .max_send_wr = 64, .max_recv_wr = 64 };
	ASSERT_EQ(0, xnic_create_qp(s->pd, s->cq, s->cq, &cap, &qp));
	EXPECT_EQ(64, cap.max_send_wr);
	EXPECT_EQ(64, cap.max_recv_wr);
	EXPECT_EQ(64, qp->rq.entries);
	EXPECT_EQ(0, xnic_destroy_qp(qp));
	cap = (struct xnic_qp_cap){ .max_send_wr = XNIC_MAX_QP_WR,
				    .max_recv_wr = XNIC_MAX_QP_WR };
	ASSERT_EQ(0, xnic_create_qp(s->pd, s->cq, s->cq, &cap, &qp));
	EXPECT_EQ(XNIC_MAX_QP_WR, qp->sq.entries);
	EXPECT_EQ(0, xnic_destroy_qp(qp));

	/* A zero-filled cap gets what NULL gets. */
	memset(&cap, 0, sizeof(cap));
	ASSERT_EQ(0, xnic_create_qp(s->pd, s->cq, s->cq, &cap, &qp));
	EXPECT_EQ(128, cap.max_send_wr);
	EXPECT_EQ(128, cap.max_recv_wr);
	EXPECT_EQ(128, qp->rq.entries);
	EXPECT_EQ(a->max_recv_sge, cap.max_recv_sge);
	EXPECT_EQ(a->max_recv_sge, qp->rq.max_sge);
	EXPECT_EQ(a->max_inline, cap.max_inline_data);
	def = cap;
	EXPECT_EQ(0, xnic_destroy_qp(qp));
	ASSERT_EQ(0, xnic_create_qp(s->pd, s->cq, s->cq, NULL, &qp));
	EXPECT_EQ(def.max_recv_wr, qp->rq.entries);
	EXPECT_EQ(def.max_send_wr, qp->sq.entries);
	EXPECT_EQ(def.max_recv_sge, qp->rq.max_sge);
	EXPECT_EQ(def.max_inline_data, qp->max_inline);
	EXPECT_EQ(0, xnic_destroy_qp(qp));
}

TEST_F(pair, connect_and_error)
{
	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	/* Already connected: RESET -> INIT again is refused here. */
	EXPECT_EQ(-EINVAL, xnic_connect_qp(self->a.qp, NODE_B,
					   self->b.qp->qpn, 1, 1));
	EXPECT_EQ(0, xnic_qp_wakeup(self->a.qp));
	EXPECT_EQ(0, xnic_modify_qp_err(self->a.qp));
}

TEST_F(pair, cq_wait_times_out)
{
	long long t0;

	EXPECT_EQ(-ETIMEDOUT, xnic_cq_wait(self->a.cq, 0));
	t0 = xt_now_ms();
	EXPECT_EQ(-ETIMEDOUT, xnic_cq_wait(self->a.cq, 50));
	EXPECT_LE(45, xt_now_ms() - t0);
	EXPECT_EQ(0, xnic_cq_read_events(self->a.cq));
}

TEST_F(pair, close_frees_everything)
{
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_mr *mr;
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	int i;

	/* A second context on the same device, left full at close. */
	ASSERT_EQ(0, xnic_open(self->a.dev, &ctx));
	ASSERT_EQ(0, xnic_alloc_pd(ctx, &pd));
	ASSERT_EQ(0, xnic_reg_mr(pd, self->a.buf, 4096,
				 XNIC_ACCESS_LOCAL_WRITE, &mr));
	ASSERT_EQ(0, xnic_create_cq(ctx, 16, &cq));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, xnic_create_qp(pd, cq, cq, NULL, &qp));
	ASSERT_EQ(0, xnic_connect_qp(qp, NODE_B, self->b.qp->qpn, 0, 0));
	xnic_close(ctx);
	/* The device can go: nothing of the closed context pins it. */
	xnic_close(self->a.ctx);
	self->a.ctx = NULL;
	EXPECT_EQ(0, xnic_nl_link_del(self->a.dev));
}

/* ---------------------------------------------------------- datapath -- */

TEST_F(pair, rdma_write_then_read)
{
	struct xnic_sge sge = sge_of(&self->a, 0, 65536);
	struct xnic_cqe c;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	fill(self->a.buf, 65536, 1);
	ASSERT_EQ(0, xnic_post_write(self->a.qp, &sge, 1,
				     (uintptr_t)self->b.buf + 4096,
				     self->b.mr->rkey, 77,
				     XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, reap_one(self->a.cq, &c));
	EXPECT_EQ(XNIC_WC_SUCCESS, c.status);
	EXPECT_EQ(XNIC_WC_RDMA_WRITE, c.opcode);
	EXPECT_EQ(77, c.wr_id);
	EXPECT_EQ(self->a.qp->qpn, c.qp_num);
	EXPECT_EQ(0, memcmp(self->a.buf, self->b.buf + 4096, 65536));
	/* The target saw no completion. */
	EXPECT_EQ(0, xnic_poll_cq(self->b.cq, &c, 1));

	/* Read it back into another part of A's buffer. */
	sge = sge_of(&self->a, 131072, 65536);
	ASSERT_EQ(0, xnic_post_read(self->a.qp, &sge, 1,
				    (uintptr_t)self->b.buf + 4096,
				    self->b.mr->rkey, 78, XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, reap_one(self->a.cq, &c));
	EXPECT_EQ(XNIC_WC_SUCCESS, c.status);
	EXPECT_EQ(XNIC_WC_RDMA_READ, c.opcode);
	EXPECT_EQ(78, c.wr_id);
	EXPECT_EQ(0, memcmp(self->a.buf, self->a.buf + 131072, 65536));
}

TEST_F(pair, send_recv_with_imm_and_inline)
{
	struct xnic_sge rs = sge_of(&self->b, 0, 4096);
	struct xnic_sge ss = sge_of(&self->a, 0, 3000);
	struct xnic_cqe c;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	ASSERT_EQ(0, xnic_post_recv(self->b.qp, &rs, 1, 500));
	rs = sge_of(&self->b, 8192, 4096);
	ASSERT_EQ(0, xnic_post_recv(self->b.qp, &rs, 1, 501));
	fill(self->a.buf, 3000, 5);

	ASSERT_EQ(0, xnic_post_send_imm(self->a.qp, &ss, 1, htonl(0xdeadbeef),
					10, XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, reap_one(self->b.cq, &c));
	EXPECT_EQ(XNIC_WC_SUCCESS, c.status);
	EXPECT_EQ(XNIC_WC_RECV, c.opcode);
	EXPECT_EQ(500, c.wr_id);
	EXPECT_EQ(3000, c.byte_len);
	EXPECT_TRUE(c.flags & XNIC_CQE_F_IMM);
	EXPECT_EQ(0xdeadbeef, ntohl(c.imm_data));
	EXPECT_EQ(self->a.qp->qpn, c.src_qp);
	EXPECT_EQ(NODE_A, c.src_node);
	EXPECT_EQ(0, memcmp(self->a.buf, self->b.buf, 3000));
	ASSERT_EQ(0, reap_one(self->a.cq, &c));
	EXPECT_EQ(XNIC_WC_SEND, c.opcode);
	EXPECT_EQ(10, c.wr_id);

	/* Inline: the source may change right after posting. */
	memcpy(self->a.buf + 200, "hello, xnic", 12);
	ss = sge_of(&self->a, 200, 12);
	ASSERT_EQ(0, xnic_post_send(self->a.qp, &ss, 1, 11,
				    XNIC_WQE_F_INLINE | XNIC_WQE_F_SIGNALED));
	memset(self->a.buf + 200, 0, 12);
	ASSERT_EQ(0, reap_one(self->b.cq, &c));
	EXPECT_EQ(501, c.wr_id);
	EXPECT_EQ(12, c.byte_len);
	EXPECT_FALSE(c.flags & XNIC_CQE_F_IMM);
	EXPECT_STREQ("hello, xnic", (char *)self->b.buf + 8192);
	ASSERT_EQ(0, reap_one(self->a.cq, &c));
	EXPECT_EQ(11, c.wr_id);
}

TEST_F(pair, write_with_imm_consumes_a_receive)
{
	struct xnic_sge rs = sge_of(&self->b, 0, 0);
	struct xnic_sge ss = sge_of(&self->a, 0, 1000);
	struct xnic_cqe c;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	ASSERT_EQ(0, xnic_post_recv(self->b.qp, &rs, 0, 900));
	fill(self->a.buf, 1000, 9);
	ASSERT_EQ(0, xnic_post_write_imm(self->a.qp, &ss, 1,
					 (uintptr_t)self->b.buf + 50000,
					 self->b.mr->rkey, htonl(42), 12, 0));
	ASSERT_EQ(0, reap_one(self->b.cq, &c));
	EXPECT_EQ(XNIC_WC_SUCCESS, c.status);
	EXPECT_EQ(XNIC_WC_RECV_RDMA_WITH_IMM, c.opcode);
	EXPECT_EQ(900, c.wr_id);
	EXPECT_EQ(42, ntohl(c.imm_data));
	EXPECT_EQ(0, memcmp(self->a.buf, self->b.buf + 50000, 1000));
	/* Unsignaled: no completion at the sender. */
	usleep(100000);
	EXPECT_EQ(0, xnic_poll_cq(self->a.cq, &c, 1));
}

TEST_F(pair, batch_with_one_doorbell)
{
	struct xnic_sge sge;
	struct xnic_cqe c[8];
	struct xnic_sq_wqe *w;
	int i, got = 0, n;
	long long end;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	fill(self->a.buf, BUF_SIZE, 3);
	for (i = 0; i < 64; i++) {
		w = xnic_sq_get_wqe(self->a.qp);
		ASSERT_NE(NULL, w);
		sge = sge_of(&self->a, (size_t)i * 4096, 4096);
		ASSERT_EQ(0, xnic_prep_write(w, &sge, 1,
					     (uintptr_t)self->b.buf + i * 4096,
					     self->b.mr->rkey, i,
					     i % 16 == 15 ?
					     XNIC_WQE_F_SIGNALED : 0));
	}
	ASSERT_EQ(64, xnic_sq_submit(self->a.qp));
	end = xt_now_ms() + WAIT_MS;
	while (got < 4 && xt_now_ms() < end) {
		n = xnic_poll_cq(self->a.cq, c, 8);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			EXPECT_EQ(XNIC_WC_SUCCESS, c[i].status);
			EXPECT_EQ((uint64_t)(got + i) * 16 + 15, c[i].wr_id);
		}
		got += n;
		if (!n)
			xnic_cq_wait(self->a.cq, 100);
	}
	EXPECT_EQ(4, got);
	EXPECT_EQ(0, memcmp(self->a.buf, self->b.buf, 64 * 4096));
}

/* Wait for an asynchronous error event naming @qp; 0 or -ETIMEDOUT. */
static int wait_qp_event(struct xnic_ctx *ctx, struct xnic_qp *qp)
{
	struct pollfd pfd = { .fd = xnic_async_fd(ctx), .events = POLLIN };
	long long end = xt_now_ms() + WAIT_MS;
	struct xnic_async_event ev;

	while (xt_now_ms() < end) {
		if (!xnic_get_async_event(ctx, &ev)) {
			if (ev.qp == qp && (ev.type == XNIC_EVENT_QP_FATAL ||
					    ev.type == XNIC_EVENT_QP_REQ_ERR ||
					    ev.type == XNIC_EVENT_QP_ACCESS_ERR))
				return 0;
			continue;
		}
		poll(&pfd, 1, 100);
	}
	return -ETIMEDOUT;
}

TEST_F(pair, bad_rkey_fails_then_flushes)
{
	struct xnic_sge sge = sge_of(&self->a, 0, 512);
	struct xnic_cqe c;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	ASSERT_EQ(0, xnic_post_write(self->a.qp, &sge, 1,
				     (uintptr_t)self->b.buf,
				     self->b.mr->rkey ^ 0x100, 1,
				     XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, reap_one(self->a.cq, &c));
	EXPECT_EQ(XNIC_WC_REM_ACCESS_ERR, c.status);
	EXPECT_EQ(1, c.wr_id);
	/* The QP is in error now: more work is flushed. */
	ASSERT_EQ(0, xnic_post_write(self->a.qp, &sge, 1,
				     (uintptr_t)self->b.buf,
				     self->b.mr->rkey, 2, XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, reap_one(self->a.cq, &c));
	EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, c.status);
	EXPECT_EQ(2, c.wr_id);
	/* The target's QP failed too, and said so on its async fd. */
	EXPECT_EQ(0, wait_qp_event(self->b.ctx, self->b.qp));
}

TEST_F(pair, modify_to_error_flushes_receives)
{
	struct xnic_sge rs = sge_of(&self->b, 0, 4096);
	struct xnic_cqe c;
	int i;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, xnic_post_recv(self->b.qp, &rs, 1, 700 + i));
	ASSERT_EQ(0, xnic_modify_qp_err(self->b.qp));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, reap_one(self->b.cq, &c));
		EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, c.status);
		EXPECT_EQ(700 + i, c.wr_id);
	}
}

static void *cq_waiter(void *arg)
{
	struct xnic_cq *cq = arg;

	return (void *)(intptr_t)xnic_cq_wait(cq, WAIT_MS);
}

TEST_F(pair, cq_wait_wakes_on_completion)
{
	struct xnic_sge rs = sge_of(&self->b, 0, 64);
	struct xnic_sge ss = sge_of(&self->a, 0, 64);
	struct xnic_cqe c;
	pthread_t th;
	void *ret;
	long long t0;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	ASSERT_EQ(0, xnic_post_recv(self->b.qp, &rs, 1, 1));
	/* The waiter owns B's CQ until it is joined. */
	ASSERT_EQ(0, pthread_create(&th, NULL, cq_waiter, self->b.cq));
	usleep(200000);
	t0 = xt_now_ms();
	ASSERT_EQ(0, xnic_post_send(self->a.qp, &ss, 1, 2, 0));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(0, (int)(intptr_t)ret);
	EXPECT_GT(WAIT_MS, xt_now_ms() - t0);
	ASSERT_EQ(0, reap_one(self->b.cq, &c));
	EXPECT_EQ(XNIC_WC_RECV, c.opcode);
}

/* ------------------------------------------------- registration cache -- */

/* libxnic's own (priv.h): REG_MR asking the kernel to watch the range. */
int xnic_reg_mr_watched(struct xnic_pd *pd, void *addr, size_t length,
			unsigned int access, unsigned int slot,
			struct xnic_mr **mrp);

/* WRITE @len bytes at @p (MR @mr) to the start of B's buffer; 0 or -errno. */
static int write_from(struct side *a, struct side *b, void *p,
		      struct xnic_mr *mr, uint32_t len)
{
	struct xnic_sge sge = {
		.addr = (uintptr_t)p, .length = len, .lkey = mr->lkey,
	};
	struct xnic_cqe c;
	int err;

	memset(b->buf, 0, len);
	err = xnic_post_write(a->qp, &sge, 1, (uintptr_t)b->buf, b->mr->rkey,
			      1, XNIC_WQE_F_SIGNALED);
	if (!err)
		err = reap_one(a->cq, &c);
	return err ? err : c.status == XNIC_WC_SUCCESS ? 0 : -EIO;
}

/*
 * A cached MR is handed out again for memory it covers, never after the
 * range was unmapped and mapped anew or emptied by MADV_DONTNEED: the
 * bytes that land are what the address holds now.
 */
TEST_F(pair, mr_cache_reuses_and_sees_remaps)
{
	const size_t len = 65536;
	struct xnic_mr_cache_stats st;
	struct xnic_mr_cache *cache;
	struct xnic_mr *m1, *m2;
	uint8_t *p, *q;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	ASSERT_EQ(0, xnic_mr_cache_create(self->a.pd, 8, 1 << 24, &cache));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	fill(p, len, 1);
	ASSERT_EQ(0, xnic_mr_cache_get(cache, p, len, XNIC_ACCESS_LOCAL_WRITE,
				       &m1));
	xnic_mr_cache_put(cache, m1);
	ASSERT_EQ(0, xnic_mr_cache_get(cache, p + 4096, 4096, 0, &m2));
	EXPECT_EQ(m1, m2);		/* covered: the same MR */
	ASSERT_EQ(0, write_from(&self->a, &self->b, p + 4096, m2, 4096));
	EXPECT_EQ(0, memcmp(self->b.buf, p + 4096, 4096));
	EXPECT_EQ(-EBUSY, xnic_mr_cache_destroy(cache));
	xnic_mr_cache_put(cache, m2);

	/* Unmapped, then new memory at the same address. */
	ASSERT_EQ(0, munmap(p, len));
	q = mmap(p, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(p, q);
	fill(p, len, 2);
	ASSERT_EQ(0, xnic_mr_cache_get(cache, p, len, 0, &m1));
	ASSERT_EQ(0, write_from(&self->a, &self->b, p, m1, len));
	EXPECT_EQ(0, memcmp(self->b.buf, p, len));
	xnic_mr_cache_put(cache, m1);

	/* Emptied in place: the next touch maps fresh pages. */
	ASSERT_EQ(0, madvise(p, len, MADV_DONTNEED));
	fill(p, len, 3);
	ASSERT_EQ(0, xnic_mr_cache_get(cache, p, len, 0, &m1));
	ASSERT_EQ(0, write_from(&self->a, &self->b, p, m1, len));
	EXPECT_EQ(0, memcmp(self->b.buf, p, len));
	xnic_mr_cache_put(cache, m1);

	xnic_mr_cache_stats(cache, &st);
	EXPECT_EQ(1, st.hits);
	EXPECT_EQ(3, st.misses);
	EXPECT_EQ(2, st.stale);
	EXPECT_EQ(1, st.entries);
	EXPECT_EQ(0, xnic_mr_cache_destroy(cache));
	munmap(p, len);
}

/* Limits: least recently used entries go first; what cannot fit is not kept. */
TEST_F(pair, mr_cache_limits)
{
	struct xnic_mr_cache_stats st;
	struct xnic_mr_cache *cache;
	struct xnic_mr *m[3], *big;
	int i;

	ASSERT_EQ(0, connect_pair(&self->a, &self->b));
	EXPECT_EQ(-EINVAL, xnic_mr_cache_create(self->a.pd,
						XNIC_MR_WATCH_SLOTS + 1, 1,
						&cache));
	ASSERT_EQ(0, xnic_mr_cache_create(self->a.pd, 2, 65536, &cache));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, xnic_mr_cache_get(cache, self->a.buf + i * 8192,
					       4096, 0, &m[i]));
		xnic_mr_cache_put(cache, m[i]);
	}
	/* Buffer 0 was the least recently used: evicted, a miss again. */
	ASSERT_EQ(0, xnic_mr_cache_get(cache, self->a.buf, 4096, 0, &m[0]));
	xnic_mr_cache_put(cache, m[0]);
	/* Larger than the cache: registered, moves data, not kept. */
	fill(self->a.buf, BUF_SIZE, 4);
	ASSERT_EQ(0, xnic_mr_cache_get(cache, self->a.buf, 131072, 0, &big));
	ASSERT_EQ(0, write_from(&self->a, &self->b, self->a.buf, big, 131072));
	EXPECT_EQ(0, memcmp(self->b.buf, self->a.buf, 131072));
	xnic_mr_cache_put(cache, big);
	xnic_mr_cache_stats(cache, &st);
	EXPECT_EQ(0, st.hits);
	EXPECT_EQ(5, st.misses);
	EXPECT_EQ(1, st.uncached);
	EXPECT_EQ(2, st.evicted);
	EXPECT_EQ(2, st.entries);
	EXPECT_EQ(8192, st.bytes);
	EXPECT_EQ(0, xnic_mr_cache_destroy(cache));

	/* The kernel checks the watch slot. */
	EXPECT_EQ(-EINVAL, xnic_reg_mr_watched(self->a.pd, self->a.buf, 4096,
					       0, XNIC_MR_WATCH_SLOTS, &big));
}

/*
 * Drop CAP_IPC_LOCK: ib_umem_get() then holds us to RLIMIT_MEMLOCK. New
 * credentials: contexts opened before refuse the commands (EACCES, uverbs'
 * ib_safe_file_access()), so open one after.
 */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * Out of pinnable memory (RLIMIT_MEMLOCK), the cache unpins its unused MRs,
 * least recently used first, until a registration fits; a range that alone
 * is over the limit fails at once and unpins nothing.
 */
TEST_F(pair, mr_cache_under_memlock_limit)
{
	const size_t piece = 256 * 1024, len = 4 << 20;
	struct xnic_mr_cache_stats st;
	struct xnic_mr_cache *cache;
	struct xnic_ctx *ctx;
	struct xnic_pd *pd;
	struct xnic_mr *m;
	struct rlimit rl;
	long long pinned;
	uint8_t *p;
	int i;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, len);
	ASSERT_EQ(0, drop_ipc_lock());
	ASSERT_EQ(0, xnic_open(self->a.dev, &ctx));
	ASSERT_EQ(0, xnic_alloc_pd(ctx, &pd));
	pinned = xt_proc_kb("/proc/self/status", "VmPin");
	ASSERT_LE(0, pinned);
	pinned *= 1024;
	/* Room for three pieces besides what the fixture pinned. */
	rl.rlim_cur = rl.rlim_max = pinned + 3 * piece;
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	ASSERT_EQ(0, xnic_mr_cache_create(pd, 8, 64 << 20, &cache));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, xnic_mr_cache_get(cache, p + i * piece, piece, 0,
					       &m));
		xnic_mr_cache_put(cache, m);
	}
	/* At the limit: a fourth piece does not fit beside them. */
	EXPECT_EQ(-ENOMEM, xnic_reg_mr(pd, p + 3 * piece, piece, 0, &m));
	/* Alone over the limit: refused, the three stay cached. */
	EXPECT_EQ(-ENOMEM, xnic_mr_cache_get(cache, p + len / 2, len / 2, 0,
					     &m));
	xnic_mr_cache_stats(cache, &st);
	EXPECT_EQ(0, st.evicted);
	EXPECT_EQ(3, st.entries);
	/* Two pieces' worth: the two least recently used make room. */
	ASSERT_EQ(0, xnic_mr_cache_get(cache, p + len / 2, 2 * piece, 0, &m));
	xnic_mr_cache_put(cache, m);
	ASSERT_EQ(0, xnic_mr_cache_get(cache, p + 2 * piece, piece, 0, &m));
	xnic_mr_cache_put(cache, m);
	xnic_mr_cache_stats(cache, &st);
	EXPECT_EQ(2, st.evicted);
	EXPECT_EQ(2, st.entries);
	EXPECT_EQ(1, st.hits);
	EXPECT_EQ(3 * piece, st.bytes);
	EXPECT_EQ(0, xnic_mr_cache_destroy(cache));
	xnic_close(ctx);
	munmap(p, len);
}

struct zapper {
	struct xnic_pd *pd;
	unsigned int slot;
	volatile bool stop;
};

/* Keep zapping a watched range of our own (another MR's invalidations). */
static void *zap_loop(void *arg)
{
	struct zapper *z = arg;
	const size_t len = 4 << 20;
	struct xnic_mr *mr;
	uint8_t *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, len);
	if (xnic_reg_mr_watched(z->pd, p, len, 0, z->slot, &mr) == 0) {
		while (!z->stop) {
			memset(p, 1, len);
			madvise(p, len, MADV_DONTNEED);
		}
		xnic_dereg_mr(mr);
	}
	munmap(p, len);
	return NULL;
}

/*
 * A range registered while other threads invalidate other watched ranges
 * of the process: the kernel must still see its own invalidation (an mmu
 * interval notifier inserted during another invalidation is not live until
 * that one ends; without waiting for it, 1-4% of these rounds went unseen
 * and the cache handed out the stale MR).
 */
TEST_F(pair, mr_cache_sees_changes_amid_other_invalidations)
{
	struct zapper z[2] = {
		{ .pd = self->b.pd, .slot = 2000 },
		{ .pd = self->b.pd, .slot = 2001 },
	};
	const size_t len = 65536;
	struct xnic_mr_cache_stats st;
	struct xnic_mr_cache *cache;
	pthread_t t[2];
	uint64_t hits;
	struct xnic_mr *m;
	int i, missed = 0;
	uint8_t *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, xnic_mr_cache_create(self->a.pd, 4, 1 << 20, &cache));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, zap_loop, &z[i]));
	for (i = 0; i < 1500; i++) {
		memset(p, i, len);
		ASSERT_EQ(0, xnic_mr_cache_get(cache, p, len, 0, &m));
		xnic_mr_cache_put(cache, m);
		ASSERT_EQ(0, madvise(p, len, MADV_DONTNEED));
		xnic_mr_cache_stats(cache, &st);
		hits = st.hits;
		ASSERT_EQ(0, xnic_mr_cache_get(cache, p, len, 0, &m));
		xnic_mr_cache_put(cache, m);
		xnic_mr_cache_stats(cache, &st);
		missed += st.hits != hits;	/* the stale MR came back */
	}
	for (i = 0; i < 2; i++) {
		z[i].stop = true;
		pthread_join(t[i], NULL);
	}
	EXPECT_EQ(0, missed);
	EXPECT_EQ(0, xnic_mr_cache_destroy(cache));
	munmap(p, len);
}

TEST_HARNESS_MAIN
