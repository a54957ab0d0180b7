// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of PSN serial arithmetic, the receive window bitmap and the
 * selective ACK helpers (kmod/wire.h), run on the host.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "kmod/wire.h"

TEST(serial_compare)
{
	EXPECT_TRUE(xnic_psn_before(1, 2));
	EXPECT_FALSE(xnic_psn_before(2, 2));
	EXPECT_FALSE(xnic_psn_before(3, 2));
	/* across the 32-bit wrap */
	EXPECT_TRUE(xnic_psn_before(0xfffffff0U, 5));
	EXPECT_FALSE(xnic_psn_before(5, 0xfffffff0U));
	EXPECT_EQ(21, xnic_psn_diff(5, 0xfffffff0U));
	EXPECT_EQ(-21, xnic_psn_diff(0xfffffff0U, 5));
	EXPECT_TRUE(xnic_psn_in(0, 0xffffffffU, 2));
	EXPECT_FALSE(xnic_psn_in(1, 0xffffffffU, 2));
	EXPECT_FALSE(xnic_psn_in(0xfffffffeU, 0xffffffffU, 2));
}

TEST(window_in_order)
{
	struct xnic_psn_win w;
	__u32 p;

	xnic_psn_win_init(&w, 100);
	for (p = 100; p < 5000; p++) {
		ASSERT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, p));
		xnic_psn_win_set(&w, p);
		ASSERT_EQ(1, xnic_psn_win_advance(&w));
		ASSERT_EQ(p + 1, w.epsn);
		ASSERT_EQ(XNIC_PSN_DUP, xnic_psn_win_classify(&w, p));
	}
}

TEST(window_reorder_and_wrap)
{
	struct xnic_psn_win w;
	__u32 start = 0xfffffe00U, p;

	xnic_psn_win_init(&w, start);
	/* odd PSNs first: nothing moves */
	for (p = start + 1; p != start + 1001; p += 2) {
		ASSERT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, p));
		xnic_psn_win_set(&w, p);
		ASSERT_EQ(0, xnic_psn_win_advance(&w));
	}
	EXPECT_EQ(XNIC_PSN_DUP, xnic_psn_win_classify(&w, start + 1));
	EXPECT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, start + 2));
	/* then the even ones; each fills a hole of one */
	for (p = start; p != start + 1000; p += 2) {
		xnic_psn_win_set(&w, p);
		ASSERT_EQ(2, xnic_psn_win_advance(&w));
	}
	EXPECT_EQ(start + 1000, w.epsn);
	EXPECT_TRUE(w.epsn < start); /* wrapped */
	/* the bits behind epsn are clear again */
	EXPECT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, start + 1000));
	EXPECT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, start + 1001 +
						       XNIC_RX_WINDOW - 2));
}

TEST(window_edges)
{
	struct xnic_psn_win w;

	xnic_psn_win_init(&w, 7);
	EXPECT_EQ(XNIC_PSN_DUP, xnic_psn_win_classify(&w, 6));
	EXPECT_EQ(XNIC_PSN_DUP, xnic_psn_win_classify(&w, 7 - 0x7fffffffU));
	EXPECT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, 7));
	EXPECT_EQ(XNIC_PSN_NEW,
		  xnic_psn_win_classify(&w, 7 + XNIC_RX_WINDOW - 1));
	EXPECT_EQ(XNIC_PSN_AHEAD,
		  xnic_psn_win_classify(&w, 7 + XNIC_RX_WINDOW));
	EXPECT_EQ(XNIC_PSN_AHEAD, xnic_psn_win_classify(&w, 7 + 0x7fffffffU));
	/* the last slot of the window does not alias epsn's */
	xnic_psn_win_set(&w, 7 + XNIC_RX_WINDOW - 1);
	EXPECT_EQ(0, xnic_psn_win_advance(&w));
	EXPECT_EQ(XNIC_PSN_NEW, xnic_psn_win_classify(&w, 7));
}

TEST(sack_roundtrip)
{
	__u64 sack[XNIC_WIRE_SACK_BITS / 64];
	struct xnic_psn_win w;
	__u32 p, epsn = 0xffffff80U;

	xnic_psn_win_init(&w, epsn);
	srand(1);
	for (p = epsn + 1; p != epsn + 600; p++)
		if (rand() & 1)
			xnic_psn_win_set(&w, p);
	xnic_psn_win_sack(&w, sack);
	EXPECT_FALSE(xnic_sack_test(sack, epsn, epsn));
	EXPECT_FALSE(xnic_sack_test(sack, epsn, epsn - 1));
	for (p = epsn + 1; p != epsn + 600; p++) {
		bool want = p - epsn <= XNIC_WIRE_SACK_BITS &&
			    xnic_psn_win_test(&w, p);

		ASSERT_EQ(want, xnic_sack_test(sack, epsn, p));
	}
}

/* xnic_psn_win_sack() reads words: check it bit by bit at every offset */
TEST(sack_every_offset)
{
	__u64 sack[XNIC_WIRE_SACK_BITS / 64];
	struct xnic_psn_win w;
	__u32 epsn, p, k;

	srand(3);
	for (epsn = 0xfffffc00U; epsn != 0x400; epsn++) {
		xnic_psn_win_init(&w, epsn);
		xnic_psn_win_sack(&w, sack);
		for (k = 0; k < XNIC_WIRE_SACK_BITS / 64; k++)
			ASSERT_EQ(0, sack[k]);
		/* sparse or dense, up to the window's far edge */
		for (p = epsn + 1; p != epsn + XNIC_RX_WINDOW; p++)
			if (rand() % (epsn % 2 ? 3 : 40) == 0)
				xnic_psn_win_set(&w, p);
		xnic_psn_win_sack(&w, sack);
		for (k = 0; k < XNIC_WIRE_SACK_BITS; k++)
			ASSERT_EQ(xnic_psn_win_test(&w, epsn + 1 + k),
				  (sack[k / 64] >> (k % 64)) & 1);
	}
}

TEST(sack_random_delivery)
{
	/* random permutation with duplicates: every PSN lands exactly once */
	enum { N = 20000 };
	static unsigned char seen[N];
	struct xnic_psn_win w;
	__u32 base = 0xffffe000U, hi = 0;
	unsigned int placed = 0, i;

	xnic_psn_win_init(&w, base);
	srand(7);
	while (w.epsn != base + N) {
		/* choose from the window ahead, sometimes behind */
		__u32 off = (w.epsn - base) + (rand() % 1100);
		__u32 psn;

		if (rand() % 10 == 0 && w.epsn != base)
			off = rand() % (w.epsn - base);
		if (off >= N)
			continue;
		psn = base + off;
		switch (xnic_psn_win_classify(&w, psn)) {
		case XNIC_PSN_NEW:
			ASSERT_EQ(0, seen[off]);
			seen[off] = 1;
			placed++;
			xnic_psn_win_set(&w, psn);
			xnic_psn_win_advance(&w);
			break;
		case XNIC_PSN_DUP:
			ASSERT_EQ(1, seen[off]);
			break;
		case XNIC_PSN_AHEAD:
			ASSERT_GE(off, w.epsn - base + XNIC_RX_WINDOW);
			hi++;
			break;
		}
	}
	EXPECT_EQ(N, placed);
	for (i = 0; i < N; i++)
		ASSERT_EQ(1, seen[i]);
	TH_LOG("%u out-of-window arrivals", hi);
}

TEST_HARNESS_MAIN
