/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic frame check (wire version 2): what protects every frame, header and
 * payload, end to end. Pure: no kernel dependency, so that the unit tests,
 * the selftests that forge frames and fuzz targets compute it as the
 * kernel does. Documentation/wire-protocol.rst ("Frame check") states the
 * guarantees; selftests/unit/check_test.c proves the deterministic ones
 * for XNIC_CHECK_KEY.
 *
 * The frame is read as 8-byte little-endian words w[0..n-1] (the last one
 * zero-padded), with both check fields zero. Two values are sent:
 *
 *   poly = sum of w[i] * K^(n-1-i)  mod p,  p = 2^61 - 1 (a Mersenne prime)
 *   sum  = sum of w[i]              mod 2^32
 *
 * poly is a polynomial-evaluation hash (Carter-Wegman; GHASH and Poly1305
 * are the same construction): two frames of n words that differ are
 * mistaken for each other for at most n of the p possible keys, so an error
 * that does not depend on K goes unseen with probability at most
 * n / 2^61 (< 2^-48 for a 64 KiB frame; crc32c: 2^-32). A word changed by
 * a multiple of p is invisible to poly alone; sum sees it (p = -1 mod
 * 2^32). Under QEMU TCG it costs about what a memcpy of the frame does, a
 * tenth of a table-driven crc32c (whose CRC32 instruction is emulated bit
 * by bit).
 *
 * The definition is Horner's rule, h = h * K + w[i] word by word
 * (xnic_check_word()). xnic_check_update() takes three words at a time,
 * h = h * K^3 + w[i] * K^2 + w[i+1] * K + w[i+2]: the same value mod p,
 * so the same check for any split of the frame. Under TCG a load from
 * guest memory costs most, more so with registers changed since the last
 * one, then the end of a translated block; the arithmetic between loads
 * is cheap. A block's loads come first and its products are summed in 128
 * bits and folded once; four words a block need one register more than
 * the kernel's compiler leaves free (it reloads a word), eight spill.
 */
#ifndef XNIC_WIRE_CHECK_H
#define XNIC_WIRE_CHECK_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdint.h>
#include <string.h>
#include <linux/types.h>
#endif

#define XNIC_CHECK_P	((1ULL << 61) - 1)
/*
 * The key K: fixed, below 0.82 * 2^60 (xnic_check_step() relies on it);
 * its powers K^d for d < 2^14 are never +-2^k mod p (so every error of one
 * or two flipped bits is caught). selftests/unit/check_test.c verifies
 * both, and the powers below.
 */
#define XNIC_CHECK_KEY	0x0d1b54a32d192ed0ULL
/* K^2 and K^3 mod p, for xnic_check_update()'s blocks of three words */
#define XNIC_CHECK_K2	0x01fa45eb950be660ULL
#define XNIC_CHECK_K3	0x0c3855c75ceb159eULL

/**
 * struct xnic_check - running frame check
 * @poly: Horner accumulator, < 2^63 (congruent mod p, not reduced)
 * @sum: sum of the words, mod 2^64
 * @tail: bytes of a word not yet complete, in order
 * @ntail: bytes in @tail, 0..7
 */
struct xnic_check {
	__u64 poly;
	__u64 sum;
	__u8 tail[8];
	unsigned int ntail;
};

/*
 * One Horner step, h = h * K + w, reduced only by one fold of 2^61 = 1
 * (mod p): with h < 2^63 and K < 0.82 * 2^60, h * K + w < 0.82 * 2^123 +
 * 2^64, and the fold gives h < 2^61 + 0.82 * 2^62 + 8 < 2^63 again. A
 * word is added whole: w and w mod p are the same coefficient mod p.
 */
static inline __u64 xnic_check_step(__u64 h, __u64 w)
{
	__uint128_t x = (__uint128_t)h * XNIC_CHECK_KEY + w;

	return ((__u64)x & XNIC_CHECK_P) + (__u64)(x >> 61);
}

static inline void xnic_check_word(struct xnic_check *c, __u64 w)
{
	c->sum += w;
	c->poly = xnic_check_step(c->poly, w);
}

/*
 * x mod p, not fully reduced, for any x < 2^128: x = a + b * 2^61 + c *
 * 2^122 with a, b < 2^61 and c < 2^6 is a + b + c (mod p), < 2^62 + 2^6.
 */
static inline __u64 xnic_check_fold(__uint128_t x)
{
	__u64 lo = (__u64)x, hi = (__u64)(x >> 64);

	return (lo & XNIC_CHECK_P) + ((lo >> 61 | hi << 3) & XNIC_CHECK_P) +
	       (hi >> 58);
}

static inline __u64 xnic_check_le64(const __u8 *p)
{
	__u64 w;

	memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/**
 * xnic_check_init() - start a frame check
 * @c: the state
 */
static inline void xnic_check_init(struct xnic_check *c)
{
	c->poly = 0;
	c->sum = 0;
	c->ntail = 0;
}

/**
 * xnic_check_update() - add bytes to a frame check
 * @c: the state
 * @buf: the bytes
 * @len: how many; any split of a frame into calls gives the same result
 */
static inline void xnic_check_update(struct xnic_check *c, const void *buf,
				     unsigned long len)
{
	const __u8 *p = (const __u8 *)buf;
	__u64 h, s, w0, w1, w2;
	__uint128_t x;

	if (c->ntail) {
		unsigned long n = 8 - c->ntail;

		if (n > len)
			n = len;
		memcpy(c->tail + c->ntail, p, n);
		c->ntail += n;
		p += n;
		len -= n;
		if (c->ntail < 8)
			return;
		xnic_check_word(c, xnic_check_le64(c->tail));
		c->ntail = 0;
	}
	/*
	 * In locals: stored through c, they would be stored at every step
	 * (c may alias the bytes). h < 2^63 before a block and K^d < 2^61,
	 * so x < 2^124 + 3 * 2^125 < 2^127.
	 */
	h = c->poly;
	s = c->sum;
	for (; len >= 24; p += 24, len -= 24) {
		w0 = xnic_check_le64(p);
		w1 = xnic_check_le64(p + 8);
		w2 = xnic_check_le64(p + 16);
		x = (__uint128_t)w0 * XNIC_CHECK_K2 +
		    (__uint128_t)w1 * XNIC_CHECK_KEY + w2;
		s += w0 + w1 + w2;
		h = xnic_check_fold(x + (__uint128_t)h * XNIC_CHECK_K3);
	}
	for (; len >= 8; p += 8, len -= 8) {
		w0 = xnic_check_le64(p);
		s += w0;
		h = xnic_check_step(h, w0);
	}
	c->poly = h;
	c->sum = s;
	memcpy(c->tail, p, len);
	c->ntail = len;
}

/**
 * xnic_check_final() - the check's two values
 * @c: the state; the last word is zero-padded
 * @poly: the polynomial hash, fully reduced (< p)
 * @sum: the word sum mod 2^32
 */
static inline void xnic_check_final(struct xnic_check *c, __u64 *poly,
				    __u32 *sum)
{
	__u64 r;

	if (c->ntail) {
		memset(c->tail + c->ntail, 0, 8 - c->ntail);
		xnic_check_word(c, xnic_check_le64(c->tail));
		c->ntail = 0;
	}
	r = (c->poly & XNIC_CHECK_P) + (c->poly >> 61);
	if (r >= XNIC_CHECK_P)
		r -= XNIC_CHECK_P;
	*poly = r;
	*sum = (__u32)c->sum;
}

#endif /* XNIC_WIRE_CHECK_H */
