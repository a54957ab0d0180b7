// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the CM message helpers (kmod/cm_wire.h), run on the host. */
#include <stddef.h>
#include <string.h>

#include "kselftest_harness.h"
#include "kmod/cm_wire.h"

static struct xnic_cm_info req(void)
{
	struct xnic_cm_info c = {
		.type = XNIC_CM_REQ,
		.local_id = 7,
		.qpn = 0x123456,
		.psn = 0xabcdef,
		.timeout_ms = 1000,
		.retries = 3,
		.service_id = 0x0102030405060708ULL,
		.private_len = 4,
		.private_data = { 1, 2, 3, 4 },
	};
	return c;
}

TEST(layout)
{
	ASSERT_EQ(XNIC_WIRE_CM_LEN, sizeof(struct xnic_wire_cm));
	EXPECT_EQ(4, offsetof(struct xnic_wire_cm, local_id));
	EXPECT_EQ(24, offsetof(struct xnic_wire_cm, service_id));
	EXPECT_EQ(32, offsetof(struct xnic_wire_cm, private_data));
}

TEST(roundtrip_big_endian)
{
	struct xnic_cm_info c = req(), d;
	struct xnic_wire_cm w;
	const unsigned char *b = (const void *)&w;

	memset(&w, 0xee, sizeof(w));
	xnic_cm_encode(&w, &c);
	EXPECT_EQ(XNIC_CM_REQ, b[0]);
	EXPECT_EQ(7, b[7]);		/* local_id, big endian */
	EXPECT_EQ(0x12, b[13]);	/* qpn 0x00123456 */
	EXPECT_EQ(0x01, b[24]);	/* service id, most significant first */
	EXPECT_EQ(0x08, b[31]);
	EXPECT_EQ(4, b[35]);
	EXPECT_EQ(0, b[36]);	/* beyond private_len: zero, not 0xee */
	EXPECT_EQ(0, b[95]);
	xnic_cm_decode(&d, &w);
	EXPECT_EQ(0, memcmp(&c, &d, sizeof(c)));
}

TEST(check_req)
{
	struct xnic_cm_info c = req();

	EXPECT_TRUE(xnic_cm_check(&c));
	c.remote_id = 1;
	EXPECT_FALSE(xnic_cm_check(&c));
	c = req();
	c.local_id = 0;
	EXPECT_FALSE(xnic_cm_check(&c));
	c = req();
	c.timeout_ms = 0;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.timeout_ms = XNIC_CM_TIMEOUT_MAX_MS + 1;
	EXPECT_FALSE(xnic_cm_check(&c));
	c = req();
	c.retries = XNIC_CM_RETRIES_MAX + 1;
	EXPECT_FALSE(xnic_cm_check(&c));
	c = req();
	c.qpn = 0x1000000;
	EXPECT_FALSE(xnic_cm_check(&c));
	c = req();
	c.psn = 0x1000000;
	EXPECT_FALSE(xnic_cm_check(&c));
	c = req();
	c.private_len = XNIC_CM_PRIVATE_MAX + 1;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.private_len = XNIC_CM_PRIVATE_MAX;
	EXPECT_TRUE(xnic_cm_check(&c));
	c.reason = XNIC_CM_REASON_USER;	/* only a REJ has a reason */
	EXPECT_FALSE(xnic_cm_check(&c));
}

