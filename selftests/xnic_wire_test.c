// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_wire_test - a hostile wire. Frames built by hand (kmod/wire.h and
 * frame check) are injected with an AF_PACKET socket on the peer end of the
 * veth pair, so that they arrive at device 0 (node 1) as if node 2 had
 * sent them: short frames, bad frame checks, unknown opcodes and versions,
 * payload lengths that disagree with the frame, offsets past the message,
 * unknown or foreign QPs, forged source nodes and HELLOs, frames for
 * another node, and a flood of random bytes. Each frame must be dropped
 * and counted in /sys/kernel/debug/xnic/<dev>/counters, must not change
 * registered memory, and a connected QP pair must keep working.
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"
#include "kmod/wire.h"

#define CANARY		0x3c
#define XT_TAG		"wi"
#include "xt_harness.h"
#define WI_BUF		(1 * MiB)
#define FRAME_MAX	(14 + XT_MTU)
#define COUNT_WAIT_MS	5000

static const uint8_t stranger_mac[6] = { 0x02, 0, 0, 0, 0, 0x99 };

FIXTURE(wire) {
	struct xt_env env;
	struct xt_conn c;
	struct xt_buf a, b;	/* a: memory of device 0, the target */
	int sock;
	uint8_t frame[FRAME_MAX];
};

FIXTURE_SETUP(wire)
{
	struct sockaddr_ll sll = { 0 };

	self->sock = -1;
	ENV_UP(&self->env);
	BUF_UP(&self->env.dev[0], &self->a, WI_BUF, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, WI_BUF, XT_ACCESS_ALL);
	CONN_UP(&self->env, &self->c, 256, NULL);
	xt_fill_byte(self->a.p, WI_BUF, CANARY);

	/* Protocol 0: this socket sends only. */
	self->sock = socket(AF_PACKET, SOCK_RAW, 0);
	ASSERT_LE(0, self->sock) TH_LOG("AF_PACKET socket: %s",
					strerror(errno));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = self->env.dev[1].ifindex;
	ASSERT_EQ(0, bind(self->sock, (struct sockaddr *)&sll, sizeof(sll)));
}

FIXTURE_TEARDOWN(wire)
{
	if (self->sock >= 0)
		close(self->sock);
	xt_conn_destroy(&self->c);
	xt_buf_free(&self->a);
	xt_buf_free(&self->b);
	xt_env_teardown(&self->env);
}

/*
 * A WRITE of 64 bytes from QP 1 (node 2) to QP 0 (node 1) at the PSN QP 0
 * expects, into the middle of buffer a: what a well-formed frame of the
 * peer would say. Tests break one thing in it.
 */
static struct xnic_wire_info good_write(FIXTURE_DATA(wire) *self)
{
	struct xnic_wire_info i;

	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_WRITE;
	i.flags = XNIC_WF_ACKREQ;
	i.src_node = XT_NODE1;
	i.dst_node = XT_NODE0;
	i.src_qpn = self->c.qp[1]->qpn;
	i.dst_qpn = self->c.qp[0]->qpn;
	i.psn = self->c.psn[1];
	i.msg_len = 64;
	i.offset = 0;
	i.raddr = (uintptr_t)self->a.p + 4096;
	i.rkey = self->a.mr->rkey;
	i.payload_len = 64;
	return i;
}

/*
 * Build a frame: Ethernet header (to device 0's MAC from @src_mac, or
 * from the peer's), the encoded header, @plen bytes of payload; the frame check
 * as the kernel computes it. Return: frame length.
 */
static size_t build(FIXTURE_DATA(wire) *self, const struct xnic_wire_info *i,
		    const uint8_t *src_mac, const void *payload, size_t plen)
{
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)(self->frame + 14);

	memcpy(self->frame, self->env.dev[0].mac, 6);
	memcpy(self->frame + 6, src_mac ? src_mac : self->env.dev[1].mac, 6);
	self->frame[12] = XNIC_ETH_P >> 8;
	self->frame[13] = XNIC_ETH_P & 0xff;
	xnic_wire_encode(h, i);
	if (payload)
		memcpy(self->frame + 14 + XNIC_WIRE_HDR_LEN, payload, plen);
	else
		memset(self->frame + 14 + XNIC_WIRE_HDR_LEN, 0x77, plen);
	xnic_wire_seal(h, XNIC_WIRE_HDR_LEN + plen);
	return 14 + XNIC_WIRE_HDR_LEN + plen;
}

static struct xnic_wire_hdr *hdr_of(FIXTURE_DATA(wire) *self)
{
	return (struct xnic_wire_hdr *)(self->frame + 14);
}

/* Recompute the frame check after a raw edit of the frame. */
static void refresh_check(FIXTURE_DATA(wire) *self, size_t len)
{
	struct xnic_wire_hdr *h = hdr_of(self);

	xnic_wire_seal(h, len - 14);
}

