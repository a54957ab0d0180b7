// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_hostile_test - a process that writes nonsense into the memory it
 * shares with the kernel: garbage ring indices (SQ and RQ producers, CQ
 * consumer, doorbell bitmap), WQEs with too many SGEs, too much inline
 * data, garbage keys and opcodes, receive WQEs likewise, WQEs rewritten
 * after the doorbell (one snapshot must be used: old or new fields, never
 * a mixture inside a field), rings unmapped while the engine uses them,
 * a CQ that overflows, and processes that close the device or are killed
 * mid-transfer. The kernel must never oops; the culprit QP or CQ goes to
 * the error state (with its async event) and everything else keeps
 * working; killed processes leave nothing behind (`rdma resource show`,
 * pinned memory); and at the end `rmmod xnic` succeeds.
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"
#include "priv.h"	/* struct xnic_ctx: its mapped page */

#define CANARY		0x5a
#define XT_TAG		"ho"
#include "xt_harness.h"
#define HO_BUF		(1 * MiB)

static struct xnic_sge sge_of(const struct xt_buf *b, size_t off, uint32_t len)
{
	struct xnic_sge s = {
		.addr = (uintptr_t)(b->p + off), .length = len,
		.lkey = b->mr->lkey,
	};

	return s;
}

FIXTURE(ho) {
	struct xt_env env;
	struct xt_conn c;
	struct xt_buf a, b;
};

FIXTURE_SETUP(ho)
{
	ENV_UP(&self->env);
	BUF_UP(&self->env.dev[0], &self->a, HO_BUF, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, HO_BUF, XT_ACCESS_ALL);
}

FIXTURE_TEARDOWN(ho)
{
	xt_conn_destroy(&self->c);
	xt_buf_free(&self->a);
	xt_buf_free(&self->b);
	xt_env_teardown(&self->env);
}

/*
 * The devices still work: a fresh QP pair moves a WRITE, a READ and a
 * SEND byte-exactly between fresh buffers.
 */
static void check_alive(struct __test_metadata *_metadata,
			FIXTURE_DATA(ho) *self)
{
	struct xt_buf a, b;
	struct xt_conn c;
	struct xnic_sge s, rs;
	struct xnic_cqe cqe;
	const size_t len = 100000;

	BUF_UP(&self->env.dev[0], &a, 4 * len, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &b, 4 * len, XT_ACCESS_ALL);
	CONN_UP(&self->env, &c, 16, NULL);
	xt_fill(a.p, 4 * len, 1234);
	memset(b.p, 0, 4 * len);

	s = sge_of(&a, 0, len);
	ASSERT_EQ(0, xnic_post_write(c.qp[0], &s, 1, (uintptr_t)b.p,
				     b.mr->rkey, 1, XNIC_WQE_F_SIGNALED));
	REAP(c.cq[0], &cqe, XT_WAIT_MS);
	ASSERT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	ASSERT_EQ(-1, xt_diff(b.p, a.p, len)) TH_LOG("WRITE after the abuse");

	s = sge_of(&a, 2 * len, len);
	ASSERT_EQ(0, xnic_post_read(c.qp[0], &s, 1, (uintptr_t)b.p,
				    b.mr->rkey, 2, XNIC_WQE_F_SIGNALED));
	REAP(c.cq[0], &cqe, XT_WAIT_MS);
	ASSERT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	ASSERT_EQ(-1, xt_diff(a.p + 2 * len, a.p, len))
		TH_LOG("READ after the abuse");

	rs = sge_of(&b, 2 * len, (uint32_t)len);
	ASSERT_EQ(0, xnic_post_recv(c.qp[1], &rs, 1, 3));
	s = sge_of(&a, len, len);
	ASSERT_EQ(0, xnic_post_send(c.qp[0], &s, 1, 4, XNIC_WQE_F_SIGNALED));
	REAP(c.cq[1], &cqe, XT_WAIT_MS);
	ASSERT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	ASSERT_EQ(len, cqe.byte_len);
	REAP(c.cq[0], &cqe, XT_WAIT_MS);
	ASSERT_EQ(XNIC_WC_SUCCESS, cqe.status) TH_LOG("%s", xt_cqe_str(&cqe));
	ASSERT_EQ(-1, xt_diff(b.p + 2 * len, a.p + len, len))
		TH_LOG("SEND after the abuse");

	xt_conn_destroy(&c);
	xt_buf_free(&a);
	xt_buf_free(&b);
}

/* Poll until a ring header carries XNIC_RING_F_ERROR. */
static bool ring_error_within(struct xnic_ring_hdr *hdr, int ms)
{
	long long end = xt_now_ms() + ms;

	do {
		if (__atomic_load_n(&hdr->flags, __ATOMIC_ACQUIRE) &
		    XNIC_RING_F_ERROR)
			return true;
		xt_sleep_ms(5);
	} while (xt_now_ms() < end);
	return false;
}

/* ------------------------------------------------------- ring indices -- */

TEST_F_TIMEOUT(ho, sq_producer_garbage, 120)
{
	uint32_t bad[] = { 1000000, 0xffffffffu, 129, 0x80000000u };
	struct xnic_cqe c[8];
	struct xnic_qp *qp;
	size_t k;
	int n, i;

	xt_fill_byte(self->b.p, HO_BUF, CANARY);
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		xt_conn_destroy(&self->c);
		CONN_UP(&self->env, &self->c, 64, NULL);
		qp = self->c.qp[0];
		/* A producer index far ahead of (or behind) the consumer. */
		__atomic_store_n(&qp->sq.hdr->producer,
				 qp->sq.hdr->consumer + bad[k],
				 __ATOMIC_RELEASE);
		ASSERT_EQ(0, xnic_qp_doorbell(qp));
		ASSERT_TRUE(ring_error_within(qp->sq.hdr, XT_WAIT_MS))
			TH_LOG("producer +%#x: the QP did not go to error",
			       bad[k]);
		ASSERT_EQ(0, xt_wait_async(self->env.dev[0].ctx,
					   XNIC_EVENT_QP_FATAL, qp, NULL,
					   XT_WAIT_MS)) TH_LOG("%s", xt_error());
		/* Whatever completes is not a success. */
		n = xt_quiet(self->c.cq[0], c, 8, 100);
		for (i = 0; i < n && i < 8; i++)
			EXPECT_NE(XNIC_WC_SUCCESS, c[i].status)
				TH_LOG("%s", xt_cqe_str(&c[i]));
	}
	ASSERT_CANARY(self->b.p, HO_BUF, "target");
	check_alive(_metadata, self);
}

