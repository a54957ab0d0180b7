/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxniccoll - the pure logic of the collectives, with no device and no
 * system call: shard boundaries, the chunk schedule, the immediate-data
 * encoding, credit arithmetic, the scratch region layout, bfloat16
 * conversion and the reduction kernels. selftests/unit/coll_test.c tests
 * all of it on the host.
 */
#ifndef XNIC_COLL_LOGIC_H
#define XNIC_COLL_LOGIC_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------- schedule ----------------------------- */

/**
 * xnic_coll_shard() - the part of a vector a rank owns
 * @count: elements of the vector
 * @nranks: number of ranks (> 0)
 * @r: the rank (< @nranks)
 * @off: first element of the shard
 * @len: elements of the shard
 *
 * The shards are contiguous and in rank order; the first @count % @nranks
 * ranks get one element more than the others, so lengths differ by at
 * most one and a rank >= @count owns nothing.
 */
void xnic_coll_shard(size_t count, unsigned int nranks, unsigned int r,
		     size_t *off, size_t *len);

/**
 * xnic_coll_nchunks() - how many chunks a shard is sent in
 * @len: elements of the shard
 * @chunk_elems: elements per chunk (> 0)
 * Return: ceil(@len / @chunk_elems); 0 for an empty shard.
 */
size_t xnic_coll_nchunks(size_t len, size_t chunk_elems);

/**
 * xnic_coll_chunk_len() - elements of one chunk of a shard
 * @len: elements of the shard
 * @chunk_elems: elements per chunk (> 0)
 * @c: chunk index (< xnic_coll_nchunks())
 *
 * Chunk @c starts at element @c * @chunk_elems of the shard; every chunk
 * but the last is full.
 * Return: the number of elements.
 */
size_t xnic_coll_chunk_len(size_t len, size_t chunk_elems, size_t c);

/* ---------------------------- topology ---------------------------- */

/**
 * xnic_coll_appliances() - group ranks into appliances
 * @n: number of ranks (> 0)
 * @mesh: @n x @n flags, row major: @mesh[r * @n + s] nonzero when rank r
 *	reaches rank s's node over a mesh link (a member link on which that
 *	node alone is heard); the diagonal is ignored
 * @appl: filled with @n appliance indexes; appliances are numbered in the
 *	order of their lowest rank
 *
 * Ranks share an appliance when they reach each other over the mesh: an
 * appliance is a full mesh, so the relation must be symmetric and every
 * group a clique (r~s and s~t imply r~t). A rank no other reaches is an
 * appliance of its own.
 * Return: the number of appliances, or -1 (@appl then undefined) when the
 * flags do not form such groups (a mesh link down on one side, a partial
 * mesh, a miswire).
 */
int xnic_coll_appliances(unsigned int n, const uint8_t *mesh, int *appl);

/**
 * xnic_coll_hier_ok() - whether appliances suit the hierarchical all-reduce
 * @n: number of ranks
 * @appl: each rank's appliance (from xnic_coll_appliances())
 * @nappl: number of appliances
 *
 * Return: the ranks per appliance when there are at least two appliances,
 * each of the same number (>= 2) of ranks; 0 otherwise (one appliance,
 * one rank each, or unequal sizes: the flat algorithm then runs).
 */
unsigned int xnic_coll_hier_ok(unsigned int n, const int *appl, int nappl);

/* ------------------------- immediate data -------------------------- */
/*
 * Every message is an RDMA WRITE with immediate; the 32-bit immediate
 * (host order here, network order on the wire) says what landed:
 *
 *   [31:30] kind    XNIC_COLL_K_*
 *   [29:22] sender  rank of the writer
 *   data (RS, COPY) and CTRL:
 *   [21:18] seq     the collective's sequence number, low 4 bits
 *   [17:0]  index   chunk index (data) or barrier number (CTRL), low bits
 *   CREDIT:
 *   [21]    channel XNIC_COLL_CH_RS or XNIC_COLL_CH_COPY
 *   [20:0]  count   messages of that channel consumed so far, low 21 bits
 */
#define XNIC_COLL_K_RS		0U	/* reduce-scatter part (step 1) */
#define XNIC_COLL_K_COPY	1U	/* all-gather or broadcast chunk */
#define XNIC_COLL_K_CREDIT	2U	/* slots freed (no data) */
#define XNIC_COLL_K_CTRL	3U	/* barrier (no data) */

#define XNIC_COLL_CH_RS		0U
#define XNIC_COLL_CH_COPY	1U

#define XNIC_COLL_SEQ_MASK	0xfU
#define XNIC_COLL_IDX_MASK	0x3ffffU
#define XNIC_COLL_CREDIT_MASK	0x1fffffU

/**
 * struct xnic_coll_imm - a decoded immediate
 * @kind: XNIC_COLL_K_*
 * @sender: rank of the writer
 * @seq: sequence number, low bits (data, CTRL)
 * @idx: chunk index or barrier number, low bits (data, CTRL)
 * @channel: XNIC_COLL_CH_* (CREDIT)
 * @count: consumed count, low bits (CREDIT)
 */
struct xnic_coll_imm {
	unsigned int kind;
	unsigned int sender;
	unsigned int seq;
	uint32_t idx;
	unsigned int channel;
	uint32_t count;
};

