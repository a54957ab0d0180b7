// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the congestion window arithmetic (kmod/cwnd_logic.h), run
 * on the host: a lossless path keeps the whole window; fast retransmit
 * halves, a timeout restarts from XNIC_CWND_MIN; one cut per congestion
 * event; slow start then congestion avoidance back to the whole window;
 * PSNs that wrap; a cut undone when every resend of its event was
 * spurious (D-SACK), and only then.
 */
#include "kselftest_harness.h"
#include "kmod/cwnd_logic.h"

#define WIN	256

TEST(lossless_path_keeps_the_window)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 1000);
	EXPECT_EQ(WIN, c.cwnd);
	xnic_cwnd_acked(&c, 100000);
	EXPECT_EQ(WIN, c.cwnd);
}

TEST(fast_retransmit_halves_once_per_event)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 1000);
	/* 200 in flight, PSN 1010 lost: half of the flight. */
	EXPECT_TRUE(xnic_cwnd_loss(&c, 1010, 1200, 200, false));
	EXPECT_EQ(100, c.cwnd);
	EXPECT_EQ(100, c.ssthresh);
	/* More holes of that flight: the same event, no second cut. */
	EXPECT_FALSE(xnic_cwnd_loss(&c, 1150, 1210, 190, false));
	EXPECT_FALSE(xnic_cwnd_loss(&c, 1199, 1210, 190, true));
	EXPECT_EQ(100, c.cwnd);
	/* A frame sent after the cut is lost: a new event. */
	EXPECT_TRUE(xnic_cwnd_loss(&c, 1200, 1300, 100, false));
	EXPECT_EQ(50, c.cwnd);
}

TEST(timeout_restarts_from_min_and_slow_starts)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 0);
	EXPECT_TRUE(xnic_cwnd_loss(&c, 0, 64, 64, true));
	EXPECT_EQ(XNIC_CWND_MIN, c.cwnd);
	EXPECT_EQ(32, c.ssthresh);
	/* Slow start: one frame per frame acknowledged, up to ssthresh. */
	xnic_cwnd_acked(&c, 4);
	EXPECT_EQ(8, c.cwnd);
	xnic_cwnd_acked(&c, 24);
	EXPECT_EQ(32, c.cwnd);
	/* Congestion avoidance: one frame per window of frames. */
	xnic_cwnd_acked(&c, 31);
	EXPECT_EQ(32, c.cwnd);
	xnic_cwnd_acked(&c, 1);
	EXPECT_EQ(33, c.cwnd);
	xnic_cwnd_acked(&c, 33);
	EXPECT_EQ(34, c.cwnd);
	/* Never above the whole window. */
	xnic_cwnd_acked(&c, 1000000);
	EXPECT_EQ(WIN, c.cwnd);
}

TEST(window_floor)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 0);
	/* 3 frames in flight: the window never goes below the floor. */
	EXPECT_TRUE(xnic_cwnd_loss(&c, 0, 3, 3, false));
	EXPECT_EQ(XNIC_CWND_MIN, c.cwnd);
	EXPECT_EQ(XNIC_CWND_MIN, c.ssthresh);
	EXPECT_TRUE(xnic_cwnd_loss(&c, 3, 6, 3, true));
	EXPECT_EQ(XNIC_CWND_MIN, c.cwnd);
}

TEST(psn_wrap)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 0xfffffff0U);
	EXPECT_TRUE(xnic_cwnd_loss(&c, 0xfffffff8U, 0x20, 48, false));
	EXPECT_EQ(24, c.cwnd);
	/* 0x10 was sent before the cut (recover 0x20), past the wrap. */
	EXPECT_FALSE(xnic_cwnd_loss(&c, 0x10, 0x30, 30, false));
	EXPECT_TRUE(xnic_cwnd_loss(&c, 0x20, 0x40, 32, false));
	EXPECT_EQ(16, c.cwnd);
}

TEST(spurious_resends_undo_the_cut)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 1000);
	xnic_cwnd_acked(&c, 10);
	EXPECT_TRUE(xnic_cwnd_loss(&c, 1010, 1200, 200, false));
	EXPECT_EQ(100, c.cwnd);
	xnic_cwnd_resent(&c, 1010);
	xnic_cwnd_resent(&c, 1011);
	/* A D-SACK of a PSN the event did not resend changes nothing... */
	EXPECT_FALSE(xnic_cwnd_spurious(&c, 1300));
	/* ...one of two resends spurious: the other may have been a loss. */
	EXPECT_FALSE(xnic_cwnd_spurious(&c, 1010));
	EXPECT_EQ(100, c.cwnd);
	/* Both: nothing was lost, the window is what it was. */
	EXPECT_TRUE(xnic_cwnd_spurious(&c, 1011));
	EXPECT_EQ(WIN, c.cwnd);
	EXPECT_EQ(WIN, c.ssthresh);
	/* Undone once: a late extra report changes nothing. */
	EXPECT_FALSE(xnic_cwnd_spurious(&c, 1011));
}

TEST(spurious_timeout_undone)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 0);
	EXPECT_TRUE(xnic_cwnd_loss(&c, 0, 64, 64, true));
	EXPECT_EQ(XNIC_CWND_MIN, c.cwnd);
	xnic_cwnd_resent(&c, 0);
	/* Frames acknowledged meanwhile grew the window: it keeps the most. */
	xnic_cwnd_acked(&c, 2);
	EXPECT_TRUE(xnic_cwnd_spurious(&c, 0));
	EXPECT_EQ(WIN, c.cwnd);
}

TEST(real_loss_keeps_the_cut)
{
	struct xnic_cwnd c;

	xnic_cwnd_init(&c, WIN, 0);
	/* No cut yet: a D-SACK of a resend undoes nothing. */
	xnic_cwnd_resent(&c, 5);
	EXPECT_FALSE(xnic_cwnd_spurious(&c, 5));
	EXPECT_TRUE(xnic_cwnd_loss(&c, 10, 200, 190, false));
	xnic_cwnd_resent(&c, 10);
	xnic_cwnd_resent(&c, 11);
	EXPECT_FALSE(xnic_cwnd_spurious(&c, 11));
	/* 10 was lost (no D-SACK); the next event replaces this one. */
	EXPECT_TRUE(xnic_cwnd_loss(&c, 200, 300, 100, false));
	EXPECT_EQ(50, c.cwnd);
	xnic_cwnd_resent(&c, 200);
	/* This event's only resend spurious: undone to after the first. */
	EXPECT_TRUE(xnic_cwnd_spurious(&c, 200));
	EXPECT_EQ(95, c.cwnd);
}

TEST_HARNESS_MAIN