static int inject(FIXTURE_DATA(wire) *self, size_t len)
{
	ssize_t n = send(self->sock, self->frame, len, 0);

	return n == (ssize_t)len ? 0 : -errno;
}

static uint64_t counter(struct __test_metadata *_metadata,
			FIXTURE_DATA(wire) *self, const char *name)
{
	uint64_t v = 0;

	ASSERT_EQ(0, xt_counter(self->env.dev[0].name, name, &v))
		TH_LOG("%s", xt_error());
	return v;
}

/* Wait until counter @name reaches @want; return its value then. */
static uint64_t wait_counter(FIXTURE_DATA(wire) *self, const char *name,
			     uint64_t want)
{
	long long end = xt_now_ms() + COUNT_WAIT_MS;
	uint64_t v = 0;

	do {
		if (!xt_counter(self->env.dev[0].name, name, &v) && v >= want)
			break;
		xt_sleep_ms(10);
	} while (xt_now_ms() < end);
	return v;
}

/*
 * Inject the frame of @len bytes built in self->frame and expect counter
 * @name of device 0 to grow by exactly one, and buffer a to stay as it
 * was.
 */
static void expect_drop(struct __test_metadata *_metadata,
			FIXTURE_DATA(wire) *self, size_t len, const char *name,
			const char *what)
{
	uint64_t before = counter(_metadata, self, name), after;
	char all[1024];
	ssize_t d;

	ASSERT_EQ(0, inject(self, len)) TH_LOG("%s: send: %s", what,
					       strerror(errno));
	after = wait_counter(self, name, before + 1);
	xt_counters_str(self->env.dev[0].name, all, sizeof(all));
	EXPECT_EQ(before + 1, after)
		TH_LOG("%s (%zu bytes): %s went %llu -> %llu; counters: %s",
		       what, len, name, (unsigned long long)before,
		       (unsigned long long)after, all);
	d = xt_check_byte(self->a.p, WI_BUF, CANARY);
	ASSERT_EQ(-1, d) TH_LOG("%s: byte %zd of the target was written",
				what, d);
}

/*
 * The pair still works, both ways: a WRITE of 256 KiB each way and a
 * SEND, byte-exact. Restores buffer a's canary afterwards.
 */
