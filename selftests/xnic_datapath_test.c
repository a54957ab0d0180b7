// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_datapath_test - the datapath between two xnic devices on a veth
 * pair (MTU 9000), checked byte by byte:
 *  - RDMA WRITE, READ and SEND of 0, 1, 63, 64, 4095, 4096, 4097,
 *    MTU-1, MTU, MTU+1 (MTU: the payload MTU the kernel reports), 1 MiB
 *    and 64 MiB, and at odd offsets on both sides; the bytes around the
 *    destination stay untouched; bulk frames placed by the engine thread
 *    and, with rx_engine_min=0, by the packet handler;
 *  - multi-SGE gathers and scatters across two MRs, inline data,
 *    unsignaled WQEs followed by a signaled one, 64 QP pairs with their
 *    own CQs at once, WRITE_WITH_IMM ordering, SEND_WITH_IMM, RNR (also
 *    for seconds on a lossy link);
 *  - the zero-syscall claim: a child posts and reaps thousands of WQEs
 *    under a seccomp filter that traps every system call but exit_group;
 *    a stream at default settings makes almost no wakeup syscall (the
 *    engine naps); the idle engine sleeps (NEED_WAKEUP, no CPU time) and
 *    wakes on the next post;
 *  - remote and local errors: bad, deregistered and stale rkeys, ranges
 *    past the MR or wrapping around 2^64, missing access rights, another
 *    PD, a SEND longer than the receive buffer, a QP in RESET or INIT:
 *    the right CQE status, the QP in error (later WQEs flushed), and the
 *    target memory untouched.
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"

#define GUARD		4096UL	/* checked bytes on each side of a target */
#define CANARY		0xa5
#define XT_TAG		"dp"
#include "xt_harness.h"

enum op { OP_WRITE, OP_READ, OP_SEND };

static const char *const op_name[] = { "WRITE", "READ", "SEND" };

/* Deadline of a transfer of @len bytes: generous under TCG. */
static int wait_ms_for(size_t len)
{
	return XT_WAIT_MS + (int)(len / MiB) * 1000;
}

#define EXPECT_SUCCESS_CQE(c, _opcode, _wr_id, _len, _qpn) do { \
	EXPECT_EQ(XNIC_WC_SUCCESS, (c).status) TH_LOG("%s", xt_cqe_str(&(c))); \
	EXPECT_EQ(_opcode, (c).opcode) TH_LOG("%s", xt_cqe_str(&(c))); \
	EXPECT_EQ((uint64_t)(_wr_id), (c).wr_id) TH_LOG("%s", xt_cqe_str(&(c))); \
	EXPECT_EQ((uint32_t)(_len), (c).byte_len) TH_LOG("%s", xt_cqe_str(&(c))); \
	EXPECT_EQ((_qpn), (c).qp_num) TH_LOG("%s", xt_cqe_str(&(c))); \
} while (0)

/* Assert that [p, p+len) equals the reference; name the first bad byte. */
#define ASSERT_BYTES(p, ref, len, what) do { \
	ssize_t _d = xt_diff(p, ref, len); \
	ASSERT_EQ(-1, _d) TH_LOG("%s: byte %zd of %zu differs (%#x, want %#x)", \
				 what, _d, (size_t)(len), \
				 _d >= 0 ? (p)[_d] : 0, _d >= 0 ? (ref)[_d] : 0); \
} while (0)

static struct xnic_sge sge_of(const struct xt_buf *b, size_t off, uint32_t len)
{
	struct xnic_sge s = {
		.addr = (uintptr_t)(b->p + off), .length = len,
		.lkey = b->mr->lkey,
	};

	return s;
}

static uint64_t raddr_of(const struct xt_buf *b, size_t off)
{
	return (uintptr_t)(b->p + off);
}

/* ================================================= sizes and offsets == */

FIXTURE(xfer) {
	struct xt_env env;
	struct xt_conn c;
	struct xt_buf a, b;	/* a on dev 0 (the requester), b on dev 1 */
};

FIXTURE_VARIANT(xfer) {
	enum op op;
};

FIXTURE_VARIANT_ADD(xfer, write) { .op = OP_WRITE };
FIXTURE_VARIANT_ADD(xfer, read) { .op = OP_READ };
FIXTURE_VARIANT_ADD(xfer, send) { .op = OP_SEND };

FIXTURE_SETUP(xfer)
{
	ENV_UP(&self->env);
	CONN_UP(&self->env, &self->c, 256, NULL);
}

FIXTURE_TEARDOWN(xfer)
{
	xt_conn_destroy(&self->c);
	xt_buf_free(&self->a);
	xt_buf_free(&self->b);
	xt_env_teardown(&self->env);
}

/*
 * One transfer of @len bytes: WRITE and SEND from a+@aoff to b+@boff,
 * READ from b+@boff into a+@aoff. The source holds a pattern, the
 * destination and GUARD bytes around it a canary; afterwards the CQEs,
 * the destination and the guards are checked.
 */
static void xfer_check(struct __test_metadata *_metadata,
		       FIXTURE_DATA(xfer) *self, enum op op, size_t aoff,
		       size_t boff, size_t len, uint64_t wr_id)
{
	struct xt_buf *src = op == OP_READ ? &self->b : &self->a;
	struct xt_buf *dst = op == OP_READ ? &self->a : &self->b;
	size_t soff = op == OP_READ ? boff : aoff;
	size_t doff = op == OP_READ ? aoff : boff;
	size_t g0 = doff < GUARD ? doff : GUARD;
	size_t g1 = dst->len - doff - len < GUARD ? dst->len - doff - len :
						      GUARD;
	struct xnic_qp *qp0 = self->c.qp[0], *qp1 = self->c.qp[1];
	struct xnic_sge sge = sge_of(&self->a, aoff, (uint32_t)len);
	struct xnic_sge rsge;
	struct xnic_cqe c;
	char what[96];
	int err;

	ASSERT_LE(doff + len, dst->len);
	ASSERT_LE(soff + len, src->len);
	snprintf(what, sizeof(what), "%s of %zu bytes (offsets %zu/%zu)",
		 op_name[op], len, aoff, boff);
	xt_fill(src->p + soff, len, len * 31 + aoff);
	xt_fill_byte(dst->p + doff - g0, g0 + len + g1, CANARY);

	switch (op) {
	case OP_WRITE:
		err = xnic_post_write(qp0, &sge, 1, raddr_of(&self->b, boff),
				      self->b.mr->rkey, wr_id,
				      XNIC_WQE_F_SIGNALED);
		break;
	case OP_READ:
		err = xnic_post_read(qp0, &sge, 1, raddr_of(&self->b, boff),
				     self->b.mr->rkey, wr_id,
				     XNIC_WQE_F_SIGNALED);
		break;
	default:
		/* A receive buffer longer than the message: the rest stays. */
		rsge = sge_of(&self->b, boff, (uint32_t)(len + g1));
		ASSERT_EQ(0, xnic_post_recv(qp1, &rsge, 1, wr_id + 1000000));
		err = xnic_post_send(qp0, &sge, 1, wr_id, XNIC_WQE_F_SIGNALED);
		break;
	}
	ASSERT_EQ(0, err) TH_LOG("%s: post: %s", what, xnic_strerror(err));

	REAP(self->c.cq[0], &c, wait_ms_for(len));
	EXPECT_SUCCESS_CQE(c, op == OP_WRITE ? XNIC_WC_RDMA_WRITE :
			   op == OP_READ ? XNIC_WC_RDMA_READ : XNIC_WC_SEND,
			   wr_id, len, qp0->qpn);
	if (op == OP_SEND) {
		REAP(self->c.cq[1], &c, wait_ms_for(len));
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV, wr_id + 1000000, len,
				   qp1->qpn);
		EXPECT_EQ(0, c.flags & XNIC_CQE_F_IMM);
		EXPECT_EQ(qp0->qpn, c.src_qp);
		EXPECT_EQ(XT_NODE0, c.src_node);
	}
	/* One-sided operations complete nothing at the target. */
	EXPECT_EQ(0, xnic_poll_cq(self->c.cq[1], &c, 1))
		TH_LOG("%s: unexpected %s", what, xt_cqe_str(&c));
	ASSERT_BYTES(dst->p + doff, src->p + soff, len, what);
	ASSERT_CANARY(dst->p + doff - g0, g0, "guard before the target");
	ASSERT_CANARY(dst->p + doff + len, g1, "guard after the target");
}

TEST_F_TIMEOUT(xfer, sizes, 600)
{
	uint32_t mtu = self->env.dev[0].payload_mtu;
	size_t sizes[] = {
		0, 1, 63, 64, 4095, 4096, 4097, mtu - 1, mtu, mtu + 1,
		2 * mtu + 1, 65536, 1 * MiB, 64 * MiB,
	};
	size_t k, max = 64 * MiB + 2 * GUARD;

	ASSERT_LT(4097, mtu);
	TH_LOG("%s, payload MTU %u", op_name[variant->op], mtu);
	BUF_UP(&self->env.dev[0], &self->a, max, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, max, XT_ACCESS_ALL);
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		xfer_check(_metadata, self, variant->op, GUARD, GUARD,
			   sizes[k], k);
		if (!_metadata->passed)
			return;
	}
}

TEST_F_TIMEOUT(xfer, unaligned, 300)
{
	uint32_t mtu = self->env.dev[0].payload_mtu;
	struct { size_t aoff, boff, len; } t[] = {
		{ 1, 3, 1 }, { 3, 1, 63 }, { 4095, 4093, 4097 },
		{ 1, 4095, mtu + 1 }, { 7, 9, 3 * mtu + 5 },
		{ 4093, 2, MiB + 3 }, { 5, 4097, 65535 },
	};
	size_t k, max = 2 * MiB + 3 * GUARD;

	BUF_UP(&self->env.dev[0], &self->a, max, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, max, XT_ACCESS_ALL);
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		/* The offsets are relative to a guard's distance in. */
		xfer_check(_metadata, self, variant->op, GUARD + t[k].aoff,
			   GUARD + t[k].boff, t[k].len, 100 + k);
		if (!_metadata->passed)
			return;
	}
}

