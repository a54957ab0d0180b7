// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic_burst_test - link bursts (kmod/link_burst.c): the bulk data frames
 * a QP sends in one pass cross a veth as one skb. A socket on device 1's
 * veth end sees what crosses it, each skb as one packet (a burst's frames
 * back to back after one Ethernet header).
 *
 *  veth_carries_bursts      a 256 KiB WRITE: with link_burst on, packets
 *                           longer than one frame, holding WRITE frames of
 *                           consecutive PSNs, as many as tx_bursts counted;
 *                           with it off, none. Every byte is captured once
 *                           and placed either way;
 *  qdisc_segments_bursts    a tbf qdisc that takes no packet longer than
 *                           16000 bytes on device 0's veth (tbf_segment()
 *                           calls the module's gso_segment for longer
 *                           ones): bursts leave device 0 (tx_bursts), fewer
 *                           cross the veth, none longer than that; a 1 MiB
 *                           WRITE is placed byte-exact, every byte captured
 *                           once, with no drop, retransmission or bad frame
 *                           check on either device.
 *
 * Runs as root in the test VM (tools/xnic-vm) with xnic.ko loaded.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "xnic_lib.h"
#include "kmod/wire.h"

#define XT_TAG		"bu"
#include "xt_harness.h"
#define BU_BUF		(1 * MiB)
#define ETH_LEN		14
#define FRAME_MAX	(ETH_LEN + XT_MTU)
#define PKT_MAX		(128 * KiB)
#define TBF_MAX		16000

#define LINK_BURST	"/sys/module/xnic/parameters/link_burst"

FIXTURE(burst) {
	struct xt_env env;
	struct xt_conn c;
	struct xt_buf a, b;	/* a: device 0's source, b: device 1's target */
	int cap;
	uint8_t pkt[PKT_MAX];
};

FIXTURE_SETUP(burst)
{

	self->cap = -1;
	ENV_UP(&self->env);
	BUF_UP(&self->env.dev[0], &self->a, BU_BUF, XT_ACCESS_ALL);
	BUF_UP(&self->env.dev[1], &self->b, BU_BUF, XT_ACCESS_ALL);
	CONN_UP(&self->env, &self->c, 256, NULL);
}

FIXTURE_TEARDOWN(burst)
{
	if (self->cap >= 0)
		close(self->cap);
	xt_write_file(LINK_BURST, "1");
	xt_conn_destroy(&self->c);
	xt_buf_free(&self->a);
	xt_buf_free(&self->b);
	xt_env_teardown(&self->env);
}

/* (Re)open the socket on device 1's veth end, with room for a test's frames. */
static void capture_open(struct __test_metadata *_metadata,
			 FIXTURE_DATA(burst) *self)
{
	if (self->cap >= 0)
		close(self->cap);
	self->cap = xt_packet_socket(self->env.dev[1].ifindex, 256 * MiB);
	ASSERT_LE(0, self->cap) TH_LOG("capture socket: %s",
				       strerror(-self->cap));
}

/* What the capture socket saw of device 0's WRITE frames. */
struct seen {
	unsigned int packets;	/* with at least one WRITE frame */
	unsigned int bursts;	/* of them, longer than one frame */
	unsigned int frames;
	unsigned int bad;	/* frames out of place in their packet */
	size_t longest;		/* packet bytes */
	uint64_t bytes;		/* WRITE payload */
};

/*
 * Read what the socket holds: each packet one Ethernet header, then xnic
 * frames back to back; a burst's frames have consecutive PSNs.
 */
static void capture_drain(FIXTURE_DATA(burst) *self, struct seen *s)
{
	struct xnic_wire_info w = { 0 };
	ssize_t n;

	memset(s, 0, sizeof(*s));
	while ((n = recv(self->cap, self->pkt, sizeof(self->pkt),
			 MSG_DONTWAIT)) >= 0) {
		size_t off = ETH_LEN;
		unsigned int k = 0;
		uint32_t psn = 0;

		while (off + XNIC_WIRE_HDR_LEN <= (size_t)n) {
			xnic_wire_decode(&w, (const struct xnic_wire_hdr *)
					 (self->pkt + off));
			if (w.opcode != XNIC_OP_WRITE)
				break;
			if (k && w.psn != psn + 1)
				s->bad++;
			psn = w.psn;
			s->bytes += w.payload_len;
			off += XNIC_WIRE_HDR_LEN + w.payload_len;
			k++;
		}
		if (!k)
			continue;
		if (off != (size_t)n)
			s->bad++;
		s->packets++;
		s->frames += k;
		s->bursts += n > FRAME_MAX;
		if ((size_t)n > s->longest)
			s->longest = n;
	}
}