/**
 * xnic_coll_imm_data() - immediate of a data or CTRL message
 * @kind: XNIC_COLL_K_RS, _COPY or _CTRL
 * @sender: writer's rank (< XNIC_COLL_MAX_RANKS)
 * @seq: collective sequence number (low bits kept)
 * @idx: chunk index or barrier number (low bits kept)
 * Return: the immediate, host order.
 */
uint32_t xnic_coll_imm_data(unsigned int kind, unsigned int sender,
			    unsigned int seq, uint64_t idx);

/**
 * xnic_coll_imm_credit() - immediate of a CREDIT message
 * @sender: writer's rank
 * @channel: XNIC_COLL_CH_*
 * @consumed: messages of @channel consumed so far (low bits kept)
 * Return: the immediate, host order.
 */
uint32_t xnic_coll_imm_credit(unsigned int sender, unsigned int channel,
			      uint64_t consumed);

/**
 * xnic_coll_imm_decode() - split an immediate into its fields
 * @imm: immediate, host order
 * @out: filled (the fields of the other kinds are zero)
 */
void xnic_coll_imm_decode(uint32_t imm, struct xnic_coll_imm *out);

/**
 * xnic_coll_credit_update() - extend a credit count from its low bits
 * @known: the full count known so far
 * @low: the low 21 bits of the new count (from a CREDIT immediate)
 * @limit: the largest possible count (messages posted)
 *
 * Credits never go back and never pass what was posted; the count the
 * low bits stand for is the first one >= @known.
 * Return: the new full count, or -1 (as uint64_t) when it would pass
 * @limit (a corrupt or misdirected credit).
 */
uint64_t xnic_coll_credit_update(uint64_t known, uint32_t low,
				 uint64_t limit);

/* ---------------------------- region ------------------------------ */

/**
 * struct xnic_coll_layout - the registered scratch region of a rank
 * @chunk: bytes per slot
 * @slots: slots per channel
 * @npeers: number of peers (nranks - 1)
 *
 * In order: RS inboxes [npeers][slots] (peers' reduce-scatter parts land
 * here), COPY inboxes [npeers][slots] (all-gather and broadcast chunks),
 * RS outboxes [npeers][slots] (our parts, staged for sending), AG
 * outboxes [slots] (our reduced chunks, sent to every peer). Peers are
 * numbered by compact index: rank r is peer r for r < me, r - 1 above.
 */
struct xnic_coll_layout {
	size_t chunk;
	unsigned int slots;
	unsigned int npeers;
};

/**
 * xnic_coll_region_size() - bytes of the scratch region
 * @l: layout
 * Return: the size, or 0 when it overflows size_t.
 */
size_t xnic_coll_region_size(const struct xnic_coll_layout *l);

/* Offsets of slot @s of peer @pi's inbox/outbox, or of AG outbox @s. */
size_t xnic_coll_off_rs_in(const struct xnic_coll_layout *l, unsigned int pi,
			   unsigned int s);
size_t xnic_coll_off_cp_in(const struct xnic_coll_layout *l, unsigned int pi,
			   unsigned int s);
size_t xnic_coll_off_rs_out(const struct xnic_coll_layout *l,
			    unsigned int pi, unsigned int s);
size_t xnic_coll_off_ag_out(const struct xnic_coll_layout *l, unsigned int s);

/**
 * xnic_coll_peer_index() - compact index of a peer rank
 * @me: our rank
 * @r: the peer's rank (!= @me)
 * Return: @r for @r < @me, else @r - 1.
 */
static inline unsigned int xnic_coll_peer_index(unsigned int me,
						unsigned int r)
{
	return r < me ? r : r - 1;
}

/* ---------------------------- bfloat16 ----------------------------- */

/**
 * xnic_bf16_to_f32() - widen a bfloat16 (exact)
 * @h: bfloat16 bits
 * Return: the float.
 */
float xnic_bf16_to_f32(uint16_t h);

/**
 * xnic_f32_to_bf16() - narrow a float to bfloat16, round to nearest even
 * @f: the float
 *
 * Ties go to the even bfloat16; values beyond the largest bfloat16 round
 * to infinity as IEEE 754 says; a NaN stays a (quiet) NaN with its sign.
 * Return: bfloat16 bits.
 */
uint16_t xnic_f32_to_bf16(float f);

/* ---------------------------- kernels ------------------------------ */

/**
 * xnic_coll_reduce_f32() - dst = src[0] + src[1] + ... in float32
 * @dst: @n floats (may not overlap the sources)
 * @src: @nsrc arrays of @n floats, summed left to right in this order
 * @nsrc: number of sources (0 writes zeros)
 * @n: elements
 */
void xnic_coll_reduce_f32(float *dst, const float *const *src,
			  unsigned int nsrc, size_t n);

/**
 * xnic_coll_reduce_bf16() - dst = bf16(f32(src[0]) + f32(src[1]) + ...)
 * @dst: @n bfloat16s (may not overlap the sources)
 * @src: @nsrc arrays of @n bfloat16s, summed left to right in float32
 * @nsrc: number of sources (0 writes zeros)
 * @n: elements
 *
 * One rounding per element, at the end.
 */
void xnic_coll_reduce_bf16(uint16_t *dst, const uint16_t *const *src,
			   unsigned int nsrc, size_t n);

#endif /* XNIC_COLL_LOGIC_H */