#define RX_ENGINE_MIN "/sys/module/xnic/parameters/rx_engine_min"

/*
 * Bulk data frames are checked and placed by the receiving device's
 * engine thread (module parameter rx_engine_min, default 1024 bytes),
 * small ones by the packet handler; with rx_engine_min=0 everything is
 * placed by the handler. Both ways the bytes land, mixed sizes and odd
 * offsets too; the engine's frame count says which way they went.
 */
TEST_F_TIMEOUT(xfer, bulk_placed_by_engine_or_handler, 120)
{
	/* READ responses land at device 0, the rest at device 1. */
	const char *rcv = self->env.dev[variant->op == OP_READ ? 0 : 1].name;
	uint32_t mtu = self->env.dev[0].payload_mtu;
	size_t frames = MiB / mtu, max = 2 * MiB + 3 * GUARD;
	const char *const mins[] = { "1024", "0" };
	uint64_t f0, f1;
	unsigned int k;
	char old[32];

	ASSERT_EQ(0, xt_read_file(RX_ENGINE_MIN, old, sizeof(old)));
	BUF_UP(&self->env.dev[0], &self->a, max, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, max, XT_ACCESS_ALL);
	for (k = 0; k < 2 && _metadata->passed; k++) {
		ASSERT_EQ(0, xt_write_file(RX_ENGINE_MIN, mins[k]));
		usleep(50000);
		f0 = xt_hw_counter(rcv, "engine_rx_frames");
		ASSERT_NE(UINT64_MAX, f0);
		xfer_check(_metadata, self, variant->op, GUARD, GUARD + 1,
			   MiB + 3, 200 + 2 * k);
		xfer_check(_metadata, self, variant->op, GUARD + 5, GUARD,
			   100, 201 + 2 * k);
		/* ib_core caches hw_counters for 10 ms (its default). */
		usleep(50000);
		f1 = xt_hw_counter(rcv, "engine_rx_frames");
		ASSERT_NE(UINT64_MAX, f1);
		TH_LOG("rx_engine_min=%s: %llu frames through the engine",
		       mins[k], (unsigned long long)(f1 - f0));
		/* HELLOs go through it too: a few a second. */
		if (!k) {
			EXPECT_LE(frames, f1 - f0);
		} else {
			EXPECT_GT(frames / 4, f1 - f0);
		}
	}
	xt_write_file(RX_ENGINE_MIN, old);
}

/* Many WQEs of one op in flight at once, in one doorbell. */
TEST_F_TIMEOUT(xfer, batch, 120)
{
	struct xnic_qp *qp0 = self->c.qp[0], *qp1 = self->c.qp[1];
	const size_t n = 100, len = 5000;
	struct xnic_cqe c[100];
	struct xnic_sq_wqe *w;
	struct xnic_sge s;
	size_t k;
	int got, err;

	BUF_UP(&self->env.dev[0], &self->a, n * len, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, n * len, XT_ACCESS_ALL);
	xt_fill(variant->op == OP_READ ? self->b.p : self->a.p, n * len, 9);
	xt_fill_byte(variant->op == OP_READ ? self->a.p : self->b.p, n * len,
		     CANARY);
	for (k = 0; k < n; k++) {
		if (variant->op == OP_SEND) {
			s = sge_of(&self->b, k * len, (uint32_t)len);
			ASSERT_EQ(0, xnic_post_recv(qp1, &s, 1, k));
		}
		w = xnic_sq_get_wqe(qp0);
		ASSERT_NE(NULL, w);
		s = sge_of(&self->a, k * len, (uint32_t)len);
		if (variant->op == OP_WRITE)
			err = xnic_prep_write(w, &s, 1,
					      raddr_of(&self->b, k * len),
					      self->b.mr->rkey, k,
					      XNIC_WQE_F_SIGNALED);
		else if (variant->op == OP_READ)
			err = xnic_prep_read(w, &s, 1,
					     raddr_of(&self->b, k * len),
					     self->b.mr->rkey, k,
					     XNIC_WQE_F_SIGNALED);
		else
			err = xnic_prep_send(w, &s, 1, k, XNIC_WQE_F_SIGNALED);
		ASSERT_EQ(0, err);
	}
	ASSERT_EQ((int)n, xnic_sq_submit(qp0));
	got = xt_reap(self->c.cq[0], c, (int)n, XT_WAIT_MS);
	ASSERT_EQ((int)n, got) TH_LOG("%s", xt_error());
	/* Completions come in posting order. */
	for (k = 0; k < n; k++)
		EXPECT_SUCCESS_CQE(c[k], variant->op == OP_WRITE ?
				   XNIC_WC_RDMA_WRITE : variant->op == OP_READ ?
				   XNIC_WC_RDMA_READ : XNIC_WC_SEND, k, len,
				   qp0->qpn);
	if (variant->op == OP_SEND) {
		got = xt_reap(self->c.cq[1], c, (int)n, XT_WAIT_MS);
		ASSERT_EQ((int)n, got) TH_LOG("%s", xt_error());
		for (k = 0; k < n; k++)
			EXPECT_SUCCESS_CQE(c[k], XNIC_WC_RECV, k, len,
					   qp1->qpn);
	}
	ASSERT_BYTES(self->a.p, self->b.p, n * len, "batch");
}

/* ================================================ everything else ===== */

FIXTURE(dp) {
	struct xt_env env;
	struct xt_conn c;
	struct xt_buf a, a2, b, b2;
};

#define DP_BUF	(2 * MiB)
#define DP_BUF2	(256 * KiB)

FIXTURE_SETUP(dp)
{
	ENV_UP(&self->env);
	BUF_UP(&self->env.dev[0], &self->a, DP_BUF, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[0], &self->a2, DP_BUF2, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, DP_BUF, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b2, DP_BUF2, XT_ACCESS_ALL);
}

FIXTURE_TEARDOWN(dp)
{
	xt_conn_destroy(&self->c);
	xt_buf_free(&self->a);
	xt_buf_free(&self->a2);
	xt_buf_free(&self->b);
	xt_buf_free(&self->b2);
	xt_env_teardown(&self->env);
}

/* Concatenate what @sg names into @out. Return: total bytes. */
static size_t gather(const struct xnic_sge *sg, int n, uint8_t *out)
{
	size_t off = 0;
	int k;

	for (k = 0; k < n; k++) {
		memcpy(out + off, (const void *)(uintptr_t)sg[k].addr,
		       sg[k].length);
		off += sg[k].length;
	}
	return off;
}

TEST_F_TIMEOUT(dp, write_gather, 120)
{
	uint32_t mtu = self->env.dev[0].payload_mtu;
	struct xnic_sge sg[XNIC_MAX_SGE] = {
		sge_of(&self->a, 1, 1),
		sge_of(&self->a, 4097, 4095),
		sge_of(&self->a2, 3, 4097),
		sge_of(&self->a, 30001, 7),
		sge_of(&self->a2, 50003, mtu + 3),
		sge_of(&self->a, 200001, 100),
	};
	uint8_t *want = malloc(DP_BUF);
	struct xnic_cqe c;
	size_t len;

	ASSERT_NE(NULL, want);
	xt_fill(self->a.p, DP_BUF, 1);
	xt_fill(self->a2.p, DP_BUF2, 2);
	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	len = gather(sg, XNIC_MAX_SGE, want);
	CONN_UP(&self->env, &self->c, 64, NULL);
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], sg, XNIC_MAX_SGE,
				     raddr_of(&self->b, 13), self->b.mr->rkey,
				     5, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 5, len, self->c.qp[0]->qpn);
	ASSERT_CANARY(self->b.p, 13, "before the target");
	ASSERT_BYTES(self->b.p + 13, want, len, "gathered WRITE");
	ASSERT_CANARY(self->b.p + 13 + len, GUARD, "after the target");
	free(want);
}