TEST_F_TIMEOUT(ho, rq_producer_garbage, 120)
{
	struct xnic_sge s = sge_of(&self->a, 0, 1000);
	struct xnic_qp *qp1;
	struct xnic_cqe c;

	CONN_UP(&self->env, &self->c, 64, NULL);
	qp1 = self->c.qp[1];
	xt_fill_byte(self->b.p, HO_BUF, CANARY);
	__atomic_store_n(&qp1->rq.hdr->producer,
			 qp1->rq.hdr->consumer + 5000000, __ATOMIC_RELEASE);
	/* A SEND makes the responder read that RQ. */
	ASSERT_EQ(0, xnic_post_send(self->c.qp[0], &s, 1, 1,
				    XNIC_WQE_F_SIGNALED));
	ASSERT_TRUE(ring_error_within(qp1->rq.hdr, XT_WAIT_MS))
		TH_LOG("the responder QP did not go to error");
	ASSERT_EQ(0, xt_wait_async(self->env.dev[1].ctx, XNIC_EVENT_QP_FATAL,
				   qp1, NULL, XT_WAIT_MS)) TH_LOG("%s", xt_error());
	/* The requester gets an error (NAK or retries exhausted). */
	REAP(self->c.cq[0], &c, 60000);
	EXPECT_NE(XNIC_WC_SUCCESS, c.status) TH_LOG("%s", xt_cqe_str(&c));
	EXPECT_EQ(1, c.wr_id);
	ASSERT_CANARY(self->b.p, HO_BUF, "responder memory");
	check_alive(_metadata, self);
}

TEST_F_TIMEOUT(ho, cq_consumer_garbage, 60)
{
	struct xnic_sge s = sge_of(&self->a, 0, 64);
	struct xnic_cq *cq;
	struct xnic_cqe c;

	CONN_UP(&self->env, &self->c, 64, NULL);
	cq = self->c.cq[0];
	/* The consumer claims to be ahead of the producer. */
	__atomic_store_n(&cq->hdr->consumer, cq->hdr->producer + 5000,
			 __ATOMIC_RELEASE);
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1, (uintptr_t)self->b.p,
				     self->b.mr->rkey, 1, XNIC_WQE_F_SIGNALED));
	ASSERT_TRUE(ring_error_within(cq->hdr, XT_WAIT_MS))
		TH_LOG("the CQ did not go to error");
	ASSERT_EQ(0, xt_wait_async(self->env.dev[0].ctx, XNIC_EVENT_CQ_ERR,
				   NULL, cq, XT_WAIT_MS)) TH_LOG("%s", xt_error());
	/* The kernel counts a consumer that claims too much as an overflow. */
	EXPECT_EQ(-EOVERFLOW, xnic_poll_cq(cq, &c, 1));
	check_alive(_metadata, self);
}

TEST_F_TIMEOUT(ho, doorbell_garbage, 60)
{
	struct xnic_ctx_page *page = self->env.dev[0].ctx->page;
	int k, round;

	CONN_UP(&self->env, &self->c, 64, NULL);
	/* Every doorbell of every slot, over and over; flags scribbled. */
	for (round = 0; round < 200; round++) {
		for (k = 0; k < XNIC_DB_WORDS; k++)
			__atomic_store_n(&page->db_bits[k], ~0ULL,
					 __ATOMIC_RELAXED);
		__atomic_store_n(&page->db_summary, ~0ULL, __ATOMIC_SEQ_CST);
		__atomic_store_n(&page->engine_flags, 0xfffffffeu,
				 __ATOMIC_RELAXED);
		ASSERT_EQ(0, xnic_qp_wakeup(self->c.qp[0]));
		if (round % 50 == 0)
			xt_sleep_ms(20);
	}
	__atomic_store_n(&page->engine_flags, 0, __ATOMIC_RELAXED);
	check_alive(_metadata, self);
}

/* ------------------------------------------------------ WQE contents -- */

/*
 * On a fresh connection, post @w as it is (raw, through the ring) and
 * expect its CQE with @status; the QP is then in error (the next WQE is
 * flushed, the SQ flagged) and nothing reached the target.
 */
static void expect_raw_sq(struct __test_metadata *_metadata,
			  FIXTURE_DATA(ho) *self, const struct xnic_sq_wqe *w,
			  uint8_t status, const char *what)
{
	struct xnic_sge s = sge_of(&self->a, 0, 64);
	struct xnic_sq_wqe *slot;
	struct xnic_qp *qp;
	struct xnic_cqe c;

	xt_conn_destroy(&self->c);
	CONN_UP(&self->env, &self->c, 64, NULL);
	qp = self->c.qp[0];
	xt_fill(self->a.p, HO_BUF, 5);
	xt_fill_byte(self->b.p, HO_BUF, CANARY);
	slot = xnic_sq_get_wqe(qp);
	ASSERT_NE(NULL, slot);
	memcpy(slot, w, sizeof(*w));
	ASSERT_EQ(1, xnic_sq_submit(qp));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_EQ(status, c.status) TH_LOG("%s: %s", what, xt_cqe_str(&c));
	EXPECT_EQ(w->wr_id, c.wr_id) TH_LOG("%s", what);
	ASSERT_EQ(0, xnic_post_write(qp, &s, 1, (uintptr_t)self->b.p,
				     self->b.mr->rkey, 2, XNIC_WQE_F_SIGNALED));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	EXPECT_EQ(XNIC_WC_WR_FLUSH_ERR, c.status)
		TH_LOG("%s: next WQE: %s", what, xt_cqe_str(&c));
	EXPECT_TRUE(__atomic_load_n(&qp->sq.hdr->flags, __ATOMIC_ACQUIRE) &
		    XNIC_RING_F_ERROR) TH_LOG("%s: SQ not in error", what);
	ASSERT_CANARY(self->b.p, HO_BUF, what);
}

