// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The frame check (kmod/wire_check.h): it is the function
 * Documentation/wire-protocol.rst defines, however a frame is split, and
 * it catches what that page promises it catches for XNIC_CHECK_KEY. The
 * reference below is the definition, one fully reduced Horner step a word;
 * xnic_check_update() takes blocks of words with precomputed powers of K
 * and lazy reduction, and must give the same two values for every frame.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "kmod/wire.h"

#define P XNIC_CHECK_P

static __u64 mulmod(__u64 a, __u64 b)
{
	return (__u64)((__uint128_t)a * b % P);
}

/*
 * The definition, word by word from h (< p), every step fully reduced:
 * poly = sum of w[i] * K^(n-1-i) mod p over the zero-padded words.
 */
static void horner(__u64 h, const __u8 *b, size_t len, __u64 *poly,
		   __u32 *sum)
{
	__u64 s = 0, w;
	size_t k, j;

	for (k = 0; k < len; k += 8) {
		w = 0;
		for (j = 0; j < 8 && k + j < len; j++)
			w |= (__u64)b[k + j] << (8 * j);
		s += w;
		h = (mulmod(h, XNIC_CHECK_KEY) + w % P) % P;
	}
	*poly = h;
	*sum = (__u32)s;
}

static void reference(const __u8 *b, size_t len, __u64 *poly,
		      __u32 *sum)
{
	horner(0, b, len, poly, sum);
}

/* xorshift64*: reproducible, and 64 random bits a call */
static __u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static __u64 rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static void check_of(const __u8 *b, size_t len, __u64 *poly,
		     __u32 *sum)
{
	struct xnic_check c;

	xnic_check_init(&c);
	xnic_check_update(&c, b, len);
	xnic_check_final(&c, poly, sum);
}

static void fill(__u8 *b, size_t len, unsigned int seed)
{
	size_t k;

	srand(seed);
	for (k = 0; k < len; k++)
		b[k] = (__u8)rand();
}

TEST(matches_definition)
{
	static __u8 b[4099];
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
	static __u8 b[9000];
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

/* The block powers in wire_check.h are K^2 and K^3 mod p. */
TEST(block_powers)
{
	__u64 k2 = mulmod(XNIC_CHECK_KEY, XNIC_CHECK_KEY);

	EXPECT_EQ(k2, XNIC_CHECK_K2);
	EXPECT_EQ(mulmod(k2, XNIC_CHECK_KEY), XNIC_CHECK_K3);
}

/*
 * Random frames of 0..70000 bytes (random bytes, or runs of 0xff words,
 * the largest products), at a random alignment, cut into random pieces
 * (empty ones, a byte or a few, thousands) that cross the word and block
 * boundaries at every phase: the same two values as the definition, and
 * the state within its bounds after every call.
 */
TEST(random_frames_random_splits)
{
	static const size_t first[] = { 0, 1, 70000, 69999, 24, 23, 25 };
	static __u8 buf[70000 + 8];
	struct xnic_check c;
	size_t len, off, n, k, align;
	__u64 p1, p2;
	__u32 s1, s2;
	int round;

	for (round = 0; round < 300; round++) {
		len = rnd() % 70001;
		if (round < (int)ARRAY_SIZE(first))
			len = first[round];
		align = rnd() % 8;
		for (k = 0; k < len; k++)
			buf[align + k] = (__u8)rnd();
		if (round % 5 == 1)
			memset(buf + align, 0xff, len);
		if (round % 5 == 2)	/* 0xff words, here and there */
			for (k = 0; k + 8 <= len; k += 8)
				if (rnd() % 4)
					memset(buf + align + k, 0xff, 8);
		reference(buf + align, len, &p1, &s1);
		xnic_check_init(&c);
		for (off = 0; off < len || rnd() % 4 == 0; off += n) {
			switch (rnd() % 4) {
			case 0:
				n = rnd() % 9;
				break;
			case 1:
				n = rnd() % 64;
				break;
			case 2:
				n = rnd() % 4097;
				break;
			default:
				n = rnd() % (len + 1);
			}
			if (n > len - off)
				n = len - off;
			xnic_check_update(&c, buf + align + off, n);
			ASSERT_LT(c.poly, 1ULL << 63);
			ASSERT_LT(c.ntail, 8U);
		}
		xnic_check_final(&c, &p2, &s2);
		ASSERT_EQ(p1, p2) TH_LOG("round %d, %zu bytes", round, len);
		ASSERT_EQ(s1, s2) TH_LOG("round %d, %zu bytes", round, len);
	}
}

/*
 * From the largest state the bounds allow (poly = 2^63 - 1), over 0xff
 * words, the largest block sums: still the definition's values.
 */
TEST(largest_state_largest_words)
{
	static __u8 b[1000];
	struct xnic_check c;
	__u64 p1, p2;
	__u32 s1, s2;
	size_t len;

	memset(b, 0xff, sizeof(b));
	for (len = 0; len <= sizeof(b); len += len < 64 ? 1 : 37) {
		horner(((1ULL << 63) - 1) % P, b, len, &p1, &s1);
		xnic_check_init(&c);
		c.poly = (1ULL << 63) - 1;
		xnic_check_update(&c, b, len);
		ASSERT_LT(c.poly, 1ULL << 63);
		xnic_check_final(&c, &p2, &s2);
		ASSERT_EQ(p1, p2) TH_LOG("%zu bytes", len);
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
	__u64 x = 1, t;
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
	static __u8 b[2048];
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

	check_of((__u8 *)w, sizeof(w), &p0, &s0);
	w[1] = 1ULL << 61;
	check_of((__u8 *)w, sizeof(w), &p, &s);
	EXPECT_EQ(p0, p);
	EXPECT_NE(s0, s);
}

TEST(seal_then_verify)
{
	static __u8 frame[XNIC_WIRE_HDR_LEN + 100];
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