TEST_F_TIMEOUT(dp, read_scatter, 120)
{
	uint32_t mtu = self->env.dev[0].payload_mtu;
	struct xnic_sge sg[XNIC_MAX_SGE] = {
		sge_of(&self->a2, 5, 3),
		sge_of(&self->a, 8191, mtu + 1),
		sge_of(&self->a, 100003, 1),
		sge_of(&self->a2, 70001, 4096),
		sge_of(&self->a, 300007, 65537),
		sge_of(&self->a2, 120001, 77),
	};
	struct xnic_cqe c;
	size_t off = 0, len = 0;
	int k;

	for (k = 0; k < XNIC_MAX_SGE; k++)
		len += sg[k].length;
	xt_fill_byte(self->a.p, DP_BUF, CANARY);
	xt_fill_byte(self->a2.p, DP_BUF2, CANARY);
	xt_fill(self->b.p, DP_BUF, 3);
	CONN_UP(&self->env, &self->c, 64, NULL);
	ASSERT_EQ(0, xnic_post_read(self->c.qp[0], sg, XNIC_MAX_SGE,
				    raddr_of(&self->b, 17), self->b.mr->rkey, 6,
				    XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_READ, 6, len, self->c.qp[0]->qpn);
	for (k = 0; k < XNIC_MAX_SGE; k++) {
		uint8_t *p = (uint8_t *)(uintptr_t)sg[k].addr;

		ASSERT_BYTES(p, self->b.p + 17 + off, sg[k].length,
			     "scattered READ");
		ASSERT_CANARY(p - 1, 1, "byte before an SGE");
		ASSERT_CANARY(p + sg[k].length, 1, "byte after an SGE");
		off += sg[k].length;
	}
	/* Nothing else of the local buffers was written. */
	for (k = 0; k < XNIC_MAX_SGE; k++)
		memset((void *)(uintptr_t)sg[k].addr, CANARY, sg[k].length);
	ASSERT_CANARY(self->a.p, DP_BUF, "local buffer a");
	ASSERT_CANARY(self->a2.p, DP_BUF2, "local buffer a2");
}

TEST_F_TIMEOUT(dp, send_gather_recv_scatter, 120)
{
	uint32_t mtu = self->env.dev[0].payload_mtu;
	struct xnic_sge sg[XNIC_MAX_SGE] = {
		sge_of(&self->a, 3, 10),
		sge_of(&self->a2, 4099, mtu),
		sge_of(&self->a, 9001, 1),
		sge_of(&self->a, 65537, 3 * mtu + 7),
		sge_of(&self->a2, 100001, 0),
		sge_of(&self->a2, 150001, 999),
	};
	struct xnic_sge rs[XNIC_MAX_RECV_SGE];
	uint8_t *want = malloc(DP_BUF);
	struct xnic_cqe c;
	size_t len, off;
	int k;

	ASSERT_NE(NULL, want);
	xt_fill(self->a.p, DP_BUF, 4);
	xt_fill(self->a2.p, DP_BUF2, 5);
	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	xt_fill_byte(self->b2.p, DP_BUF2, CANARY);
	len = gather(sg, XNIC_MAX_SGE, want);
	rs[0] = sge_of(&self->b, 5, 9);
	rs[1] = sge_of(&self->b2, 11, mtu);
	rs[2] = sge_of(&self->b, 100003, (uint32_t)(len - 9 - mtu + 50));
	CONN_UP(&self->env, &self->c, 64, NULL);
	ASSERT_EQ(0, xnic_post_recv(self->c.qp[1], rs, XNIC_MAX_RECV_SGE, 70));
	ASSERT_EQ(0, xnic_post_send(self->c.qp[0], sg, XNIC_MAX_SGE, 7,
				    XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_SEND, 7, len, self->c.qp[0]->qpn);
	REAP(self->c.cq[1], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV, 70, len, self->c.qp[1]->qpn);
	for (k = 0, off = 0; k < XNIC_MAX_RECV_SGE; k++) {
		uint8_t *p = (uint8_t *)(uintptr_t)rs[k].addr;
		size_t n = len - off < rs[k].length ? len - off : rs[k].length;

		ASSERT_BYTES(p, want + off, n, "scattered RECV");
		ASSERT_CANARY(p - 1, 1, "byte before a receive SGE");
		ASSERT_CANARY(p + n, rs[k].length - n + 1,
			      "bytes after a receive SGE");
		off += n;
	}
	free(want);
}

TEST_F_TIMEOUT(dp, inline_data, 120)
{
	struct xnic_qp *qp0, *qp1;
	uint8_t data[XNIC_MAX_INLINE + 1], want[XNIC_MAX_INLINE];
	uint32_t lens[] = { 0, 1, 17, 64, 95, XNIC_MAX_INLINE };
	struct xnic_sge sg[3], rs;
	struct xnic_sq_wqe *w;
	struct xnic_cqe c;
	size_t k, off = 64;

	CONN_UP(&self->env, &self->c, 64, NULL);
	qp0 = self->c.qp[0];
	qp1 = self->c.qp[1];
	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		xt_fill(data, lens[k], k);
		memcpy(want, data, lens[k]);
		ASSERT_EQ(0, xnic_post_write_inline(qp0, data, lens[k],
						    raddr_of(&self->b, off),
						    self->b.mr->rkey, k,
						    XNIC_WQE_F_SIGNALED));
		/* The data is in the WQE: the source may change at once. */
		memset(data, 0, sizeof(data));
		REAP(self->c.cq[0], &c, XT_WAIT_MS);
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, k, lens[k], qp0->qpn);
		ASSERT_BYTES(self->b.p + off, want, lens[k], "inline WRITE");
		ASSERT_CANARY(self->b.p + off - 1, 1, "before");
		ASSERT_CANARY(self->b.p + off + lens[k], 64, "after");
		off += 4096 + 1;
	}
	/* More than the QP's inline limit is refused by the library. */
	EXPECT_EQ(-EINVAL, xnic_post_write_inline(qp0, data,
						  XNIC_MAX_INLINE + 1,
						  raddr_of(&self->b, 0),
						  self->b.mr->rkey, 99,
						  XNIC_WQE_F_SIGNALED));

	/* Inline gathered from three pieces of unregistered memory. */
	xt_fill(data, sizeof(data), 77);
	sg[0] = (struct xnic_sge){ (uintptr_t)data, 5, 0 };
	sg[1] = (struct xnic_sge){ (uintptr_t)data + 40, 30, 0xdeadbeef };
	sg[2] = (struct xnic_sge){ (uintptr_t)data + 90, 11, 0 };
	gather(sg, 3, want);
	w = xnic_sq_get_wqe(qp0);
	ASSERT_NE(NULL, w);
	ASSERT_EQ(0, xnic_prep_write(w, sg, 3, raddr_of(&self->b, 200001),
				     self->b.mr->rkey, 50,
				     XNIC_WQE_F_SIGNALED | XNIC_WQE_F_INLINE));
	memset(data, 0, sizeof(data));
	ASSERT_EQ(1, xnic_sq_submit(qp0));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 50, 46, qp0->qpn);
	ASSERT_BYTES(self->b.p + 200001, want, 46, "gathered inline WRITE");

	/* Inline SEND and inline WRITE_WITH_IMM. */
	xt_fill(data, sizeof(data), 78);
	memcpy(want, data, XNIC_MAX_INLINE);
	rs = sge_of(&self->b, 300001, 4096);
	ASSERT_EQ(0, xnic_post_recv(qp1, &rs, 1, 60));
	sg[0] = (struct xnic_sge){ (uintptr_t)data, XNIC_MAX_INLINE, 0 };
	ASSERT_EQ(0, xnic_post_send(qp0, sg, 1, 61,
				    XNIC_WQE_F_SIGNALED | XNIC_WQE_F_INLINE));
	memset(data, 0, sizeof(data));
	REAP(self->c.cq[1], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV, 60, XNIC_MAX_INLINE, qp1->qpn);
	ASSERT_BYTES(self->b.p + 300001, want, XNIC_MAX_INLINE,
		     "inline SEND");
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_SEND, 61, XNIC_MAX_INLINE, qp0->qpn);

	xt_fill(data, 33, 79);
	memcpy(want, data, 33);
	ASSERT_EQ(0, xnic_post_recv(qp1, &rs, 0, 62));
	sg[0] = (struct xnic_sge){ (uintptr_t)data, 33, 0 };
	ASSERT_EQ(0, xnic_post_write_imm(qp0, sg, 1, raddr_of(&self->b, 400001),
					 self->b.mr->rkey, htonl(0x1234567),
					 63, XNIC_WQE_F_SIGNALED |
					 XNIC_WQE_F_INLINE));
	memset(data, 0, sizeof(data));
	REAP(self->c.cq[1], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV_RDMA_WITH_IMM, 62, 33, qp1->qpn);
	EXPECT_EQ(0x1234567, ntohl(c.imm_data));
	ASSERT_BYTES(self->b.p + 400001, want, 33, "inline WRITE_WITH_IMM");
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 63, 33, qp0->qpn);
}

TEST_F_TIMEOUT(dp, unsignaled_then_signaled, 120)
{
	struct xnic_qp_cap cap = { .max_send_wr = 512, .max_recv_wr = 16 };
	const uint32_t n = 300, len = 4096;
	struct xnic_cqe c[4];
	struct xnic_qp *qp0;
	struct xnic_sge s;
	uint32_t k, round, base;
	int got;

	CONN_UP(&self->env, &self->c, 64, &cap);
	qp0 = self->c.qp[0];
	ASSERT_EQ(512, qp0->sq.entries);
	/* Twice: 2 x 301 WQEs wrap the 512-entry SQ. */
	for (round = 0; round < 2; round++) {
		base = round * 1000;
		xt_fill(self->a.p, (n + 1) * len, 10 + round);
		xt_fill_byte(self->b.p, DP_BUF, CANARY);
		for (k = 0; k < n; k++) {
			s = sge_of(&self->a, (size_t)k * len, len);
			ASSERT_EQ(0, xnic_post_write(qp0, &s, 1,
						     raddr_of(&self->b,
							      (size_t)k * len),
						     self->b.mr->rkey, base + k,
						     0));
		}
		s = sge_of(&self->a, (size_t)n * len, len);
		ASSERT_EQ(0, xnic_post_write(qp0, &s, 1,
					     raddr_of(&self->b, (size_t)n * len),
					     self->b.mr->rkey, base + n,
					     XNIC_WQE_F_SIGNALED));
		got = xt_reap(self->c.cq[0], c, 1, XT_WAIT_MS);
		ASSERT_EQ(1, got) TH_LOG("%s", xt_error());
		EXPECT_SUCCESS_CQE(c[0], XNIC_WC_RDMA_WRITE, base + n, len,
				   qp0->qpn);
		/* No CQE for the unsignaled ones, ever. */
		EXPECT_EQ(0, xt_quiet(self->c.cq[0], c, 4, 200))
			TH_LOG("unexpected %s", xt_cqe_str(&c[0]));
		/* Every slot is back: the kernel consumed all 301. */
		EXPECT_EQ(qp0->sq.entries, xnic_sq_space(qp0));
		ASSERT_BYTES(self->b.p, self->a.p, (size_t)(n + 1) * len,
			     "unsignaled WRITEs");
		ASSERT_CANARY(self->b.p + (size_t)(n + 1) * len, GUARD,
			      "after the last WRITE");
	}
}

#define NQP	64