/* A signaled RDMA WRITE of a[0..len) to b[0..len). */
static struct xnic_sq_wqe good_write(FIXTURE_DATA(ho) *self, uint32_t len)
{
	struct xnic_sq_wqe w;

	memset(&w, 0, sizeof(w));
	w.wr_id = 77;
	w.opcode = XNIC_WR_RDMA_WRITE;
	w.flags = XNIC_WQE_F_SIGNALED;
	w.num_sge = 1;
	w.remote_addr = (uintptr_t)self->b.p;
	w.rkey = self->b.mr->rkey;
	w.sge[0] = sge_of(&self->a, 0, len);
	return w;
}

TEST_F_TIMEOUT(ho, sq_wqe_lengths, 120)
{
	struct xnic_sq_wqe w;

	w = good_write(self, 64);
	w.num_sge = XNIC_MAX_SGE + 1;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_LEN_ERR,
		      "num_sge = max + 1");
	w.num_sge = 255;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_LEN_ERR,
		      "num_sge = 255");

	w = good_write(self, 64);
	w.flags |= XNIC_WQE_F_INLINE;
	w.inline_len = XNIC_MAX_INLINE + 1;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_LEN_ERR,
		      "inline_len = max + 1");
	w.inline_len = 0xffffffff;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_LEN_ERR,
		      "inline_len = 2^32 - 1");

	/* SGE lengths that overflow 32 bits when added up. */
	w = good_write(self, 64);
	w.num_sge = 2;
	w.sge[0].length = 0xffffffff;
	w.sge[1] = sge_of(&self->a, 0, 2);
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "SGE of 4 GiB - 1 in a 1 MiB MR");
}

TEST_F_TIMEOUT(ho, sq_wqe_keys_and_addresses, 120)
{
	struct xnic_pd *pd2;
	struct xnic_mr *mr2;
	struct xnic_sq_wqe w;

	w = good_write(self, 64);
	w.sge[0].lkey = 0xdeadbeef;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR, "lkey garbage");
	w.sge[0].lkey = self->b.mr->lkey;	/* the other device's */
	w.sge[0].addr = (uintptr_t)self->b.p;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "lkey of another device");
	w = good_write(self, 64);
	w.sge[0].addr = (uintptr_t)self->a.p + HO_BUF - 10;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "SGE ending past its MR");
	w.sge[0].addr = UINT64_MAX - 31;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "SGE wrapping around 2^64");
	w = good_write(self, 64);
	w.num_sge = 3;
	w.sge[1] = sge_of(&self->a, 100, 10);
	w.sge[2] = sge_of(&self->a, 200, 10);
	w.sge[2].lkey ^= 0x100;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "third SGE with a bad lkey");

	/* The lkey of an MR in another PD of the same context. */
	ASSERT_EQ(0, xnic_alloc_pd(self->env.dev[0].ctx, &pd2));
	ASSERT_EQ(0, xnic_reg_mr(pd2, self->a.p, HO_BUF, XT_ACCESS_ALL, &mr2));
	w = good_write(self, 64);
	w.sge[0].lkey = mr2->lkey;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "lkey of another PD");
	xt_conn_destroy(&self->c);
	ASSERT_EQ(0, xnic_dereg_mr(mr2));
	ASSERT_EQ(0, xnic_dealloc_pd(pd2));

	/* A READ into memory without LOCAL_WRITE. */
	ASSERT_EQ(0, xnic_reg_mr(self->env.dev[0].pd, self->a.p, HO_BUF, 0,
				 &mr2));
	w = good_write(self, 64);
	w.opcode = XNIC_WR_RDMA_READ;
	w.sge[0].lkey = mr2->lkey;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_PROT_ERR,
		      "READ into a read-only MR");
	xt_conn_destroy(&self->c);
	ASSERT_EQ(0, xnic_dereg_mr(mr2));
}

TEST_F_TIMEOUT(ho, sq_wqe_opcodes, 120)
{
	uint8_t ops[] = { 5, 99, 255 };
	struct xnic_sq_wqe w;
	size_t k;

	for (k = 0; k < sizeof(ops); k++) {
		w = good_write(self, 64);
		w.opcode = ops[k];
		expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_QP_OP_ERR,
			      "unknown opcode");
	}
	w = good_write(self, 64);
	w.opcode = XNIC_WR_RDMA_READ;
	w.flags |= XNIC_WQE_F_INLINE;
	w.inline_len = 10;
	expect_raw_sq(_metadata, self, &w, XNIC_WC_LOC_QP_OP_ERR,
		      "inline READ");
	check_alive(_metadata, self);
}

/* Flag bits and reserved bytes nobody defined: no crash, a clean CQE. */
TEST_F_TIMEOUT(ho, sq_wqe_unknown_bits, 60)
{
	struct xnic_sq_wqe w = good_write(self, 64), *slot;
	struct xnic_cqe c;

	CONN_UP(&self->env, &self->c, 64, NULL);
	xt_fill(self->a.p, 64, 6);
	w.flags |= 0xf8;
	w.reserved0 = 0xff;
	slot = xnic_sq_get_wqe(self->c.qp[0]);
	ASSERT_NE(NULL, slot);
	memcpy(slot, &w, sizeof(w));
	ASSERT_EQ(1, xnic_sq_submit(self->c.qp[0]));
	REAP(self->c.cq[0], &c, XT_WAIT_MS);
	TH_LOG("unknown flag bits: %s", xt_cqe_str(&c));
	if (c.status == XNIC_WC_SUCCESS)
		ASSERT_EQ(-1, xt_diff(self->b.p, self->a.p, 64));
	check_alive(_metadata, self);
}

