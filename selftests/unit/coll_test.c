// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the collective library's pure logic (coll/coll_logic.c):
 * shard boundaries, the chunk schedule, immediates, credits, the scratch
 * region layout, bfloat16 conversion and rounding, the reduction kernels,
 * and the grouping of ranks into appliances. Run on the host under ASan
 * and UBSan.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "coll/coll_logic.c"

static uint64_t rng_state = 0x1234567;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static float f32_of(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint32_t bits_of(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

TEST(shards_cover_the_vector)
{
	static const size_t counts[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 9, 100, 1000003, 16777216, 16777217,
	};
	unsigned int n, r, i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		for (n = 1; n <= 9; n++) {
			size_t next = 0, min = (size_t)-1, max = 0;

			for (r = 0; r < n; r++) {
				size_t off, len;

				xnic_coll_shard(counts[i], n, r, &off, &len);
				ASSERT_EQ(next, off);
				next = off + len;
				if (len < min)
					min = len;
				if (len > max)
					max = len;
				if (r >= counts[i])
					ASSERT_EQ(0, len);
			}
			ASSERT_EQ(counts[i], next);
			ASSERT_LE(max - min, 1);
		}
	}
}

TEST(shards_small_counts)
{
	size_t off, len;

	/* count 3 over 4 ranks: 1, 1, 1, 0 */
	xnic_coll_shard(3, 4, 0, &off, &len);
	EXPECT_EQ(0, off);
	EXPECT_EQ(1, len);
	xnic_coll_shard(3, 4, 2, &off, &len);
	EXPECT_EQ(2, off);
	EXPECT_EQ(1, len);
	xnic_coll_shard(3, 4, 3, &off, &len);
	EXPECT_EQ(3, off);
	EXPECT_EQ(0, len);
	/* count 1: only rank 0 owns anything */
	xnic_coll_shard(1, 8, 0, &off, &len);
	EXPECT_EQ(1, len);
	xnic_coll_shard(1, 8, 7, &off, &len);
	EXPECT_EQ(1, off);
	EXPECT_EQ(0, len);
	/* 10 over 4: 3, 3, 2, 2 */
	xnic_coll_shard(10, 4, 1, &off, &len);
	EXPECT_EQ(3, off);
	EXPECT_EQ(3, len);
	xnic_coll_shard(10, 4, 3, &off, &len);
	EXPECT_EQ(8, off);
	EXPECT_EQ(2, len);
}

TEST(chunks_cover_the_shard)
{
	int t;

	EXPECT_EQ(0, xnic_coll_nchunks(0, 5));
	EXPECT_EQ(1, xnic_coll_nchunks(1, 5));
	EXPECT_EQ(1, xnic_coll_nchunks(5, 5));
	EXPECT_EQ(2, xnic_coll_nchunks(6, 5));
	EXPECT_EQ(0, xnic_coll_chunk_len(6, 5, 2));
	for (t = 0; t < 2000; t++) {
		size_t len = rng() % 100000, ce = 1 + rng() % 5000, sum = 0;
		size_t nc = xnic_coll_nchunks(len, ce), c;

		for (c = 0; c < nc; c++) {
			size_t n = xnic_coll_chunk_len(len, ce, c);

			ASSERT_GT(n, 0);
			if (c + 1 < nc)
				ASSERT_EQ(ce, n);
			sum += n;
		}
		ASSERT_EQ(len, sum);
		ASSERT_EQ(0, xnic_coll_chunk_len(len, ce, nc));
	}
}

TEST(immediates_round_trip)
{
	static const unsigned int kinds[] = {
		XNIC_COLL_K_RS, XNIC_COLL_K_COPY, XNIC_COLL_K_CTRL,
	};
	struct xnic_coll_imm d;
	unsigned int k;
	int t;

	for (t = 0; t < 10000; t++) {
		unsigned int kind = kinds[t % 3], sender = rng() % 256;
		unsigned int seq = (unsigned int)rng();
		uint64_t idx = rng();

		xnic_coll_imm_decode(xnic_coll_imm_data(kind, sender, seq, idx),
				     &d);
		ASSERT_EQ(kind, d.kind);
		ASSERT_EQ(sender, d.sender);
		ASSERT_EQ(seq & XNIC_COLL_SEQ_MASK, d.seq);
		ASSERT_EQ(idx & XNIC_COLL_IDX_MASK, d.idx);
	}
	for (k = 0; k < 2; k++) {
		xnic_coll_imm_decode(xnic_coll_imm_credit(255, k,
							  0x123456789ULL), &d);
		ASSERT_EQ(XNIC_COLL_K_CREDIT, d.kind);
		ASSERT_EQ(255, d.sender);
		ASSERT_EQ(k, d.channel);
		ASSERT_EQ(0x123456789ULL & XNIC_COLL_CREDIT_MASK, d.count);
		ASSERT_EQ(0, d.seq);
		ASSERT_EQ(0, d.idx);
	}
	/* distinct kinds never alias */
	EXPECT_NE(xnic_coll_imm_data(XNIC_COLL_K_RS, 1, 2, 3),
		  xnic_coll_imm_data(XNIC_COLL_K_COPY, 1, 2, 3));
}

TEST(credit_extension)
{
	uint64_t m = XNIC_COLL_CREDIT_MASK;

	EXPECT_EQ(5, xnic_coll_credit_update(0, 5, 10));
	EXPECT_EQ(7, xnic_coll_credit_update(7, 7, 7));
	/* past what was posted: refused */
	EXPECT_EQ((uint64_t)-1, xnic_coll_credit_update(0, 11, 10));
	/* across the wrap of the low bits */
	EXPECT_EQ(m + 2, xnic_coll_credit_update(m - 1, 1, m + 5));
	EXPECT_EQ(5 * (m + 1) + 3,
		  xnic_coll_credit_update(5 * (m + 1) - 2, 3, 6 * m));
	/* stale (older) low bits would mean a huge jump: refused */
	EXPECT_EQ((uint64_t)-1, xnic_coll_credit_update(100, 99, 110));
}

TEST(region_layout_disjoint)
{
	struct xnic_coll_layout l = { .chunk = 64, .slots = 3, .npeers = 4 };
	size_t size = xnic_coll_region_size(&l), off;
	unsigned char *used = calloc(1, size);
	unsigned int p, s, b;

	ASSERT_NE(NULL, used);
	ASSERT_EQ((3 * 4 + 1) * 3 * 64, size);
	for (p = 0; p < l.npeers; p++) {
		for (s = 0; s < l.slots; s++) {
			size_t offs[3] = {
				xnic_coll_off_rs_in(&l, p, s),
				xnic_coll_off_cp_in(&l, p, s),
				xnic_coll_off_rs_out(&l, p, s),
			};

			for (b = 0; b < 3; b++) {
				ASSERT_LE(offs[b] + l.chunk, size);
				for (off = offs[b]; off < offs[b] + l.chunk; off++) {
					ASSERT_EQ(0, used[off]);
					used[off] = 1;
				}
			}
		}
	}
	for (s = 0; s < l.slots; s++) {
		size_t o = xnic_coll_off_ag_out(&l, s);

		ASSERT_LE(o + l.chunk, size);
		for (off = o; off < o + l.chunk; off++) {
			ASSERT_EQ(0, used[off]);
			used[off] = 1;
		}
	}
	for (off = 0; off < size; off++)
		ASSERT_EQ(1, used[off]);
	free(used);

	l.chunk = (size_t)1 << 58;
	l.slots = 64;
	l.npeers = 255;
	EXPECT_EQ(0, xnic_coll_region_size(&l));
	EXPECT_EQ(0, xnic_coll_peer_index(3, 0));
	EXPECT_EQ(2, xnic_coll_peer_index(3, 2));
	EXPECT_EQ(3, xnic_coll_peer_index(3, 4));
}

TEST(bf16_known_values)
{
	EXPECT_EQ(1.0f, xnic_bf16_to_f32(0x3f80));
	EXPECT_EQ(-2.0f, xnic_bf16_to_f32(0xc000));
	EXPECT_EQ(0x3f80, xnic_f32_to_bf16(1.0f));
	EXPECT_EQ(0x8000, xnic_f32_to_bf16(-0.0f));
	/* exactly half way: ties to even */
	EXPECT_EQ(0x3f80, xnic_f32_to_bf16(f32_of(0x3f808000)));
	EXPECT_EQ(0x3f82, xnic_f32_to_bf16(f32_of(0x3f818000)));
	EXPECT_EQ(0xbf82, xnic_f32_to_bf16(f32_of(0xbf818000)));
	/* just off half way */
	EXPECT_EQ(0x3f81, xnic_f32_to_bf16(f32_of(0x3f808001)));
	EXPECT_EQ(0x3f80, xnic_f32_to_bf16(f32_of(0x3f807fff)));
	/* infinities stay, overflow rounds to infinity */
	EXPECT_EQ(0x7f80, xnic_f32_to_bf16(INFINITY));
	EXPECT_EQ(0xff80, xnic_f32_to_bf16(-INFINITY));
	EXPECT_EQ(0x7f80, xnic_f32_to_bf16(f32_of(0x7f7fffff)));
	EXPECT_EQ(0x7f80, xnic_f32_to_bf16(f32_of(0x7f7f8000)));
	EXPECT_EQ(0x7f7f, xnic_f32_to_bf16(f32_of(0x7f7f7fff)));
	/* subnormals round like the rest */
	EXPECT_EQ(0x0002, xnic_f32_to_bf16(f32_of(0x00018000)));
	EXPECT_EQ(0x0000, xnic_f32_to_bf16(f32_of(0x00008000)));
	EXPECT_EQ(0x0001, xnic_f32_to_bf16(f32_of(0x00008001)));
}

TEST(bf16_nan_stays_nan)
{
	static const uint32_t nans[] = {
		0x7fc00000, 0x7f800001, 0xff800001, 0x7fffffff, 0x7f80ffff,
		0xffc00001,
	};
	unsigned int i;

	for (i = 0; i < sizeof(nans) / sizeof(nans[0]); i++) {
		uint16_t h = xnic_f32_to_bf16(f32_of(nans[i]));

		EXPECT_EQ(0x7f80, h & 0x7f80);
		EXPECT_NE(0, h & 0x7f);
		EXPECT_EQ(nans[i] >> 31, (uint32_t)h >> 15);
		EXPECT_TRUE(isnan(xnic_bf16_to_f32(h)));
	}
}

TEST(bf16_every_value_round_trips)
{
	uint32_t h;

	for (h = 0; h < 0x10000; h++) {
		float f = xnic_bf16_to_f32((uint16_t)h);

		if (isnan(f))
			continue;
		ASSERT_EQ(h, xnic_f32_to_bf16(f));
	}
}

/* Reference rounding in double: the nearer neighbour, ties to even. */
static uint16_t bf16_ref(float f)
{
	uint32_t u = bits_of(f);
	uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
	double x = fabs((double)f), vlo, vhi;

	vlo = fabs((double)xnic_bf16_to_f32(lo));
	/* the step past the largest finite value is 2^128 (IEEE 754) */
	vhi = (hi & 0x7fff) == 0x7f80 ? ldexp(1.0, 128) :
				      fabs((double)xnic_bf16_to_f32(hi));
	if (x - vlo < vhi - x)
		return lo;
	if (x - vlo > vhi - x)
		return hi;
	return (lo & 1) ? hi : lo;
}

TEST(bf16_rounding_matches_reference)
{
	int t;

	for (t = 0; t < 2000000; t++) {
		uint32_t u = (uint32_t)rng();
		float f = f32_of(u);

		if (isnan(f) || isinf(f))
			continue;
		if (xnic_f32_to_bf16(f) != bf16_ref(f)) {
			TH_LOG("f32 bits %#x: got %#x, expected %#x", u,
			       xnic_f32_to_bf16(f), bf16_ref(f));
			ASSERT_TRUE(0);
		}
	}
}

TEST(reduce_f32_in_rank_order)
{
	static const size_t sizes[] = { 0, 1, 3, 511, 512, 513, 1025, 4099 };
	float *src[8], *dst;
	unsigned int nsrc, s, i;
	size_t k, n;

	for (s = 0; s < 8; s++) {
		src[s] = malloc(4099 * sizeof(float));
		ASSERT_NE(NULL, src[s]);
		for (k = 0; k < 4099; k++)
			src[s][k] = (float)((int64_t)(rng() >> 40) - (1 << 23)) /
				    (float)(1 << (rng() % 20));
	}
	dst = malloc(4099 * sizeof(float));
	ASSERT_NE(NULL, dst);
	for (nsrc = 0; nsrc <= 8; nsrc++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			n = sizes[i];
			memset(dst, 0x55, 4099 * sizeof(float));
			xnic_coll_reduce_f32(dst, (const float *const *)src,
					     nsrc, n);
			for (k = 0; k < n; k++) {
				volatile float acc = nsrc ? src[0][k] : 0.0f;

				for (s = 1; s < nsrc; s++)
					acc = acc + src[s][k];
				ASSERT_EQ(bits_of(acc), bits_of(dst[k]));
			}
			/* nothing written past n */
			if (n < 4099)
				ASSERT_EQ(0x55555555U, bits_of(dst[n]));
		}
	}
	for (s = 0; s < 8; s++)
		free(src[s]);
	free(dst);
}

