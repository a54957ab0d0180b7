// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the link credit arithmetic (kmod/link_credit_logic.h), run
 * on the host: take and grant, stale, foreign and hostile updates, epochs,
 * the resync of lost frames, and a randomised lossy link whose sender
 * never has more than a window of frames unprocessed and whose accounts
 * balance (granted == consumed + held) at every step.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "kmod/link_credit_logic.h"

#define MS	1000000ULL

TEST(take_until_empty)
{
	struct xnic_lcr_tx t = { 0 };
	int k;

	xnic_lcr_tx_init(&t, 7, 8);
	EXPECT_EQ(8, xnic_lcr_tx_avail(&t));
	for (k = 0; k < 8; k++)
		ASSERT_TRUE(xnic_lcr_tx_take(&t));
	EXPECT_FALSE(xnic_lcr_tx_take(&t));
	EXPECT_EQ(0, xnic_lcr_tx_avail(&t));
	EXPECT_EQ(8, t.consumed);
	EXPECT_TRUE(xnic_lcr_tx_check(&t));
}

TEST(update_forward_only_and_epoch)
{
	struct xnic_lcr_tx t = { 0 };

	xnic_lcr_tx_init(&t, 7, 8);
	/* a grant for another epoch of ours: nothing */
	EXPECT_EQ(0, xnic_lcr_tx_update(&t, 8, 100));
	EXPECT_EQ(0, xnic_lcr_tx_update(&t, 0, 100));
	EXPECT_EQ(92, xnic_lcr_tx_update(&t, 7, 100));
	/* repeated and stale grants: nothing */
	EXPECT_EQ(0, xnic_lcr_tx_update(&t, 7, 100));
	EXPECT_EQ(0, xnic_lcr_tx_update(&t, 7, 50));
	EXPECT_EQ(100, t.limit);
	EXPECT_EQ(100, t.granted);
	EXPECT_TRUE(xnic_lcr_tx_check(&t));
}

TEST(hostile_grant_is_capped)
{
	struct xnic_lcr_tx t = { 0 };

	xnic_lcr_tx_init(&t, 1, 4);
	/* far ahead: capped at XNIC_LCR_MAX_WINDOW past sent */
	EXPECT_EQ(XNIC_LCR_MAX_WINDOW - 4,
		  xnic_lcr_tx_update(&t, 1, 0x7fffffffU));
	EXPECT_EQ(XNIC_LCR_MAX_WINDOW, xnic_lcr_tx_avail(&t));
	/* "behind" across the wrap: not a move */
	EXPECT_EQ(0, xnic_lcr_tx_update(&t, 1, 0x80000010U));
	EXPECT_TRUE(xnic_lcr_tx_check(&t));
}

TEST(wraps_around)
{
	struct xnic_lcr_tx t = { 0 };
	struct xnic_lcr_rx r = { 0 };
	int k;

	xnic_lcr_tx_init(&t, 3, 16);
	t.sent = 0xfffffff8U;
	t.limit = t.sent + 16;
	r.epoch = 3;
	r.rcvd = t.sent;
	r.adv = t.limit;
	for (k = 0; k < 1000; k++) {
		ASSERT_TRUE(xnic_lcr_tx_take(&t));
		r.rcvd++;
		if (xnic_lcr_rx_due(&r, 16))
			xnic_lcr_tx_update(&t, 3, xnic_lcr_rx_grant(&r, 16));
	}
	EXPECT_LT(0, xnic_lcr_tx_avail(&t));
	EXPECT_TRUE(xnic_lcr_tx_check(&t));
}

TEST(grant_never_moves_back)
{
	struct xnic_lcr_rx r = { 0 };

	r.epoch = 1;
	r.rcvd = 10;
	EXPECT_EQ(74, xnic_lcr_rx_grant(&r, 64));
	/* a smaller window: the limit stays */
	EXPECT_EQ(74, xnic_lcr_rx_grant(&r, 8));
	r.rcvd = 70;
	EXPECT_EQ(78, xnic_lcr_rx_grant(&r, 8));
	EXPECT_EQ(78, r.advertised);
}

TEST(due_at_half_window)
{
	struct xnic_lcr_rx r = { 0 };

	r.epoch = 1;
	xnic_lcr_rx_grant(&r, 8);
	r.rcvd = 3;
	EXPECT_FALSE(xnic_lcr_rx_due(&r, 8));
	r.rcvd = 4;
	EXPECT_TRUE(xnic_lcr_rx_due(&r, 8));
	/* a window of 1: every frame */
	memset(&r, 0, sizeof(r));
	xnic_lcr_rx_grant(&r, 1);
	r.rcvd = 1;
	EXPECT_TRUE(xnic_lcr_rx_due(&r, 1));
}