/* Receive WQEs: too many SGEs, garbage keys. */
TEST_F_TIMEOUT(ho, rq_wqe_garbage, 120)
{
	struct xnic_sge s = sge_of(&self->a, 0, 100);
	struct xnic_rq_wqe *r;
	struct xnic_cqe c;
	int k;

	for (k = 0; k < 3; k++) {
		xt_conn_destroy(&self->c);
		CONN_UP(&self->env, &self->c, 64, NULL);
		xt_fill_byte(self->b.p, HO_BUF, CANARY);
		r = xnic_rq_get_wqe(self->c.qp[1]);
		ASSERT_NE(NULL, r);
		memset(r, 0, sizeof(*r));
		r->wr_id = 30 + k;
		r->num_sge = 1;
		r->sge[0] = sge_of(&self->b, 0, 4096);
		if (k == 0)
			r->num_sge = XNIC_MAX_RECV_SGE + 1;
		else if (k == 1)
			r->sge[0].lkey = 0xdeadbeef;
		else
			r->sge[0].addr = UINT64_MAX - 100;
		xnic_rq_submit(self->c.qp[1]);
		ASSERT_EQ(0, xnic_post_send(self->c.qp[0], &s, 1, 40 + k,
					    XNIC_WQE_F_SIGNALED));
		REAP(self->c.cq[1], &c, XT_WAIT_MS);
		EXPECT_EQ(k == 0 ? XNIC_WC_LOC_QP_OP_ERR : XNIC_WC_LOC_PROT_ERR,
			  c.status) TH_LOG("receive WQE %d: %s", k,
					   xt_cqe_str(&c));
		EXPECT_EQ(30 + k, c.wr_id);
		REAP(self->c.cq[0], &c, XT_WAIT_MS);
		EXPECT_EQ(XNIC_WC_REM_OP_ERR, c.status)
			TH_LOG("requester of receive WQE %d: %s", k,
			       xt_cqe_str(&c));
		ASSERT_CANARY(self->b.p, HO_BUF, "receive side");
	}
	check_alive(_metadata, self);
}

/* ------------------------------------------------- rewritten WQEs ---- */

/*
 * The kernel copies a WQE once and uses only the copy. Here every WQE is
 * rewritten right after its doorbell: the remote address, the source
 * address and the length each flip between two values that differ in a
 * single bit, so whatever the copy caught, field by field, is a valid
 * WQE. Each must complete with success and its bytes must be where its
 * snapshot said, whole, with its length in the CQE, and nowhere else.
 */
#define RW_N		384
#define RW_SLOT		(8 * KiB)
#define RW_RBIT		(4 * MiB)	/* flips the remote address */
#define RW_SBIT		(2 * MiB)	/* flips the source address */

TEST_F_TIMEOUT(ho, wqe_rewritten_after_doorbell, 300)
{
	struct xt_buf big_a, big_b;
	uint8_t *ra, *sa;	/* aligned windows */
	struct xnic_cqe c[16];
	struct xnic_sq_wqe *w;
	struct xnic_sge s;
	uint32_t posted = 0, done = 0, k;
	int n, outcomes[2][2] = { { 0 } };

	BUF_UP(&self->env.dev[0], &big_a, 8 * MiB, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &big_b, 16 * MiB, XT_ACCESS_ALL);
	sa = (uint8_t *)(((uintptr_t)big_a.p + 4 * MiB - 1) & ~(4 * MiB - 1));
	ra = (uint8_t *)(((uintptr_t)big_b.p + 8 * MiB - 1) & ~(8 * MiB - 1));
	ASSERT_LE(sa + 4 * MiB, big_a.p + big_a.len);
	ASSERT_LE(ra + 8 * MiB, big_b.p + big_b.len);
	for (k = 0; k < RW_N; k++) {
		xt_fill(sa + k * 4096, 4096, k);
		xt_fill(sa + RW_SBIT + k * 4096, 4096, 100000 + k);
	}
	xt_fill_byte(big_b.p, big_b.len, CANARY);
	CONN_UP(&self->env, &self->c, 256, NULL);

	while (done < RW_N) {
		while (posted < RW_N && posted - done < 64 &&
		       (w = xnic_sq_get_wqe(self->c.qp[0]))) {
			s.addr = (uintptr_t)(sa + posted * 4096);
			s.length = 4096;
			s.lkey = big_a.mr->lkey;
			ASSERT_EQ(0, xnic_prep_write(w, &s, 1,
						     (uintptr_t)(ra + posted *
								 RW_SLOT),
						     big_b.mr->rkey, posted,
						     XNIC_WQE_F_SIGNALED));
			ASSERT_EQ(1, xnic_sq_submit(self->c.qp[0]));
			/* After the doorbell: three single-bit flips. */
			__atomic_store_n(&w->remote_addr,
					 w->remote_addr ^ RW_RBIT,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&w->sge[0].addr,
					 w->sge[0].addr ^ RW_SBIT,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&w->sge[0].length, 2048,
					 __ATOMIC_RELAXED);
			posted++;
		}
		n = xt_reap(self->c.cq[0], c, 1, XT_WAIT_MS);
		ASSERT_EQ(1, n) TH_LOG("%s", xt_error());
		ASSERT_EQ(XNIC_WC_SUCCESS, c[0].status)
			TH_LOG("WQE %u: %s", done, xt_cqe_str(&c[0]));
		ASSERT_EQ(done, c[0].wr_id);
		/* Check WQE 'done' now: its snapshot is fixed. */
		{
			uint8_t *x = ra + done * RW_SLOT, *y = x + RW_RBIT;
			uint8_t *s0 = sa + done * 4096, *s1 = s0 + RW_SBIT;
			uint32_t len = c[0].byte_len;
			bool at_y = xt_check_byte(x, RW_SLOT, CANARY) == -1;
			uint8_t *dst = at_y ? y : x, *other = at_y ? x : y;
			bool new_src;

			ASSERT_TRUE(len == 4096 || len == 2048)
				TH_LOG("WQE %u: byte_len %u", done, len);
			ASSERT_EQ(-1, xt_check_byte(other, RW_SLOT, CANARY))
				TH_LOG("WQE %u: bytes at both remote addresses",
				       done);
			new_src = xt_diff(dst, s0, len) != -1;
			ASSERT_EQ(-1, xt_diff(dst, new_src ? s1 : s0, len))
				TH_LOG("WQE %u: %u bytes at %s address match neither source",
				       done, len, at_y ? "new" : "old");
			ASSERT_EQ(-1, xt_check_byte(dst + len, RW_SLOT - len,
						    CANARY))
				TH_LOG("WQE %u: bytes past its %u", done, len);
			outcomes[at_y][new_src]++;
		}
		done++;
	}
	TH_LOG("snapshots (remote old/new x source old/new): %d %d %d %d",
	       outcomes[0][0], outcomes[0][1], outcomes[1][0], outcomes[1][1]);
	xt_conn_destroy(&self->c);
	xt_buf_free(&big_a);
	xt_buf_free(&big_b);
	check_alive(_metadata, self);
}