static void check_pair(struct __test_metadata *_metadata,
		       FIXTURE_DATA(wire) *self)
{
	struct xnic_sge s, rs;
	struct xnic_cqe c;
	const uint32_t len = 256 * KiB;
	int k;

	xt_fill(self->b.p, WI_BUF, 11);
	xt_fill(self->a.p + len, len, 12);
	for (k = 0; k < 2; k++) {
		struct xt_buf *src = k ? &self->a : &self->b;
		struct xt_buf *dst = k ? &self->b : &self->a;
		size_t soff = k ? len : 0, doff = k ? 2 * len : 0;

		s.addr = (uintptr_t)src->p + soff;
		s.length = len;
		s.lkey = src->mr->lkey;
		ASSERT_EQ(0, xnic_post_write(self->c.qp[1 - k], &s, 1,
					     (uintptr_t)dst->p + doff,
					     dst->mr->rkey, 1,
					     XNIC_WQE_F_SIGNALED));
		ASSERT_EQ(0, xt_reap_one(self->c.cq[1 - k], &c, XT_WAIT_MS))
			TH_LOG("%s", xt_error());
		ASSERT_EQ(XNIC_WC_SUCCESS, c.status)
			TH_LOG("WRITE after the injection: %s", xt_cqe_str(&c));
		ASSERT_EQ(-1, xt_diff(dst->p + doff, src->p + soff, len))
			TH_LOG("WRITE after the injection: data");
	}
	rs.addr = (uintptr_t)self->a.p + 3 * len;
	rs.length = len;
	rs.lkey = self->a.mr->lkey;
	ASSERT_EQ(0, xnic_post_recv(self->c.qp[0], &rs, 1, 5));
	s.addr = (uintptr_t)self->b.p + len;
	s.length = 1000;
	s.lkey = self->b.mr->lkey;
	ASSERT_EQ(0, xnic_post_send(self->c.qp[1], &s, 1, 6,
				    XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, xt_reap_one(self->c.cq[0], &c, XT_WAIT_MS))
		TH_LOG("%s", xt_error());
	ASSERT_EQ(XNIC_WC_SUCCESS, c.status) TH_LOG("%s", xt_cqe_str(&c));
	ASSERT_EQ(1000, c.byte_len);
	ASSERT_EQ(-1, xt_diff(self->a.p + 3 * len, self->b.p + len, 1000));
	ASSERT_EQ(0, xt_reap_one(self->c.cq[1], &c, XT_WAIT_MS));
	ASSERT_EQ(XNIC_WC_SUCCESS, c.status) TH_LOG("%s", xt_cqe_str(&c));
	xt_fill_byte(self->a.p, WI_BUF, CANARY);
}

/*
 * good_write() with @flags added and @plen bytes (at most 64) is placed
 * and ACKed; then a fresh pair works.
 */
static void expect_placed(struct __test_metadata *_metadata,
			  FIXTURE_DATA(wire) *self, uint16_t flags,
			  uint32_t plen)
{
	struct xnic_wire_info i = good_write(self);
	uint8_t data[64];
	uint64_t acks;
	size_t len;

	i.flags |= flags;
	i.msg_len = plen;
	i.payload_len = (uint16_t)plen;
	xt_fill(data, sizeof(data), 1);
	len = build(self, &i, NULL, data, plen);
	acks = counter(_metadata, self, "acks_sent");
	ASSERT_EQ(0, inject(self, len));
	/* The WRITE lands: the builder and the frame check are right. */
	{
		long long end = xt_now_ms() + COUNT_WAIT_MS;

		while (memcmp(self->a.p + 4096, data, plen) &&
		       xt_now_ms() < end)
			xt_sleep_ms(10);
	}
	ASSERT_EQ(0, memcmp(self->a.p + 4096, data, plen))
		TH_LOG("a well-formed injected WRITE was not placed: the tests' frames would prove nothing");
	EXPECT_LT(acks, wait_counter(self, "acks_sent", acks + 1));
	/*
	 * QP 0 now expects the next PSN and has ACKed a PSN QP 1 never
	 * sent: QP 1 ignores that ACK (PSN ahead of its window) and its own
	 * PSN stays behind QP 0's. Use a fresh pair for the check.
	 */
	xt_conn_destroy(&self->c);
	ASSERT_EQ(0, xt_conn_create(&self->env, &self->c, 256, NULL));
	xt_fill_byte(self->a.p, WI_BUF, CANARY);
	check_pair(_metadata, self);
}

/* First: a frame built like the tests' does reach the QP when intact. */
TEST_F_TIMEOUT(wire, control_frame_is_accepted, 60)
{
	expect_placed(_metadata, self, 0, 64);
}

/*
 * A frame whose payload the link checksum protects (XNIC_WF_LCSUM, odd
 * length), from a link that computed it (AF_PACKET: CHECKSUM_NONE at the
 * receiver, which verifies it) is placed.
 */
TEST_F_TIMEOUT(wire, link_checksum_frame_is_accepted, 60)
{
	expect_placed(_metadata, self, XNIC_WF_LCSUM, 63);
}

/*
 * A WRITE that arrives twice is placed once and answered at once with a
 * D-SACK: an ACK with XNIC_WF_DSACK naming its PSN (wire-protocol.rst,
 * Responder), seen on the wire by a socket on device 1's veth end.
 */
TEST_F_TIMEOUT(wire, duplicate_write_gets_a_dsack, 60)
{
	struct xnic_wire_info i = good_write(self), a;
	uint8_t data[64], rx[FRAME_MAX];
	struct xnic_wire_ack ack;
	uint32_t nak_psn = 0;
	uint64_t dups;
	long long end;
	size_t len;
	int cap, found = 0;
	ssize_t n;

	cap = xt_packet_socket(self->env.dev[1].ifindex, 0);
	ASSERT_LE(0, cap) TH_LOG("capture socket: %s", strerror(-cap));
	xt_fill(data, sizeof(data), 2);
	len = build(self, &i, NULL, data, sizeof(data));
	dups = counter(_metadata, self, "rx_duplicates");
	ASSERT_EQ(0, inject(self, len));
	i.flags |= XNIC_WF_RETX;
	len = build(self, &i, NULL, data, sizeof(data));
	ASSERT_EQ(0, inject(self, len));
	EXPECT_LT(dups, wait_counter(self, "rx_duplicates", dups + 1));
	EXPECT_EQ(0, memcmp(self->a.p + 4096, data, 64));
	end = xt_now_ms() + COUNT_WAIT_MS;
	while (!found && xt_now_ms() < end) {
		n = recv(cap, rx, sizeof(rx), MSG_DONTWAIT);
		if (n < 0) {
			xt_sleep_ms(10);
			continue;
		}
		if (n < 14 + (ssize_t)(XNIC_WIRE_HDR_LEN + sizeof(ack)))
			continue;
		xnic_wire_decode(&a, (const struct xnic_wire_hdr *)(rx + 14));
		if (a.opcode != XNIC_OP_ACK || !(a.flags & XNIC_WF_DSACK))
			continue;
		memcpy(&ack, rx + 14 + XNIC_WIRE_HDR_LEN, sizeof(ack));
		nak_psn = xnic_wire_h32(ack.nak_psn);
		found = 1;
	}
	close(cap);
	ASSERT_TRUE(found) TH_LOG("no ACK with D-SACK for the duplicate");
	EXPECT_EQ(i.psn, nak_psn);
	EXPECT_EQ(i.src_qpn, a.dst_qpn);
	/* QP 0 ACKed a PSN QP 1 never sent: a fresh pair for the check. */
	xt_conn_destroy(&self->c);
	ASSERT_EQ(0, xt_conn_create(&self->env, &self->c, 256, NULL));
	xt_fill_byte(self->a.p, WI_BUF, CANARY);
	check_pair(_metadata, self);
}

#define LINK_CSUM	"/sys/module/xnic/parameters/link_csum"

/*
 * Device 0's own WRITE frames to device 1, seen by a socket on device 1's
 * veth end: with the module parameter link_csum on (the default), every
 * one carries XNIC_WF_LCSUM and a link checksum the veth never computed
 * (zero); with it off, none does. The data lands either way.
 */
TEST_F_TIMEOUT(wire, veth_frames_carry_the_link_checksum, 60)
{
	uint8_t rx[FRAME_MAX];
	struct xnic_wire_info w;
	struct xnic_sge sg;
	struct xnic_cqe c;
	int cap, k, frames, lcsum, zero;
	const uint32_t len = 64 * KiB;
	ssize_t n;

	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, xt_write_file(LINK_CSUM, k ? "0" : "1"));
		cap = xt_packet_socket(self->env.dev[1].ifindex, 0);
		ASSERT_LE(0, cap) TH_LOG("capture socket: %s",
					 strerror(-cap));
		xt_fill(self->a.p, len, 20 + k);
		sg.addr = (uintptr_t)self->a.p;
		sg.length = len;
		sg.lkey = self->a.mr->lkey;
		ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &sg, 1,
					     (uintptr_t)self->b.p,
					     self->b.mr->rkey, 1,
					     XNIC_WQE_F_SIGNALED));
		ASSERT_EQ(0, xt_reap_one(self->c.cq[0], &c, XT_WAIT_MS))
			TH_LOG("%s", xt_error());
		ASSERT_EQ(XNIC_WC_SUCCESS, c.status)
			TH_LOG("%s", xt_cqe_str(&c));
		ASSERT_EQ(-1, xt_diff(self->b.p, self->a.p, len));
		frames = lcsum = zero = 0;
		while ((n = recv(cap, rx, sizeof(rx), MSG_DONTWAIT)) >= 0) {
			const struct xnic_wire_hdr *h =
				(const struct xnic_wire_hdr *)(rx + 14);

			if (n < 14 + XNIC_WIRE_HDR_LEN)
				continue;
			xnic_wire_decode(&w, h);
			if (w.opcode != XNIC_OP_WRITE || !w.payload_len)
				continue;
			frames++;
			lcsum += !!(w.flags & XNIC_WF_LCSUM);
			zero += !h->check_sum;
		}
		close(cap);
		TH_LOG("link_csum=%d: %d WRITE frames, %d with LCSUM, %d with check_sum zero",
		       !k, frames, lcsum, zero);
		EXPECT_LE(2, frames);
		EXPECT_EQ(k ? 0 : frames, lcsum);
		EXPECT_EQ(k ? 0 : frames, zero);
	}
	ASSERT_EQ(0, xt_write_file(LINK_CSUM, "1"));
	xt_fill_byte(self->a.p, WI_BUF, CANARY);
	check_pair(_metadata, self);
}