TEST(reduce_bf16_rounds_once)
{
	uint16_t *src[8], dst[1500];
	unsigned int nsrc, s;
	size_t k, n = 1500;

	for (s = 0; s < 8; s++) {
		src[s] = malloc(n * sizeof(uint16_t));
		ASSERT_NE(NULL, src[s]);
		for (k = 0; k < n; k++)
			src[s][k] = (uint16_t)rng() & 0xbfff;	/* finite */
	}
	for (nsrc = 1; nsrc <= 8; nsrc++) {
		xnic_coll_reduce_bf16(dst, (const uint16_t *const *)src, nsrc,
				      n);
		for (k = 0; k < n; k++) {
			volatile float acc = xnic_bf16_to_f32(src[0][k]);

			for (s = 1; s < nsrc; s++)
				acc = acc + xnic_bf16_to_f32(src[s][k]);
			ASSERT_EQ(bf16_ref(acc), dst[k]);
		}
	}
	/* sums exact in float, rounded once: 1 + 2^-8 + 2^-8 = 1 + 2^-7 */
	src[0][0] = 0x3f80;
	src[1][0] = 0x3b80;	/* 2^-8: alone, 1 + 2^-8 is a tie -> 1 */
	src[2][0] = 0x3b80;
	xnic_coll_reduce_bf16(dst, (const uint16_t *const *)src, 2, 1);
	EXPECT_EQ(0x3f80, dst[0]);
	xnic_coll_reduce_bf16(dst, (const uint16_t *const *)src, 3, 1);
	EXPECT_EQ(0x3f81, dst[0]);
	for (s = 0; s < 8; s++)
		free(src[s]);
}