TEST_F_TIMEOUT(dp, many_qps_and_cqs, 300)
{
	struct xt_conn *cs = calloc(NQP, sizeof(*cs));
	const uint32_t wlen = 16 * KiB, slen = 1000;
	struct xnic_sge s;
	struct xnic_cqe c[2];
	int i;

	ASSERT_NE(NULL, cs);
	xt_fill(self->a.p, DP_BUF, 20);
	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	xt_fill_byte(self->b2.p, DP_BUF2, CANARY);
	for (i = 0; i < NQP; i++) {
		int err = xt_conn_create(&self->env, &cs[i], 8, NULL);

		ASSERT_EQ(0, err) TH_LOG("pair %d: %s", i, xt_error());
	}
	/* Everything is posted before anything is reaped. */
	for (i = 0; i < NQP; i++) {
		s = sge_of(&self->b2, (size_t)i * 2048, 2048);
		ASSERT_EQ(0, xnic_post_recv(cs[i].qp[1], &s, 1, 500 + i));
	}
	for (i = 0; i < NQP; i++) {
		s = sge_of(&self->a, (size_t)i * wlen, wlen);
		ASSERT_EQ(0, xnic_post_write(cs[i].qp[0], &s, 1,
					     raddr_of(&self->b,
						      (size_t)i * wlen),
					     self->b.mr->rkey, i,
					     XNIC_WQE_F_SIGNALED));
		s = sge_of(&self->a, MiB + (size_t)i * slen, slen);
		ASSERT_EQ(0, xnic_post_send_imm(cs[i].qp[0], &s, 1,
						htonl(0xabc00000 + i), 100 + i,
						XNIC_WQE_F_SIGNALED));
	}
	for (i = 0; i < NQP; i++) {
		ASSERT_EQ(2, xt_reap(cs[i].cq[0], c, 2, XT_WAIT_MS))
			TH_LOG("pair %d: %s", i, xt_error());
		EXPECT_SUCCESS_CQE(c[0], XNIC_WC_RDMA_WRITE, i, wlen,
				   cs[i].qp[0]->qpn);
		EXPECT_SUCCESS_CQE(c[1], XNIC_WC_SEND, 100 + i, slen,
				   cs[i].qp[0]->qpn);
		ASSERT_EQ(1, xt_reap(cs[i].cq[1], c, 1, XT_WAIT_MS))
			TH_LOG("pair %d: %s", i, xt_error());
		EXPECT_SUCCESS_CQE(c[0], XNIC_WC_RECV, 500 + i, slen,
				   cs[i].qp[1]->qpn);
		EXPECT_TRUE(c[0].flags & XNIC_CQE_F_IMM);
		EXPECT_EQ(0xabc00000 + i, ntohl(c[0].imm_data));
		EXPECT_EQ(cs[i].qp[0]->qpn, c[0].src_qp);
		/* No CQE landed on another pair's CQ. */
		EXPECT_EQ(0, xnic_poll_cq(cs[i].cq[0], c, 1));
		EXPECT_EQ(0, xnic_poll_cq(cs[i].cq[1], c, 1));
		ASSERT_BYTES(self->b2.p + (size_t)i * 2048,
			     self->a.p + MiB + (size_t)i * slen, slen,
			     "SEND of a pair");
		ASSERT_CANARY(self->b2.p + (size_t)i * 2048 + slen,
			      2048 - slen, "tail of a receive buffer");
	}
	ASSERT_BYTES(self->b.p, self->a.p, NQP * wlen, "WRITEs of 64 pairs");
	for (i = 0; i < NQP; i++)
		xt_conn_destroy(&cs[i]);
	free(cs);
}

TEST_F_TIMEOUT(dp, write_with_imm_ordering, 180)
{
	const uint32_t n = 64, len = 16 * KiB;
	struct xnic_qp *qp0, *qp1;
	struct xnic_sge s, rs = { 0 };
	struct xnic_cqe c;
	uint32_t round, k;
	long long end;
	int r;

	CONN_UP(&self->env, &self->c, 64, NULL);
	qp0 = self->c.qp[0];
	qp1 = self->c.qp[1];
	for (round = 0; round < 3; round++) {
		xt_fill(self->a.p, (n + 1) * len, 30 + round);
		xt_fill_byte(self->b.p, DP_BUF, CANARY);
		ASSERT_EQ(0, xnic_post_recv(qp1, &rs, 0, 900 + round));
		for (k = 0; k < n; k++) {
			s = sge_of(&self->a, (size_t)k * len, len);
			ASSERT_EQ(0, xnic_post_write(qp0, &s, 1,
						     raddr_of(&self->b,
							      (size_t)k * len),
						     self->b.mr->rkey, k, 0));
		}
		s = sge_of(&self->a, (size_t)n * len, 8);
		ASSERT_EQ(0, xnic_post_write_imm(qp0, &s, 1,
						 raddr_of(&self->b,
							  (size_t)n * len),
						 self->b.mr->rkey,
						 htonl(0xc0de0000 + round),
						 1000 + round,
						 XNIC_WQE_F_SIGNALED));
		/* Spin on the target's CQ, then look at once. */
		end = xt_now_ms() + XT_WAIT_MS;
		while (!(r = xnic_poll_cq(self->c.cq[1], &c, 1)) &&
		       xt_now_ms() < end)
			;
		ASSERT_EQ(1, r) TH_LOG("no WRITE_WITH_IMM completion");
		ASSERT_BYTES(self->b.p, self->a.p, (size_t)n * len + 8,
			     "WRITEs before the WRITE_WITH_IMM");
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV_RDMA_WITH_IMM, 900 + round,
				   8, qp1->qpn);
		EXPECT_TRUE(c.flags & XNIC_CQE_F_IMM);
		EXPECT_EQ(0xc0de0000 + round, ntohl(c.imm_data));
		EXPECT_EQ(qp0->qpn, c.src_qp);
		EXPECT_EQ(XT_NODE0, c.src_node);
		REAP(self->c.cq[0], &c, XT_WAIT_MS);
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 1000 + round, 8,
				   qp0->qpn);
	}
}

TEST_F_TIMEOUT(dp, send_with_imm, 120)
{
	uint32_t mtu = self->env.dev[0].payload_mtu;
	uint32_t lens[] = { 0, 1, mtu + 1, 100000 };
	struct xnic_sge s, rs;
	struct xnic_cqe c;
	size_t k;

	CONN_UP(&self->env, &self->c, 64, NULL);
	for (k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		uint32_t imm = (uint32_t)(0x80000001u + k * 0x01010101u);

		xt_fill(self->a.p, lens[k], 40 + k);
		xt_fill_byte(self->b.p, lens[k] + GUARD, CANARY);
		rs = sge_of(&self->b, 0, lens[k] + 100);
		ASSERT_EQ(0, xnic_post_recv(self->c.qp[1], &rs, 1, 70 + k));
		s = sge_of(&self->a, 0, lens[k]);
		ASSERT_EQ(0, xnic_post_send_imm(self->c.qp[0], &s, 1,
						htonl(imm), k,
						XNIC_WQE_F_SIGNALED));
		REAP(self->c.cq[1], &c, XT_WAIT_MS);
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV, 70 + k, lens[k],
				   self->c.qp[1]->qpn);
		EXPECT_TRUE(c.flags & XNIC_CQE_F_IMM);
		EXPECT_EQ(imm, ntohl(c.imm_data));
		EXPECT_EQ(self->c.qp[0]->qpn, c.src_qp);
		ASSERT_BYTES(self->b.p, self->a.p, lens[k], "SEND_WITH_IMM");
		ASSERT_CANARY(self->b.p + lens[k], GUARD, "after the message");
		REAP(self->c.cq[0], &c, XT_WAIT_MS);
		EXPECT_SUCCESS_CQE(c, XNIC_WC_SEND, k, lens[k],
				   self->c.qp[0]->qpn);
	}
}

/*
 * A receive posted again as soon as its completion is polled finds room,
 * even in a full RQ (verbs: a WQE is retired when its CQE is polled): the
 * kernel gives the RQ entry back before it writes the CQE. With the CQE
 * first, a busy poller on the other vCPU saw -EAGAIN now and then (found
 * by the libfabric RDM endpoint, which keeps its RQs full).
 */
TEST_F_TIMEOUT(dp, recv_reposted_at_its_completion, 120)
{
	struct xnic_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 8 };
	struct xnic_sge s = sge_of(&self->a, 0, 8), rs = sge_of(&self->b, 0, 64);
	unsigned int posted = 0, k, again = 0;
	struct xnic_cqe c;

	CONN_UP(&self->env, &self->c, 64, &cap);
	while (!xnic_post_recv(self->c.qp[1], &rs, 1, posted))
		posted++;
	ASSERT_LE(8U, posted) TH_LOG("RQ took %u receives", posted);
	for (k = 0; k < 400; k++) {
		long long end = xt_now_ms() + XT_WAIT_MS;
		int n = 0, err;

		ASSERT_EQ(0, xnic_post_send(self->c.qp[0], &s, 1, k,
					    XNIC_WQE_F_SIGNALED));
		while (n == 0 && xt_now_ms() < end)	/* busy: no sleep */
			n = xnic_poll_cq(self->c.cq[1], &c, 1);
		ASSERT_EQ(1, n) TH_LOG("message %u: no receive completion", k);
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV, c.wr_id, 8,
				   self->c.qp[1]->qpn);
		err = xnic_post_recv(self->c.qp[1], &rs, 1, c.wr_id);
		if (err == -EAGAIN)
			again++;
		else
			ASSERT_EQ(0, err);
		REAP(self->c.cq[0], &c, XT_WAIT_MS);
		if (again)
			break;
	}
	EXPECT_EQ(0U, again) TH_LOG("a full RQ refused a receive reposted at its completion (message %u)", k);
}