TEST_F_TIMEOUT(wire, short_frames, 60)
{
	struct xnic_wire_info i = good_write(self);

	build(self, &i, NULL, NULL, 64);
	/* Ethernet header plus less than an xnic header. */
	expect_drop(_metadata, self, 14 + 20, "rx_malformed",
		    "frame of 20 bytes after the Ethernet header");
	expect_drop(_metadata, self, 14 + XNIC_WIRE_HDR_LEN - 1, "rx_malformed",
		    "frame one byte short of a header");
	expect_drop(_metadata, self, 14, "rx_malformed",
		    "Ethernet header only");
	check_pair(_metadata, self);
}

TEST_F_TIMEOUT(wire, bad_crc, 60)
{
	struct xnic_wire_info i = good_write(self);
	size_t len;

	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->check_poly ^= htobe64(1);
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "frame check off by one bit");
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->check_sum ^= htonl(0x80000000);
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "word sum off by one bit");
	len = build(self, &i, NULL, NULL, 64);
	self->frame[len - 1] ^= 0x80;
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "payload changed after the check");
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->rkey ^= htonl(0x100);
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "header changed after the check");
	/* XNIC_WF_LCSUM: the header's check, then the link checksum */
	i.flags |= XNIC_WF_LCSUM;
	len = build(self, &i, NULL, NULL, 64);
	self->frame[len - 1] ^= 0x80;
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "link checksum: payload changed after it");
	len = build(self, &i, NULL, NULL, 64);
	self->frame[14 + XNIC_WIRE_LCSUM_OFF] ^= 0x01;
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "link checksum: the checksum off by one bit");
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->check_sum ^= htonl(0x00010000);
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "link checksum: high half of check_sum not zero");
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->rkey ^= htonl(0x100);
	expect_drop(_metadata, self, len, "rx_crc_errors",
		    "link checksum: header changed after the check");
	check_pair(_metadata, self);
}

