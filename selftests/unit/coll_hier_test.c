// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The hierarchical all-reduce (coll/ops.c, coll/hier.c) end to end on the
 * host, on the simulated fabric of coll_sim.h; each rank a thread, its
 * appliance given by the mesh links the fake kernel reports.
 *
 * Every result is compared byte for byte with a reference that sums in
 * the documented order (flat: rank order; hierarchical: rank order inside
 * each appliance, rounded to the data type, then appliance order) on
 * inputs of mixed magnitudes, where the order changes the bits: each
 * topology also checks that the other order's reference differs, so a
 * wrong algorithm cannot pass. Covers 2x3, 3x2, 2x4, appliances whose
 * ranks interleave, 1xN (flat), unequal appliances (flat), a kernel that
 * cannot say (flat), forcing either algorithm; counts 1, fewer than the
 * ranks, primes, larger than a chunk; float32 and bfloat16; in place;
 * back-to-back collectives of mixed kinds without barriers; two
 * communicators in flight at once. Runs under ASan and UBSan.
 */
#include <math.h>

#include "kselftest_harness.h"
#include "coll_sim.h"

#define MAXR	8

struct topo {
	int nranks;
	const int *appl;	/* NULL: no mesh links */
	int algo;		/* cfg.algo */
	bool mesh_fail;		/* the kernel cannot be asked */
	bool death;		/* the last rank leaves before an all-reduce */
	bool large;		/* 1 Mi f32 and 1000003 bf16 in place, only */
	size_t chunk;
};

struct hrank {
	SIM_RANK_HEAD;
	const struct topo *t;
	int init_ret;
	int ret;
	int algo;
	int nappl;
	uint64_t bad;		/* elements not bit-identical */
	uint64_t order_matters;	/* elements where flat and hier differ */
	int elapsed_ms;
	char msg[XNIC_COLL_ERRLEN];
};

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Mixed magnitudes (2^-8 .. 2^7), 24 significant bits: sums round. */
static float input(int rank, size_t i, unsigned int salt)
{
	uint64_t h = mix((uint64_t)rank << 48 ^ (uint64_t)salt << 32 ^ i);

	return ldexpf((float)((int64_t)(h >> 40) - 8388608) / 8388608.0f,
		      (int)(h % 16) - 8);
}

static uint16_t input_bf16(int rank, size_t i, unsigned int salt)
{
	float f = input(rank, i, salt);
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16);	/* exactly representable */
}

static void fill(void *buf, int dtype, size_t count, int rank,
		 unsigned int salt)
{
	size_t i;

	for (i = 0; i < count; i++) {
		if (dtype == XNIC_COLL_FLOAT32)
			((float *)buf)[i] = input(rank, i, salt);
		else
			((uint16_t *)buf)[i] = input_bf16(rank, i, salt);
	}
}

static float in_f(int dtype, int rank, size_t i, unsigned int salt)
{
	return dtype == XNIC_COLL_FLOAT32 ? input(rank, i, salt) :
	       xnic_bf16_to_f32(input_bf16(rank, i, salt));
}

/* Round to the data type (float32: nothing to do). */
static float to_type(int dtype, float f)
{
	return dtype == XNIC_COLL_FLOAT32 ? f :
	       xnic_bf16_to_f32(xnic_f32_to_bf16(f));
}

/*
 * Element @i of the result, as the documented order makes it: @appl NULL
 * is flat (rank order); else each appliance's ranks in rank order, the
 * partial rounded, then the appliances in the order of their lowest rank.
 */
static float want(int dtype, int n, const int *appl, size_t i,
		  unsigned int salt)
{
	float tot = 0, part;
	bool seen[MAXR] = { false }, first = true;
	int r, s;

	if (!appl) {
		tot = in_f(dtype, 0, i, salt);
		for (r = 1; r < n; r++)
			tot += in_f(dtype, r, i, salt);
		return to_type(dtype, tot);
	}
	for (r = 0; r < n; r++) {
		if (seen[r])
			continue;
		part = in_f(dtype, r, i, salt);
		seen[r] = true;
		for (s = r + 1; s < n; s++) {
			if (appl[s] == appl[r]) {
				part += in_f(dtype, s, i, salt);
				seen[s] = true;
			}
		}
		part = to_type(dtype, part);
		tot = first ? part : tot + part;
		first = false;
	}
	return to_type(dtype, tot);
}

