// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the pure wire helpers (kmod/wire.h), run on the host. */
#include <stddef.h>
#include <string.h>
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
	EXPECT_EQ(52, offsetof(struct xnic_wire_hdr, check_sum));
	EXPECT_EQ(56, offsetof(struct xnic_wire_hdr, check_poly));
}

TEST(payload_mtu)
{
	EXPECT_EQ(0, xnic_wire_payload_mtu(0));
	EXPECT_EQ(0, xnic_wire_payload_mtu(XNIC_WIRE_HDR_LEN));
	EXPECT_EQ(1, xnic_wire_payload_mtu(XNIC_WIRE_HDR_LEN + 1));
	EXPECT_EQ(1500 - XNIC_WIRE_HDR_LEN, xnic_wire_payload_mtu(1500));
	EXPECT_EQ(9000 - XNIC_WIRE_HDR_LEN, xnic_wire_payload_mtu(9000));
}

TEST(link_checksum)
{
	/* RFC 1071 section 3's example: sum 0xddf2, checksum its complement */
	static const uint8_t rfc[] = { 0x00, 0x01, 0xf2, 0x03,
				       0xf4, 0xf5, 0xf6, 0xf7 };
	struct xnic_check c;
	struct xnic_wire_hdr h0;
	uint8_t f[XNIC_WIRE_HDR_LEN + 1001];
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)f;
	__u64 poly;
	__u32 sum;
	size_t k;

	EXPECT_EQ(0x220d, xnic_wire_csum16(rfc, sizeof(rfc)));
	EXPECT_EQ(offsetof(struct xnic_wire_hdr, check_sum) + 2,
		  XNIC_WIRE_LCSUM_OFF);

	/* An odd-sized WRITE sealed with XNIC_WF_LCSUM. */
	for (k = 0; k < sizeof(f); k++)
		f[k] = (uint8_t)(k * 37 + 11);
	memset(h, 0, sizeof(*h));
	h->version = XNIC_WIRE_VERSION;
	h->opcode = XNIC_OP_WRITE;
	h->flags = xnic_wire_be16(XNIC_WF_LCSUM);
	h->payload_len = xnic_wire_be16(1001);
	xnic_wire_seal(h, sizeof(f));
	/* check_poly: the header alone, its check fields zero */
	h0 = *h;
	h0.check_sum = 0;
	h0.check_poly = 0;
	xnic_check_init(&c);
	xnic_check_update(&c, &h0, sizeof(h0));
	xnic_check_final(&c, &poly, &sum);
	EXPECT_EQ(poly, xnic_wire_h64(h->check_poly));
	EXPECT_EQ(0, xnic_wire_h32(h->check_sum) >> 16);
	EXPECT_NE(0, xnic_wire_h32(h->check_sum));
	/* The link checksum holds over its range, and sees a changed byte. */
	EXPECT_EQ(0, xnic_wire_csum16(f + XNIC_WIRE_LCSUM_OFF,
				      sizeof(f) - XNIC_WIRE_LCSUM_OFF));
	f[sizeof(f) - 1] ^= 0x10;
	EXPECT_NE(0, xnic_wire_csum16(f + XNIC_WIRE_LCSUM_OFF,
				      sizeof(f) - XNIC_WIRE_LCSUM_OFF));
	/* Allowed on data frames only. */
	EXPECT_TRUE(xnic_wire_allowed_flags(XNIC_OP_SEND) & XNIC_WF_LCSUM);
	EXPECT_TRUE(xnic_wire_allowed_flags(XNIC_OP_READ_RESP) &
		    XNIC_WF_LCSUM);
	EXPECT_FALSE(xnic_wire_allowed_flags(XNIC_OP_ACK) & XNIC_WF_LCSUM);
	EXPECT_FALSE(xnic_wire_allowed_flags(XNIC_OP_READ_REQ) &
		     XNIC_WF_LCSUM);
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

