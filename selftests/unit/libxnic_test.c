// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of libxnic's datapath (the static inline ring functions of
 * libuser/xnic.h) on fake rings in ordinary memory, and of the uverbs
 * command encoding (libuser/cmd.c) written into a pipe. Run on the host.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libuser/cmd.c"	/* white box: the command encoder */
#include "libuser/errors.c"	/* xnic_strerror() */

/* The D1 wakeup syscall, counted instead of made. */
static int wakeups;

int xnic_qp_wakeup(struct xnic_qp *qp)
{
	(void)qp;
	wakeups++;
	return 0;
}

#define N_SQ	8
#define N_RQ	4
#define N_CQ	8

static void *ring_alloc(size_t elem, unsigned int n)
{
	void *p = aligned_alloc(64, XNIC_RING_HDR_SIZE + elem * n);

	if (p)
		memset(p, 0, XNIC_RING_HDR_SIZE + elem * n);
	return p;
}

static void wq_init(struct xnic_wq *wq, void *ring, unsigned int n,
		    uint32_t start, uint32_t max_sge)
{
	wq->hdr = ring;
	wq->wqes = (char *)ring + XNIC_RING_HDR_SIZE;
	wq->entries = n;
	wq->mask = n - 1;
	wq->hdr->producer = start;
	wq->hdr->consumer = start;
	wq->tail = wq->published = wq->head_cache = start;
	wq->max_sge = max_sge;
}

FIXTURE(rings) {
	struct xnic_ctx_page page;
	struct xnic_qp qp;
	struct xnic_cq cq;
	void *sq, *rq, *cqr;
};

FIXTURE_SETUP(rings)
{
	memset(&self->page, 0, sizeof(self->page));
	memset(&self->qp, 0, sizeof(self->qp));
	memset(&self->cq, 0, sizeof(self->cq));
	self->sq = ring_alloc(sizeof(struct xnic_sq_wqe), N_SQ);
	self->rq = ring_alloc(sizeof(struct xnic_rq_wqe), N_RQ);
	self->cqr = ring_alloc(sizeof(struct xnic_cqe), N_CQ);
	ASSERT_NE(NULL, self->sq);
	ASSERT_NE(NULL, self->rq);
	ASSERT_NE(NULL, self->cqr);
	wq_init(&self->qp.sq, self->sq, N_SQ, 0, XNIC_MAX_SGE);
	wq_init(&self->qp.rq, self->rq, N_RQ, 0, XNIC_MAX_RECV_SGE);
	self->qp.max_inline = XNIC_MAX_INLINE;
	self->qp.state = XNIC_QPS_RTS;	/* connected: posts allowed */
	/* db_index 130: word 2, bit 2 */
	self->qp.db_index = 130;
	self->qp.db_word = &self->page.db_bits[2];
	self->qp.db_bit = 1ULL << 2;
	self->qp.db_summary = &self->page.db_summary;
	self->qp.db_summary_bit = 1ULL << 2;
	self->qp.engine_flags = &self->page.engine_flags;
	self->cq.hdr = self->cqr;
	self->cq.cqes = (struct xnic_cqe *)((char *)self->cqr +
					    XNIC_RING_HDR_SIZE);
	self->cq.entries = N_CQ;
	self->cq.mask = N_CQ - 1;
	self->qp.scq_flags = &self->cq.hdr->flags;
	self->qp.rcq_flags = &self->cq.hdr->flags;
	wakeups = 0;
}

FIXTURE_TEARDOWN(rings)
{
	free(self->sq);
	free(self->rq);
	free(self->cqr);
}

static struct xnic_sq_wqe *sq_slot(void *ring, uint32_t i)
{
	return (struct xnic_sq_wqe *)((char *)ring + XNIC_RING_HDR_SIZE) +
	       (i & (N_SQ - 1));
}

/* The kernel writing CQE number i (free-running) and publishing it. */
static void kernel_cqe(struct xnic_cq *cq, uint32_t i, uint64_t wr_id)
{
	struct xnic_cqe *c = &cq->cqes[i & cq->mask];

	memset(c, 0, sizeof(*c));
	c->wr_id = wr_id;
	c->opcode = XNIC_WC_RDMA_WRITE;
	__atomic_store_n(&cq->hdr->producer, i + 1, __ATOMIC_RELEASE);
}