TEST(check_rep_rtu_rej)
{
	struct xnic_cm_info c;

	memset(&c, 0, sizeof(c));
	c.type = XNIC_CM_REP;
	c.local_id = 9;
	c.remote_id = 7;
	c.qpn = 5;
	EXPECT_TRUE(xnic_cm_check(&c));
	c.timeout_ms = 5;		/* REQ only */
	EXPECT_FALSE(xnic_cm_check(&c));
	c.timeout_ms = 0;
	c.remote_id = 0;
	EXPECT_FALSE(xnic_cm_check(&c));

	memset(&c, 0, sizeof(c));
	c.type = XNIC_CM_RTU;
	c.local_id = 7;
	c.remote_id = 9;
	EXPECT_TRUE(xnic_cm_check(&c));
	c.qpn = 1;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.qpn = 0;
	c.private_len = 1;
	EXPECT_FALSE(xnic_cm_check(&c));

	memset(&c, 0, sizeof(c));
	c.type = XNIC_CM_REJ;
	c.remote_id = 7;	/* local_id 0: no record on the sender */
	EXPECT_FALSE(xnic_cm_check(&c));	/* no reason */
	c.reason = XNIC_CM_REASON_NO_LISTENER;
	EXPECT_TRUE(xnic_cm_check(&c));
	c.reason = XNIC_CM_REASON_MAX;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.reason = XNIC_CM_REASON_USER;
	c.remote_id = 0;
	EXPECT_FALSE(xnic_cm_check(&c));

	c.type = 0;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.type = XNIC_CM_TYPE_MAX;
	EXPECT_FALSE(xnic_cm_check(&c));
}

TEST(check_dreq_drep)
{
	struct xnic_cm_info c;

	memset(&c, 0, sizeof(c));
	c.type = XNIC_CM_DREQ;
	c.local_id = 7;
	c.remote_id = 9;
	c.qpn = 0x123456;	/* the sender's QP */
	c.psn = 0xfffffe;	/* its expected PSN */
	EXPECT_TRUE(xnic_cm_check(&c));
	c.psn = 0x1000000;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.psn = 0;
	c.qpn = 0x1000000;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.qpn = 5;
	c.remote_id = 0;	/* names both ends */
	EXPECT_FALSE(xnic_cm_check(&c));
	c.remote_id = 9;
	c.local_id = 0;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.local_id = 7;
	c.private_len = 1;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.private_len = 0;
	c.reason = XNIC_CM_REASON_USER;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.reason = 0;
	c.timeout_ms = 1;
	EXPECT_FALSE(xnic_cm_check(&c));

	memset(&c, 0, sizeof(c));
	c.type = XNIC_CM_DREP;
	c.local_id = 9;
	c.remote_id = 7;
	EXPECT_TRUE(xnic_cm_check(&c));
	c.qpn = 5;		/* a DREP names no QP */
	EXPECT_FALSE(xnic_cm_check(&c));
	c.qpn = 0;
	c.psn = 1;		/* nor a PSN */
	EXPECT_FALSE(xnic_cm_check(&c));
	c.psn = 0;
	c.remote_id = 0;
	EXPECT_FALSE(xnic_cm_check(&c));
	c.remote_id = 7;
	c.retries = 1;
	EXPECT_FALSE(xnic_cm_check(&c));

	/* The type after DREP is still unknown. */
	EXPECT_EQ(7, XNIC_CM_TYPE_MAX);
}

TEST(wire_check_cm_frames)
{
	struct xnic_wire_info i;

	memset(&i, 0, sizeof(i));
	i.version = XNIC_WIRE_VERSION;
	i.opcode = XNIC_OP_CM;
	i.src_node = 2;
	i.dst_node = 1;
	i.payload_len = XNIC_WIRE_CM_LEN;
	EXPECT_EQ(XNIC_WIRE_OK,
		  xnic_wire_check(&i, XNIC_WIRE_HDR_LEN + XNIC_WIRE_CM_LEN, 1));
	i.payload_len = XNIC_WIRE_CM_LEN - 1;
	EXPECT_EQ(XNIC_WIRE_BAD_LEN,
		  xnic_wire_check(&i, XNIC_WIRE_HDR_LEN + XNIC_WIRE_CM_LEN - 1,
				  1));
	i.payload_len = XNIC_WIRE_CM_LEN;
	i.flags = XNIC_WF_RETX;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS,
		  xnic_wire_check(&i, XNIC_WIRE_HDR_LEN + XNIC_WIRE_CM_LEN, 1));
	i.flags = 0;
	i.dst_node = XNIC_NODE_BROADCAST;
	EXPECT_EQ(XNIC_WIRE_NOT_FOR_US,
		  xnic_wire_check(&i, XNIC_WIRE_HDR_LEN + XNIC_WIRE_CM_LEN, 1));
}

TEST_HARNESS_MAIN