static struct xnic_wire_info data_frame(void)
{
	struct xnic_wire_info i = {
		.version = XNIC_WIRE_VERSION,
		.opcode = XNIC_OP_WRITE,
		.flags = XNIC_WF_ACKREQ,
		.src_node = 2,
		.dst_node = 1,
		.src_qpn = 0x11,
		.dst_qpn = 0x22,
		.psn = 5,
		.msg_len = 4096,
		.offset = 3072,
		.raddr = 0x7f0000001000ULL,
		.rkey = 0x1234,
		.payload_len = 1024,
	};
	return i;
}

#define FLEN(i) (XNIC_WIRE_HDR_LEN + (i).payload_len)

TEST(encode_decode_roundtrip)
{
	struct xnic_wire_info i = data_frame(), o;
	struct xnic_wire_hdr h;
	const unsigned char *b = (const unsigned char *)&h;

	i.imm = htonl(0xdeadbeef);
	i.msn = 0x01020304;
	i.credits = 9;
	xnic_wire_encode(&h, &i);
	/* big endian on the wire */
	EXPECT_EQ(XNIC_WIRE_VERSION, b[0]);
	EXPECT_EQ(XNIC_OP_WRITE, b[1]);
	EXPECT_EQ(0, b[2]);
	EXPECT_EQ(XNIC_WF_ACKREQ, b[3]);
	EXPECT_EQ(0x01, b[offsetof(struct xnic_wire_hdr, msn)]);
	EXPECT_EQ(0x04, b[offsetof(struct xnic_wire_hdr, msn) + 3]);
	EXPECT_EQ(0x7f, b[offsetof(struct xnic_wire_hdr, raddr) + 2]);
	EXPECT_EQ(0, h.check_sum);
	EXPECT_EQ(0, h.check_poly);
	xnic_wire_decode(&o, &h);
	EXPECT_EQ(0, memcmp(&i, &o, sizeof(i)));
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&o, FLEN(o), 1));
}

TEST(payload_structs)
{
	EXPECT_EQ(16, sizeof(struct xnic_wire_hello));
	EXPECT_EQ(8, sizeof(struct xnic_wire_read_req));
	EXPECT_EQ(40, sizeof(struct xnic_wire_ack));
}

TEST(check_heartbeat)
{
	struct xnic_wire_info i = data_frame(), j;

	EXPECT_EQ(16, sizeof(struct xnic_wire_heartbeat));
	i.opcode = XNIC_OP_HEARTBEAT;
	i.flags = 0;
	i.msg_len = i.offset = 0;
	i.payload_len = sizeof(struct xnic_wire_heartbeat);
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&i, FLEN(i), 1));
	j = i; j.flags = XNIC_WF_REPLY;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.flags = XNIC_WF_ACKREQ;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.payload_len = 15;
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&j, FLEN(j), 1));
	/* unicast only: the broadcast node id is for HELLOs */
	j = i; j.dst_node = XNIC_NODE_BROADCAST;
	EXPECT_EQ(XNIC_WIRE_NOT_FOR_US, xnic_wire_check(&j, FLEN(j), 1));
}

