// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the credit arithmetic (kmod/credit_logic.h), run on the
 * host: grants, stale and hostile updates, the accounting invariant
 * (granted - consumed - returned) after randomised lossy workloads, the
 * responder's share, the class budget and Jain's index.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "kmod/credit_logic.h"

TEST(start_consume_stop)
{
	struct xnic_credit_flow f = { 0 };
	__u32 psn = 1000;
	int k;

	EXPECT_EQ(0, xnic_credit_flow_avail(&f, psn));
	EXPECT_EQ(32, xnic_credit_flow_start(&f, psn, 32));
	EXPECT_EQ(32, xnic_credit_flow_avail(&f, psn));
	for (k = 0; k < 32; k++) {
		ASSERT_LT(0, xnic_credit_flow_avail(&f, psn));
		xnic_credit_flow_consume(&f, psn++);
		ASSERT_TRUE(xnic_credit_flow_check(&f, psn));
	}
	EXPECT_EQ(0, xnic_credit_flow_avail(&f, psn));
	EXPECT_EQ(32, f.consumed);
	EXPECT_EQ(0, xnic_credit_flow_stop(&f, psn));
	EXPECT_TRUE(xnic_credit_flow_check(&f, psn));
	/* a second stop returns nothing */
	EXPECT_EQ(0, xnic_credit_flow_stop(&f, psn));
	EXPECT_EQ(f.granted, f.consumed + f.returned);
}

TEST(update_only_moves_forward)
{
	struct xnic_credit_flow f = { 0 };
	__u32 next = 0xfffffff0U;	/* across the wrap */

	xnic_credit_flow_start(&f, next, 8);
	EXPECT_EQ(92, xnic_credit_flow_update(&f, next, 100, next));
	EXPECT_EQ(next + 100, f.limit);
	/* the same update again, and an older one: nothing */
	EXPECT_EQ(0, xnic_credit_flow_update(&f, next, 100, next));
	EXPECT_EQ(0, xnic_credit_flow_update(&f, next - 50, 100, next));
	EXPECT_EQ(next + 100, f.limit);
	/* a later cumulative PSN with fewer credits may still move it */
	EXPECT_EQ(10, xnic_credit_flow_update(&f, next + 60, 50, next + 60));
	EXPECT_EQ(next + 110, f.limit);
	EXPECT_EQ(110, f.granted);
	EXPECT_TRUE(xnic_credit_flow_check(&f, next));
}

TEST(hostile_update_is_capped)
{
	struct xnic_credit_flow f = { 0 };
	__u32 next = 5;

	xnic_credit_flow_start(&f, next, 1);
	/* a peer cannot push the limit further than the field allows */
	xnic_credit_flow_update(&f, next, 0xffff, next);
	EXPECT_EQ(next + 0xffff, f.limit);
	EXPECT_EQ(0, xnic_credit_flow_update(&f, next, 0xffff, next));
	EXPECT_TRUE(xnic_credit_flow_check(&f, next));
	/* a stopped flow takes no credit */
	xnic_credit_flow_stop(&f, next);
	EXPECT_EQ(0, xnic_credit_flow_update(&f, next + 1, 0xffff, next));
	EXPECT_EQ(f.granted, f.consumed + f.returned);
}

/*
 * Found by selftests/fuzz/fuzz_credit: a grant whose PSN is half the PSN
 * space behind the flow is "before" the next PSN (so the ACK check lets it
 * through), and its limit is "after" the old limit, yet before the next
 * PSN: serial order is not transitive there. It used to move the limit
 * back and count 2^31 credits as granted, stalling the flow.
 */
TEST(update_half_the_psn_space_behind)
{
	struct xnic_credit_flow f = { 0 };
	__u32 next = 0x80000000U;

	xnic_credit_flow_start(&f, next, 512);
	EXPECT_EQ(0, xnic_credit_flow_update(&f, 0x2e, 0, next));
	EXPECT_EQ(next + 512, f.limit);
	EXPECT_EQ(512, f.granted);
	EXPECT_TRUE(xnic_credit_flow_check(&f, next));
	/* An ordinary grant still works after it. */
	EXPECT_EQ(512, xnic_credit_flow_update(&f, next, 1024, next));
	EXPECT_TRUE(xnic_credit_flow_check(&f, next));
}

TEST(flow_control_off_keeps_accounts)
{
	struct xnic_credit_flow f = { 0 };
	__u32 psn = 7;
	int k;

	xnic_credit_flow_start(&f, psn, 2);
	for (k = 0; k < 10; k++)
		xnic_credit_flow_consume(&f, psn++);
	EXPECT_EQ(10, f.consumed);
	EXPECT_EQ(10, f.granted);
	EXPECT_TRUE(xnic_credit_flow_check(&f, psn));
}