TEST_F_TIMEOUT(wire, unknown_opcode_and_version, 60)
{
	uint8_t ops[] = { 0, XNIC_OP_MAX, 0x42, 0xff };
	uint8_t vers[] = { 0, 1, XNIC_WIRE_VERSION + 1, 0xff };
	struct xnic_wire_info i;
	size_t k, len;

	for (k = 0; k < sizeof(ops); k++) {
		i = good_write(self);
		i.opcode = ops[k];
		len = build(self, &i, NULL, NULL, 64);
		expect_drop(_metadata, self, len, "rx_malformed",
			    "unknown opcode");
	}
	for (k = 0; k < sizeof(vers); k++) {
		i = good_write(self);
		len = build(self, &i, NULL, NULL, 64);
		hdr_of(self)->version = vers[k];
		refresh_check(self, len);
		expect_drop(_metadata, self, len, "rx_malformed",
			    "wrong version");
	}
	/* Flags the opcode does not allow. */
	i = good_write(self);
	i.flags = 0x8000;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed", "unknown flag");
	i = good_write(self);
	i.flags = XNIC_WF_REPLY;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "HELLO's REPLY flag on a WRITE");
	check_pair(_metadata, self);
}

TEST_F_TIMEOUT(wire, lengths_and_offsets, 60)
{
	struct xnic_wire_info i;
	size_t len;

	/* payload_len says less than the frame carries. */
	i = good_write(self);
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->payload_len = htons(10);
	refresh_check(self, len);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "payload_len below the frame's payload");
	/* ... and more. */
	i = good_write(self);
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->payload_len = htons(100);
	refresh_check(self, len);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "payload_len above the frame's payload");
	i = good_write(self);
	len = build(self, &i, NULL, NULL, 64);
	hdr_of(self)->payload_len = htons(0xffff);
	refresh_check(self, len);
	expect_drop(_metadata, self, len, "rx_malformed", "payload_len 65535");

	/* Offsets and lengths outside the message. */
	i = good_write(self);
	i.offset = 64;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "offset at the message's end");
	i = good_write(self);
	i.msg_len = 100;
	i.offset = 40;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "payload running past the message");
	i = good_write(self);
	i.msg_len = 0x80000000U;
	i.offset = 0xffffffc0U;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "offset + payload wrapping 2^32");
	i = good_write(self);
	i.msg_len = 0xffffffffU;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "message longer than 2 GiB");
	i = good_write(self);
	i.msg_len = 64;
	i.payload_len = 0;
	len = build(self, &i, NULL, NULL, 0);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "empty frame of a non-empty message");
	/* Control frames with the wrong payload size. */
	i = good_write(self);
	i.opcode = XNIC_OP_ACK;
	i.flags = 0;
	i.payload_len = 8;
	len = build(self, &i, NULL, NULL, 8);
	expect_drop(_metadata, self, len, "rx_malformed", "ACK of 8 bytes");
	i = good_write(self);
	i.opcode = XNIC_OP_READ_REQ;
	i.payload_len = 64;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "READ_REQ of 64 bytes");
	i = good_write(self);
	i.opcode = XNIC_OP_HELLO;
	i.flags = 0;
	i.payload_len = 15;
	len = build(self, &i, NULL, NULL, 15);
	expect_drop(_metadata, self, len, "rx_malformed", "HELLO of 15 bytes");
	check_pair(_metadata, self);
}