TEST(abi_sizes)
{
	EXPECT_EQ(256, sizeof(struct xnic_ring_hdr));
	EXPECT_EQ(128, sizeof(struct xnic_sq_wqe));
	EXPECT_EQ(64, sizeof(struct xnic_rq_wqe));
	EXPECT_EQ(32, sizeof(struct xnic_cqe));
	EXPECT_EQ(64, offsetof(struct xnic_ring_hdr, consumer));
	EXPECT_EQ(128, offsetof(struct xnic_ring_hdr, flags));
}

TEST_F(rings, sq_fills_then_frees)
{
	struct xnic_sge sge = { .addr = 0x1000, .length = 64, .lkey = 7 };
	int i;

	EXPECT_EQ(N_SQ, xnic_sq_space(&self->qp));
	for (i = 0; i < N_SQ; i++)
		ASSERT_EQ(0, xnic_post_write(&self->qp, &sge, 1, 0x2000, 9, i,
					     0));
	EXPECT_EQ(N_SQ, self->qp.sq.hdr->producer);
	EXPECT_EQ(0, xnic_sq_space(&self->qp));
	EXPECT_EQ(NULL, xnic_sq_get_wqe(&self->qp));
	EXPECT_EQ(-EAGAIN, xnic_post_write(&self->qp, &sge, 1, 0, 0, 99, 0));
	EXPECT_EQ(N_SQ, self->qp.sq.hdr->producer);

	/* The kernel consumes three: three slots come back, no more. */
	__atomic_store_n(&self->qp.sq.hdr->consumer, 3, __ATOMIC_RELEASE);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, xnic_post_send(&self->qp, &sge, 1, 100 + i, 0));
	EXPECT_EQ(-EAGAIN, xnic_post_send(&self->qp, &sge, 1, 200, 0));
	EXPECT_EQ(N_SQ + 3, self->qp.sq.hdr->producer);
	/* Slot 0 now holds the first SEND, slot 3 still the old WRITE. */
	EXPECT_EQ(100, sq_slot(self->sq, 0)->wr_id);
	EXPECT_EQ(XNIC_WR_SEND, sq_slot(self->sq, 0)->opcode);
	EXPECT_EQ(3, sq_slot(self->sq, 3)->wr_id);
}

