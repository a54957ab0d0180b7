// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of fast retransmit's reordering allowance
 * (kmod/reorder_logic.h), run on the host: it starts at one base; each
 * round trip with a D-SACK adds one, up to XNIC_REO_MULT_MAX; sixteen
 * recoveries without one bring it back; PSNs that wrap.
 */
#include "kselftest_harness.h"
#include "kmod/reorder_logic.h"

TEST(starts_at_one_base)
{
	struct xnic_reo r;

	xnic_reo_init(&r, 100);
	EXPECT_EQ(1, r.mult);
	EXPECT_EQ(1000 + 500, xnic_reo_age(&r, 1000, 500));
}

TEST(grows_once_per_round_trip)
{
	struct xnic_reo r;

	xnic_reo_init(&r, 100);
	EXPECT_TRUE(xnic_reo_spurious(&r, 110, 300));
	EXPECT_EQ(2, r.mult);
	/* More D-SACKs of PSNs sent before that: the same round trip. */
	EXPECT_FALSE(xnic_reo_spurious(&r, 120, 310));
	EXPECT_FALSE(xnic_reo_spurious(&r, 299, 320));
	EXPECT_EQ(2, r.mult);
	EXPECT_TRUE(xnic_reo_spurious(&r, 300, 400));
	EXPECT_EQ(3, r.mult);
	EXPECT_EQ(1000 + 3 * 500, xnic_reo_age(&r, 1000, 500));
}

TEST(capped)
{
	struct xnic_reo r;
	__u32 psn;

	xnic_reo_init(&r, 0);
	for (psn = 0; psn < 100; psn++)
		xnic_reo_spurious(&r, psn, psn + 1);
	EXPECT_EQ(XNIC_REO_MULT_MAX, r.mult);
}

TEST(recoveries_without_dsack_reset)
{
	struct xnic_reo r;
	int k;

	xnic_reo_init(&r, 0);
	xnic_reo_spurious(&r, 0, 10);
	xnic_reo_spurious(&r, 10, 20);
	EXPECT_EQ(3, r.mult);
	for (k = 0; k < XNIC_REO_PERSIST - 1; k++)
		xnic_reo_recovery(&r);
	EXPECT_EQ(3, r.mult);
	/* A D-SACK restarts the count. */
	xnic_reo_spurious(&r, 15, 30);
	for (k = 0; k < XNIC_REO_PERSIST - 1; k++)
		xnic_reo_recovery(&r);
	EXPECT_EQ(3, r.mult);
	xnic_reo_recovery(&r);
	EXPECT_EQ(1, r.mult);
	xnic_reo_recovery(&r);
	EXPECT_EQ(1, r.mult);
}

TEST(psn_wrap)
{
	struct xnic_reo r;

	xnic_reo_init(&r, 0xfffffff0U);
	EXPECT_TRUE(xnic_reo_spurious(&r, 0xfffffff8U, 0x10));
	/* 0x8 was sent before the increase (psn 0x10), past the wrap. */
	EXPECT_FALSE(xnic_reo_spurious(&r, 0x8, 0x20));
	EXPECT_TRUE(xnic_reo_spurious(&r, 0x10, 0x30));
	EXPECT_EQ(3, r.mult);
}

TEST_HARNESS_MAIN
