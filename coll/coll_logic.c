// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - pure logic: shards, chunks, immediates, credits, region
 * layout, bfloat16 and the reduction kernels. No device, no system call.
 */
#include <string.h>

#include "coll_logic.h"

/* ---------------------------- schedule ----------------------------- */

void xnic_coll_shard(size_t count, unsigned int nranks, unsigned int r,
		     size_t *off, size_t *len)
{
	size_t base = count / nranks, extra = count % nranks;

	*len = base + (r < extra);
	*off = r * base + (r < extra ? r : extra);
}

size_t xnic_coll_nchunks(size_t len, size_t chunk_elems)
{
	return len / chunk_elems + (len % chunk_elems != 0);
}

size_t xnic_coll_chunk_len(size_t len, size_t chunk_elems, size_t c)
{
	size_t start = c * chunk_elems;

	if (start >= len)
		return 0;
	return len - start < chunk_elems ? len - start : chunk_elems;
}

/* ---------------------------- topology ---------------------------- */

int xnic_coll_appliances(unsigned int n, const uint8_t *mesh, int *appl)
{
	unsigned int r, s, t;
	int nappl = 0, a;

	for (r = 0; r < n; r++)
		for (s = 0; s < n; s++)
			if (r != s && !mesh[r * n + s] != !mesh[s * n + r])
				return -1;
	for (r = 0; r < n; r++) {
		/* A mesh peer below r has numbered r's appliance already. */
		for (s = 0, a = -1; s < r && a < 0; s++)
			if (mesh[r * n + s])
				a = appl[s];
		appl[r] = a < 0 ? nappl++ : a;
	}
	/* Same appliance exactly when reached over the mesh: cliques. */
	for (s = 0; s < n; s++)
		for (t = 0; t < n; t++)
			if (s != t && (appl[s] == appl[t]) != !!mesh[s * n + t])
				return -1;
	return nappl;
}

unsigned int xnic_coll_hier_ok(unsigned int n, const int *appl, int nappl)
{
	unsigned int r, size = n / (nappl > 0 ? (unsigned int)nappl : 1), cnt;
	int a;

	if (nappl < 2 || size < 2 || size * (unsigned int)nappl != n)
		return 0;
	for (a = 0; a < nappl; a++) {
		for (r = 0, cnt = 0; r < n; r++)
			cnt += appl[r] == a;
		if (cnt != size)
			return 0;
	}
	return size;
}

/* ------------------------- immediate data -------------------------- */

uint32_t xnic_coll_imm_data(unsigned int kind, unsigned int sender,
			    unsigned int seq, uint64_t idx)
{
	return (kind & 3U) << 30 | (sender & 0xffU) << 22 |
	       (seq & XNIC_COLL_SEQ_MASK) << 18 |
	       (uint32_t)(idx & XNIC_COLL_IDX_MASK);
}

uint32_t xnic_coll_imm_credit(unsigned int sender, unsigned int channel,
			      uint64_t consumed)
{
	return XNIC_COLL_K_CREDIT << 30 | (sender & 0xffU) << 22 |
	       (channel & 1U) << 21 |
	       (uint32_t)(consumed & XNIC_COLL_CREDIT_MASK);
}

void xnic_coll_imm_decode(uint32_t imm, struct xnic_coll_imm *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = imm >> 30;
	out->sender = (imm >> 22) & 0xffU;
	if (out->kind == XNIC_COLL_K_CREDIT) {
		out->channel = (imm >> 21) & 1U;
		out->count = imm & XNIC_COLL_CREDIT_MASK;
	} else {
		out->seq = (imm >> 18) & XNIC_COLL_SEQ_MASK;
		out->idx = imm & XNIC_COLL_IDX_MASK;
	}
}

uint64_t xnic_coll_credit_update(uint64_t known, uint32_t low, uint64_t limit)
{
	uint64_t next = known + ((low - known) & XNIC_COLL_CREDIT_MASK);

	return next > limit ? (uint64_t)-1 : next;
}

/* ---------------------------- region ------------------------------ */

size_t xnic_coll_region_size(const struct xnic_coll_layout *l)
{
	size_t per = (size_t)l->slots * l->chunk, n = 3 * (size_t)l->npeers + 1;

	if (l->slots && per / l->slots != l->chunk)
		return 0;
	if (per && n > (size_t)-1 / per)
		return 0;
	return n * per;
}

size_t xnic_coll_off_rs_in(const struct xnic_coll_layout *l, unsigned int pi,
			   unsigned int s)
{
	return ((size_t)pi * l->slots + s) * l->chunk;
}

size_t xnic_coll_off_cp_in(const struct xnic_coll_layout *l, unsigned int pi,
			   unsigned int s)
{
	return (((size_t)l->npeers + pi) * l->slots + s) * l->chunk;
}

size_t xnic_coll_off_rs_out(const struct xnic_coll_layout *l,
			    unsigned int pi, unsigned int s)
{
	return ((2 * (size_t)l->npeers + pi) * l->slots + s) * l->chunk;
}

size_t xnic_coll_off_ag_out(const struct xnic_coll_layout *l, unsigned int s)
{
	return (3 * (size_t)l->npeers * l->slots + s) * l->chunk;
}

/* ---------------------------- bfloat16 ----------------------------- */

float xnic_bf16_to_f32(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

uint16_t xnic_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffU) > 0x7f800000U)
		return (uint16_t)((u >> 16) | 0x40U);	/* NaN: keep it quiet */
	/* Add just under half an ulp, plus one when the kept lsb is odd. */
	u += 0x7fffU + ((u >> 16) & 1U);
	return (uint16_t)(u >> 16);
}

/* ---------------------------- kernels ------------------------------ */

/* Elements per block: the accumulator stays in L1, the loops vectorize. */
#define XNIC_COLL_BLOCK	512

void xnic_coll_reduce_f32(float *dst, const float *const *src,
			  unsigned int nsrc, size_t n)
{
	float acc[XNIC_COLL_BLOCK];
	size_t i, k, m;
	unsigned int s;

	if (!nsrc) {
		memset(dst, 0, n * sizeof(*dst));
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < XNIC_COLL_BLOCK ? n - i : XNIC_COLL_BLOCK;
		memcpy(acc, src[0] + i, m * sizeof(*acc));
		for (s = 1; s < nsrc; s++) {
			const float *in = src[s] + i;

			for (k = 0; k < m; k++)
				acc[k] += in[k];
		}
		memcpy(dst + i, acc, m * sizeof(*acc));
	}
}

void xnic_coll_reduce_bf16(uint16_t *dst, const uint16_t *const *src,
			   unsigned int nsrc, size_t n)
{
	float acc[XNIC_COLL_BLOCK];
	size_t i, k, m;
	unsigned int s;

	if (!nsrc) {
		memset(dst, 0, n * sizeof(*dst));
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < XNIC_COLL_BLOCK ? n - i : XNIC_COLL_BLOCK;
		for (k = 0; k < m; k++)
			acc[k] = xnic_bf16_to_f32(src[0][i + k]);
		for (s = 1; s < nsrc; s++) {
			const uint16_t *in = src[s] + i;

			for (k = 0; k < m; k++)
				acc[k] += xnic_bf16_to_f32(in[k]);
		}
		for (k = 0; k < m; k++)
			dst[i + k] = xnic_f32_to_bf16(acc[k]);
	}
}
