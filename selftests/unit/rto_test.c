// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the retransmission timeout arithmetic (kmod/rto_logic.h),
 * run on the host: RFC 6298's estimator, the floor and the ceiling, the
 * backoff, and the case that failed the capped leaf/spine bench: a queue
 * that fills to seconds of delay, where the timeout must stay above the
 * round trip it measures and the backoff must outlast a first round trip
 * of ~9 s within retry_cnt (7) expiries.
 */
#include "kselftest_harness.h"
#include "kmod/rto_logic.h"

#define MS	1000000ULL
#define SEC	(1000 * MS)

TEST(first_sample_and_smoothing)
{
	__u64 srtt = 0, var = 0;

	xnic_rto_sample(&srtt, &var, 100 * MS);
	EXPECT_EQ(100 * MS, srtt);
	EXPECT_EQ(50 * MS, var);
	EXPECT_EQ(300 * MS, xnic_rto_ns(srtt, var, 10 * MS));
	/* R = 180 ms: RTTVAR = 3/4 50 + 1/4 80, SRTT = 7/8 100 + 1/8 180 */
	xnic_rto_sample(&srtt, &var, 180 * MS);
	EXPECT_EQ(57500 * 1000ULL, var);
	EXPECT_EQ(110 * MS, srtt);
	/* a zero sample never makes SRTT "no sample" */
	srtt = 0;
	xnic_rto_sample(&srtt, &var, 0);
	EXPECT_EQ(1, srtt);
	xnic_rto_sample(&srtt, &var, 0);
	EXPECT_EQ(1, srtt);
}

TEST(floor_and_ceiling)
{
	EXPECT_EQ(10 * MS, xnic_rto_ns(1 * MS, 0, 10 * MS));
	/* no 1 s cap: a 3 s round trip gets a timeout above it */
	EXPECT_EQ(5 * SEC, xnic_rto_ns(3 * SEC, SEC / 2, 10 * MS));
	EXPECT_EQ(XNIC_RTO_MAX_NS, xnic_rto_ns(50 * SEC, 10 * SEC, 10 * MS));
	EXPECT_GE(XNIC_RTO_MAX_NS, 60 * SEC);	/* RFC 6298 (2.5) */
}

TEST(backoff)
{
	EXPECT_EQ(134, xnic_rto_backoff(67, 1000));
	EXPECT_EQ(1000, xnic_rto_backoff(600, 1000));
	EXPECT_EQ(1000, xnic_rto_backoff(1000, 1000));
	/* a timeout above the ceiling (a large QP attribute) stays */
	EXPECT_EQ(2000, xnic_rto_backoff(2000, 1000));
	EXPECT_EQ(~0ULL / 2 * 2, xnic_rto_backoff(~0ULL / 2, ~0ULL));
}

/*
 * A link of 512 KiB/s whose queue grows by one 9 KB frame (17 ms) per
 * frame sent, up to 1000 frames (netem's default limit, ~17 s): every
 * sample is the previous one plus a frame time. From the third sample on,
 * the timeout computed after a sample is above the next one: no spurious
 * expiry while the queue builds, however deep it gets below the ceiling
 * (the first two lag: a queue that grows by a frame time per sample
 * outruns an estimate that has seen one or two).
 */
TEST(timeout_follows_a_growing_queue)
{
	__u64 srtt = 0, var = 0, rtt = 2 * MS, frame = 9000 * SEC / 524288;
	int k;

	for (k = 0; k < 1000; k++) {
		xnic_rto_sample(&srtt, &var, rtt);
		rtt += frame;
		if (k >= 2)
			ASSERT_GT(xnic_rto_ns(srtt, var, 10 * MS), rtt)
				TH_LOG("sample %d: timeout below the next one",
				       k);
	}
	EXPECT_GT(rtt, 15 * SEC);
	/* the queue drains: the estimate comes back down */
	for (k = 0; k < 200; k++)
		xnic_rto_sample(&srtt, &var, 2 * MS);
	EXPECT_LT(xnic_rto_ns(srtt, var, 10 * MS), 20 * MS);
}

/*
 * No sample yet (libxnic's default timeout 14: 67 ms), and the first ACK
 * comes ~9 s later (both directions' queues full at 512 kbit/s): the
 * 7 expiries that retry_cnt allows must span more than that. With a 1 s
 * ceiling they spanned 67 + 134 + 268 + 536 + 4 x 1000 ms = 5 s.
 */
TEST(backoff_outlasts_a_deep_queue)
{
	__u64 rto = 67 * MS, t = 0;
	int k;

	for (k = 0; k < 8; k++) {	/* the 8th expiry fails the QP */
		t += rto;
		rto = xnic_rto_backoff(rto, XNIC_RTO_MAX_NS);
	}
	EXPECT_GT(t, 15 * SEC);
	EXPECT_LT(t, 20 * SEC);
}

TEST_HARNESS_MAIN