TEST(check_header)
{
	struct xnic_wire_info i = data_frame(), j;

	ASSERT_EQ(XNIC_WIRE_OK, xnic_wire_check(&i, FLEN(i), 1));

	j = i; j.version = XNIC_WIRE_VERSION + 1;
	EXPECT_EQ(XNIC_WIRE_BAD_VERSION, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.version = 1;	/* crc32c frames of wire version 1 */
	EXPECT_EQ(XNIC_WIRE_BAD_VERSION, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.opcode = 0;
	EXPECT_EQ(XNIC_WIRE_BAD_OPCODE, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.opcode = XNIC_OP_MAX;
	EXPECT_EQ(XNIC_WIRE_BAD_OPCODE, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.flags |= XNIC_WF_REPLY;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.flags = 0x8000;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&j, FLEN(j), 1));
	/* frame length must match payload_len exactly */
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&i, FLEN(i) - 1, 1));
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&i, FLEN(i) + 1, 1));
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&i, 0, 1));
	EXPECT_EQ(XNIC_WIRE_BAD_LEN,
		  xnic_wire_check(&i, XNIC_WIRE_HDR_LEN - 1, 1));
	/* addressing */
	EXPECT_EQ(XNIC_WIRE_NOT_FOR_US, xnic_wire_check(&i, FLEN(i), 3));
	j = i; j.dst_node = XNIC_NODE_BROADCAST;
	EXPECT_EQ(XNIC_WIRE_NOT_FOR_US, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.src_node = 1;
	EXPECT_EQ(XNIC_WIRE_BAD_SRC, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.src_node = XNIC_NODE_BROADCAST;
	EXPECT_EQ(XNIC_WIRE_BAD_SRC, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.dst_qpn = 0x1000000;
	EXPECT_EQ(XNIC_WIRE_BAD_QPN, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.src_qpn = 0xffffffff;
	EXPECT_EQ(XNIC_WIRE_BAD_QPN, xnic_wire_check(&j, FLEN(j), 1));
}

TEST(check_ranges)
{
	struct xnic_wire_info i = data_frame(), j;

	/* the last byte of the message exactly */
	j = i; j.offset = 4096 - 1024;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.offset++;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	/* offset + payload_len overflowing 32 bits */
	j = i; j.offset = 0xffffff00U; j.msg_len = 0xffffffffU;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.offset = 0xfffffe00U; j.msg_len = 0x100U;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	/* message size limit */
	j = i; j.msg_len = XNIC_WIRE_MAX_MSG; j.offset = j.msg_len - 1024;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.msg_len++;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	/* zero-length message: one empty frame at offset 0 */
	j = i; j.msg_len = 0; j.offset = 0; j.payload_len = 0;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.offset = 1;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	/* an empty frame of a non-empty message */
	j = i; j.payload_len = 0;
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&j, FLEN(j), 1));
	/* SEND and READ_RESP follow the same rules */
	j = i; j.opcode = XNIC_OP_SEND; j.flags = XNIC_WF_IMM;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.offset = 4000;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.opcode = XNIC_OP_READ_RESP; j.flags = 0;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.flags = XNIC_WF_IMM;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&j, FLEN(j), 1));
	/* data-bearing frames may say they took link credit */
	j.flags = XNIC_WF_LINK;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j = i; j.flags = XNIC_WF_LINK | XNIC_WF_ACKREQ;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
}

TEST(check_control_frames)
{
	struct xnic_wire_info i = data_frame(), j;

	j = i; j.opcode = XNIC_OP_HELLO; j.flags = 0;
	j.payload_len = sizeof(struct xnic_wire_hello);
	j.dst_node = XNIC_NODE_BROADCAST;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.flags = XNIC_WF_REPLY; j.dst_node = 1;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.payload_len--;
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&j, FLEN(j), 1));

	j = i; j.opcode = XNIC_OP_ACK; j.flags = 0;
	j.payload_len = sizeof(struct xnic_wire_ack);
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.opcode = XNIC_OP_NAK;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	j.flags = XNIC_WF_ACKREQ;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&j, FLEN(j), 1));
	j.flags = XNIC_WF_LINK;
	EXPECT_EQ(XNIC_WIRE_BAD_FLAGS, xnic_wire_check(&j, FLEN(j), 1));
	j.flags = 0; j.payload_len = 0;
	EXPECT_EQ(XNIC_WIRE_BAD_LEN, xnic_wire_check(&j, FLEN(j), 1));
	j.dst_node = XNIC_NODE_BROADCAST;
	j.payload_len = sizeof(struct xnic_wire_ack);
	EXPECT_EQ(XNIC_WIRE_NOT_FOR_US, xnic_wire_check(&j, FLEN(j), 1));
}