TEST(share)
{
	EXPECT_EQ(256, xnic_credit_share(256, 1024, 512, 1));
	EXPECT_EQ(170, xnic_credit_share(256, 1024, 512, 3));
	EXPECT_EQ(XNIC_CREDIT_MIN, xnic_credit_share(256, 1024, 512, 1000));
	EXPECT_EQ(1024, xnic_credit_share(65535, 1024, 100000, 1));
	EXPECT_EQ(XNIC_CREDIT_MIN, xnic_credit_share(1, 1024, 512, 1));
	EXPECT_EQ(512, xnic_credit_share(4096, 4096, 512, 0));
}

TEST(grant_never_moves_back)
{
	__u32 adv = 100, grew;
	__u16 cr;

	cr = xnic_credit_grant(&adv, 100, 64, &grew);
	EXPECT_EQ(64, cr);
	EXPECT_EQ(64, grew);
	/* the share shrank: what was advertised still holds */
	cr = xnic_credit_grant(&adv, 110, 8, &grew);
	EXPECT_EQ(54, cr);
	EXPECT_EQ(0, grew);
	cr = xnic_credit_grant(&adv, 160, 8, &grew);
	EXPECT_EQ(8, cr);
	EXPECT_EQ(4, grew);
	/* a stale advertisement (reset) starts over */
	adv = 5;
	cr = xnic_credit_grant(&adv, 100000, 16, &grew);
	EXPECT_EQ(16, cr);
	EXPECT_EQ(100016, adv);
}

TEST(class_budget)
{
	EXPECT_EQ(32, xnic_credit_class_budget(0, 32, 1, 1, true));
	EXPECT_EQ(32, xnic_credit_class_budget(1, 32, 1, 1, false));
	EXPECT_EQ(16, xnic_credit_class_budget(1, 32, 1, 1, true));
	EXPECT_EQ(4, xnic_credit_class_budget(1, 32, 7, 1, true));
	/* never starved: at least one frame */
	EXPECT_EQ(1, xnic_credit_class_budget(1, 32, 255, 1, true));
	EXPECT_EQ(1, xnic_credit_class_budget(1, 1, 255, 1, true));
	EXPECT_EQ(31, xnic_credit_class_budget(1, 32, 1, 255, true));
}

TEST(jain)
{
	double eq[3] = { 5, 5, 5 }, one[4] = { 9, 0, 0, 0 };
	double skew[2] = { 1, 3 };

	EXPECT_EQ(1000, xnic_credit_jain(eq, 3));
	EXPECT_EQ(250, xnic_credit_jain(one, 4));
	EXPECT_EQ(800, xnic_credit_jain(skew, 2));
	EXPECT_EQ(0, xnic_credit_jain(eq, 0));
}

TEST(credit_frame_check)
{
	struct xnic_wire_info i = {
		.version = XNIC_WIRE_VERSION,
		.opcode = XNIC_OP_CREDIT,
		.src_node = 2,
		.dst_node = 1,
		.src_qpn = 5,
		.dst_qpn = 6,
		.psn = 77,
		.credits = 0xffff,
	};
	struct xnic_wire_hdr h;
	struct xnic_wire_info j;

	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&i, XNIC_WIRE_HDR_LEN, 1));
	i.flags = XNIC_WF_CREDIT_REQ;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&i, XNIC_WIRE_HDR_LEN, 1));
	/* the credits field survives encoding */
	xnic_wire_encode(&h, &i);
	xnic_wire_decode(&j, &h);
	EXPECT_EQ(0xffff, j.credits);
	EXPECT_EQ(XNIC_WF_CREDIT_REQ, j.flags);
	/* no payload, no other flag */
	i.payload_len = 4;
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&i, XNIC_WIRE_HDR_LEN + 4,
						     1));
	i.payload_len = 0;
	i.flags = XNIC_WF_ACKREQ;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&i, XNIC_WIRE_HDR_LEN,
						       1));
	/* CREDIT_REQ means nothing on other opcodes */
	i.opcode = XNIC_OP_ACK;
	i.flags = XNIC_WF_CREDIT_REQ;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS,
		  xnic_wire_check(&i, XNIC_WIRE_HDR_LEN +
				  sizeof(struct xnic_wire_ack), 1));
}