TEST_F_TIMEOUT(wire, unknown_and_foreign_qps, 60)
{
	struct xnic_wire_ack ack;
	struct xnic_wire_info i;
	size_t len;

	i = good_write(self);
	i.dst_qpn = 0xabcdef;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_unknown_qpn", "unknown QPN");
	i = good_write(self);
	i.dst_qpn = 0x1000000 | self->c.qp[0]->qpn;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "QPN wider than 24 bits");
	/* The right QP, but from a QP it is not connected to. */
	i = good_write(self);
	i.src_qpn = self->c.qp[1]->qpn ^ 0x40;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_bad_qp_state",
		    "WRITE from a foreign QP");
	i = good_write(self);
	i.opcode = XNIC_OP_ACK;
	i.flags = 0;
	i.src_qpn = self->c.qp[1]->qpn ^ 0x40;
	i.psn = self->c.psn[0];
	i.payload_len = sizeof(ack);
	memset(&ack, 0, sizeof(ack));
	len = build(self, &i, NULL, &ack, sizeof(ack));
	expect_drop(_metadata, self, len, "rx_bad_qp_state",
		    "ACK from a foreign QP");
	i.opcode = XNIC_OP_READ_RESP;
	i.payload_len = 64;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_bad_qp_state",
		    "READ response from a foreign QP");
	check_pair(_metadata, self);
}

TEST_F_TIMEOUT(wire, forged_and_misdirected, 60)
{
	struct xnic_wire_hello hello;
	struct xnic_wire_info i;
	size_t len;

	/* A node nobody introduced. */
	i = good_write(self);
	i.src_node = 3;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_forged", "unknown source node");
	/* Node 2's id from another MAC. */
	i = good_write(self);
	len = build(self, &i, stranger_mac, NULL, 64);
	expect_drop(_metadata, self, len, "rx_forged",
		    "node 2 from a stranger's MAC");
	/* Our own id, and the broadcast id, as a source. */
	i = good_write(self);
	i.src_node = XT_NODE0;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed", "source node is us");
	i = good_write(self);
	i.src_node = XNIC_NODE_BROADCAST;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_malformed",
		    "broadcast source node");
	/* For another node. */
	i = good_write(self);
	i.dst_node = 7;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_misdirected",
		    "destination node 7");
	i = good_write(self);
	i.dst_node = XNIC_NODE_BROADCAST;
	len = build(self, &i, NULL, NULL, 64);
	expect_drop(_metadata, self, len, "rx_misdirected",
		    "broadcast WRITE");

	/* A HELLO claiming node 2 with another GUID from another MAC. */
	memset(&hello, 0, sizeof(hello));
	hello.node_guid = htobe64(0x0200000000000099ULL);
	hello.link_mtu = htonl(XT_MTU);
	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_HELLO;
	i.src_node = XT_NODE1;
	i.dst_node = XNIC_NODE_BROADCAST;
	i.payload_len = sizeof(hello);
	len = build(self, &i, stranger_mac, &hello, sizeof(hello));
	expect_drop(_metadata, self, len, "rx_forged",
		    "HELLO: node 2 with another GUID from another MAC");
	/* Node 2's real GUID, from another MAC on the same link. */
	{
		char path[160], line[256];
		unsigned long long guid = 0;
		unsigned int node;
		FILE *f;

		snprintf(path, sizeof(path), XT_DEBUGFS "/%s/peers",
			 self->env.dev[0].name);
		f = fopen(path, "re");
		ASSERT_NE(NULL, f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%u %llx", &node, &guid) == 2 &&
			    node == XT_NODE1)
				break;
		fclose(f);
		ASSERT_NE(0, guid);
		hello.node_guid = htobe64(guid);
	}
	len = build(self, &i, stranger_mac, &hello, sizeof(hello));
	expect_drop(_metadata, self, len, "rx_forged",
		    "HELLO: node 2's GUID from another MAC");
	/* The peer table still sends node 2's traffic to the real MAC. */
	check_pair(_metadata, self);
}

/* Lines of device 0's peer table (paths), and whether node @node answered. */
static int peer_paths(FIXTURE_DATA(wire) *self, unsigned int node,
		      bool *answered)
{
	char path[160], line[256];
	unsigned int n, ans;
	int paths = 0;
	FILE *f;

	*answered = false;
	snprintf(path, sizeof(path), XT_DEBUGFS "/%s/peers",
		 self->env.dev[0].name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %*x %*s %*s %*u %u", &n, &ans) != 2)
			continue;
		paths++;
		if (n == node && ans)
			*answered = true;
	}
	fclose(f);
	return paths;
}

/* Frames device 0 sends in @ms. */
static uint64_t tx_in(struct __test_metadata *_metadata,
		      FIXTURE_DATA(wire) *self, int ms)
{
	uint64_t before = counter(_metadata, self, "tx_frames");

	xt_sleep_ms(ms);
	return counter(_metadata, self, "tx_frames") - before;
}

/*
 * Forged HELLOs from FLOOD_NODES nodes and MACs: the peer table stops at
 * max_peers (peers_refused counts the rest), and what device 0 sends to the
 * forged nodes, which never answer, stays within 100 frames a second (HELLO
 * replies and heartbeat probes; a rate window can straddle a second, so up
 * to 200 plus slack). Before the bound every forged node got a reply and
 * then every heartbeat, here 100 a second each.
 */