TEST_F(rings, sq_index_wraps)
{
	struct xnic_sge sge = { .addr = 1, .length = 1, .lkey = 1 };
	uint32_t start = UINT32_MAX - 2, i;

	wq_init(&self->qp.sq, self->sq, N_SQ, start, XNIC_MAX_SGE);
	for (i = 0; i < N_SQ; i++)
		ASSERT_EQ(0, xnic_post_write(&self->qp, &sge, 1, 0, 0,
					     start + i, 0));
	EXPECT_EQ(start + N_SQ, self->qp.sq.hdr->producer);
	EXPECT_EQ(0, xnic_sq_space(&self->qp));
	for (i = 0; i < N_SQ; i++)
		EXPECT_EQ((uint32_t)(start + i),
			  (uint32_t)sq_slot(self->sq, start + i)->wr_id);
	__atomic_store_n(&self->qp.sq.hdr->consumer, start + N_SQ,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(N_SQ, xnic_sq_space(&self->qp));
}

TEST_F(rings, sq_garbage_consumer_is_full)
{
	struct xnic_sge sge = { .addr = 1, .length = 1, .lkey = 1 };
	int i;

	for (i = 0; i < N_SQ; i++)
		ASSERT_EQ(0, xnic_post_write(&self->qp, &sge, 1, 0, 0, i, 0));
	/* A consumer ahead of the producer: never trusted. */
	self->qp.sq.hdr->consumer = N_SQ + 5;
	EXPECT_EQ(NULL, xnic_sq_get_wqe(&self->qp));
	EXPECT_EQ(0, xnic_sq_space(&self->qp));
	/* One far behind: likewise. */
	self->qp.sq.hdr->consumer = 0x80000000U;
	EXPECT_EQ(NULL, xnic_sq_get_wqe(&self->qp));
	EXPECT_EQ(-EAGAIN, xnic_post_write(&self->qp, &sge, 1, 0, 0, 9, 0));
	/* A sane one again: back to work. */
	self->qp.sq.hdr->consumer = 1;
	EXPECT_EQ(0, xnic_post_write(&self->qp, &sge, 1, 0, 0, 9, 0));
}

TEST_F(rings, doorbell_sets_bits_and_wakes_only_when_asked)
{
	struct xnic_sge sge = { .addr = 1, .length = 1, .lkey = 1 };

	self->page.db_bits[2] = 1ULL << 40;	/* another QP's bit */
	ASSERT_EQ(0, xnic_post_write(&self->qp, &sge, 1, 0, 0, 1, 0));
	EXPECT_EQ((1ULL << 40) | (1ULL << 2), self->page.db_bits[2]);
	EXPECT_EQ(1ULL << 2, self->page.db_summary);
	EXPECT_EQ(0, wakeups);

	/* The engine took the bits and went to sleep. */
	self->page.db_bits[2] = 0;
	self->page.db_summary = 0;
	self->page.engine_flags = XNIC_ENGINE_NEED_WAKEUP;
	ASSERT_EQ(0, xnic_post_write(&self->qp, &sge, 1, 0, 0, 2, 0));
	EXPECT_EQ(1, wakeups);
	EXPECT_EQ(1ULL << 2, self->page.db_bits[2]);
	EXPECT_EQ(1ULL << 2, self->page.db_summary);
}

TEST_F(rings, batch_rings_once)
{
	struct xnic_sge sge = { .addr = 1, .length = 1, .lkey = 1 };
	struct xnic_sq_wqe *w;
	int i;

	self->page.engine_flags = XNIC_ENGINE_NEED_WAKEUP;
	for (i = 0; i < 4; i++) {
		w = xnic_sq_get_wqe(&self->qp);
		ASSERT_NE(NULL, w);
		ASSERT_EQ(0, xnic_prep_write(w, &sge, 1, 0x10, 5, i,
					     XNIC_WQE_F_SIGNALED));
	}
	/* Nothing is visible before submit. */
	EXPECT_EQ(0, self->qp.sq.hdr->producer);
	EXPECT_EQ(0, self->page.db_summary);
	EXPECT_EQ(4, xnic_sq_submit(&self->qp));
	EXPECT_EQ(4, self->qp.sq.hdr->producer);
	EXPECT_EQ(1, wakeups);
	EXPECT_EQ(0, xnic_sq_submit(&self->qp));
	EXPECT_EQ(1, wakeups);
}

TEST_F(rings, prep_fills_every_field)
{
	struct xnic_sge sg[2] = {
		{ .addr = 0x1000, .length = 10, .lkey = 3 },
		{ .addr = 0x2000, .length = 20, .lkey = 4 },
	};
	struct xnic_sq_wqe *w;

	w = xnic_sq_get_wqe(&self->qp);
	ASSERT_NE(NULL, w);
	memset(w, 0xff, sizeof(*w));
	ASSERT_EQ(0, xnic_prep_write_imm(w, sg, 2, 0xabc, 77, 0x11223344, 42,
					 XNIC_WQE_F_SIGNALED |
					 XNIC_WQE_F_SOLICITED));
	EXPECT_EQ(42, w->wr_id);
	EXPECT_EQ(XNIC_WR_RDMA_WRITE_WITH_IMM, w->opcode);
	EXPECT_EQ(XNIC_WQE_F_SIGNALED | XNIC_WQE_F_SOLICITED, w->flags);
	EXPECT_EQ(2, w->num_sge);
	EXPECT_EQ(0, w->reserved0);
	EXPECT_EQ(0x11223344U, w->imm_data);
	EXPECT_EQ(0xabc, w->remote_addr);
	EXPECT_EQ(77, w->rkey);
	EXPECT_EQ(0, w->inline_len);
	EXPECT_EQ(0x2000, w->sge[1].addr);
	EXPECT_EQ(20, w->sge[1].length);
	EXPECT_EQ(4, w->sge[1].lkey);
	EXPECT_EQ(-EINVAL, xnic_prep_read(w, sg, 1, 0, 0, 0, 0x80));
}

TEST_F(rings, inline_copies_and_bounds)
{
	char data[XNIC_MAX_INLINE + 1];
	char a[5] = "abcd", b[4] = "xyz";
	struct xnic_sge sg[2] = {
		{ .addr = (uintptr_t)a, .length = 4 },
		{ .addr = (uintptr_t)b, .length = 3 },
	};
	struct xnic_sq_wqe *w;
	size_t i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)i;
	ASSERT_EQ(0, xnic_post_write_inline(&self->qp, data, XNIC_MAX_INLINE,
					    0x10, 1, 5, 0));
	w = sq_slot(self->sq, 0);
	EXPECT_EQ(XNIC_WQE_F_INLINE, w->flags);
	EXPECT_EQ(0, w->num_sge);
	EXPECT_EQ(XNIC_MAX_INLINE, w->inline_len);
	EXPECT_EQ(0, memcmp(w->inline_data, data, XNIC_MAX_INLINE));

	/* Gathered from two SGEs into one inline payload. */
	ASSERT_EQ(0, xnic_post_send(&self->qp, sg, 2, 6, XNIC_WQE_F_INLINE));
	w = sq_slot(self->sq, 1);
	EXPECT_EQ(7, w->inline_len);
	EXPECT_EQ(0, memcmp(w->inline_data, "abcdxyz", 7));

	/* A zero-length inline SGE (NULL address) is fine. */
	sg[0].addr = 0;
	sg[0].length = 0;
	ASSERT_EQ(0, xnic_post_send(&self->qp, sg, 2, 7, XNIC_WQE_F_INLINE));
	w = sq_slot(self->sq, 2);
	EXPECT_EQ(3, w->inline_len);
	EXPECT_EQ(0, memcmp(w->inline_data, "xyz", 3));

	/* Refused without touching the ring. */
	EXPECT_EQ(-EINVAL, xnic_post_write_inline(&self->qp, data,
						  XNIC_MAX_INLINE + 1, 0, 0,
						  7, 0));
	self->qp.max_inline = 8;
	EXPECT_EQ(-EINVAL, xnic_post_write_inline(&self->qp, data, 9, 0, 0,
						  7, 0));
	EXPECT_EQ(-EINVAL, xnic_post_read(&self->qp, sg, 1, 0, 0, 8,
					  XNIC_WQE_F_INLINE));
	EXPECT_EQ(3, self->qp.sq.tail);
	EXPECT_EQ(3, self->qp.sq.hdr->producer);
}