/*
 * A requester and a responder over a channel that loses, duplicates and
 * reorders frames both ways; the responder's share changes at random
 * (flows come and go); the requester retransmits go-back-N on timeout and
 * asks for credit when stalled. Checks at every step: the accounting
 * invariant, no PSN sent beyond the limit, no frame arriving beyond the
 * responder's advertised limit or its receive window (no drop for lack of
 * room); at the end every message is through and granted == consumed +
 * returned.
 */
#define SIM_Q		64
#define SIM_RX_WIN	1024

struct sim_frame {
	__u32 psn;
	__u16 credits;
	bool used;
};

struct sim {
	struct xnic_credit_flow f;
	__u32 next, una;	/* requester */
	__u32 epsn, adv;	/* responder */
	struct sim_frame data[SIM_Q], ack[SIM_Q];
	unsigned int seed;
	unsigned long requests, violations, drops;
};

static unsigned int rnd(struct sim *s, unsigned int n)
{
	return (unsigned int)rand_r(&s->seed) % n;
}

static void sim_put(struct sim *s, struct sim_frame *q, __u32 psn,
		    __u16 credits, unsigned int loss_pct)
{
	int k;

	if (rnd(s, 100) < loss_pct)
		return;
	for (k = 0; k < SIM_Q; k++) {
		if (!q[k].used) {
			q[k] = (struct sim_frame){ psn, credits, true };
			return;
		}
	}
	/* a full queue loses the frame */
}

static bool sim_take(struct sim *s, struct sim_frame *q,
		     struct sim_frame *out)
{
	int start = (int)rnd(s, SIM_Q), k;

	for (k = 0; k < SIM_Q; k++) {
		struct sim_frame *e = &q[(start + k) % SIM_Q];

		if (e->used) {
			*out = *e;
			/* sometimes delivered twice */
			if (rnd(s, 100) >= 5)
				e->used = false;
			return true;
		}
	}
	return false;
}

static void sim_ack(struct sim *s, unsigned int loss)
{
	__u32 share = xnic_credit_share(256, SIM_RX_WIN, 512,
					1 + rnd(s, 40)), grew;
	__u16 cr = xnic_credit_grant(&s->adv, s->epsn, share, &grew);

	sim_put(s, s->ack, s->epsn, cr, loss);
}

static int sim_run(struct __test_metadata *_metadata, unsigned int seed,
		   __u32 start, __u32 total, unsigned int loss)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct sim_frame fr;
	unsigned long step;
	int k;

	s->seed = seed;
	s->next = s->una = s->epsn = start;
	xnic_credit_flow_start(&s->f, start, 32);
	s->adv = start + 32;
	for (step = 0; s->una != start + total; step++) {
		if (step > 20000000UL) {
			TH_LOG("seed %u: no progress, una %u of %u", seed,
			       s->una - start, total);
			free(s);
			return -1;
		}
		switch (rnd(s, 8)) {
		case 0: case 1: case 2:	/* requester sends new PSNs */
			for (k = rnd(s, 8); k >= 0; k--) {
				if (s->next == start + total ||
				    s->next - s->una >= 256 ||
				    !xnic_credit_flow_avail(&s->f, s->next))
					break;
				xnic_credit_flow_consume(&s->f, s->next);
				sim_put(s, s->data, s->next++, 0, loss);
			}
			break;
		case 3:	/* timeout: resend from una (no credit used) */
			if (rnd(s, 20) == 0) {
				__u32 p;

				for (p = s->una; p != s->next; p++)
					sim_put(s, s->data, p, 0, loss);
				/* stalled with nothing in flight: ask */
				if (s->una == s->next &&
				    !xnic_credit_flow_avail(&s->f, s->next)) {
					s->requests++;
					sim_ack(s, loss);
				}
			}
			break;
		case 4: case 5:	/* responder takes a frame */
			if (!sim_take(s, s->data, &fr))
				break;
			if (!xnic_psn_before(fr.psn, s->epsn + SIM_RX_WIN))
				s->drops++;
			if (!xnic_psn_before(fr.psn, s->adv))
				s->violations++;
			if (fr.psn == s->epsn)
				s->epsn++;	/* in order only */
			sim_ack(s, loss);
			break;
		default:	/* requester takes an ACK */
			if (!sim_take(s, s->ack, &fr))
				break;
			if (xnic_psn_before(s->next, fr.psn))
				break;
			if (xnic_psn_before(s->una, fr.psn))
				s->una = fr.psn;
			xnic_credit_flow_update(&s->f, fr.psn, fr.credits,
						s->next);
			break;
		}
		if (!xnic_credit_flow_check(&s->f, s->next) ||
		    xnic_psn_diff(s->next, s->f.limit) > 0) {
			TH_LOG("seed %u step %lu: invariant broken", seed,
			       step);
			free(s);
			return -1;
		}
	}
	EXPECT_EQ(0, s->violations);
	EXPECT_EQ(0, s->drops);
	EXPECT_EQ(total, s->f.consumed);
	xnic_credit_flow_stop(&s->f, s->next);
	EXPECT_EQ(s->f.granted, s->f.consumed + s->f.returned);
	EXPECT_TRUE(xnic_credit_flow_check(&s->f, s->next));
	free(s);
	return 0;
}