/* A mesh matrix where ranks of equal @grp reach each other. */
static void mesh_of(unsigned int n, const int *grp, uint8_t *m)
{
	unsigned int r, s;

	for (r = 0; r < n; r++)
		for (s = 0; s < n; s++)
			m[r * n + s] = r != s && grp[r] == grp[s];
}

TEST(appliances_from_the_mesh)
{
	static const int g2x3[] = { 5, 5, 5, 2, 2, 2 };
	static const int inter[] = { 1, 0, 1, 0, 1, 0 };
	static const int uneq[] = { 0, 0, 0, 1, 1 };
	uint8_t m[64];
	int appl[8], r;

	mesh_of(6, g2x3, m);
	ASSERT_EQ(2, xnic_coll_appliances(6, m, appl));
	for (r = 0; r < 6; r++)
		EXPECT_EQ(r < 3 ? 0 : 1, appl[r]);	/* by lowest rank */
	EXPECT_EQ(3U, xnic_coll_hier_ok(6, appl, 2));
	mesh_of(6, inter, m);
	ASSERT_EQ(2, xnic_coll_appliances(6, m, appl));
	for (r = 0; r < 6; r++)
		EXPECT_EQ(r & 1, appl[r]);
	EXPECT_EQ(3U, xnic_coll_hier_ok(6, appl, 2));
	/* unequal sizes, one appliance, one rank each: flat */
	mesh_of(5, uneq, m);
	ASSERT_EQ(2, xnic_coll_appliances(5, m, appl));
	EXPECT_EQ(0U, xnic_coll_hier_ok(5, appl, 2));
	memset(m, 1, sizeof(m));
	ASSERT_EQ(1, xnic_coll_appliances(4, m, appl));
	EXPECT_EQ(0U, xnic_coll_hier_ok(4, appl, 1));
	memset(m, 0, sizeof(m));
	ASSERT_EQ(4, xnic_coll_appliances(4, m, appl));
	EXPECT_EQ(0U, xnic_coll_hier_ok(4, appl, 4));
	/* one side does not see the other: no grouping */
	mesh_of(6, g2x3, m);
	m[1 * 6 + 2] = 0;
	EXPECT_EQ(-1, xnic_coll_appliances(6, m, appl));
	/* r~s, s~t, not r~t (a partial mesh) */
	mesh_of(6, g2x3, m);
	m[0 * 6 + 2] = m[2 * 6 + 0] = 0;
	EXPECT_EQ(-1, xnic_coll_appliances(6, m, appl));
	/* a mesh link across appliances */
	mesh_of(6, g2x3, m);
	m[0 * 6 + 3] = m[3 * 6 + 0] = 1;
	EXPECT_EQ(-1, xnic_coll_appliances(6, m, appl));
}

TEST_HARNESS_MAIN