TEST(new_epoch_restarts_count)
{
	struct xnic_lcr_rx r = { 0 };

	r.epoch = 5;
	r.rcvd = 1000;
	r.adv = 1064;
	EXPECT_EQ(0, xnic_lcr_rx_sync(&r, 9, 3, 1 * MS));
	EXPECT_EQ(9, r.epoch);
	EXPECT_EQ(3, r.rcvd);
	EXPECT_EQ(67, xnic_lcr_rx_grant(&r, 64));
}

TEST(resync_only_after_the_sample_aged)
{
	struct xnic_lcr_rx r = { 0 };

	xnic_lcr_rx_sync(&r, 4, 0, 1 * MS);
	/* sender says 10 sent; 6 arrived so far */
	r.rcvd = 6;
	EXPECT_EQ(0, xnic_lcr_rx_sync(&r, 4, 10, 2 * MS));
	/* young sample: 4 may still be in flight */
	EXPECT_EQ(0, xnic_lcr_rx_sync(&r, 4, 12, 50 * MS));
	EXPECT_EQ(6, r.rcvd);
	/* two more arrive; the sample of 10 ages */
	r.rcvd = 8;
	EXPECT_EQ(2, xnic_lcr_rx_sync(&r, 4, 12,
				      (2 + XNIC_LCR_RESYNC_MS) * MS));
	EXPECT_EQ(10, r.rcvd);
	EXPECT_EQ(2, r.lost);
	/* caught up: the next aged sample gives nothing up */
	r.rcvd = 12;
	EXPECT_EQ(0, xnic_lcr_rx_sync(&r, 4, 12,
				      (3 + 2 * XNIC_LCR_RESYNC_MS) * MS));
	EXPECT_EQ(12, r.rcvd);
}

TEST(hostile_sync_is_bounded)
{
	struct xnic_lcr_rx r = { 0 };

	xnic_lcr_rx_sync(&r, 4, 0, 1 * MS);
	xnic_lcr_rx_sync(&r, 4, 0x40000000U, 2 * MS);
	/* a sample further ahead than any window: ignored */
	EXPECT_EQ(0, xnic_lcr_rx_sync(&r, 4, 0x40000000U,
				      (3 + XNIC_LCR_RESYNC_MS) * MS));
	EXPECT_EQ(0, r.rcvd);
}

/*
 * A link with loss, reordering within a few frames, and lost updates:
 * frames in flight never exceed the window, the sender's accounts hold
 * at every step, and once the link is quiet and synced the whole window
 * is back (no credit stranded by the losses).
 */
TEST(random_lossy_link)
{
	enum { W = 16, STEPS = 200000, Q = 64 };
	struct xnic_lcr_tx t = { 0 };
	struct xnic_lcr_rx r = { 0 };
	__u32 q = 0, k;
	__u64 now = MS, lost = 0;
	int step;

	srand(1);
	xnic_lcr_tx_init(&t, 77, W);
	xnic_lcr_rx_sync(&r, 77, 0, now);
	for (step = 0; step < STEPS; step++) {
		int op = rand() % 100;

		now += 10000;	/* 10 us a step */
		if (op < 45 && xnic_lcr_tx_take(&t)) {
			/* 1 % of frames are lost on the link */
			if (rand() % 100)
				q++;
			else
				lost++;
		} else if (op < 85 && q) {
			q--;
			r.rcvd++;
			if (xnic_lcr_rx_due(&r, W)) {
				__u32 lim = xnic_lcr_rx_grant(&r, W);

				/* 20 % of updates are lost */
				if (rand() % 5)
					xnic_lcr_tx_update(&t, 77, lim);
			}
		} else if (op < 87) {
			/* the periodic sync, both ways */
			xnic_lcr_rx_sync(&r, 77, t.sent, now);
			xnic_lcr_tx_update(&t, 77, xnic_lcr_rx_grant(&r, W));
		}
		/* frames queued never exceed the window */
		ASSERT_LE(q, W);
		ASSERT_TRUE(xnic_lcr_tx_check(&t));
		/* sent but not processed (queued or lost): a window */
		ASSERT_LE(t.sent - r.rcvd, (__u32)W);
	}
	/* drain, then sync until the losses are given up */
	while (q) {
		q--;
		r.rcvd++;
	}
	for (k = 0; k < 4; k++) {
		now += (XNIC_LCR_RESYNC_MS + 1) * MS;
		xnic_lcr_rx_sync(&r, 77, t.sent, now);
		xnic_lcr_tx_update(&t, 77, xnic_lcr_rx_grant(&r, W));
	}
	EXPECT_LT(0, lost);
	EXPECT_EQ(lost, r.lost);
	EXPECT_EQ(t.sent, r.rcvd);
	EXPECT_EQ(W, xnic_lcr_tx_avail(&t));
	EXPECT_EQ(t.granted, t.consumed + W);
}

TEST_HARNESS_MAIN
