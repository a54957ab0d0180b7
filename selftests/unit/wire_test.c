// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the pure wire helpers (kmod/wire.h), run on the host. */
#include <stddef.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "kmod/wire.h"

TEST(header_layout)
{
	ASSERT_EQ(XNIC_WIRE_HDR_LEN, sizeof(struct xnic_wire_hdr));
	EXPECT_EQ(0, offsetof(struct xnic_wire_hdr, version));
	EXPECT_EQ(1, offsetof(struct xnic_wire_hdr, opcode));
	EXPECT_EQ(12, offsetof(struct xnic_wire_hdr, dst_qpn));
	EXPECT_EQ(32, offsetof(struct xnic_wire_hdr, raddr));
	EXPECT_EQ(52, offsetof(struct xnic_wire_hdr, crc));
}

TEST(payload_mtu)
{
	EXPECT_EQ(0, xnic_wire_payload_mtu(0));
	EXPECT_EQ(0, xnic_wire_payload_mtu(XNIC_WIRE_HDR_LEN));
	EXPECT_EQ(1, xnic_wire_payload_mtu(XNIC_WIRE_HDR_LEN + 1));
	EXPECT_EQ(1500 - XNIC_WIRE_HDR_LEN, xnic_wire_payload_mtu(1500));
	EXPECT_EQ(9000 - XNIC_WIRE_HDR_LEN, xnic_wire_payload_mtu(9000));
}

TEST(ib_mtu_enum)
{
	/* enum ib_mtu: 1 = 256, 2 = 512, 3 = 1024, 4 = 2048, 5 = 4096 */
	EXPECT_EQ(1, xnic_wire_ib_mtu(0));
	EXPECT_EQ(1, xnic_wire_ib_mtu(511));
	EXPECT_EQ(2, xnic_wire_ib_mtu(512));
	EXPECT_EQ(3, xnic_wire_ib_mtu(1500 - XNIC_WIRE_HDR_LEN));
	EXPECT_EQ(4, xnic_wire_ib_mtu(2048));
	EXPECT_EQ(4, xnic_wire_ib_mtu(4095));
	EXPECT_EQ(5, xnic_wire_ib_mtu(4096));
	EXPECT_EQ(5, xnic_wire_ib_mtu(9000 - XNIC_WIRE_HDR_LEN));
	EXPECT_EQ(5, xnic_wire_ib_mtu(0xffffffffU));
}

TEST_HARNESS_MAIN
