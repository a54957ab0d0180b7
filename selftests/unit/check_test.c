// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The frame check (kmod/wire_check.h): it is the function
 * Documentation/wire-protocol.rst defines, however a frame is split, and
 * it catches what that page promises it catches for XNIC_CHECK_KEY.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "kmod/wire.h"

#define P XNIC_CHECK_P

static uint64_t mulmod(uint64_t a, uint64_t b)
{
	return (uint64_t)((__uint128_t)a * b % P);
}

/* The definition, word by word, every step fully reduced. */
static void reference(const uint8_t *b, size_t len, __u64 *poly,
		      __u32 *sum)
{
	uint64_t h = 0, s = 0, w;
	size_t k, j;

	for (k = 0; k < len; k += 8) {
		w = 0;
		for (j = 0; j < 8 && k + j < len; j++)
			w |= (uint64_t)b[k + j] << (8 * j);
		s += w;
		h = (mulmod(h, XNIC_CHECK_KEY) + w % P) % P;
	}
	*poly = h;
	*sum = (uint32_t)s;
}

static void check_of(const uint8_t *b, size_t len, __u64 *poly,
		     __u32 *sum)
{
	struct xnic_check c;

	xnic_check_init(&c);
	xnic_check_update(&c, b, len);
	xnic_check_final(&c, poly, sum);
}

static void fill(uint8_t *b, size_t len, unsigned int seed)
{
	size_t k;

	srand(seed);
	for (k = 0; k < len; k++)
		b[k] = (uint8_t)rand();
}

TEST(matches_definition)
{
	static uint8_t b[4099];
	__u64 p1, p2;
	__u32 s1, s2;
	size_t len;

	fill(b, sizeof(b), 1);
	for (len = 0; len <= sizeof(b); len += len < 40 ? 1 : 97) {
		reference(b, len, &p1, &s1);
		check_of(b, len, &p2, &s2);
		ASSERT_EQ(p1, p2);
		ASSERT_EQ(s1, s2);
		ASSERT_LT(p2, P);
	}
	/* all ones: every word is p + 2^61 ... the lazy reduction's worst */
	memset(b, 0xff, sizeof(b));
	reference(b, sizeof(b), &p1, &s1);
	check_of(b, sizeof(b), &p2, &s2);
	EXPECT_EQ(p1, p2);
	EXPECT_EQ(s1, s2);
}

TEST(any_split_same_result)
{
	static uint8_t b[9000];
	struct xnic_check c;
	__u64 p1, p2;
	__u32 s1, s2;
	size_t off, n;
	int round;

	fill(b, sizeof(b), 2);
	check_of(b, sizeof(b), &p1, &s1);
	srand(3);
	for (round = 0; round < 200; round++) {
		xnic_check_init(&c);
		for (off = 0; off < sizeof(b); off += n) {
			n = (size_t)rand() % 23;
			if (round & 1)
				n = (size_t)rand() % 4096;
			if (n > sizeof(b) - off)
				n = sizeof(b) - off;
			xnic_check_update(&c, b + off, n);
		}
		xnic_check_final(&c, &p2, &s2);
		ASSERT_EQ(p1, p2);
		ASSERT_EQ(s1, s2);
	}
}

/*
 * Two flipped bits in words i < j change poly by +-2^a K^(n-i) +- 2^b
 * K^(n-j), which is zero only if K^(j-i) = -+2^(b-a) mod p. No power of K
 * below 2^14 (more words than a 64 KiB frame has) is +-2^k, so every one-
 * and two-bit error is seen (in one word: a change by a multiple of p
 * leaves poly alone, and changes sum by -multiple mod 2^32).
 */
TEST(key_has_no_small_power_of_two_powers)
{
	uint64_t x = 1, t;
	int d, k;

	ASSERT_LT(XNIC_CHECK_KEY, 0.82 * (1ULL << 60));	/* the lazy fold */
	for (d = 1; d < (1 << 14); d++) {
		x = mulmod(x, XNIC_CHECK_KEY);
		for (k = 0, t = 1; k < 61; k++, t <<= 1) {
			ASSERT_NE(t, x);
			ASSERT_NE(P - t, x);
		}
	}
}

TEST(every_single_and_double_bit_flip_seen)
{
	static uint8_t b[2048];
	__u64 p0, p;
	__u32 s0, s;
	size_t bit, bit2;

	fill(b, sizeof(b), 4);
	check_of(b, sizeof(b), &p0, &s0);
	for (bit = 0; bit < sizeof(b) * 8; bit++) {
		b[bit / 8] ^= 1 << (bit % 8);
		check_of(b, sizeof(b), &p, &s);
		ASSERT_TRUE(p != p0 || s != s0);
		/* and a second flip somewhere after it */
		bit2 = (bit * 7919 + 13) % (sizeof(b) * 8);
		if (bit2 != bit) {
			b[bit2 / 8] ^= 1 << (bit2 % 8);
			check_of(b, sizeof(b), &p, &s);
			ASSERT_TRUE(p != p0 || s != s0);
			b[bit2 / 8] ^= 1 << (bit2 % 8);
		}
		b[bit / 8] ^= 1 << (bit % 8);
	}
}

/* A word changed by exactly p (bits 61 and 0: 1 -> 2^61) is invisible to
 * poly; the word sum sees it.
 */
TEST(word_changed_by_p_seen_by_sum)
{
	__u64 w[4] = { 5, 1, 7, 9 }, p0, p;
	__u32 s0, s;

	check_of((uint8_t *)w, sizeof(w), &p0, &s0);
	w[1] = 1ULL << 61;
	check_of((uint8_t *)w, sizeof(w), &p, &s);
	EXPECT_EQ(p0, p);
	EXPECT_NE(s0, s);
}

TEST(seal_then_verify)
{
	static uint8_t frame[XNIC_WIRE_HDR_LEN + 100];
	struct xnic_wire_hdr *h = (struct xnic_wire_hdr *)frame;
	struct xnic_wire_info i = {
		.opcode = XNIC_OP_WRITE, .src_node = 1, .dst_node = 2,
		.payload_len = 100,
	};
	__be64 poly;
	__be32 sum;

	fill(frame + XNIC_WIRE_HDR_LEN, 100, 5);
	xnic_wire_encode(h, &i);
	xnic_wire_seal(h, sizeof(frame));
	poly = h->check_poly;
	sum = h->check_sum;
	EXPECT_NE(0, poly | sum);
	/* sealing again (over non-zero check fields) gives the same */
	xnic_wire_seal(h, sizeof(frame));
	EXPECT_EQ(poly, h->check_poly);
	EXPECT_EQ(sum, h->check_sum);
}

TEST_HARNESS_MAIN