TEST_F_TIMEOUT(dp, rnr_send_before_recv, 120)
{
	uint64_t rnr0 = 0, rnr1 = 0;
	struct xnic_sge s, rs;
	struct xnic_cqe c[2];
	int k;

	CONN_UP(&self->env, &self->c, 64, NULL);
	ASSERT_EQ(0, xt_counter(self->env.dev[1].name, "rnr_naks_sent",
				&rnr0)) TH_LOG("%s", xt_error());
	xt_fill(self->a.p, 20000, 50);
	xt_fill_byte(self->b.p, 40000, CANARY);
	/* Two SENDs and no receive WQE. */
	for (k = 0; k < 2; k++) {
		s = sge_of(&self->a, (size_t)k * 10000, 10000);
		ASSERT_EQ(0, xnic_post_send(self->c.qp[0], &s, 1, k,
					    XNIC_WQE_F_SIGNALED));
	}
	EXPECT_EQ(0, xt_quiet(self->c.cq[0], c, 2, 300))
		TH_LOG("completed without a receive WQE: %s",
		       xt_cqe_str(&c[0]));
	ASSERT_CANARY(self->b.p, 40000, "receive side before any RECV");
	ASSERT_EQ(0, xt_counter(self->env.dev[1].name, "rnr_naks_sent",
				&rnr1));
	EXPECT_LT(rnr0, rnr1) TH_LOG("no RNR NAK was sent");
	/* Receives now: both complete, in order, byte-exact. */
	for (k = 0; k < 2; k++) {
		rs = sge_of(&self->b, (size_t)k * 20000, 20000);
		ASSERT_EQ(0, xnic_post_recv(self->c.qp[1], &rs, 1, 10 + k));
		ASSERT_EQ(1, xt_reap(self->c.cq[1], c, 1, XT_WAIT_MS))
			TH_LOG("%s", xt_error());
		EXPECT_SUCCESS_CQE(c[0], XNIC_WC_RECV, 10 + k, 10000,
				   self->c.qp[1]->qpn);
		ASSERT_BYTES(self->b.p + (size_t)k * 20000,
			     self->a.p + (size_t)k * 10000, 10000, "RNR'd SEND");
	}
	ASSERT_EQ(2, xt_reap(self->c.cq[0], c, 2, XT_WAIT_MS))
		TH_LOG("%s", xt_error());
	EXPECT_SUCCESS_CQE(c[0], XNIC_WC_SEND, 0, 10000, self->c.qp[0]->qpn);
	EXPECT_SUCCESS_CQE(c[1], XNIC_WC_SEND, 1, 10000, self->c.qp[0]->qpn);
}

/*
 * A SEND that waits for a receive WQE for seconds on a link that loses
 * 10 % of the responder's frames: every RNR NAK or ACK lost costs the
 * requester a timeout, many more than its retry_cnt (7) in all, but
 * never 8 in a row without an answer. Each RNR NAK is an answer, so the
 * SEND must not fail with "retry counter exceeded", and the timeout must
 * not back off to seconds (both happened until an RNR NAK restarted the
 * count: it counts timeouts without a response).
 */
TEST_F_TIMEOUT(dp, rnr_send_waits_on_lossy_link, 120)
{
	uint64_t rnr0 = 0, rnr1 = 0, to0 = 0, to1 = 0;
	const char *nd = self->env.dev[1].netdev;
	struct xnic_sge s, rs;
	struct xnic_cqe c;
	int n;

	CONN_UP(&self->env, &self->c, 64, NULL);
	if (xt_sh("tc qdisc add dev %s root netem loss 10%% 2>/dev/null", nd))
		SKIP(return, "tc netem not available");
	ASSERT_EQ(0, xt_counter(self->env.dev[1].name, "rnr_naks_sent",
				&rnr0)) TH_LOG("%s", xt_error());
	ASSERT_EQ(0, xt_counter(self->env.dev[0].name, "tx_timeouts", &to0));
	xt_fill(self->a.p, 10000, 51);
	s = sge_of(&self->a, 0, 10000);
	ASSERT_EQ(0, xnic_post_send(self->c.qp[0], &s, 1, 1,
				    XNIC_WQE_F_SIGNALED));
	n = xt_quiet(self->c.cq[0], &c, 1, 6000);
	ASSERT_EQ(0, xt_counter(self->env.dev[1].name, "rnr_naks_sent",
				&rnr1));
	ASSERT_EQ(0, xt_counter(self->env.dev[0].name, "tx_timeouts", &to1));
	xt_sh("tc qdisc del dev %s root", nd);
	TH_LOG("6 s waiting: %llu RNR NAKs, %llu timeouts",
	       (unsigned long long)(rnr1 - rnr0),
	       (unsigned long long)(to1 - to0));
	ASSERT_EQ(0, n) TH_LOG("the SEND ended without a receive WQE: %s",
			       xt_cqe_str(&c));
	EXPECT_LT(rnr0 + 100, rnr1);
	/* Else the loss was too little to test anything. */
	EXPECT_LT(to0 + 7, to1);
	rs = sge_of(&self->b, 0, 10000);
	ASSERT_EQ(0, xnic_post_recv(self->c.qp[1], &rs, 1, 2));
	ASSERT_EQ(1, xt_reap(self->c.cq[1], &c, 1, XT_WAIT_MS))
		TH_LOG("%s", xt_error());
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RECV, 2, 10000, self->c.qp[1]->qpn);
	ASSERT_BYTES(self->b.p, self->a.p, 10000, "RNR'd SEND, lossy link");
	ASSERT_EQ(1, xt_reap(self->c.cq[0], &c, 1, XT_WAIT_MS))
		TH_LOG("%s", xt_error());
	EXPECT_SUCCESS_CQE(c, XNIC_WC_SEND, 1, 10000, self->c.qp[0]->qpn);
}

#define RTO_MIN "/sys/module/xnic/parameters/rto_min_us"

/* One signaled 4 KiB WRITE a -> b, reaped; false if it failed. */
static bool dp_write_4k(struct _test_data_dp *self, uint64_t id)
{
	struct xnic_sge s = sge_of(&self->a, 0, 4096);
	struct xnic_cqe c;

	return !xnic_post_write(self->c.qp[0], &s, 1, raddr_of(&self->b, 0),
				self->b.mr->rkey, id, XNIC_WQE_F_SIGNALED) &&
	       xt_reap(self->c.cq[0], &c, 1, XT_WAIT_MS) == 1 &&
	       c.status == XNIC_WC_SUCCESS;
}

/*
 * The retransmission timeout never goes below the module parameter
 * rto_min_us, however short the measured round trips: a CPU that stalls
 * for milliseconds (the test VM's) delays ACKs past an estimate made of
 * idle round trips, and at a 10 ms floor every resend that caused was
 * spurious (Documentation/testing.rst). With the floor at 300 ms and
 * the responder's ACKs dropped (a tc filter on its opcode; heartbeats
 * keep the link up), the first expiry comes no sooner than 300 ms after
 * the WRITE (a slow CPU only makes it later); values out of range are
 * refused.
 */
TEST_F_TIMEOUT(dp, rto_floor_holds, 60)
{
	const char *nd = self->env.dev[1].netdev, *dev0 = self->env.dev[0].name;
	uint64_t to0 = 0, to1 = 0;
	long long t0, first = -1;
	struct xnic_sge s;
	struct xnic_cqe c;
	char old[32];
	int k;

	ASSERT_EQ(0, xt_read_file(RTO_MIN, old, sizeof(old)));
	EXPECT_NE(0, xt_write_file(RTO_MIN, "999"));
	EXPECT_NE(0, xt_write_file(RTO_MIN, "1000001"));
	CONN_UP(&self->env, &self->c, 64, NULL);
	xt_fill(self->a.p, 4096, 61);
	/* Round trips measured on an idle pair: a few ms at most. */
	for (k = 0; k < 20 && dp_write_4k(self, k); k++)
		;
	ASSERT_EQ(20, k) TH_LOG("WRITE %d: %s", k, xt_error());
	ASSERT_EQ(0, xt_write_file(RTO_MIN, "300000"));
	/* The next response recomputes the timeout with the new floor. */
	ASSERT_TRUE(dp_write_4k(self, 20)) TH_LOG("%s", xt_error());
	if (xt_sh("tc qdisc add dev %s root handle 1: prio && tc filter add dev %s parent 1: protocol 0x88b5 prio 1 u32 match u8 %d 0xff at 1 action drop 2>/dev/null",
		  nd, nd, 6 /* XNIC_OP_ACK */)) {
		xt_write_file(RTO_MIN, old);
		SKIP(return, "tc prio/u32 not available");
	}
	ASSERT_EQ(0, xt_counter(dev0, "tx_timeouts", &to0));
	xt_fill(self->a.p, 4096, 62);
	s = sge_of(&self->a, 0, 4096);
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1,
				     raddr_of(&self->b, 0), self->b.mr->rkey,
				     21, XNIC_WQE_F_SIGNALED));
	t0 = xt_now_ms();
	while (xt_now_ms() - t0 < 5000) {
		if (!xt_counter(dev0, "tx_timeouts", &to1) && to1 != to0) {
			first = xt_now_ms() - t0;
			break;
		}
		xt_sleep_ms(5);
	}
	xt_sh("tc qdisc del dev %s root", nd);
	xt_write_file(RTO_MIN, old);
	TH_LOG("first expiry %lld ms after the WRITE (floor 300 ms)", first);
	ASSERT_LE(0, first) TH_LOG("no expiry in 5 s with every ACK dropped");
	EXPECT_LE(300, first);
	ASSERT_EQ(1, xt_reap(self->c.cq[0], &c, 1, XT_WAIT_MS))
		TH_LOG("%s", xt_error());
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 21, 4096, self->c.qp[0]->qpn);
	ASSERT_BYTES(self->b.p, self->a.p, 4096, "WRITE resent after the floor");
}