static int note(struct hrank *a, int err, struct xnic_comm *c)
{
	if (err && !a->ret) {
		a->ret = err;
		snprintf(a->msg, sizeof(a->msg), "%s", xnic_comm_strerror(c));
	}
	return err;
}

/* Compare @buf with the reference of the algorithm @c runs. */
static void check(struct hrank *a, struct xnic_comm *c, const void *buf,
		  int dtype, size_t count, unsigned int salt)
{
	bool hier = xnic_comm_algo(c, NULL) == XNIC_COLL_ALGO_HIER;
	const int *appl = a->t->appl;
	size_t i;

	for (i = 0; i < count; i++) {
		float w = want(dtype, a->t->nranks, hier ? appl : NULL, i, salt);
		float got;

		got = dtype == XNIC_COLL_FLOAT32 ? ((const float *)buf)[i] :
		      xnic_bf16_to_f32(((const uint16_t *)buf)[i]);
		if (memcmp(&got, &w, sizeof(w)))
			a->bad++;
		/* the other algorithm's order */
		if (appl &&
		    want(dtype, a->t->nranks, hier ? NULL : appl, i, salt) != w)
			a->order_matters++;
	}
}

static int one(struct hrank *a, struct xnic_comm *c, size_t count, int dtype,
	       bool inplace, unsigned int salt)
{
	size_t es = xnic_coll_dtype_size(dtype);
	void *s = malloc(count * es + 1), *d = inplace ? s : malloc(count * es + 1);
	int err;

	if (!s || !d)
		return note(a, -ENOMEM, NULL);
	fill(s, dtype, count, a->rank, salt);
	if (!inplace)
		memset(d, 0x7f, count * es);
	err = xnic_allreduce(c, s, d, count, dtype, XNIC_COLL_SUM);
	if (!err)
		check(a, c, d, dtype, count, salt);
	if (!inplace)
		free(d);
	free(s);
	return note(a, err, c);
}

/* Two communicators, two all-reduces queued on each, all in flight. */
static void concurrent(struct hrank *a, struct xnic_comm *c0,
		       struct xnic_comm *c1)
{
	static const size_t counts[4] = { 1009, 3, 4099, 1 };
	struct xnic_coll_req *q[4] = { NULL };
	float *b[4] = { NULL };
	int k;

	for (k = 0; k < 4; k++) {
		b[k] = malloc(counts[k] * sizeof(float));
		if (!b[k]) {
			note(a, -ENOMEM, NULL);
			goto out;
		}
		fill(b[k], XNIC_COLL_FLOAT32, counts[k], a->rank, 40 + k);
		if (note(a, xnic_allreduce_start(k & 1 ? c1 : c0, b[k], b[k],
						 counts[k], XNIC_COLL_FLOAT32,
						 XNIC_COLL_SUM, &q[k]),
			 k & 1 ? c1 : c0))
			goto out;
	}
	if (note(a, xnic_coll_waitall(q, 4), NULL))
		goto out;
	for (k = 0; k < 4; k++)
		check(a, k & 1 ? c1 : c0, b[k], XNIC_COLL_FLOAT32, counts[k],
		      40 + k);
out:
	for (k = 0; k < 4; k++) {
		if (q[k])
			xnic_coll_req_free(q[k]);
		free(b[k]);
	}
}