TEST(random_lossless)
{
	unsigned int seed;

	for (seed = 1; seed <= 10; seed++)
		ASSERT_EQ(0, sim_run(_metadata, seed, seed * 0x0badf00dU,
				     3000, 0));
}

TEST(random_lossy_no_deadlock)
{
	unsigned int seed;

	for (seed = 100; seed < 115; seed++)
		ASSERT_EQ(0, sim_run(_metadata, seed,
				     0xffffffffU - seed * 37, 3000,
				     seed % 30));
}

/*
 * Byte deficit round robin: backlogged flows with frames of 326 bytes
 * (256 B of payload) and of 9070 bytes get equal bytes over many turns,
 * where a quantum of frames would give the large one 28 times more.
 */
TEST(drr_equal_bytes)
{
	static const __u32 cost[3] = { 326, 9070, 4166 };
	struct xnic_drr d[3];
	double bytes[3] = { 0 };
	int turn, k;
	__u32 n, f;

	memset(d, 0, sizeof(d));
	for (turn = 0; turn < 2000; turn++) {
		for (k = 0; k < 3; k++) {
			n = xnic_drr_begin(&d[k], 65536, 2048);
			ASSERT_LE(n, XNIC_DRR_MAX_FRAMES);
			for (f = 0; f < n; f++) {
				xnic_drr_charge(&d[k], cost[k]);
				bytes[k] += cost[k];
			}
			xnic_drr_end(&d[k], 65536, true);
			/* the overshoot is less than a frame */
			ASSERT_GT((__s64)65536 * 2, d[k].deficit);
			ASSERT_LT(-(__s64)cost[k] * 2, d[k].deficit);
		}
	}
	EXPECT_LE(999, xnic_credit_jain(bytes, 3));
	for (k = 0; k < 3; k++)
		EXPECT_EQ(cost[k], d[k].cost);
}

TEST(drr_idle_flow_saves_nothing)
{
	struct xnic_drr d;
	int k;

	memset(&d, 0, sizeof(d));
	for (k = 0; k < 10; k++) {
		xnic_drr_begin(&d, 1000, 100);
		xnic_drr_end(&d, 1000, false);
	}
	/* at most one quantum kept while idle */
	EXPECT_EQ(1000, d.deficit);
	/* a backlogged flow that cannot send keeps at most two quanta */
	for (k = 0; k < 10; k++) {
		xnic_drr_begin(&d, 1000, 100);
		xnic_drr_end(&d, 1000, true);
	}
	EXPECT_EQ(2000, d.deficit);
	/* inline sends are paid from it, then stop */
	xnic_drr_charge(&d, 100);
	EXPECT_EQ(19, xnic_drr_inline(&d, 32));
	EXPECT_EQ(4, xnic_drr_inline(&d, 4));
	xnic_drr_charge(&d, 1900);
	EXPECT_EQ(0, xnic_drr_inline(&d, 32));
}

TEST(drr_debt_skips_turns)
{
	struct xnic_drr d;
	int k;

	memset(&d, 0, sizeof(d));
	/* 5000 bytes sent inline before its turn: a quantum of 1000 */
	for (k = 0; k < 5; k++)
		xnic_drr_charge(&d, 1000);
	EXPECT_EQ(0, xnic_drr_begin(&d, 1000, 100));
	xnic_drr_end(&d, 1000, true);
	for (k = 0; k < 4; k++) {
		EXPECT_EQ(0, xnic_drr_begin(&d, 1000, 100));
		xnic_drr_end(&d, 1000, true);
	}
	/* paid off: one frame of 1000 bytes fits again */
	EXPECT_EQ(1, xnic_drr_begin(&d, 1000, 100));
	/* frames for a budget: at least one, at most max */
	EXPECT_EQ(1, xnic_drr_frames(&d, 1, 100, 8));
	EXPECT_EQ(8, xnic_drr_frames(&d, 1 << 30, 100, 8));
}

TEST_HARNESS_MAIN