/*
 * A queue between the two devices that drops (a rate-capped qdisc holding
 * 8 frames: credits know nothing of it): the congestion window must answer
 * the drops (tx_cwnd_cuts) and the data still lands whole. Without the
 * window every round trip floods the queue with the whole 256-frame
 * window and most of it is resent.
 */
TEST_F_TIMEOUT(dp, cwnd_answers_a_dropping_queue, 180)
{
	static const char *const names[] = {
		"tx_frames", "tx_retransmits", "tx_cwnd_cuts",
	};
	const char *nd = self->env.dev[0].netdev;
	uint64_t v0[3], v1[3], frames, retx;
	struct xnic_sge s;
	struct xnic_cqe c;
	int k;

	CONN_UP(&self->env, &self->c, 64, NULL);
	if (xt_sh("tc qdisc add dev %s root netem rate 40mbit limit 8 "
		  "2>/dev/null", nd))
		SKIP(return, "tc netem not available");
	ASSERT_EQ(0, xt_counters(self->env.dev[0].name, names, v0, 3))
		TH_LOG("%s", xt_error());
	for (k = 0; k < 4; k++) {
		xt_fill(self->a.p, DP_BUF, 60 + k);
		xt_fill_byte(self->b.p, DP_BUF, CANARY);
		s = sge_of(&self->a, 0, DP_BUF);
		ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1,
					     raddr_of(&self->b, 0),
					     self->b.mr->rkey, k,
					     XNIC_WQE_F_SIGNALED));
		REAP(self->c.cq[0], &c, 60000);
		EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, (uint64_t)k, DP_BUF,
				   self->c.qp[0]->qpn);
		ASSERT_BYTES(self->b.p, self->a.p, DP_BUF, "capped WRITE");
	}
	xt_sleep_ms(20);	/* hw_counters are cached for 10 ms */
	ASSERT_EQ(0, xt_counters(self->env.dev[0].name, names, v1, 3));
	xt_sh("tc qdisc del dev %s root", nd);
	frames = v1[0] - v0[0];
	retx = v1[1] - v0[1];
	TH_LOG("8 MiB, 40 Mbit/s, 8-frame queue: %llu frames, %llu resent, %llu window cuts",
	       (unsigned long long)frames, (unsigned long long)retx,
	       (unsigned long long)(v1[2] - v0[2]));
	EXPECT_LT(v0[2], v1[2]);
	EXPECT_GT(frames / 4, retx);
}

/* --------------------------------------------------- zero syscalls -- */

/* Results of the filtered child, in a shared page. */
struct zs_result {
	volatile int stage;		/* 1: filter on; 2: loop done */
	volatile int syscall_nr;	/* trapped system call, or -1 */
	volatile uint64_t posted, completed;
	volatile int post_err;
	struct xnic_cqe bad;		/* first unexpected CQE */
};

static struct zs_result *zs;

/* SIGSYS from SECCOMP_RET_TRAP: note the call and leave (exit_group). */
static void zs_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	zs->syscall_nr = si->si_syscall;
	_exit(20);
}

#define ZS_N		4096
#define ZS_LEN		256
#define ZS_WINDOW	32

enum zs_mode {
	ZS_LOOP,	/* the real thing: ZS_N posts and completions */
	ZS_GETPID,	/* control: a plain system call must trap */
	ZS_ONE_POST,	/* control: a post to a sleeping engine must trap */
};

static void zs_child(struct xt_conn *c, struct xt_buf *a, struct xt_buf *b,
		     enum zs_mode mode)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct rlimit no_core = { 0, 0 };
	struct sigaction sa = { 0 };
	struct xnic_qp *qp = c->qp[0];
	struct xnic_cqe cqe[16];
	uint64_t posted = 0, done = 0, spins = 0;
	struct xnic_sge s;
	int r, k;

	setrlimit(RLIMIT_CORE, &no_core);
	sa.sa_sigaction = zs_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSYS, &sa, NULL);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		_exit(10);
	/* From here on, any system call but exit_group traps. */
	zs->stage = 1;
	if (mode == ZS_GETPID)
		syscall(__NR_getpid);
	while (done < ZS_N) {
		while (posted < ZS_N && posted - done < ZS_WINDOW) {
			s.addr = (uintptr_t)(a->p + posted * ZS_LEN);
			s.length = ZS_LEN;
			s.lkey = a->mr->lkey;
			r = xnic_post_write(qp, &s, 1,
					    (uintptr_t)(b->p + posted * ZS_LEN),
					    b->mr->rkey, posted,
					    XNIC_WQE_F_SIGNALED);
			if (r) {
				zs->post_err = r;
				_exit(11);
			}
			zs->posted = ++posted;
			if (mode == ZS_ONE_POST)
				_exit(0);
		}
		r = xnic_poll_cq(c->cq[0], cqe, 16);
		if (r < 0)
			_exit(12);
		for (k = 0; k < r; k++) {
			if (cqe[k].status || cqe[k].wr_id != done + k) {
				zs->bad = cqe[k];
				_exit(13);
			}
		}
		done += r;
		zs->completed = done;
		if (r)
			spins = 0;
		else if (++spins > 4000000000ULL)
			_exit(14);
	}
	zs->stage = 2;
	_exit(0);
}

/* Run zs_child() in a child process; return its wait status. */
static int zs_run(FIXTURE_DATA(dp) *self, enum zs_mode mode)
{
	int st = -1;
	pid_t pid;

	memset(zs, 0, sizeof(*zs));
	zs->syscall_nr = -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		zs_child(&self->c, &self->a, &self->b, mode);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

TEST_F_TIMEOUT(dp, zero_syscall_datapath, 300)
{
	struct xnic_sge s = sge_of(&self->a, 0, 64);
	struct xnic_cqe c;
	long long end;
	int st;

	zs = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, zs);
	xt_fill(self->a.p, ZS_N * ZS_LEN, 60);
	xt_fill_byte(self->b.p, DP_BUF, CANARY);

	/* Control 1: the filter catches a plain system call. */
	CONN_UP(&self->env, &self->c, 256, NULL);
	st = zs_run(self, ZS_GETPID);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 20)
		TH_LOG("control: getpid() under the filter: status %#x", st);
	ASSERT_EQ(__NR_getpid, zs->syscall_nr);

	/*
	 * Control 2: it catches the doorbell wakeup. Once the engine sleeps
	 * (NEED_WAKEUP), a post must make the D1 system call, an ioctl() on
	 * the context's doorbell file.
	 */
	end = xt_now_ms() + 5000;
	while (!(*self->c.qp[0]->engine_flags & XNIC_ENGINE_NEED_WAKEUP) &&
	       xt_now_ms() < end)
		xt_sleep_ms(10);
	ASSERT_TRUE(*self->c.qp[0]->engine_flags & XNIC_ENGINE_NEED_WAKEUP)
		TH_LOG("the idle engine never set NEED_WAKEUP");
	st = zs_run(self, ZS_ONE_POST);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 20)
		TH_LOG("control: post to a sleeping engine: status %#x (posted %llu)",
		       st, (unsigned long long)zs->posted);
	ASSERT_EQ(__NR_ioctl, zs->syscall_nr);
	/* That child's library state is gone: a fresh pair for the test. */
	xt_conn_destroy(&self->c);
	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	CONN_UP(&self->env, &self->c, 256, NULL);

	/*
	 * Keep the engine polling (no NEED_WAKEUP) however the scheduler
	 * treats the child: what is tested is that a busy engine needs no
	 * system call, not how long it stays busy.
	 */
	ASSERT_EQ(0, xt_set_param(&self->env.dev[0], "idle_us", "5000000"));
	/* Wake it and see it awake. */
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1,
				     raddr_of(&self->b, DP_BUF - 64),
				     self->b.mr->rkey, 1, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	ASSERT_EQ(XNIC_WC_SUCCESS, c.status);
	/* The syscall woke the thread; it clears the flag when it runs. */
	end = xt_now_ms() + 5000;
	while ((*self->c.qp[0]->engine_flags & XNIC_ENGINE_NEED_WAKEUP) &&
	       xt_now_ms() < end)
		xt_sleep_ms(1);
	ASSERT_EQ(0, *self->c.qp[0]->engine_flags & XNIC_ENGINE_NEED_WAKEUP)
		TH_LOG("the woken engine did not start polling");

	st = zs_run(self, ZS_LOOP);

	TH_LOG("filtered child: stage %d, %llu posts, %llu completions",
	       zs->stage, (unsigned long long)zs->posted,
	       (unsigned long long)zs->completed);
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child killed by signal %d",
					  WTERMSIG(st));
	ASSERT_NE(20, WEXITSTATUS(st))
		TH_LOG("the datapath made system call %d after %llu posts and %llu completions",
		       zs->syscall_nr, (unsigned long long)zs->posted,
		       (unsigned long long)zs->completed);
	ASSERT_NE(10, WEXITSTATUS(st)) TH_LOG("cannot install the filter");
	ASSERT_NE(11, WEXITSTATUS(st)) TH_LOG("post failed: %s",
					      xnic_strerror(zs->post_err));
	ASSERT_NE(13, WEXITSTATUS(st)) TH_LOG("bad CQE: %s",
					      xt_cqe_str((struct xnic_cqe *)&zs->bad));
	ASSERT_EQ(0, WEXITSTATUS(st)) TH_LOG("child exit %d",
					     WEXITSTATUS(st));
	ASSERT_EQ(2, zs->stage);
	ASSERT_EQ(ZS_N, zs->completed);
	ASSERT_BYTES(self->b.p, self->a.p, ZS_N * ZS_LEN,
		     "WRITEs of the filtered child");
	ASSERT_CANARY(self->b.p + ZS_N * ZS_LEN, GUARD, "after them");
	munmap(zs, 4096);
	/* The child's copies of the library state moved on: not reused. */
}