static void *hrank_main(void *arg)
{
	static const size_t counts[] = { 1, 2, 5, 7, 13, 1009, 4099, 10007 };
	struct hrank *a = arg;
	struct mem_bs mb = {
		.bs.ops = &mem_bs_ops, .sh = a->sh, .rank = a->rank,
	};
	struct xnic_comm_cfg cfg = {
		.rank = a->rank, .nranks = a->t->nranks,
		.bootstrap = &mb.bs, .chunk_bytes = a->t->chunk, .slots = 2,
		.timeout_ms = 20000, .algo = a->t->algo,
	};
	struct xnic_comm *c = NULL, *c2 = NULL;
	unsigned int i, salt = 0;
	unsigned char bc[333];
	char dev[16];
	size_t j;
	int dt;

	snprintf(dev, sizeof(dev), "sim%d", a->rank);
	cfg.device = dev;
	a->init_ret = xnic_comm_init(&c, &cfg);
	if (!a->init_ret)
		a->init_ret = xnic_comm_init(&c2, &cfg);
	if (a->init_ret) {
		snprintf(a->msg, sizeof(a->msg), "%s", xnic_comm_strerror(NULL));
		goto out;
	}
	a->algo = xnic_comm_algo(c, &a->nappl);
	if (a->t->large) {
		one(a, c, 1 << 20, XNIC_COLL_FLOAT32, false, 1);
		if (!a->ret)
			one(a, c, 1000003, XNIC_COLL_BFLOAT16, true, 2);
		goto out;
	}
	if (a->t->death) {
		uint64_t t0;

		note(a, xnic_barrier(c), c);
		if (a->ret || a->rank == a->t->nranks - 1)
			goto out;
		t0 = xnic_coll_now_ns();
		one(a, c, 4099, XNIC_COLL_FLOAT32, false, 1);
		a->elapsed_ms = (int)((xnic_coll_now_ns() - t0) / 1000000);
		goto out;
	}
	/* Back to back, no barriers: fast ranks run phases ahead. */
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]) && !a->ret; i++) {
		for (dt = 0; dt < 2 && !a->ret; dt++)
			one(a, c, counts[i], dt, (i + dt) & 1, salt++);
		if (i == 3 && !a->ret) {
			for (j = 0; j < sizeof(bc); j++)
				bc[j] = a->rank == 1 ? (unsigned char)mix(j) : 0;
			note(a, xnic_broadcast(c, bc, sizeof(bc), 1), c);
			for (j = 0; j < sizeof(bc) && !a->ret; j++)
				a->bad += bc[j] != (unsigned char)mix(j);
		}
	}
	/* Fewer elements than ranks. */
	if (!a->ret)
		one(a, c, (size_t)a->t->nranks - 1, XNIC_COLL_BFLOAT16, false,
		    salt++);
	if (!a->ret)
		concurrent(a, c, c2);
	if (!a->ret)
		note(a, xnic_barrier(c), c);
	if (!a->ret)
		note(a, xnic_barrier(c2), c2);
out:
	xnic_comm_destroy(c2);
	xnic_comm_destroy(c);
	return NULL;
}

static void hrun(struct __test_metadata *_metadata, const struct topo *t,
		 struct hrank *args)
{
	int r;

	sim_appl = t->appl;
	sim_ndev = t->nranks;
	sim_mesh_fail = t->mesh_fail;
	for (r = 0; r < t->nranks; r++)
		args[r] = (struct hrank){ .t = t };
	ASSERT_EQ(0, sim_run(t->nranks, hrank_main, args, sizeof(*args)));
	ASSERT_EQ(0, atomic_load(&sim_errors));
}

/* Run @t; every rank must succeed with @algo on @nappl appliances. */
static void expect(struct __test_metadata *_metadata, const struct topo *t,
		   int algo, int nappl)
{
	struct hrank args[MAXR];
	uint64_t differ = 0;
	int r;

	hrun(_metadata, t, args);
	for (r = 0; r < t->nranks; r++) {
		if (args[r].init_ret || args[r].ret || args[r].bad)
			TH_LOG("%d ranks: rank %d: init %d ret %d bad %" PRIu64 ": %s",
			       t->nranks, r, args[r].init_ret, args[r].ret,
			       args[r].bad, args[r].msg);
		ASSERT_EQ(0, args[r].init_ret);
		ASSERT_EQ(0, args[r].ret);
		ASSERT_EQ(0, args[r].bad);
		ASSERT_EQ(algo, args[r].algo);
		ASSERT_EQ(nappl, args[r].nappl);
		differ += args[r].order_matters;
	}
	/* The inputs tell the orders apart: a wrong one would show. */
	if (t->appl && algo == XNIC_COLL_ALGO_HIER)
		ASSERT_GT(differ, 1000);
}

static const int a2x3[] = { 0, 0, 0, 1, 1, 1 };
static const int a3x2[] = { 0, 0, 1, 1, 2, 2 };
static const int a2x4[] = { 0, 0, 0, 0, 1, 1, 1, 1 };
static const int a2x3_interleaved[] = { 1, 0, 1, 0, 1, 0 };
static const int a1x4[] = { 0, 0, 0, 0 };
static const int a3_2[] = { 0, 0, 0, 1, 1 };

TEST(hier_2x3)
{
	struct topo t = { .nranks = 6, .appl = a2x3, .chunk = 256 };

	expect(_metadata, &t, XNIC_COLL_ALGO_HIER, 2);
}

TEST(hier_large_default_chunk)
{
	struct topo t = { .nranks = 6, .appl = a2x3, .large = true };

	expect(_metadata, &t, XNIC_COLL_ALGO_HIER, 2);
}

