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
 *   poly = sum of w[i] * K^(n-i)  mod p,  p = 2^61 - 1 (a Mersenne prime)
 *   sum  = sum of w[i]            mod 2^32
 *
 * poly is a polynomial-evaluation hash (Carter-Wegman; GHASH and Poly1305
 * are the same construction): two frames of n words that differ are
 * mistaken for each other for at most n of the p possible keys, so an error
 * that does not depend on K goes unseen with probability at most
 * n / 2^61 (< 2^-48 for a 64 KiB frame; crc32c: 2^-32). A word changed by
 * a multiple of p is invisible to poly alone; sum sees it (p = -1 mod
 * 2^32). Under QEMU TCG it costs a quarter of a table-driven crc32c, whose
 * CRC32 instruction is emulated bit by bit.
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
 * The key K: fixed, below 0.82 * 2^60 (xnic_check_word() relies on it);
 * its powers K^d for d < 2^14 are never +-2^k mod p (so every error of one
 * or two flipped bits is caught). selftests/unit/check_test.c verifies
 * both.
 */
#define XNIC_CHECK_KEY	0x0d1b54a32d192ed0ULL

/**
 * struct xnic_check - running frame check
 * @poly: Horner accumulator, < 2^62 (congruent mod p, not reduced)
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
 * (mod p): with h < 2^62 and K < 0.82 * 2^60, h * K + w < 0.82 * 2^122 +
 * 2^64, and the fold gives h < 2^61 + 0.82 * 2^61 + 8 < 2^62 again. A word is added
 * whole: w and w mod p are the same coefficient mod p.
 */
static inline void xnic_check_word(struct xnic_check *c, __u64 w)
{
	__uint128_t x = (__uint128_t)c->poly * XNIC_CHECK_KEY + w;

	c->sum += w;
	c->poly = ((__u64)x & XNIC_CHECK_P) + (__u64)(x >> 61);
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
	for (; len >= 8; p += 8, len -= 8)
		xnic_check_word(c, xnic_check_le64(p));
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