/*
 * A stream at default settings (idle_us 20): the poster's first posts
 * find the engine asleep and take the wakeup syscall; once they look like
 * a stream (8 in a row) the engine naps between the stream's posts
 * (NEED_WAKEUP clear) and the posts need none: fewer than one per 25 WQEs
 * here, where the first posts and each stall of 10 ms (the connection's
 * start under TCG) cost about eight (37-73 measured; 0.5-1 per WQE
 * before the engine napped).
 */
#define ST_N		4000
#define ST_LEN		4096
#define ST_SLOTS	(DP_BUF / ST_LEN)
#define ST_WINDOW	32

TEST_F_TIMEOUT(dp, stream_needs_no_wakeups, 180)
{
	uint64_t posted = 0, done = 0, naps0, naps1, w0;
	const char *dev = self->env.dev[0].name;
	struct xnic_qp *qp;
	struct xnic_cqe c[16];
	struct xnic_sge s;
	long long end;
	int r, k;

	CONN_UP(&self->env, &self->c, 256, NULL);
	qp = self->c.qp[0];
	xt_fill(self->a.p, DP_BUF, 90);
	naps0 = xt_hw_counter(dev, "engine_naps");
	ASSERT_NE(UINT64_MAX, naps0);
	w0 = qp->wakeups;
	end = xt_now_ms() + 60000;
	while (done < ST_N) {
		while (posted < ST_N && posted - done < ST_WINDOW) {
			size_t off = (posted % ST_SLOTS) * ST_LEN;

			s = sge_of(&self->a, off, ST_LEN);
			ASSERT_EQ(0, xnic_post_write(qp, &s, 1,
						     raddr_of(&self->b, off),
						     self->b.mr->rkey, posted,
						     XNIC_WQE_F_SIGNALED));
			posted++;
		}
		r = xnic_poll_cq(self->c.cq[0], c, 16);
		ASSERT_LE(0, r);
		for (k = 0; k < r; k++)
			ASSERT_EQ(XNIC_WC_SUCCESS, c[k].status)
				TH_LOG("WQE %llu: %s",
				       (unsigned long long)(done + k),
				       xt_cqe_str(&c[k]));
		done += r;
		ASSERT_GT(end, xt_now_ms())
			TH_LOG("stream stuck: %llu posted, %llu done",
			       (unsigned long long)posted,
			       (unsigned long long)done);
	}
	/* ib_core caches the counters for 10 ms. */
	xt_sleep_ms(20);
	naps1 = xt_hw_counter(dev, "engine_naps");
	TH_LOG("%d x %d B WRITEs: %llu wakeup syscalls, %llu engine naps",
	       ST_N, ST_LEN, (unsigned long long)(qp->wakeups - w0),
	       (unsigned long long)(naps1 - naps0));
	EXPECT_GT(ST_N / 25, qp->wakeups - w0)
		TH_LOG("a stream made a wakeup syscall per %.1f WQEs",
		       (double)ST_N / (double)(qp->wakeups - w0));
	EXPECT_LT(naps0, naps1) TH_LOG("the engine never napped");
	ASSERT_BYTES(self->b.p, self->a.p, DP_BUF, "the stream's WRITEs");
}

TEST_F_TIMEOUT(dp, idle_engine_sleeps_and_wakes, 120)
{
	struct xnic_sge s = sge_of(&self->a, 0, 4096);
	uint64_t t0[2], t1[2];
	struct xnic_cqe c;
	pid_t pid[2];
	int k;

	CONN_UP(&self->env, &self->c, 64, NULL);
	xt_fill(self->a.p, 4096, 70);
	xt_fill_byte(self->b.p, 8192, CANARY);
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1, raddr_of(&self->b, 0),
				     self->b.mr->rkey, 1, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	ASSERT_EQ(XNIC_WC_SUCCESS, c.status);

	/* Idle: the engines go to sleep and say so. */
	xt_sleep_ms(300);
	EXPECT_TRUE(*self->c.qp[0]->engine_flags & XNIC_ENGINE_NEED_WAKEUP)
		TH_LOG("%s: NEED_WAKEUP not set after 300 ms idle",
		       self->env.dev[0].name);
	EXPECT_TRUE(*self->c.qp[1]->engine_flags & XNIC_ENGINE_NEED_WAKEUP)
		TH_LOG("%s: NEED_WAKEUP not set after 300 ms idle",
		       self->env.dev[1].name);
	for (k = 0; k < 2; k++) {
		pid[k] = xt_engine_pid(self->env.dev[k].name);
		ASSERT_LT(0, pid[k]) TH_LOG("no thread xnic_eng/%s",
					    self->env.dev[k].name);
		ASSERT_EQ(0, xt_task_cpu_ns(pid[k], &t0[k]));
	}
	xt_sleep_ms(1000);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, xt_task_cpu_ns(pid[k], &t1[k]));
		TH_LOG("xnic_eng/%s: %.3f ms of CPU in 1 s idle",
		       self->env.dev[k].name, (t1[k] - t0[k]) / 1e6);
		/* HELLOs (1/s) wake it briefly; polling would be ~1000 ms. */
		EXPECT_GT(10 * 1000000ULL, t1[k] - t0[k])
			TH_LOG("idle engine xnic_eng/%s used %.3f ms of CPU in 1 s",
			       self->env.dev[k].name, (t1[k] - t0[k]) / 1e6);
	}
	/* The first post after idle wakes it (the D1 syscall) and completes. */
	ASSERT_TRUE(*self->c.qp[0]->engine_flags & XNIC_ENGINE_NEED_WAKEUP);
	xt_fill(self->a.p, 4096, 71);
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1,
				     raddr_of(&self->b, 4096),
				     self->b.mr->rkey, 2, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, 5000);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 2, 4096, self->c.qp[0]->qpn);
	ASSERT_BYTES(self->b.p + 4096, self->a.p, 4096, "WRITE after idle");
}

/* ------------------------------------------------------------ errors -- */

/*
 * On a fresh connection, post one @op of @len bytes from a (or into a,
 * for READ) against @raddr/@rkey at the target and expect it to complete
 * with @status; the next WQE is flushed and the SQ is flagged in error.
 * Target buffers b and b2, and for READ the local buffer a, must still
 * hold the canary.
 */