TEST(hier_3x2)
{
	struct topo t = { .nranks = 6, .appl = a3x2, .chunk = 4096 };

	expect(_metadata, &t, XNIC_COLL_ALGO_HIER, 3);
}

TEST(hier_2x4)
{
	struct topo t = { .nranks = 8, .appl = a2x4, .chunk = 1024 };

	expect(_metadata, &t, XNIC_COLL_ALGO_HIER, 2);
}

TEST(hier_interleaved_ranks)
{
	/* appliance order: that of rank 0's (appliance "1") first */
	struct topo t = { .nranks = 6, .appl = a2x3_interleaved, .chunk = 64 };

	expect(_metadata, &t, XNIC_COLL_ALGO_HIER, 2);
}

TEST(one_appliance_is_flat)
{
	struct topo t = { .nranks = 4, .appl = a1x4, .chunk = 256 };

	expect(_metadata, &t, XNIC_COLL_ALGO_FLAT, 1);
}

TEST(unequal_appliances_are_flat)
{
	struct topo t = { .nranks = 5, .appl = a3_2, .chunk = 256 };

	expect(_metadata, &t, XNIC_COLL_ALGO_FLAT, 2);
}

TEST(no_mesh_or_no_answer_is_flat)
{
	struct topo t = { .nranks = 4, .chunk = 256 };

	expect(_metadata, &t, XNIC_COLL_ALGO_FLAT, 4);
	t.appl = a2x3;
	t.nranks = 6;
	t.mesh_fail = true;
	expect(_metadata, &t, XNIC_COLL_ALGO_FLAT, 0);
}

TEST(forced_flat_on_two_appliances)
{
	struct topo t = { .nranks = 6, .appl = a2x3, .chunk = 256,
			  .algo = XNIC_COLL_ALGO_FLAT };

	expect(_metadata, &t, XNIC_COLL_ALGO_FLAT, 0);
}

TEST(forced_hier_on_one_appliance_fails)
{
	struct topo t = { .nranks = 4, .appl = a1x4, .chunk = 256,
			  .algo = XNIC_COLL_ALGO_HIER };
	struct hrank args[4];
	int r;

	hrun(_metadata, &t, args);
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(-EINVAL, args[r].init_ret);
		EXPECT_NE(NULL, strstr(args[r].msg, "all ranks are on one appliance"));
	}
}

TEST(env_overrides_auto)
{
	struct topo t = { .nranks = 6, .appl = a2x3, .chunk = 256 };
	struct xnic_comm_cfg cfg = { .rank = 0, .nranks = 1 };
	struct xnic_comm *c;

	setenv("XNIC_COLL_ALGO", "flat", 1);
	expect(_metadata, &t, XNIC_COLL_ALGO_FLAT, 0);
	setenv("XNIC_COLL_ALGO", "hierarchical", 1);
	EXPECT_EQ(-EINVAL, xnic_comm_init(&c, &cfg));
	EXPECT_NE(NULL, strstr(xnic_comm_strerror(NULL), "XNIC_COLL_ALGO"));
	unsetenv("XNIC_COLL_ALGO");
	cfg.algo = 7;
	EXPECT_EQ(-EINVAL, xnic_comm_init(&c, &cfg));
}

TEST(dead_rank_fails_every_phase_fast)
{
	/* rank 5: local to 3 and 4, across to 2; 0 and 1 learn of it later */
	struct topo t = { .nranks = 6, .appl = a2x3, .chunk = 256,
			  .death = true };
	struct hrank args[6];
	int r, named = 0;

	hrun(_metadata, &t, args);
	for (r = 0; r < 5; r++) {
		TH_LOG("rank %d: %d after %d ms: %s", r, args[r].ret,
		       args[r].elapsed_ms, args[r].msg);
		EXPECT_EQ(0, args[r].init_ret);
		EXPECT_EQ(XNIC_COLL_ALGO_HIER, args[r].algo);
		EXPECT_EQ(-ECONNRESET, args[r].ret);
		named += strstr(args[r].msg, "rank 5 (node 6) is gone") != NULL;
		/* far below the 20 s timeout (loose: a loaded host) */
		EXPECT_LT(args[r].elapsed_ms, 10000);
	}
	EXPECT_GE(named, 3);
	EXPECT_EQ(0, args[5].ret);
}

TEST_HARNESS_MAIN