struct scribbler {
	volatile bool stop;
	uint8_t *area;
	size_t len;
	uint64_t seed;
	unsigned long writes;
};

static void *scribble(void *arg)
{
	struct scribbler *sc = arg;
	uint64_t x = sc->seed;

	while (!sc->stop) {
		size_t off;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		off = (size_t)(x % (sc->len / 8)) * 8;
		__atomic_store_n((uint64_t *)(sc->area + off), x * 0x2545f4914f6cdd1dULL,
				 __ATOMIC_RELAXED);
		sc->writes++;
	}
	return NULL;
}

/*
 * A thread writes random words all over the SQ while WQEs flow. Each
 * round lasts until the QP fails (it soon does) or 200 ms; then a fresh
 * pair. Any outcome but an oops is allowed for the victim.
 */
TEST_F_TIMEOUT(ho, wqe_scribbled_by_a_thread, 180)
{
	unsigned long posted = 0, ok = 0, bad = 0, writes = 0;
	struct xnic_cqe c[16];
	struct xnic_sge s;
	struct scribbler sc;
	struct xnic_qp *qp;
	pthread_t th;
	long long end;
	int round, n, i, err;

	for (round = 0; round < 25; round++) {
		CONN_UP(&self->env, &self->c, 256, NULL);
		qp = self->c.qp[0];
		memset(&sc, 0, sizeof(sc));
		sc.area = qp->sq.wqes;
		sc.len = (size_t)qp->sq.entries * sizeof(struct xnic_sq_wqe);
		sc.seed = 0x9e3779b97f4a7c15ULL * (round + 1);
		ASSERT_EQ(0, pthread_create(&th, NULL, scribble, &sc));
		end = xt_now_ms() + 200;
		while (xt_now_ms() < end &&
		       !(__atomic_load_n(&qp->sq.hdr->flags, __ATOMIC_ACQUIRE) &
			 XNIC_RING_F_ERROR)) {
			s = sge_of(&self->a, (posted % 64) * 4096, 4096);
			err = xnic_post_write(qp, &s, 1, (uintptr_t)self->b.p +
					      (posted % 64) * 4096,
					      self->b.mr->rkey, posted,
					      XNIC_WQE_F_SIGNALED);
			if (!err)
				posted++;
			n = xnic_poll_cq(self->c.cq[0], c, 16);
			if (n < 0)
				break;
			for (i = 0; i < n; i++) {
				if (c[i].status == XNIC_WC_SUCCESS)
					ok++;
				else
					bad++;
			}
		}
		sc.stop = true;
		pthread_join(th, NULL);
		writes += sc.writes;
		/* Destroyed with whatever is still in flight. */
		xt_conn_destroy(&self->c);
	}
	TH_LOG("25 rounds: %lu posted, %lu completed ok, %lu with errors; %lu random words written",
	       posted, ok, bad, writes);
	check_alive(_metadata, self);
}

/* ------------------------------------------------ unmapped rings ----- */

TEST_F_TIMEOUT(ho, rings_unmapped_mid_transfer, 120)
{
	struct xt_buf big_a, big_b;
	struct xnic_sge s, rs;
	struct xnic_qp *q0, *q1;
	struct xnic_cq *c0, *c1;
	int k;

	BUF_UP(&self->env.dev[0], &big_a, 32 * MiB, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &big_b, 32 * MiB, XT_ACCESS_ALL);
	CONN_UP(&self->env, &self->c, 64, NULL);
	q0 = self->c.qp[0];
	q1 = self->c.qp[1];
	c0 = self->c.cq[0];
	c1 = self->c.cq[1];
	for (k = 0; k < 8; k++) {
		rs = sge_of(&big_b, (size_t)k * 4 * MiB, 4 * MiB);
		ASSERT_EQ(0, xnic_post_recv(q1, &rs, 1, k));
		s = sge_of(&big_a, (size_t)k * 4 * MiB, 4 * MiB);
		ASSERT_EQ(0, xnic_post_write(q0, &s, 1,
					     (uintptr_t)big_b.p + k * 4 * MiB,
					     big_b.mr->rkey, k,
					     XNIC_WQE_F_SIGNALED));
		ASSERT_EQ(0, xnic_post_send(q0, &s, 1, 100 + k,
					    XNIC_WQE_F_SIGNALED));
	}
	/* Pull every ring out from under the engines. */
	ASSERT_EQ(0, munmap(q0->sq_map, q0->sq_map_size));
	ASSERT_EQ(0, munmap(q0->rq_map, q0->rq_map_size));
	ASSERT_EQ(0, munmap(q1->sq_map, q1->sq_map_size));
	ASSERT_EQ(0, munmap(q1->rq_map, q1->rq_map_size));
	ASSERT_EQ(0, munmap(c0->map, c0->map_size));
	ASSERT_EQ(0, munmap(c1->map, c1->map_size));
	xt_sleep_ms(500);
	/* The library unmaps them again: harmless. Destroy while busy. */
	EXPECT_EQ(0, xnic_destroy_qp(q0));
	EXPECT_EQ(0, xnic_destroy_qp(q1));
	EXPECT_EQ(0, xnic_destroy_cq(c0));
	EXPECT_EQ(0, xnic_destroy_cq(c1));
	memset(&self->c, 0, sizeof(self->c));
	xt_buf_free(&big_a);
	xt_buf_free(&big_b);
	check_alive(_metadata, self);
}

/* ------------------------------------- MRs that go away in use ----- */

/*
 * A 64 MiB WRITE is under way when the target's (then the source's) MR is
 * deregistered. The WRITE fails or (if it was quicker) succeeds whole;
 * once xnic_dereg_mr() has returned, the memory is never touched again.
 */