static void expect_error(struct __test_metadata *_metadata,
			 FIXTURE_DATA(dp) *self, enum op op, uint64_t raddr,
			 uint32_t rkey, uint32_t len, uint8_t status,
			 const char *what)
{
	struct xnic_sge s = sge_of(&self->a, 0, len);
	struct xnic_qp *qp0;
	struct xnic_cqe c;
	int err;

	xt_conn_destroy(&self->c);
	CONN_UP(&self->env, &self->c, 64, NULL);
	qp0 = self->c.qp[0];
	if (op == OP_READ)
		xt_fill_byte(self->a.p, DP_BUF, CANARY);
	else
		xt_fill(self->a.p, DP_BUF, 80);
	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	xt_fill_byte(self->b2.p, DP_BUF2, CANARY);
	if (op == OP_READ)
		err = xnic_post_read(qp0, &s, 1, raddr, rkey, 1,
				     XNIC_WQE_F_SIGNALED);
	else
		err = xnic_post_write(qp0, &s, 1, raddr, rkey, 1,
				      XNIC_WQE_F_SIGNALED);
	ASSERT_EQ(0, err);
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_EQ(status, c.status) TH_LOG("%s: %s", what, xt_cqe_str(&c));
	EXPECT_EQ(1, c.wr_id);
	EXPECT_EQ(qp0->qpn, c.qp_num);
	/* The QP is in error: what follows is flushed. */
	s = sge_of(&self->a, 0, 64);
	ASSERT_EQ(0, xnic_post_write(qp0, &s, 1, raddr_of(&self->b, 0),
				     self->b.mr->rkey, 2, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, c.status)
		TH_LOG("%s: WQE after the error: %s", what, xt_cqe_str(&c));
	EXPECT_EQ(2, c.wr_id);
	EXPECT_TRUE(__atomic_load_n(&qp0->sq.hdr->flags, __ATOMIC_ACQUIRE) &
		    XNIC_RING_F_ERROR) TH_LOG("%s: SQ not flagged in error", what);
	ASSERT_CANARY(self->b.p, DP_BUF, what);
	ASSERT_CANARY(self->b2.p, DP_BUF2, what);
	if (op == OP_READ)
		ASSERT_CANARY(self->a.p, DP_BUF, what);
}

TEST_F_TIMEOUT(dp, remote_bad_rkey, 120)
{
	uint32_t k = self->b.mr->rkey;
	uint64_t ra = raddr_of(&self->b, 0);

	expect_error(_metadata, self, OP_WRITE, ra, k ^ 0x100, 4096,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE, rkey of another slot");
	expect_error(_metadata, self, OP_WRITE, ra, k ^ 0x1, 4096,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE, rkey of another generation");
	expect_error(_metadata, self, OP_WRITE, ra, 0, 64,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE, rkey 0");
	expect_error(_metadata, self, OP_WRITE, ra, 0xffffffff, 20000,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE, rkey ~0");
	expect_error(_metadata, self, OP_READ, ra, k ^ 0x100, 4096,
		     XNIC_WC_REM_ACCESS_ERR, "READ, bad rkey");
	/* An rkey of the local device names nothing at the target. */
	expect_error(_metadata, self, OP_WRITE, raddr_of(&self->a, 0),
		     self->a.mr->rkey, 64, XNIC_WC_REM_ACCESS_ERR,
		     "WRITE, rkey of the requester's own MR");
}

TEST_F_TIMEOUT(dp, remote_dead_and_stale_rkeys, 120)
{
	struct xnic_mr *mr;
	uint32_t k1, k2;
	struct xnic_sge s;
	struct xnic_cqe c;
	uint8_t *p = self->b2.p;

	/* Deregistered. */
	ASSERT_EQ(0, xnic_reg_mr(self->env.dev[1].pd, p, DP_BUF2,
				 XT_ACCESS_ALL, &mr));
	k1 = mr->rkey;
	ASSERT_EQ(0, xnic_dereg_mr(mr));
	expect_error(_metadata, self, OP_WRITE, (uintptr_t)p, k1, 4096,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE, deregistered MR");
	expect_error(_metadata, self, OP_READ, (uintptr_t)p, k1, 4096,
		     XNIC_WC_REM_ACCESS_ERR, "READ, deregistered MR");

	/* Registered again: the old key stays dead, the new one works. */
	ASSERT_EQ(0, xnic_reg_mr(self->env.dev[1].pd, p, DP_BUF2,
				 XT_ACCESS_ALL, &mr));
	k2 = mr->rkey;
	EXPECT_NE(k1, k2) TH_LOG("re-registration reused rkey %#x", k1);
	expect_error(_metadata, self, OP_WRITE, (uintptr_t)p, k1, 4096,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE, stale rkey of a re-registered MR");
	xt_conn_destroy(&self->c);
	CONN_UP(&self->env, &self->c, 64, NULL);
	xt_fill(self->a.p, 4096, 81);
	s = sge_of(&self->a, 0, 4096);
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1, (uintptr_t)p + 100,
				     k2, 3, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_SUCCESS_CQE(c, XNIC_WC_RDMA_WRITE, 3, 4096, self->c.qp[0]->qpn);
	ASSERT_BYTES(p + 100, self->a.p, 4096, "WRITE with the new rkey");
	ASSERT_EQ(0, xnic_dereg_mr(mr));
}

TEST_F_TIMEOUT(dp, remote_out_of_range, 120)
{
	uint32_t k = self->b.mr->rkey;
	uint32_t mtu = self->env.dev[0].payload_mtu;
	uint64_t base = raddr_of(&self->b, 0);

	expect_error(_metadata, self, OP_WRITE, base + DP_BUF - 10, k, 20,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE ending past the MR");
	expect_error(_metadata, self, OP_WRITE, base + DP_BUF, k, 1,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE starting at the MR's end");
	expect_error(_metadata, self, OP_WRITE, base - 1, k, 2,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE starting before the MR");
	/* Multi-frame: no frame of it may land. */
	expect_error(_metadata, self, OP_WRITE, base + DP_BUF - mtu, k,
		     3 * mtu, XNIC_WC_REM_ACCESS_ERR,
		     "3-frame WRITE whose last frame is past the MR");
	expect_error(_metadata, self, OP_WRITE, UINT64_MAX - 15, k, 64,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE wrapping around 2^64");
	expect_error(_metadata, self, OP_WRITE, UINT64_MAX - 15, k, 16,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE to the last 16 bytes of 2^64");
	expect_error(_metadata, self, OP_READ, base + DP_BUF - 10, k, 20,
		     XNIC_WC_REM_ACCESS_ERR, "READ ending past the MR");
	expect_error(_metadata, self, OP_READ, UINT64_MAX - 15, k, 64,
		     XNIC_WC_REM_ACCESS_ERR, "READ wrapping around 2^64");
}

TEST_F_TIMEOUT(dp, remote_access_rights, 120)
{
	struct xt_dev *d1 = &self->env.dev[1];
	struct xnic_pd *pd2;
	struct xnic_mr *mr;
	uint8_t *p = self->b2.p;

	/* No REMOTE_WRITE. */
	ASSERT_EQ(0, xnic_reg_mr(d1->pd, p, DP_BUF2, XNIC_ACCESS_LOCAL_WRITE |
				 XNIC_ACCESS_REMOTE_READ, &mr));
	expect_error(_metadata, self, OP_WRITE, (uintptr_t)p, mr->rkey, 64,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE to an MR without REMOTE_WRITE");
	ASSERT_EQ(0, xnic_dereg_mr(mr));
	/* No REMOTE_READ. */
	ASSERT_EQ(0, xnic_reg_mr(d1->pd, p, DP_BUF2, XNIC_ACCESS_LOCAL_WRITE |
				 XNIC_ACCESS_REMOTE_WRITE, &mr));
	expect_error(_metadata, self, OP_READ, (uintptr_t)p, mr->rkey, 64,
		     XNIC_WC_REM_ACCESS_ERR, "READ from an MR without REMOTE_READ");
	ASSERT_EQ(0, xnic_dereg_mr(mr));
	/* Local access only. */
	ASSERT_EQ(0, xnic_reg_mr(d1->pd, p, DP_BUF2, 0, &mr));
	expect_error(_metadata, self, OP_READ, (uintptr_t)p, mr->rkey, 64,
		     XNIC_WC_REM_ACCESS_ERR, "READ from a local-only MR");
	ASSERT_EQ(0, xnic_dereg_mr(mr));
	/* The MR of another PD than the target QP's. */
	ASSERT_EQ(0, xnic_alloc_pd(d1->ctx, &pd2));
	ASSERT_EQ(0, xnic_reg_mr(pd2, p, DP_BUF2, XT_ACCESS_ALL, &mr));
	expect_error(_metadata, self, OP_WRITE, (uintptr_t)p, mr->rkey, 64,
		     XNIC_WC_REM_ACCESS_ERR, "WRITE to an MR of another PD");
	expect_error(_metadata, self, OP_READ, (uintptr_t)p, mr->rkey, 64,
		     XNIC_WC_REM_ACCESS_ERR, "READ from an MR of another PD");
	ASSERT_EQ(0, xnic_dereg_mr(mr));
	ASSERT_EQ(0, xnic_dealloc_pd(pd2));
}

TEST_F_TIMEOUT(dp, send_longer_than_receive, 60)
{
	struct xnic_sge s = sge_of(&self->a, 0, 5000);
	struct xnic_sge rs = sge_of(&self->b, 0, 4999);
	struct xnic_cqe c;

	CONN_UP(&self->env, &self->c, 64, NULL);
	xt_fill(self->a.p, 5000, 90);
	xt_fill_byte(self->b.p, 10000, CANARY);
	ASSERT_EQ(0, xnic_post_recv(self->c.qp[1], &rs, 1, 40));
	ASSERT_EQ(0, xnic_post_send(self->c.qp[0], &s, 1, 41,
				    XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_EQ(XNIC_WC_REM_INV_REQ_ERR, c.status) TH_LOG("%s", xt_cqe_str(&c));
	EXPECT_EQ(41, c.wr_id);
	REAP(self->c.cq[1], &c, XT_WAIT_MS);
	EXPECT_EQ(XNIC_WC_LOC_LEN_ERR, c.status) TH_LOG("%s", xt_cqe_str(&c));
	EXPECT_EQ(40, c.wr_id);
	/* Bytes past the receive buffer were never written. */
	ASSERT_CANARY(self->b.p + 4999, 10000 - 4999, "past the receive buffer");
}

/* A QP that may not send (RESET, INIT) fails its WQEs locally. */
TEST_F_TIMEOUT(dp, post_in_wrong_state, 60)
{
	struct xnic_sge s = sge_of(&self->a, 0, 64);
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	struct xnic_cqe c;
	int state, k;

	xt_fill_byte(self->b.p, DP_BUF, CANARY);
	ASSERT_EQ(0, xnic_create_cq(self->env.dev[0].ctx, 16, &cq));
	for (state = 0; state < 2; state++) {
		const char *name = state ? "INIT" : "RESET";

		ASSERT_EQ(0, xnic_create_qp(self->env.dev[0].pd, cq, cq, NULL,
					    &qp));
		if (state)
			ASSERT_EQ(0, xt_qp_to_init(qp)) TH_LOG("%s", xt_error());
		/* The library refuses at once and leaves the QP alone. */
		EXPECT_EQ(-ENOTCONN,
			  xnic_post_write(qp, &s, 1, raddr_of(&self->b, 0),
					  self->b.mr->rkey, 1,
					  XNIC_WQE_F_SIGNALED));
		EXPECT_EQ(-ENOTCONN, xnic_post_send(qp, &s, 1, 1, 0));
		EXPECT_FALSE(__atomic_load_n(&qp->sq.hdr->flags,
					     __ATOMIC_ACQUIRE) &
			     XNIC_RING_F_ERROR);
		EXPECT_EQ(0, xt_quiet(cq, &c, 1, 100));
		/* Written to the ring anyway: the kernel fails them. */
		for (k = 1; k <= 2; k++) {
			struct xnic_sq_wqe *w = xnic_sq_get_wqe(qp);

			ASSERT_NE(NULL, w);
			ASSERT_EQ(0, xnic_prep_write(w, &s, 1,
						     raddr_of(&self->b, 0),
						     self->b.mr->rkey, k,
						     XNIC_WQE_F_SIGNALED));
		}
		ASSERT_LE(0, xnic_sq_submit(qp));
		REAP(cq, &c, XT_WAIT_MS);
		EXPECT_EQ(XNIC_WC_LOC_QP_OP_ERR, c.status)
			TH_LOG("%s: %s", name, xt_cqe_str(&c));
		EXPECT_EQ(1, c.wr_id);
		REAP(cq, &c, XT_WAIT_MS);
		EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, c.status)
			TH_LOG("%s: %s", name, xt_cqe_str(&c));
		EXPECT_EQ(2, c.wr_id);
		EXPECT_TRUE(__atomic_load_n(&qp->sq.hdr->flags,
					    __ATOMIC_ACQUIRE) &
			    XNIC_RING_F_ERROR);
		ASSERT_EQ(0, xnic_destroy_qp(qp));
	}
	ASSERT_EQ(0, xnic_destroy_cq(cq));
	ASSERT_CANARY(self->b.p, DP_BUF, "target of a QP that never connected");
}

int main(int argc, char **argv)
{
	return xt_harness_main(argc, argv);
}