#define FLOOD_NODES	5000
#define FLOOD_MAX_PEERS	64

TEST_F_TIMEOUT(wire, hello_flood, 120)
{
	uint64_t refused, limited, base, flood;
	struct xnic_wire_hello hello;
	struct xnic_wire_info i;
	uint8_t mac[6] = { 0x06, 0xf1 };
	bool answered;
	unsigned int k;
	size_t len;
	int paths;

	ASSERT_EQ(0, xt_set_param(&self->env.dev[0], "max_peers", "64"))
		TH_LOG("%s", xt_error());
	ASSERT_EQ(0, xt_set_param(&self->env.dev[0], "hb_interval_ms", "10"));
	ASSERT_EQ(0, xt_set_param(&self->env.dev[1], "hb_interval_ms", "10"));
	xt_sleep_ms(500);
	paths = peer_paths(self, XT_NODE1, &answered);
	ASSERT_EQ(1, paths);
	ASSERT_TRUE(answered) TH_LOG("node 2 never answered a heartbeat");
	base = tx_in(_metadata, self, 1000);
	refused = counter(_metadata, self, "peers_refused");
	limited = counter(_metadata, self, "tx_unanswered_limited");

	memset(&hello, 0, sizeof(hello));
	hello.link_mtu = htonl(XT_MTU);
	memset(&i, 0, sizeof(i));
	i.opcode = XNIC_OP_HELLO;
	i.dst_node = XNIC_NODE_BROADCAST;
	i.payload_len = sizeof(hello);
	for (k = 0; k < FLOOD_NODES; k++) {
		i.src_node = 100 + k;
		hello.node_guid = htobe64(0x06f1000000000000ULL | k);
		mac[2] = k >> 16;
		mac[3] = k >> 8;
		mac[4] = k;
		mac[5] = 1;
		len = build(self, &i, mac, &hello, sizeof(hello));
		while (inject(self, len) == -ENOBUFS)
			xt_sleep_ms(1);
	}
	/* All but the 63 learned, unless the receive path dropped some. */
	EXPECT_LE(refused + FLOOD_NODES / 2,
		  wait_counter(self, "peers_refused",
			       refused + FLOOD_NODES - (FLOOD_MAX_PEERS - 1)));
	paths = peer_paths(self, XT_NODE1, &answered);
	EXPECT_EQ(FLOOD_MAX_PEERS, paths);
	flood = tx_in(_metadata, self, 1000);
	TH_LOG("frames sent in 1 s: %llu before the flood, %llu after",
	       (unsigned long long)base, (unsigned long long)flood);
	EXPECT_GE(base + 250, flood);
	EXPECT_LT(limited, counter(_metadata, self, "tx_unanswered_limited"));
	/* The real peer keeps its heartbeats and its traffic. */
	EXPECT_TRUE(answered);
	check_pair(_metadata, self);
}

/* A flood of random bytes behind the EtherType, every length. */
TEST_F_TIMEOUT(wire, random_flood, 180)
{
	static const char *const drops[] = {
		"rx_crc_errors", "rx_malformed", "rx_misdirected", "rx_forged",
		"rx_unknown_qpn", "rx_bad_qp_state",
	};
	uint64_t before = 0, after = 0, v, x = 0x243f6a8885a308d3ULL;
	uint64_t was[sizeof(drops) / sizeof(drops[0])];
	unsigned int n_long = 0, n_short = 0, burst, k;
	long long end;
	size_t len, j;

	for (k = 0; k < sizeof(drops) / sizeof(drops[0]); k++) {
		was[k] = counter(_metadata, self, drops[k]);
		before += was[k];
	}
	/* Ethernet header from the peer; the rest is random. */
	memcpy(self->frame, self->env.dev[0].mac, 6);
	memcpy(self->frame + 6, self->env.dev[1].mac, 6);
	self->frame[12] = XNIC_ETH_P >> 8;
	self->frame[13] = XNIC_ETH_P & 0xff;
	for (burst = 0; burst < 40; burst++) {
		for (k = 0; k < 250; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			len = 14 + (size_t)(x % (XT_MTU + 1));
			for (j = 14; j < len; j += 8) {
				uint64_t w = x * (j + 1) * 0x9e3779b97f4a7c15ULL;

				memcpy(self->frame + j, &w,
				       len - j < 8 ? len - j : 8);
			}
			/* Half of them look like xnic frames at first. */
			if (len > 14 + 2 && (k & 1)) {
				self->frame[14] = XNIC_WIRE_VERSION;
				self->frame[15] = (uint8_t)(1 + x % 7);
			}
			ASSERT_EQ(0, inject(self, len));
			if (len - 14 >= XNIC_WIRE_HDR_LEN)
				n_long++;
			else
				n_short++;
		}
		/* Let the engine's receive queue drain. */
		xt_sleep_ms(20);
	}
	end = xt_now_ms() + COUNT_WAIT_MS;
	do {
		after = 0;
		for (k = 0; k < sizeof(drops) / sizeof(drops[0]); k++) {
			v = 0;
			xt_counter(self->env.dev[0].name, drops[k], &v);
			after += v;
		}
		if (after - before >= n_long + n_short)
			break;
		xt_sleep_ms(20);
	} while (xt_now_ms() < end);
	TH_LOG("%u frames of a header or more, %u shorter; drop counters grew by %llu",
	       n_long, n_short, (unsigned long long)(after - before));
	for (k = 0; k < sizeof(drops) / sizeof(drops[0]); k++)
		TH_LOG("  %s +%llu", drops[k],
		       (unsigned long long)(counter(_metadata, self, drops[k]) -
					    was[k]));
	/* Every frame is dropped and counted once, short ones as malformed. */
	EXPECT_EQ(n_long + n_short, after - before);
	ASSERT_EQ(-1, xt_check_byte(self->a.p, WI_BUF, CANARY));
	check_pair(_metadata, self);
}