TEST_F_TIMEOUT(ho, mr_deregistered_mid_transfer, 180)
{
	const size_t len = 64 * MiB;
	struct xt_buf big_a, big_b;
	uint8_t *snap = malloc(len);
	struct xnic_sge s;
	struct xnic_cqe c;
	int side;

	ASSERT_NE(NULL, snap);
	for (side = 1; side >= 0; side--) {
		BUF_UP(&self->env.dev[0], &big_a, len, XT_ACCESS_ALL);
		BUF_UP(&self->env.dev[1], &big_b, len, XT_ACCESS_ALL);
		CONN_UP(&self->env, &self->c, 64, NULL);
		xt_fill(big_a.p, len, 42 + side);
		xt_fill_byte(big_b.p, len, CANARY);
		s = sge_of(&big_a, 0, (uint32_t)len);
		ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &s, 1,
					     (uintptr_t)big_b.p, big_b.mr->rkey,
					     1, XNIC_WQE_F_SIGNALED));
		xt_sleep_ms(5);
		if (side) {
			ASSERT_EQ(0, xnic_dereg_mr(big_b.mr));
			big_b.mr = NULL;
		} else {
			ASSERT_EQ(0, xnic_dereg_mr(big_a.mr));
			big_a.mr = NULL;
		}
		memcpy(snap, big_b.p, len);
		REAP(self->c.cq[0], &c, 60000);
		TH_LOG("%s MR deregistered mid-WRITE: %s",
		       side ? "target" : "source", xt_cqe_str(&c));
		if (c.status == XNIC_WC_SUCCESS) {
			ASSERT_EQ(-1, xt_diff(big_b.p, big_a.p, len))
				TH_LOG("a successful WRITE is not all there");
		} else {
			EXPECT_EQ(side ? XNIC_WC_REM_ACCESS_ERR :
				  XNIC_WC_LOC_PROT_ERR, c.status);
		}
		/*
		 * Frames sent before the source's MR went may still land:
		 * only the target's own deregistration fences its memory.
		 */
		xt_sleep_ms(300);
		if (side)
			ASSERT_EQ(-1, xt_diff(big_b.p, snap, len))
				TH_LOG("target memory changed after its MR was deregistered");
		xt_conn_destroy(&self->c);
		xt_buf_free(&big_a);
		xt_buf_free(&big_b);
	}
	free(snap);
	check_alive(_metadata, self);
}

/* ---------------------------------------------------- CQ overflow ---- */

/*
 * Issue 22 case 6: an overflow is reported as such (-EOVERFLOW from the
 * CQ, the CQ named by its async event, XNIC_QP_ERR_CQ_OVERFLOW on the QP
 * whose completion was lost), and further posts on the CQ's QPs are
 * refused with -EOVERFLOW instead of being taken and their completions
 * lost.
 */
TEST_F_TIMEOUT(ho, cq_overflow, 60)
{
	struct xnic_sge s = sge_of(&self->a, 0, 256);
	struct xnic_qp_info info;
	struct xnic_cqe c[4];
	struct xnic_cq *cq;
	struct xnic_qp *qp;
	int k, n, err;

	/* One CQE asked for: a ring of 1. Then 16 signaled WRITEs. */
	CONN_UP(&self->env, &self->c, 1, NULL);
	cq = self->c.cq[0];
	qp = self->c.qp[0];
	ASSERT_GE(4, cq->entries);
	for (k = 0; k < 16; k++) {
		err = xnic_post_write(qp, &s, 1, (uintptr_t)self->b.p + k * 256,
				      self->b.mr->rkey, k, XNIC_WQE_F_SIGNALED);
		/* The engine may complete them as fast as they are posted. */
		if (err == -EOVERFLOW && k > (int)cq->entries)
			break;
		ASSERT_EQ(0, err);
	}
	ASSERT_TRUE(ring_error_within(cq->hdr, XT_WAIT_MS))
		TH_LOG("the CQ did not go to error");
	ASSERT_EQ(0, xt_wait_async(self->env.dev[0].ctx, XNIC_EVENT_CQ_ERR,
				   NULL, cq, XT_WAIT_MS)) TH_LOG("%s", xt_error());
	/* What fitted before the overflow can be reaped, then -EOVERFLOW. */
	n = xnic_poll_cq(cq, c, 4);
	EXPECT_EQ((int)cq->entries, n);
	for (k = 0; k < n; k++) {
		EXPECT_EQ(XNIC_WC_SUCCESS, c[k].status);
		EXPECT_EQ((uint64_t)k, c[k].wr_id);
	}
	EXPECT_EQ(-EOVERFLOW, xnic_poll_cq(cq, c, 4));
	EXPECT_EQ(0, xnic_cq_wait(cq, 0));
	/* The QP whose completion was lost says why it failed. */
	ASSERT_TRUE(ring_error_within(qp->sq.hdr, XT_WAIT_MS));
	ASSERT_EQ(0, xnic_query_qp(qp, &info));
	EXPECT_EQ(XNIC_QPS_ERR, info.state);
	EXPECT_EQ(XNIC_QP_ERR_CQ_OVERFLOW, info.err_reason)
		TH_LOG("reason %u: %s", info.err_reason,
		       xnic_qp_err_str(info.err_reason));
	EXPECT_EQ(XNIC_QP_ERR_CQ_OVERFLOW, xnic_qp_err_reason(qp));
	/* Posts on its QPs are refused, the SQ and the RQ alike. */
	EXPECT_EQ(-EOVERFLOW, xnic_post_write(qp, &s, 1, (uintptr_t)self->b.p,
					      self->b.mr->rkey, 99,
					      XNIC_WQE_F_SIGNALED));
	EXPECT_EQ(-EOVERFLOW, xnic_post_recv(qp, &s, 1, 100));
	EXPECT_NE(NULL, strstr(xnic_strerror(-EOVERFLOW), "overflow"));
	check_alive(_metadata, self);
}

/* ------------------------------------- processes that go away ------ */

#define NRES	5
static const char *const res_kinds[NRES] = { "pd", "cq", "qp", "mr", "ctx" };

static int res_snapshot(struct xt_env *e, long v[2][NRES])
{
	int d, k, err;

	for (d = 0; d < 2; d++)
		for (k = 0; k < NRES; k++) {
			err = xt_res_count(e->dev[d].name, res_kinds[k],
					   &v[d][k]);
			if (err)
				return err;
		}
	return 0;
}