TEST_F(rings, sge_count_is_bounded)
{
	struct xnic_sge sg[XNIC_MAX_SGE + 1] = { { 0 } };
	struct xnic_sq_wqe *w;

	EXPECT_EQ(-EINVAL, xnic_post_write(&self->qp, sg, XNIC_MAX_SGE + 1,
					   0, 0, 0, 0));
	self->qp.sq.max_sge = 2;
	EXPECT_EQ(-EINVAL, xnic_post_write(&self->qp, sg, 3, 0, 0, 0, 0));
	EXPECT_EQ(0, xnic_post_write(&self->qp, sg, 2, 0, 0, 0, 0));
	/* Zero SGEs: a legal zero-length operation. */
	EXPECT_EQ(0, xnic_post_write(&self->qp, sg, 0, 0, 0, 0, 0));

	w = xnic_sq_get_wqe(&self->qp);
	ASSERT_NE(NULL, w);
	EXPECT_EQ(-EINVAL, xnic_prep_send(w, sg, XNIC_MAX_SGE + 1, 0, 0));
	EXPECT_EQ(0, xnic_sq_unget(&self->qp));
	EXPECT_EQ(-EINVAL, xnic_sq_unget(&self->qp));
	EXPECT_EQ(N_SQ - 2, xnic_sq_space(&self->qp));
}