/* WRITE @len bytes of a (seed @seed) into b; expect them placed. */
static void write_placed(struct __test_metadata *_metadata,
			 FIXTURE_DATA(burst) *self, uint32_t len, int seed)
{
	struct xnic_sge sg;
	struct xnic_cqe c;

	xt_fill(self->a.p, len, seed);
	sg.addr = (uintptr_t)self->a.p;
	sg.length = len;
	sg.lkey = self->a.mr->lkey;
	ASSERT_EQ(0, xnic_post_write(self->c.qp[0], &sg, 1,
				     (uintptr_t)self->b.p, self->b.mr->rkey,
				     1, XNIC_WQE_F_SIGNALED));
	ASSERT_EQ(0, xt_reap_one(self->c.cq[0], &c, XT_WAIT_MS))
		TH_LOG("%s", xt_error());
	ASSERT_EQ(XNIC_WC_SUCCESS, c.status) TH_LOG("%s", xt_cqe_str(&c));
	ASSERT_EQ(-1, xt_diff(self->b.p, self->a.p, len));
}

/* Device 0's counter @name. */
static uint64_t counter(struct __test_metadata *_metadata,
			FIXTURE_DATA(burst) *self, const char *name)
{
	uint64_t v = 0;

	EXPECT_EQ(0, xt_counter(self->env.dev[0].name, name, &v))
		TH_LOG("%s", xt_error());
	return v;
}

TEST_F_TIMEOUT(burst, veth_carries_bursts, 60)
{
	const uint32_t len = 256 * KiB;
	uint64_t bursts;
	struct seen s;
	int k;

	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, xt_write_file(LINK_BURST, k ? "0" : "1"));
		capture_open(_metadata, self);
		bursts = counter(_metadata, self, "tx_bursts");
		write_placed(_metadata, self, len, 30 + k);
		bursts = counter(_metadata, self, "tx_bursts") - bursts;
		capture_drain(self, &s);
		TH_LOG("link_burst=%d: %u packets, %u of them bursts (tx_bursts +%llu), %u frames, %llu bytes",
		       !k, s.packets, s.bursts, (unsigned long long)bursts,
		       s.frames, (unsigned long long)s.bytes);
		EXPECT_EQ(len, s.bytes);
		EXPECT_EQ(0, s.bad);
		EXPECT_EQ(s.bursts, bursts);
		EXPECT_EQ(!k, s.bursts > 0);
		EXPECT_LE(len / XT_MTU, s.frames);
	}
}

TEST_F_TIMEOUT(burst, qdisc_segments_bursts, 60)
{
	static const char *const names[] = {
		"tx_drops", "tx_retransmits", "rx_crc_errors",
	};
	uint64_t before[2][3], after[2][3], bursts;
	const uint32_t len = 1 * MiB;
	struct seen s;
	int d, k;

	/* A packet longer than TBF_MAX bytes goes through tbf_segment(). */
	ASSERT_EQ(0, xt_sh("tc qdisc add dev %s root tbf rate 20gbit burst %d latency 50ms",
			   self->env.dev[0].netdev, TBF_MAX));
	for (d = 0; d < 2; d++)
		ASSERT_EQ(0, xt_counters(self->env.dev[d].name, names,
					 before[d], 3)) TH_LOG("%s", xt_error());
	capture_open(_metadata, self);
	bursts = counter(_metadata, self, "tx_bursts");
	write_placed(_metadata, self, len, 40);
	bursts = counter(_metadata, self, "tx_bursts") - bursts;
	capture_drain(self, &s);
	for (d = 0; d < 2; d++)
		ASSERT_EQ(0, xt_counters(self->env.dev[d].name, names,
					 after[d], 3)) TH_LOG("%s", xt_error());
	TH_LOG("tx_bursts +%llu; the veth: %u packets, %u bursts (longest %zu bytes), %u frames, %llu bytes",
	       (unsigned long long)bursts, s.packets, s.bursts, s.longest,
	       s.frames, (unsigned long long)s.bytes);
	/*
	 * Bursts left device 0; the qdisc segmented those longer than it
	 * takes (a short one, a full frame and a short one, passes whole).
	 */
	EXPECT_LT(s.bursts, bursts);
	EXPECT_GE(TBF_MAX, s.longest);
	EXPECT_EQ(len, s.bytes);
	EXPECT_EQ(0, s.bad);
	for (d = 0; d < 2; d++)
		for (k = 0; k < 3; k++)
			EXPECT_EQ(before[d][k], after[d][k])
				TH_LOG("device %d: counter %d (%s) moved", d, k,
				       k < 3 ? names[k] : "");
	xt_sh("tc qdisc del dev %s root", self->env.dev[0].netdev);
}

TEST_HARNESS_MAIN