/* Wait until `rdma resource show` is back to @want; 0 or -ETIMEDOUT. */
static int res_back_to(struct xt_env *e, long want[2][NRES], int ms,
		       char *why, size_t len)
{
	long end = xt_now_ms() + ms, now[2][NRES];
	int d, k;

	for (;;) {
		bool same = !res_snapshot(e, now);

		for (d = 0; same && d < 2; d++)
			for (k = 0; k < NRES; k++)
				if (now[d][k] != want[d][k])
					same = false;
		if (same)
			return 0;
		if (xt_now_ms() >= end)
			break;
		xt_sleep_ms(50);
	}
	snprintf(why, len, "%s: pd %ld cq %ld qp %ld mr %ld ctx %ld (want %ld %ld %ld %ld %ld); %s: pd %ld cq %ld qp %ld mr %ld ctx %ld (want %ld %ld %ld %ld %ld)",
		 e->dev[0].name, now[0][0], now[0][1], now[0][2], now[0][3],
		 now[0][4], want[0][0], want[0][1], want[0][2], want[0][3],
		 want[0][4], e->dev[1].name, now[1][0], now[1][1], now[1][2],
		 now[1][3], now[1][4], want[1][0], want[1][1], want[1][2],
		 want[1][3], want[1][4]);
	return -ETIMEDOUT;
}

#define VICTIM_BUF	(64 * MiB)

/*
 * The victim: its own contexts on both devices, 64 MiB buffers, a QP
 * pair, WRITEs of 64 MiB back to back (and SENDs, with receives posted).
 * It writes one byte to @fd once data flows; with @close_early it then
 * closes both contexts itself in the middle of the transfer and exits.
 */
static void victim(struct xt_env *e, int fd, bool close_early)
{
	struct xt_env mine = *e;
	struct xt_buf a, b;
	struct xt_conn c;
	struct xnic_sge s, rs;
	struct xnic_cqe cqe[8];
	uint64_t k = 0;
	int d;

	for (d = 0; d < 2; d++) {
		mine.dev[d].ctx = NULL;
		if (xnic_open(mine.dev[d].name, &mine.dev[d].ctx) ||
		    xnic_alloc_pd(mine.dev[d].ctx, &mine.dev[d].pd))
			_exit(2);
	}
	if (xt_buf_alloc(&mine.dev[0], &a, VICTIM_BUF, XT_ACCESS_ALL) ||
	    xt_buf_alloc(&mine.dev[1], &b, VICTIM_BUF, XT_ACCESS_ALL) ||
	    xt_conn_create(&mine, &c, 64, NULL))
		_exit(3);
	for (;;) {
		s = sge_of(&a, 0, VICTIM_BUF);
		if (xnic_post_write(c.qp[0], &s, 1, (uintptr_t)b.p, b.mr->rkey,
				    k, XNIC_WQE_F_SIGNALED) == 0)
			k++;
		rs = sge_of(&b, 0, 1 * MiB);
		xnic_post_recv(c.qp[1], &rs, 1, k);
		s = sge_of(&a, 0, 1 * MiB);
		xnic_post_send(c.qp[0], &s, 1, k, 0);
		if (k == 2) {
			if (write(fd, "x", 1) != 1)
				_exit(4);
			if (close_early) {
				xt_sleep_ms(20);
				/* Mid-transfer: close the device files. */
				xnic_close(mine.dev[0].ctx);
				xnic_close(mine.dev[1].ctx);
				_exit(0);
			}
		}
		while (xnic_poll_cq(c.cq[0], cqe, 8) > 0 ||
		       xnic_poll_cq(c.cq[1], cqe, 8) > 0)
			;
		if (xnic_sq_space(c.qp[0]) < 4)
			xt_sleep_ms(1);
	}
}

static void victim_round(struct __test_metadata *_metadata,
			 FIXTURE_DATA(ho) *self, bool kill_it)
{
	long before[2][NRES];
	long long mem0, mem1;
	char why[512];
	int fds[2], st;
	pid_t pid;
	char x;

	ASSERT_EQ(0, res_snapshot(&self->env, before)) TH_LOG("%s",
							      xt_error());
	mem0 = xt_proc_kb("/proc/meminfo", "MemAvailable");
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(fds[0]);
		victim(&self->env, fds[1], !kill_it);
	}
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &x, 1)) TH_LOG("the victim never got going");
	close(fds[0]);
	if (kill_it) {
		xt_sleep_ms(30);
		ASSERT_EQ(0, kill(pid, SIGKILL));
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	if (kill_it) {
		ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			TH_LOG("victim status %#x", st);
	} else {
		ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("victim status %#x", st);
	}
	/* Every object the victim had is gone from ib_core's tables. */
	ASSERT_EQ(0, res_back_to(&self->env, before, 10000, why, sizeof(why)))
		TH_LOG("after the victim: %s", why);
	/* Its 2 x 64 MiB of pinned memory is free again. */
	mem1 = xt_proc_kb("/proc/meminfo", "MemAvailable");
	TH_LOG("MemAvailable before %lld kB, after %lld kB", mem0, mem1);
	EXPECT_GT(mem1 + 32 * 1024, mem0)
		TH_LOG("%lld kB of memory did not come back", mem0 - mem1);
	check_alive(_metadata, self);
}

TEST_F_TIMEOUT(ho, killed_mid_transfer, 180)
{
	victim_round(_metadata, self, true);
	victim_round(_metadata, self, true);
}

TEST_F_TIMEOUT(ho, closed_mid_transfer, 180)
{
	victim_round(_metadata, self, false);
}

/* ------------------------------------------------- the doorbell file -- */