TEST(check_read_req)
{
	struct xnic_wire_info i = data_frame(), j;

	j = i; j.opcode = XNIC_OP_READ_REQ; j.flags = XNIC_WF_RETX;
	j.payload_len = sizeof(struct xnic_wire_read_req);
	j.msg_len = 1 << 20; j.offset = 65536;
	ASSERT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	EXPECT_TRUE(xnic_wire_check_read_req(&j, 65536, 1024, 1444));
	/* more than XNIC_WIRE_READ_SEGS segments */
	EXPECT_FALSE(xnic_wire_check_read_req(&j, 65537, 1024, 1444));
	/* beyond the message, incl. 32-bit overflow */
	j.offset = (1 << 20) - 100;
	EXPECT_TRUE(xnic_wire_check_read_req(&j, 100, 1024, 1444));
	EXPECT_FALSE(xnic_wire_check_read_req(&j, 101, 1024, 1444));
	j.offset = 0xffffffffU;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
	j.offset = 1 << 20;
	EXPECT_FALSE(xnic_wire_check_read_req(&j, 0xffffffffU, 1024, 1444));
	/* segment size bounds */
	j.offset = 0;
	EXPECT_FALSE(xnic_wire_check_read_req(&j, 64, 1445, 1444));
	EXPECT_FALSE(xnic_wire_check_read_req(&j, 0, XNIC_WIRE_MIN_SEG - 1,
					      1444));
	EXPECT_FALSE(xnic_wire_check_read_req(&j, 0, 1024, 1444));
	/* zero-length READ */
	j.msg_len = 0;
	EXPECT_EQ(XNIC_WIRE_OK, xnic_wire_check(&j, FLEN(j), 1));
	EXPECT_TRUE(xnic_wire_check_read_req(&j, 0, 1024, 1444));
	j.offset = 1;
	EXPECT_EQ(XNIC_WIRE_BAD_RANGE, xnic_wire_check(&j, FLEN(j), 1));
}

TEST(ibta_timers)
{
	EXPECT_EQ(655360, xnic_wire_rnr_us(0));
	EXPECT_EQ(10, xnic_wire_rnr_us(1));
	EXPECT_EQ(640, xnic_wire_rnr_us(12));
	EXPECT_EQ(491520, xnic_wire_rnr_us(31));
	EXPECT_EQ(10, xnic_wire_rnr_us(33));
	EXPECT_EQ(0, xnic_wire_ack_timeout_us(0));
	EXPECT_EQ(8, xnic_wire_ack_timeout_us(1));
	EXPECT_EQ(67108, xnic_wire_ack_timeout_us(14));
	EXPECT_EQ(8796093022ULL, xnic_wire_ack_timeout_us(31));
}

TEST(check_fuzz_no_crash)
{
	/* random headers: never crash, OK only with a consistent length */
	struct xnic_wire_hdr h;
	struct xnic_wire_info i;
	unsigned int n, ok = 0;

	srand(3);
	for (n = 0; n < 200000; n++) {
		unsigned char *b = (unsigned char *)&h;
		unsigned int k;

		for (k = 0; k < sizeof(h); k++)
			b[k] = rand();
		h.version = XNIC_WIRE_VERSION;
		h.opcode = rand() % (XNIC_OP_MAX + 1);
		h.flags = htons(rand() % 32);
		h.dst_node = htons(1);
		h.payload_len = htons(rand() % 64);
		h.src_qpn = htonl(rand() & 0xffffff);
		h.dst_qpn = htonl(rand() & 0xffffff);
		if (rand() & 1)
			h.msg_len = htonl(rand() % 128);
		xnic_wire_decode(&i, &h);
		if (xnic_wire_check(&i, XNIC_WIRE_HDR_LEN + i.payload_len, 1)
		    == XNIC_WIRE_OK) {
			ok++;
			if (i.opcode == XNIC_OP_WRITE)
				ASSERT_LE((__u64)i.offset + i.payload_len,
					  i.msg_len);
		}
	}
	TH_LOG("%u of 200000 random headers accepted", ok);
	EXPECT_GT(ok, 0);
}

TEST_HARNESS_MAIN