TEST_F(rings, rq_post_and_full)
{
	struct xnic_sge sg[XNIC_MAX_RECV_SGE + 1] = {
		{ .addr = 0x5000, .length = 100, .lkey = 8 },
	};
	struct xnic_rq_wqe *w;
	int i;

	for (i = 0; i < N_RQ; i++)
		ASSERT_EQ(0, xnic_post_recv(&self->qp, sg, 1, 10 + i));
	EXPECT_EQ(N_RQ, self->qp.rq.hdr->producer);
	EXPECT_EQ(-EAGAIN, xnic_post_recv(&self->qp, sg, 1, 20));
	w = (struct xnic_rq_wqe *)self->qp.rq.wqes + 2;
	EXPECT_EQ(12, w->wr_id);
	EXPECT_EQ(1, w->num_sge);
	EXPECT_EQ(0x5000, w->sge[0].addr);
	EXPECT_EQ(0, self->page.db_summary);	/* no doorbell for the RQ */
	__atomic_store_n(&self->qp.rq.hdr->consumer, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(-EINVAL, xnic_post_recv(&self->qp, sg,
					  XNIC_MAX_RECV_SGE + 1, 21));
	EXPECT_EQ(0, xnic_post_recv(&self->qp, sg, 1, 21));
}

TEST_F(rings, cq_poll_in_batches)
{
	struct xnic_cqe out[N_CQ];
	uint32_t i;

	EXPECT_EQ(0, xnic_poll_cq(&self->cq, out, N_CQ));
	for (i = 0; i < 5; i++)
		kernel_cqe(&self->cq, i, 100 + i);
	EXPECT_EQ(3, xnic_poll_cq(&self->cq, out, 3));
	EXPECT_EQ(100, out[0].wr_id);
	EXPECT_EQ(102, out[2].wr_id);
	EXPECT_EQ(3, self->cq.hdr->consumer);
	EXPECT_EQ(0, xnic_poll_cq(&self->cq, out, 0));
	EXPECT_EQ(-EINVAL, xnic_poll_cq(&self->cq, out, -1));
	EXPECT_EQ(2, xnic_poll_cq(&self->cq, out, N_CQ));
	EXPECT_EQ(103, out[0].wr_id);
	EXPECT_EQ(104, out[1].wr_id);
	EXPECT_EQ(5, self->cq.hdr->consumer);
	EXPECT_EQ(0, xnic_poll_cq(&self->cq, out, N_CQ));
}

TEST_F(rings, cq_count_qp_counts_unreaped_cqes_of_one_qp)
{
	struct xnic_cqe out[N_CQ];
	uint32_t i;

	EXPECT_EQ(0, xnic_cq_count_qp(&self->cq, 7));
	for (i = 0; i < 5; i++) {
		kernel_cqe(&self->cq, i, i);
		self->cq.cqes[i].qp_num = i % 2 ? 7 : 9;
	}
	EXPECT_EQ(2, xnic_cq_count_qp(&self->cq, 7));
	EXPECT_EQ(3, xnic_cq_count_qp(&self->cq, 9));
	EXPECT_EQ(0, self->cq.hdr->consumer);	/* nothing reaped */
	EXPECT_EQ(2, xnic_poll_cq(&self->cq, out, 2));
	EXPECT_EQ(1, xnic_cq_count_qp(&self->cq, 7));
	EXPECT_EQ(2, xnic_cq_count_qp(&self->cq, 9));
	self->cq.hdr->producer = self->cq.head + N_CQ + 1;
	EXPECT_EQ(-EIO, xnic_cq_count_qp(&self->cq, 7));
}

TEST_F(rings, cq_wraps)
{
	struct xnic_cqe out[N_CQ];
	uint32_t start = UINT32_MAX - 3, i;

	self->cq.head = start;
	self->cq.hdr->producer = self->cq.hdr->consumer = start;
	for (i = 0; i < N_CQ; i++)
		kernel_cqe(&self->cq, start + i, i);
	EXPECT_EQ(N_CQ, xnic_poll_cq(&self->cq, out, N_CQ));
	for (i = 0; i < N_CQ; i++)
		EXPECT_EQ(i, out[i].wr_id);
	EXPECT_EQ(start + N_CQ, self->cq.hdr->consumer);
}

TEST_F(rings, cq_garbage_producer_is_an_error)
{
	struct xnic_cqe out[N_CQ];

	self->cq.hdr->producer = N_CQ + 1;
	EXPECT_EQ(-EIO, xnic_poll_cq(&self->cq, out, N_CQ));
	self->cq.hdr->producer = 0xfffffff0U;
	EXPECT_EQ(-EIO, xnic_poll_cq(&self->cq, out, N_CQ));
	EXPECT_EQ(0, self->cq.hdr->consumer);
	EXPECT_EQ(0, self->cq.head);
}

TEST_F(rings, cq_error_after_drain)
{
	struct xnic_cqe out[N_CQ];

	kernel_cqe(&self->cq, 0, 1);
	kernel_cqe(&self->cq, 1, 2);
	__atomic_store_n(&self->cq.hdr->flags, XNIC_RING_F_ERROR,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(2, xnic_poll_cq(&self->cq, out, N_CQ));
	EXPECT_EQ(-EOVERFLOW, xnic_poll_cq(&self->cq, out, N_CQ));
	EXPECT_EQ(-EOVERFLOW, xnic_poll_cq(&self->cq, out, N_CQ));
}

/* Issue 22 case 6: a QP whose CQ overflowed takes no more posts. */
TEST_F(rings, cq_overflow_refuses_posts)
{
	struct xnic_sge sge = { .addr = 0x1000, .length = 64, .lkey = 7 };

	__atomic_store_n(&self->cq.hdr->flags, XNIC_RING_F_ERROR,
			 __ATOMIC_RELEASE);
	EXPECT_EQ(-EOVERFLOW, xnic_post_write(&self->qp, &sge, 1, 0x2000, 9,
					      1, XNIC_WQE_F_SIGNALED));
	EXPECT_EQ(-EOVERFLOW, xnic_post_send(&self->qp, &sge, 1, 2, 0));
	EXPECT_EQ(-EOVERFLOW, xnic_post_wr(&self->qp, &(struct xnic_wr){
		.opcode = XNIC_WR_RDMA_READ, .sg = &sge, .nsge = 1 }));
	EXPECT_EQ(-EOVERFLOW, xnic_post_recv(&self->qp, &sge, 1, 3));
	/* The liburing-style submit refuses too. */
	ASSERT_EQ(0, xnic_prep_send(xnic_sq_get_wqe(&self->qp), &sge, 1, 4, 0));
	EXPECT_EQ(-EOVERFLOW, xnic_sq_submit(&self->qp));
	ASSERT_EQ(0, xnic_prep_recv(xnic_rq_get_wqe(&self->qp), &sge, 1, 5));
	EXPECT_EQ(-EOVERFLOW, xnic_rq_submit(&self->qp));
	EXPECT_EQ(0, self->qp.sq.hdr->producer);
	EXPECT_EQ(0, self->qp.rq.hdr->producer);
	EXPECT_EQ(0, wakeups);
	EXPECT_NE(NULL, strstr(xnic_strerror(-EOVERFLOW), "overflow"));
}

/*
 * Issue 22 case 9: xnic_post_wr() with named fields writes the same WQE
 * as the positional call, for every opcode, and refuses a bad opcode.
 */
TEST_F(rings, post_wr_matches_positional)
{
	struct xnic_sge sg[2] = {
		{ .addr = 0x1000, .length = 10, .lkey = 3 },
		{ .addr = 0x2000, .length = 20, .lkey = 4 },
	};
	struct xnic_sq_wqe *a, *b;
	unsigned int op;
	uint32_t i = 0;

	for (op = XNIC_WR_RDMA_WRITE; op <= XNIC_WR_RDMA_READ; op++, i += 2) {
		const struct xnic_wr wr = {
			.opcode = op, .sg = sg, .nsge = 2,
			.remote_addr = 0xabc, .rkey = 77, .imm = 0x11223344,
			.wr_id = 42, .flags = XNIC_WQE_F_SIGNALED,
		};

		switch (op) {
		case XNIC_WR_RDMA_WRITE:
			ASSERT_EQ(0, xnic_post_write(&self->qp, sg, 2, 0xabc,
						     77, 42,
						     XNIC_WQE_F_SIGNALED));
			break;
		case XNIC_WR_RDMA_WRITE_WITH_IMM:
			ASSERT_EQ(0, xnic_post_write_imm(&self->qp, sg, 2,
							 0xabc, 77, 0x11223344,
							 42,
							 XNIC_WQE_F_SIGNALED));
			break;
		case XNIC_WR_SEND:
			ASSERT_EQ(0, xnic_post_send(&self->qp, sg, 2, 42,
						    XNIC_WQE_F_SIGNALED));
			break;
		case XNIC_WR_SEND_WITH_IMM:
			ASSERT_EQ(0, xnic_post_send_imm(&self->qp, sg, 2,
							0x11223344, 42,
							XNIC_WQE_F_SIGNALED));
			break;
		default:
			ASSERT_EQ(0, xnic_post_read(&self->qp, sg, 2, 0xabc,
						    77, 42,
						    XNIC_WQE_F_SIGNALED));
		}
		ASSERT_EQ(0, xnic_post_wr(&self->qp, &wr));
		__atomic_store_n(&self->qp.sq.hdr->consumer, i + 2,
				 __ATOMIC_RELEASE);
		a = sq_slot(self->sq, i);
		b = sq_slot(self->sq, i + 1);
		EXPECT_EQ(op, b->opcode);
		EXPECT_EQ(0, memcmp(a, b, sizeof(*a))) TH_LOG("opcode %u", op);
	}
	EXPECT_EQ(i, self->qp.sq.hdr->producer);
	/* The prep form, and what is refused. */
	a = xnic_sq_get_wqe(&self->qp);
	ASSERT_NE(NULL, a);
	EXPECT_EQ(0, xnic_prep_wr(a, &(struct xnic_wr){
		.opcode = XNIC_WR_SEND_WITH_IMM, .imm = 5, .rkey = 9 }));
	EXPECT_EQ(5, a->imm_data);
	EXPECT_EQ(0, a->rkey);
	EXPECT_EQ(0, a->num_sge);
	EXPECT_EQ(-EINVAL, xnic_prep_wr(a, &(struct xnic_wr){ .opcode = 5 }));
	EXPECT_EQ(0, xnic_sq_unget(&self->qp));
	EXPECT_EQ(-EINVAL, xnic_post_wr(&self->qp, &(struct xnic_wr){
		.opcode = 99, .sg = sg, .nsge = 1 }));
	EXPECT_EQ(-EINVAL, xnic_post_wr(&self->qp, &(struct xnic_wr){
		.opcode = XNIC_WR_RDMA_READ, .sg = sg, .nsge = 1,
		.flags = XNIC_WQE_F_INLINE }));
	self->qp.state = XNIC_QPS_INIT;
	EXPECT_EQ(-ENOTCONN, xnic_post_wr(&self->qp, &(struct xnic_wr){
		.opcode = XNIC_WR_SEND }));
	EXPECT_EQ(i, self->qp.sq.hdr->producer);
}

/* ----------------------- command encoding ------------------------ */

FIXTURE(pipe) {
	int fd[2];
	uint8_t buf[1024];
	ssize_t len;
};

FIXTURE_SETUP(pipe)
{
	ASSERT_EQ(0, pipe(self->fd));
}

FIXTURE_TEARDOWN(pipe)
{
	close(self->fd[0]);
	close(self->fd[1]);
}

TEST_F(pipe, legacy_command_words)
{
	struct ib_uverbs_create_cq req = { .cqe = 17, .comp_channel = -1 };
	struct ib_uverbs_create_cq_resp resp;
	struct xnic_create_cq_resp drv;
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq sent;

	ASSERT_EQ(0, xnic_cmd(self->fd[1], IB_USER_VERBS_CMD_CREATE_CQ, &req,
			      sizeof(req), NULL, 0, &resp, sizeof(resp), &drv,
			      sizeof(drv)));
	self->len = read(self->fd[0], self->buf, sizeof(self->buf));
	ASSERT_EQ(sizeof(hdr) + sizeof(req), self->len);
	memcpy(&hdr, self->buf, sizeof(hdr));
	memcpy(&sent, self->buf + sizeof(hdr), sizeof(sent));
	EXPECT_EQ(IB_USER_VERBS_CMD_CREATE_CQ, hdr.command);
	/* 4-byte words, header included */
	EXPECT_EQ((sizeof(hdr) + sizeof(req)) / 4, hdr.in_words);
	/* core response then driver output */
	EXPECT_EQ((sizeof(resp) + sizeof(drv)) / 4, hdr.out_words);
	EXPECT_NE(0, sent.response);
	EXPECT_EQ(17, sent.cqe);
	EXPECT_EQ(-1, sent.comp_channel);
}

TEST_F(pipe, legacy_command_with_driver_input)
{
	struct ib_uverbs_create_qp req = { .qp_type = 2 };
	struct xnic_create_qp_req in = { .comp_mask = 0 };
	struct ib_uverbs_create_qp_resp resp;
	struct xnic_create_qp_resp drv;
	struct ib_uverbs_cmd_hdr hdr;

	ASSERT_EQ(0, xnic_cmd(self->fd[1], IB_USER_VERBS_CMD_CREATE_QP, &req,
			      sizeof(req), &in, sizeof(in), &resp,
			      sizeof(resp), &drv, sizeof(drv)));
	self->len = read(self->fd[0], self->buf, sizeof(self->buf));
	ASSERT_EQ(sizeof(hdr) + sizeof(req) + sizeof(in), self->len);
	memcpy(&hdr, self->buf, sizeof(hdr));
	EXPECT_EQ(self->len / 4, hdr.in_words);
	EXPECT_EQ((sizeof(resp) + sizeof(drv)) / 4, hdr.out_words);
}

TEST_F(pipe, legacy_command_without_response)
{
	struct ib_uverbs_dealloc_pd req = { .pd_handle = 5 };
	struct ib_uverbs_cmd_hdr hdr;

	ASSERT_EQ(0, xnic_cmd(self->fd[1], IB_USER_VERBS_CMD_DEALLOC_PD, &req,
			      sizeof(req), NULL, 0, NULL, 0, NULL, 0));
	self->len = read(self->fd[0], self->buf, sizeof(self->buf));
	ASSERT_EQ(12, self->len);
	memcpy(&hdr, self->buf, sizeof(hdr));
	EXPECT_EQ(3, hdr.in_words);
	EXPECT_EQ(0, hdr.out_words);
	EXPECT_EQ(5, *(uint32_t *)(self->buf + 8));
}

TEST_F(pipe, extended_command_words)
{
	struct ib_uverbs_ex_modify_qp req = { .base.qp_handle = 3 };
	struct ib_uverbs_ex_modify_qp_resp resp;
	struct xnic_modify_qp_req drv = { .remote_node = 2 };
	struct ib_uverbs_ex_cmd_hdr ex;
	struct ib_uverbs_cmd_hdr hdr;
	struct xnic_modify_qp_req sent_drv;

	ASSERT_EQ(0, xnic_cmd_ex(self->fd[1], IB_USER_VERBS_EX_CMD_MODIFY_QP,
				 &req, sizeof(req), &drv, sizeof(drv), &resp,
				 sizeof(resp), NULL, 0));
	self->len = read(self->fd[0], self->buf, sizeof(self->buf));
	ASSERT_EQ(sizeof(hdr) + sizeof(ex) + sizeof(req) + sizeof(drv),
		  self->len);
	memcpy(&hdr, self->buf, sizeof(hdr));
	memcpy(&ex, self->buf + sizeof(hdr), sizeof(ex));
	memcpy(&sent_drv, self->buf + sizeof(hdr) + sizeof(ex) + sizeof(req),
	       sizeof(sent_drv));
	EXPECT_EQ(IB_USER_VERBS_CMD_FLAG_EXTENDED |
		  IB_USER_VERBS_EX_CMD_MODIFY_QP, hdr.command);
	/* 8-byte words, headers excluded */
	EXPECT_EQ(sizeof(req) / 8, hdr.in_words);
	EXPECT_EQ(sizeof(resp) / 8, hdr.out_words);
	EXPECT_EQ(sizeof(drv) / 8, ex.provider_in_words);
	EXPECT_EQ(0, ex.provider_out_words);
	EXPECT_EQ(0, ex.cmd_hdr_reserved);
	EXPECT_NE(0, ex.response);
	EXPECT_EQ(2, sent_drv.remote_node);
}

TEST_F(pipe, bad_sizes_are_refused)
{
	uint8_t big[600] = { 0 };
	struct ib_uverbs_ex_modify_qp req = { .base.qp_handle = 3 };
	uint32_t odd = 0;

	EXPECT_EQ(-EINVAL, xnic_cmd(self->fd[1], 1, big, sizeof(big), NULL, 0,
				    NULL, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, xnic_cmd_ex(self->fd[1], 1, &req, sizeof(req),
				       &odd, sizeof(odd), NULL, 0, NULL, 0));
}

TEST(mtu_bytes)
{
	EXPECT_EQ(0, xnic_mtu_bytes(0));
	EXPECT_EQ(256, xnic_mtu_bytes(1));
	EXPECT_EQ(4096, xnic_mtu_bytes(5));
	EXPECT_EQ(0, xnic_mtu_bytes(6));
}

TEST_HARNESS_MAIN