/* ioctl(@fd, @req, @arg): 0, or -errno. */
static int db_ioctl(int fd, unsigned long req, unsigned long arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/*
 * Each context has a doorbell file (close-on-exec) whose XNIC_DB_RING
 * takes its QPs' slots and nothing else; the uverbs wakeup still works
 * when a library does not use the file.
 */
TEST_F_TIMEOUT(ho, doorbell_file, 120)
{
	struct xnic_ctx *ctx = self->env.dev[0].ctx;
	int fd = ctx->db_fd, saved[2], k;
	uint32_t slot;
	char x[4] = { 0 };

	ASSERT_LE(0, fd) TH_LOG("no doorbell file (caps %#x)", ctx->caps);
	ASSERT_TRUE(ctx->caps & XNIC_CAP_DB_FD);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CONN_UP(&self->env, &self->c, 16, NULL);
	slot = self->c.qp[0]->db_index;
	for (k = 0; k < 100; k++)
		ASSERT_EQ(0, db_ioctl(fd, XNIC_DB_RING, slot));
	EXPECT_EQ(-EINVAL, db_ioctl(fd, XNIC_DB_RING, XNIC_MAX_QP_PER_CTX - 1));
	EXPECT_EQ(-EINVAL, db_ioctl(fd, XNIC_DB_RING, XNIC_MAX_QP_PER_CTX));
	EXPECT_EQ(-EINVAL, db_ioctl(fd, XNIC_DB_RING, ~0UL));
	EXPECT_EQ(-ENOTTY, db_ioctl(fd, _IO(XNIC_DB_IOCTL_MAGIC, 1), slot));
	EXPECT_EQ(-ENOTTY, db_ioctl(fd, _IOW(XNIC_DB_IOCTL_MAGIC, 0, int),
				    slot));
	EXPECT_EQ(-1, write(fd, x, sizeof(x)));
	EXPECT_EQ(-1, read(fd, x, sizeof(x)));
	xt_conn_destroy(&self->c);
	/* A destroyed QP's slot is free again. */
	EXPECT_EQ(-EINVAL, db_ioctl(fd, XNIC_DB_RING, slot));
	check_alive(_metadata, self);

	/* The same transfers with the POST_SEND wakeup of rule D1. */
	for (k = 0; k < 2; k++) {
		saved[k] = self->env.dev[k].ctx->db_fd;
		self->env.dev[k].ctx->db_fd = -1;
	}
	CONN_UP(&self->env, &self->c, 16, NULL);
	ASSERT_EQ(0, xnic_qp_wakeup(self->c.qp[0]));
	xt_conn_destroy(&self->c);
	check_alive(_metadata, self);
	for (k = 0; k < 2; k++)
		self->env.dev[k].ctx->db_fd = saved[k];
}

/*
 * A context asks for the file or not, with nothing else in its request
 * and room for db_fd in its output; the file outlives its context, whose
 * doorbells then fail with -ENODEV.
 */
TEST_F_TIMEOUT(ho, doorbell_file_outlives_context, 60)
{
	struct ib_uverbs_get_context req = { 0 };
	struct ib_uverbs_get_context_resp resp;
	struct xnic_alloc_ucontext_req dreq = { 0 };
	struct xnic_alloc_ucontext_resp drv;
	struct xnic_ctx *ctx;
	int ufd, fd;

	ufd = open(self->env.dev[0].ctx->dev.uverbs, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, ufd);
	dreq.comp_mask = 0x80;
	EXPECT_EQ(-EINVAL, xnic_cmd(ufd, IB_USER_VERBS_CMD_GET_CONTEXT, &req,
				    sizeof(req), &dreq, sizeof(dreq), &resp,
				    sizeof(resp), &drv, sizeof(drv)));
	dreq.comp_mask = XNIC_UCTX_REQ_DB_FD;
	dreq.reserved = 1;
	EXPECT_EQ(-EINVAL, xnic_cmd(ufd, IB_USER_VERBS_CMD_GET_CONTEXT, &req,
				    sizeof(req), &dreq, sizeof(dreq), &resp,
				    sizeof(resp), &drv, sizeof(drv)));
	/* No room for db_fd in the output: no file either. */
	dreq.reserved = 0;
	EXPECT_EQ(-EINVAL, xnic_cmd(ufd, IB_USER_VERBS_CMD_GET_CONTEXT, &req,
				    sizeof(req), &dreq, sizeof(dreq), &resp,
				    sizeof(resp), &drv,
				    offsetof(struct xnic_alloc_ucontext_resp,
					     db_fd)));
	dreq.comp_mask = 0;
	memset(&drv, 0x55, sizeof(drv));
	ASSERT_EQ(0, xnic_cmd(ufd, IB_USER_VERBS_CMD_GET_CONTEXT, &req,
			      sizeof(req), &dreq, sizeof(dreq), &resp,
			      sizeof(resp), &drv, sizeof(drv)));
	EXPECT_FALSE(drv.caps & XNIC_CAP_DB_FD);
	EXPECT_EQ(-1, drv.db_fd);
	close((int)resp.async_fd);
	close(ufd);

	ASSERT_EQ(0, xnic_open(self->env.dev[0].name, &ctx));
	fd = dup(ctx->db_fd);
	ASSERT_LE(0, fd);
	/* Slot 0 holds no QP of this context. */
	EXPECT_EQ(-EINVAL, db_ioctl(fd, XNIC_DB_RING, 0));
	xnic_close(ctx);
	EXPECT_EQ(-ENODEV, db_ioctl(fd, XNIC_DB_RING, 0));
	EXPECT_EQ(0, close(fd));
}

/* -------------------------------------------------------- the end ---- */

/*
 * Last: with every test's devices gone, nothing holds the module and it
 * unloads (a leaked reference would make rmmod fail or hang); then it is
 * loaded again for whatever runs next.
 */
FIXTURE(zz_end) {
	int unused;
};

FIXTURE_SETUP(zz_end)
{
}

FIXTURE_TEARDOWN(zz_end)
{
}

/* A fixture of its own: the harness runs fixtures in declaration order. */
TEST_F_TIMEOUT(zz_end, module_unloads_after_all, 120)
{
	char buf[64];

	ASSERT_EQ(0, xt_read_file("/sys/module/xnic/refcnt", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf) TH_LOG("xnic refcnt %s with no user left", buf);
	ASSERT_EQ(0, xt_sh("timeout 60 rmmod xnic")) TH_LOG("rmmod xnic failed");
	EXPECT_NE(0, access("/sys/module/xnic", F_OK));
	ASSERT_EQ(0, xt_sh("modprobe xnic")) TH_LOG("modprobe xnic failed");
}

int main(int argc, char **argv)
{
	return xt_harness_main(argc, argv);
}