/*
 * Random headers that pass every stateless check (right version, nodes,
 * MAC, QPN and frame check) at a victim QP pair: whatever the transport does
 * with them, the kernel survives, no memory outside the victim's buffer
 * changes, and the main pair keeps working.
 */
TEST_F_TIMEOUT(wire, fuzzed_headers_at_a_victim_qp, 180)
{
	struct xt_conn v;
	struct xt_buf vb;
	struct xnic_wire_info i;
	uint64_t x = 0xb7e151628aed2a6bULL;
	unsigned int k;
	size_t len, plen;

	ASSERT_EQ(0, xt_buf_alloc(&self->env.dev[0], &vb, 64 * KiB,
				  XT_ACCESS_ALL)) TH_LOG("%s", xt_error());
	ASSERT_EQ(0, xt_conn_create(&self->env, &v, 64, NULL))
		TH_LOG("%s", xt_error());
	for (k = 0; k < 6000; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memset(&i, 0, sizeof(i));
		i.opcode = (uint8_t)(XNIC_OP_WRITE + x % 6);
		i.flags = (uint16_t)((x >> 8) & xnic_wire_allowed_flags(i.opcode));
		i.src_node = XT_NODE1;
		i.dst_node = XT_NODE0;
		i.src_qpn = (x >> 16) % 8 ? v.qp[1]->qpn : (uint32_t)(x >> 20) & 0xffffff;
		i.dst_qpn = v.qp[0]->qpn;
		i.psn = v.psn[1] + (uint32_t)((x >> 24) % 2048) - 1024;
		i.msn = (uint32_t)((x >> 34) % 4);
		plen = (x >> 40) % 3 == 0 ? 0 : (size_t)((x >> 42) % 4200);
		if (i.opcode == XNIC_OP_READ_REQ)
			plen = sizeof(struct xnic_wire_read_req);
		else if (i.opcode == XNIC_OP_ACK || i.opcode == XNIC_OP_NAK)
			plen = sizeof(struct xnic_wire_ack);
		i.payload_len = (uint16_t)plen;
		i.msg_len = (uint32_t)(plen + (x >> 50) % 9000);
		i.offset = (uint32_t)(i.msg_len - plen);
		if ((x >> 13) % 4 == 0)
			i.offset = (uint32_t)((x >> 7) % (i.msg_len - plen + 1));
		i.raddr = (x >> 5) % 4 ? (uintptr_t)vb.p + (x >> 33) % (64 * KiB)
				       : x * 0x5851f42d4c957f2dULL;
		i.rkey = (x >> 3) % 4 ? vb.mr->rkey : (uint32_t)(x >> 11);
		i.imm = (uint32_t)x;
		len = build(self, &i, NULL, NULL, plen);
		if (plen) {
			size_t j;

			for (j = 0; j < plen; j += 8) {
				uint64_t w = x ^ (j * 0x9e3779b97f4a7c15ULL);

				memcpy(self->frame + 14 + XNIC_WIRE_HDR_LEN + j,
				       &w, plen - j < 8 ? plen - j : 8);
			}
			refresh_check(self, len);
		}
		ASSERT_EQ(0, inject(self, len));
		if (k % 200 == 199)
			xt_sleep_ms(10);
	}
	xt_sleep_ms(500);
	ASSERT_EQ(-1, xt_check_byte(self->a.p, WI_BUF, CANARY))
		TH_LOG("the main pair's memory changed");
	xt_conn_destroy(&v);
	xt_buf_free(&vb);
	check_pair(_metadata, self);
}

int main(int argc, char **argv)
{
	return xt_harness_main(argc, argv);
}
