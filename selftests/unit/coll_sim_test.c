// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The collective library (coll/) end to end on the host, on a simulated
 * fabric (coll_sim.h: fake libxnic and CM, an engine thread that plays
 * the kernel). Each rank is a thread. No mesh links: the flat algorithm
 * (coll_hier_test.c covers the hierarchical one).
 *
 * Covers: node counts 1..8, counts that do not divide (1, < N, primes),
 * both data types, in place, tiny chunks and one slot (many credit round
 * trips), back-to-back collectives of mixed kinds without barriers,
 * broadcast from every root, barrier, a rank that fails during set-up
 * (bad device, a failed connect, a death between connects),
 * a rank that never shows up (timeout), ranks that disagree on the count
 * (protocol error), the TCP bootstrap (with stray connections to rank
 * 0's port, and impossible claims), and the non-blocking API: several
 * communicators with all-reduces, broadcasts and barriers in flight at
 * once and queued on each, finished by waitall or by test loops. Runs
 * under ASan and UBSan.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "coll_sim.h"

/* ============================== ranks =============================== */

enum { SC_DATA, SC_MIXED, SC_ABSENT, SC_MISMATCH, SC_BADDEV, SC_CONCURRENT,
       SC_DEATH, SC_STALE, SC_CANCEL, SC_UNWATCHED };

struct scenario {
	int kind;
	int nranks;
	size_t count;
	int dtype;
	bool inplace;
	size_t chunk;
	unsigned int slots;
	int timeout_ms;
	bool tcp;
	uint16_t port;
	size_t max_inflight;
};

struct rank_arg {
	SIM_RANK_HEAD;
	const struct scenario *sc;
	int ret;		/* first error */
	int init_ret;
	int init_ms;		/* how long xnic_comm_init() took */
	int elapsed_ms;
	char msg[XNIC_COLL_ERRLEN];
	uint64_t bad;		/* wrong elements */
};

static uint32_t bits_of_f(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Small integers: every sum is exact in both types. */
static int value(int rank, size_t i, unsigned int salt)
{
	return (int)(mix64((uint64_t)rank << 40 ^ i ^ (uint64_t)salt << 56) %
		     17) - 8;
}

static void fill(void *buf, int dtype, size_t count, int rank,
		 unsigned int salt)
{
	size_t i;

	for (i = 0; i < count; i++) {
		float f = (float)value(rank, i, salt);

		if (dtype == XNIC_COLL_FLOAT32)
			((float *)buf)[i] = f;
		else
			((uint16_t *)buf)[i] = (uint16_t)(bits_of_f(f) >> 16);
	}
}

static uint64_t check(const void *buf, int dtype, size_t count, int nranks,
		      unsigned int salt)
{
	uint64_t bad = 0;
	size_t i;
	int r;

	for (i = 0; i < count; i++) {
		int want = 0;
		float got;

		for (r = 0; r < nranks; r++)
			want += value(r, i, salt);
		got = dtype == XNIC_COLL_FLOAT32 ? ((const float *)buf)[i] :
			xnic_bf16_to_f32(((const uint16_t *)buf)[i]);
		if (got != (float)want)
			bad++;
	}
	return bad;
}

static int note(struct rank_arg *a, int err, struct xnic_comm *c)
{
	if (err && !a->ret) {
		a->ret = err;
		snprintf(a->msg, sizeof(a->msg), "%s", xnic_comm_strerror(c));
	}
	return err;
}

/* One all-reduce of @count elements, checked. */
static int one_allreduce(struct rank_arg *a, struct xnic_comm *c,
			 size_t count, int dtype, bool inplace,
			 unsigned int salt)
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
		a->bad += check(d, dtype, count, a->sc->nranks, salt);
	if (!inplace)
		free(d);
	free(s);
	return note(a, err, c);
}

static int one_bcast(struct rank_arg *a, struct xnic_comm *c, size_t bytes,
		     int root)
{
	unsigned char *b = malloc(bytes + 1);
	size_t i;
	int err;

	if (!b)
		return note(a, -ENOMEM, NULL);
	for (i = 0; i < bytes; i++)
		b[i] = a->rank == root ? (unsigned char)mix64(i + (size_t)root) :
					 0xee;
	err = xnic_broadcast(c, b, bytes, root);
	for (i = 0; !err && i < bytes; i++)
		if (b[i] != (unsigned char)mix64(i + (size_t)root))
			a->bad++;
	free(b);
	return note(a, err, c);
}

#define NB_COMMS	3
#define NB_PER_COMM	3

/*
 * The non-blocking API: NB_COMMS communicators, NB_PER_COMM all-reduces
 * queued on each (odd counts: 1, fewer than ranks, primes; both types;
 * in place and not), a broadcast and a barrier behind them; finished by
 * waitall (@how NB_WAITALL), by calling test on each in turn (NB_TEST) or
 * by waitany, freeing each as it finishes (NB_WAITANY).
 */
enum { NB_WAITALL, NB_TEST, NB_WAITANY };

static void nb_round(struct rank_arg *a, struct xnic_comm **comms, int how)
{
	static const size_t counts[] = { 1, 2, 1009, 3, 10007, 7, 4099, 5, 13 };
	struct xnic_coll_req *reqs[NB_COMMS * (NB_PER_COMM + 2)] = { NULL };
	void *bufs[NB_COMMS * NB_PER_COMM] = { NULL };
	unsigned char bc[NB_COMMS][777];
	int i, k, n = 0, err, left, dt;
	size_t cnt, j;

	for (k = 0; k < NB_COMMS; k++) {
		for (i = 0; i < NB_PER_COMM; i++) {
			int b = k * NB_PER_COMM + i;

			dt = b & 1;
			cnt = counts[b];
			if (cnt == 2)
				cnt = (size_t)a->sc->nranks - 1;
			bufs[b] = malloc(cnt * 4 + 4);
			if (!bufs[b]) {
				note(a, -ENOMEM, NULL);
				goto out;
			}
			fill(bufs[b], dt, cnt, a->rank, (unsigned int)b);
			err = xnic_allreduce_start(comms[k], bufs[b], bufs[b],
						   cnt, dt, XNIC_COLL_SUM,
						   &reqs[n]);
			if (note(a, err, comms[k]))
				goto out;
			n++;
		}
		for (j = 0; j < sizeof(bc[k]); j++)
			bc[k][j] = a->rank == k % a->sc->nranks ?
				   (unsigned char)mix64(j + (size_t)k) : 0xee;
		err = xnic_broadcast_start(comms[k], bc[k], sizeof(bc[k]),
					   k % a->sc->nranks, &reqs[n]);
		if (note(a, err, comms[k]))
			goto out;
		n++;
		err = xnic_barrier_start(comms[k], &reqs[n]);
		if (note(a, err, comms[k]))
			goto out;
		n++;
	}
	if (how == NB_WAITANY) {
		for (left = n; left > 0; left--) {
			i = xnic_coll_waitany(reqs, n, 60000);
			if (i < 0) {
				note(a, i, NULL);
				goto out;
			}
			err = xnic_coll_test(reqs[i]);
			if (err != 1) {
				note(a, err ? err : -EPROTO, reqs[i]->comm);
				goto out;
			}
			xnic_coll_req_free(reqs[i]);
			reqs[i] = NULL;
		}
		if (xnic_coll_waitany(reqs, n, 0) != -EAGAIN)
			a->bad++;	/* all done and freed */
	} else if (how == NB_TEST) {
		do {
			left = 0;
			for (i = 0; i < n; i++) {
				err = xnic_coll_test(reqs[i]);
				if (err < 0) {
					note(a, err, reqs[i]->comm);
					goto out;
				}
				left += !err;
			}
		} while (left);
		for (i = 0; i < n; i++)
			xnic_coll_req_free(reqs[i]);
	} else {
		note(a, xnic_coll_waitall(reqs, n), NULL);
	}
	n = 0;
	for (k = 0; !a->ret && k < NB_COMMS; k++) {
		for (i = 0; i < NB_PER_COMM; i++) {
			int b = k * NB_PER_COMM + i;

			cnt = counts[b] == 2 ? (size_t)a->sc->nranks - 1 :
					       counts[b];
			a->bad += check(bufs[b], b & 1, cnt, a->sc->nranks,
					(unsigned int)b);
		}
		for (j = 0; j < sizeof(bc[k]); j++)
			if (bc[k][j] != (unsigned char)mix64(j + (size_t)k))
				a->bad++;
	}
out:
	for (i = 0; i < n; i++)
		xnic_coll_req_free(reqs[i]);
	for (i = 0; i < NB_COMMS * NB_PER_COMM; i++)
		free(bufs[i]);
}

static void nb_main(struct rank_arg *a, struct xnic_comm *c,
		    struct xnic_comm_cfg *cfg)
{
	struct xnic_comm *comms[NB_COMMS] = { c };
	int k;

	for (k = 1; k < NB_COMMS; k++) {
		a->init_ret = xnic_comm_init(&comms[k], cfg);
		if (a->init_ret) {
			snprintf(a->msg, sizeof(a->msg), "%s",
				 xnic_comm_strerror(NULL));
			goto out;
		}
	}
	nb_round(a, comms, NB_WAITALL);
	if (!a->ret)
		nb_round(a, comms, NB_TEST);
	if (!a->ret)
		nb_round(a, comms, NB_WAITANY);
out:
	for (k = 1; k < NB_COMMS; k++)
		xnic_comm_destroy(comms[k]);
}

/*
 * The last rank leaves (destroys its communicator, as a dying process's
 * QPs are destroyed) while the others are in an all-reduce, queued
 * behind another; they must fail at once naming it, and so must the
 * collective after.
 */
static void death_main(struct rank_arg *a, struct xnic_comm *c)
{
	struct xnic_coll_req *q[2];
	float x[1000];
	uint64_t t0;
	int err;

	note(a, xnic_barrier(c), c);
	if (a->ret || a->rank == a->sc->nranks - 1)
		return;		/* rank_main destroys it */
	fill(x, XNIC_COLL_FLOAT32, 1000, a->rank, 1);
	t0 = xnic_coll_now_ns();
	if (note(a, xnic_allreduce_start(c, x, x, 1000, XNIC_COLL_FLOAT32,
					 XNIC_COLL_SUM, &q[0]), c) ||
	    note(a, xnic_barrier_start(c, &q[1]), c))
		return;
	err = xnic_coll_waitall(q, 2);
	a->elapsed_ms = (int)((xnic_coll_now_ns() - t0) / 1000000);
	note(a, err, c);
	if (xnic_barrier(c) != err)
		a->bad++;	/* the failure sticks */
}

static void *rank_main(void *arg)
{
	struct rank_arg *a = arg;
	const struct scenario *sc = a->sc;
	struct mem_bs mb = {
		.bs.ops = &mem_bs_ops, .sh = a->sh, .rank = a->rank,
	};
	struct xnic_bootstrap *bs = &mb.bs;
	struct xnic_comm_cfg cfg = {
		.rank = a->rank,
		.nranks = sc->nranks,
		.chunk_bytes = sc->chunk,
		.slots = sc->slots,
		.timeout_ms = sc->timeout_ms ? sc->timeout_ms : 20000,
		.max_inflight = sc->max_inflight,
	};
	struct xnic_comm *c = NULL;
	char dev[32];
	uint64_t t0;
	int err, k;

	snprintf(dev, sizeof(dev), "sim%d", a->rank);
	if (sc->kind == SC_BADDEV && a->rank == 1)
		snprintf(dev, sizeof(dev), "missing");
	cfg.device = dev;
	if (sc->tcp) {
		err = xnic_bootstrap_tcp(a->rank, sc->nranks, NULL, sc->port,
					 5000, &bs);
		if (err) {
			snprintf(a->msg, sizeof(a->msg), "%s",
				 xnic_comm_strerror(NULL));
			a->init_ret = err;
			return NULL;
		}
	}
	cfg.bootstrap = bs;
	t0 = xnic_coll_now_ns();
	a->init_ret = xnic_comm_init(&c, &cfg);
	a->init_ms = (int)((xnic_coll_now_ns() - t0) / 1000000);
	if (sc->tcp)
		xnic_bootstrap_close(bs);
	if (a->init_ret) {
		snprintf(a->msg, sizeof(a->msg), "%s", xnic_comm_strerror(NULL));
		return NULL;
	}
	switch (sc->kind) {
	case SC_DATA:
		one_allreduce(a, c, sc->count, sc->dtype, sc->inplace, 1);
		if (!a->ret)
			note(a, xnic_barrier(c), c);
		break;
	case SC_MIXED:
		/* no barriers between: fast ranks run ahead */
		for (k = 0; k < 3 && !a->ret; k++) {
			one_allreduce(a, c, sc->count + (size_t)k * 7, k & 1,
				      k == 1, (unsigned int)k);
			if (!a->ret)
				one_bcast(a, c, 1000 + (size_t)k,
					  k % sc->nranks);
			if (!a->ret)
				one_allreduce(a, c, 1 + (size_t)k,
					      XNIC_COLL_FLOAT32, false, 9);
			if (!a->ret && k == 1)
				note(a, xnic_barrier(c), c);
			if (!a->ret)
				one_bcast(a, c, 3, sc->nranks - 1);
		}
		if (!a->ret)
			note(a, xnic_barrier(c), c);
		break;
	case SC_ABSENT:
		if (a->rank == 0) {
			one_allreduce(a, c, sc->count, sc->dtype, false, 1);
			/* the failure sticks */
			err = xnic_barrier(c);
			if (err != a->ret)
				a->bad++;
		} else {
			usleep((useconds_t)sc->timeout_ms * 1500);
		}
		break;
	case SC_MISMATCH:
		one_allreduce(a, c, sc->count + (size_t)a->rank, sc->dtype,
			      false, 1);
		break;
	case SC_CONCURRENT:
		nb_main(a, c, &cfg);
		break;
	case SC_DEATH:
		death_main(a, c);
		break;
	case SC_UNWATCHED: {
		/*
		 * Rank 0 queues two all-reduces; the second begins as the
		 * first ends, and rank 0, busy elsewhere, does not look at it
		 * for 3 timeouts; rank 1 joins it 150 ms after rank 0 looks
		 * again. No timeout: the time rank 0 did not look is not the
		 * peers' to answer for.
		 */
		struct xnic_coll_req *q[2] = { NULL, NULL };
		float x[2][10];
		int i, k;

		for (i = 0; i < 20; i++)
			x[i / 10][i % 10] = (float)(a->rank + 1);
		if (a->rank == 0) {
			for (k = 0; k < 2 && !a->ret; k++)
				a->ret = xnic_allreduce_start(c, x[k], x[k], 10,
							      XNIC_COLL_FLOAT32,
							      XNIC_COLL_SUM,
							      &q[k]);
			if (!a->ret)
				a->ret = xnic_coll_wait(q[0]);	/* frees it */
			/* Its own writes complete: looked at meanwhile. */
			for (i = 0; i < 100 && !a->ret; i++) {
				a->ret = xnic_coll_test(q[1]);
				usleep(1000);
			}
			if (!a->ret) {
				usleep((useconds_t)sc->timeout_ms * 3000);
				a->ret = xnic_coll_wait(q[1]);
				q[1] = NULL;
			}
			xnic_coll_req_free(q[1]);
		} else {
			a->ret = xnic_allreduce(c, x[0], x[0], 10,
						XNIC_COLL_FLOAT32, XNIC_COLL_SUM);
			usleep((useconds_t)sc->timeout_ms * 3000 + 150000);
			if (!a->ret)
				a->ret = xnic_allreduce(c, x[1], x[1], 10,
							XNIC_COLL_FLOAT32,
							XNIC_COLL_SUM);
		}
		snprintf(a->msg, sizeof(a->msg), "%s", xnic_comm_strerror(c));
		for (i = 0; i < 20 && !a->ret; i++)
			a->bad += x[i / 10][i % 10] != 3.0f;
		break;
	}
	case SC_STALE:
	case SC_CANCEL:
		if (a->rank == 0) {
			struct xnic_coll_req *q;
			float x[10] = { 0 };

			/*
			 * Rank 1 never joins. STALE: the request fails, then
			 * outlives c; CANCEL: c goes while it is unfinished.
			 */
			a->ret = xnic_allreduce_start(c, x, x, 10,
						      XNIC_COLL_FLOAT32,
						      XNIC_COLL_SUM, &q);
			if (a->ret)
				break;
			while (sc->kind == SC_STALE && !(err = xnic_coll_test(q)))
				usleep(1000);
			xnic_comm_destroy(c);
			c = NULL;
			a->ret = xnic_coll_wait(q);
			if (sc->kind == SC_STALE && a->ret != err)
				a->bad++;
			snprintf(a->msg, sizeof(a->msg), "%s",
				 xnic_comm_strerror(NULL));
		} else {
			usleep((useconds_t)sc->timeout_ms * 1500);
		}
		break;
	}
	xnic_comm_destroy(c);
	return NULL;
}

/* Run a scenario: the engine and one thread per rank. */
static void run(struct __test_metadata *_metadata, const struct scenario *sc,
		struct rank_arg *args)
{
	int r;

	for (r = 0; r < sc->nranks; r++)
		args[r] = (struct rank_arg){ .sc = sc };
	ASSERT_EQ(0, sim_run(sc->nranks, rank_main, args, sizeof(*args)));
}

static void run_data_cap(struct __test_metadata *_metadata, int kind, int n,
			 size_t count, int dtype, bool inplace, size_t chunk,
			 unsigned int slots, size_t max_inflight)
{
	struct scenario sc = {
		.kind = kind, .nranks = n, .count = count, .dtype = dtype,
		.inplace = inplace, .chunk = chunk, .slots = slots,
		.max_inflight = max_inflight,
	};
	struct rank_arg args[16];
	int r;

	run(_metadata, &sc, args);
	for (r = 0; r < n; r++) {
		if (args[r].init_ret || args[r].ret || args[r].bad)
			TH_LOG("N %d count %zu dtype %d inplace %d chunk %zu slots %u: rank %d: init %d ret %d bad %" PRIu64 ": %s",
			       n, count, dtype, inplace, chunk, slots, r,
			       args[r].init_ret, args[r].ret, args[r].bad,
			       args[r].msg);
		ASSERT_EQ(0, args[r].init_ret);
		ASSERT_EQ(0, args[r].ret);
		ASSERT_EQ(0, args[r].bad);
	}
	ASSERT_EQ(0, atomic_load(&sim_errors));
}

static void run_data(struct __test_metadata *_metadata, int kind, int n,
		     size_t count, int dtype, bool inplace, size_t chunk,
		     unsigned int slots)
{
	run_data_cap(_metadata, kind, n, count, dtype, inplace, chunk, slots,
		     0);
}

TEST(allreduce_odd_counts)
{
	static const size_t counts[] = { 1, 2, 3, 5, 8, 9, 1000, 4099 };
	int n, dt;
	unsigned int i;

	for (n = 1; n <= 5; n++)
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			for (dt = 0; dt < 2; dt++)
				run_data(_metadata, SC_DATA, n, counts[i], dt,
					 i & 1, 64, 2);
}

/* Peer tables still learning the nodes: connects are retried. */
TEST(connect_retries_an_unknown_node)
{
	pthread_mutex_lock(&sim_lock);
	sim_unreachable = 5;
	pthread_mutex_unlock(&sim_lock);
	run_data(_metadata, SC_DATA, 4, 1000, XNIC_COLL_FLOAT32, false, 64, 2);
	EXPECT_EQ(0, sim_unreachable);
}

TEST(allreduce_tiny_chunks_one_slot)
{
	/* 4-byte chunks, one slot: a credit round trip per element */
	run_data(_metadata, SC_DATA, 3, 301, XNIC_COLL_FLOAT32, false, 4, 1);
	run_data(_metadata, SC_DATA, 4, 257, XNIC_COLL_BFLOAT16, true, 4, 1);
	/* 2 bf16 per chunk, 3 slots */
	run_data(_metadata, SC_DATA, 2, 999, XNIC_COLL_BFLOAT16, false, 4, 3);
}

TEST(allreduce_large_default_chunk)
{
	run_data(_metadata, SC_DATA, 4, 1000003, XNIC_COLL_FLOAT32, false, 0,
		 0);
	/* no budget: every slot of every channel in flight */
	run_data_cap(_metadata, SC_DATA, 4, 1000003, XNIC_COLL_FLOAT32, true,
		     16384, 4, SIZE_MAX);
	run_data(_metadata, SC_DATA, 3, 1000003, XNIC_COLL_BFLOAT16, true,
		 64 * 1024, 4);
}

TEST(allreduce_eight_nodes)
{
	run_data(_metadata, SC_DATA, 8, 7, XNIC_COLL_FLOAT32, false, 64, 2);
	run_data(_metadata, SC_DATA, 8, 100003, XNIC_COLL_BFLOAT16, false,
		 4096, 2);
}

TEST(inflight_budget)
{
	/* smaller than one chunk: one write at a time */
	run_data_cap(_metadata, SC_DATA, 4, 10007, XNIC_COLL_FLOAT32, false,
		     1024, 2, 100);
	run_data_cap(_metadata, SC_MIXED, 3, 3000, 0, false, 256, 2, 600);
	run_data_cap(_metadata, SC_DATA, 5, 100003, XNIC_COLL_BFLOAT16, true,
		     4096, 3, 3 * 4096);
}

TEST(mixed_collectives_without_barriers)
{
	int n;

	for (n = 2; n <= 5; n++)
		run_data(_metadata, SC_MIXED, n, 5000, 0, false, 256, 2);
	run_data(_metadata, SC_MIXED, 3, 77, 0, false, 4, 1);
}

TEST(nonblocking_concurrent_comms)
{
	int n;

	for (n = 1; n <= 4; n++)
		run_data(_metadata, SC_CONCURRENT, n, 0, 0, false, 1024, 2);
	run_data(_metadata, SC_CONCURRENT, 3, 0, 0, false, 64, 1);
}

TEST(nonblocking_bad_arguments)
{
	struct xnic_comm_cfg cfg = { .rank = 0, .nranks = 1 };
	struct xnic_coll_req *q = (void *)1;
	struct xnic_comm *c;
	float x[3] = { 1, 2, 3 };

	ASSERT_EQ(0, xnic_comm_init(&c, &cfg));
	EXPECT_EQ(-EINVAL, xnic_allreduce_start(c, x, x, 3, 9, XNIC_COLL_SUM,
						&q));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(-EINVAL, xnic_allreduce_start(c, x, x, 3, XNIC_COLL_FLOAT32,
						XNIC_COLL_SUM, NULL));
	EXPECT_EQ(-EINVAL, xnic_broadcast_start(c, x, 4, 5, &q));
	EXPECT_EQ(-EINVAL, xnic_coll_test(NULL));
	EXPECT_EQ(-EINVAL, xnic_coll_wait(NULL));
	EXPECT_EQ(-EINVAL, xnic_coll_waitall(NULL, 2));
	EXPECT_EQ(0, xnic_coll_waitall(NULL, 0));
	EXPECT_EQ(-EINVAL, xnic_coll_waitany(NULL, 2, 0));
	EXPECT_EQ(-EAGAIN, xnic_coll_waitany(NULL, 0, 5));
	/* one rank: done at once */
	ASSERT_EQ(0, xnic_barrier_start(c, &q));
	EXPECT_EQ(1, xnic_coll_test(q));
	/* a request twice: refused, nothing freed (not a double free) */
	{
		struct xnic_coll_req *two[3] = { q, NULL, q };

		EXPECT_EQ(-EINVAL, xnic_coll_waitall(two, 3));
		EXPECT_NE(NULL, strstr(xnic_comm_strerror(NULL),
				     "reqs[0] and reqs[2] are the same request"));
		EXPECT_EQ(q, two[0]);
		EXPECT_EQ(q, two[2]);
		EXPECT_EQ(0, xnic_coll_waitany(two, 3, 0));
	}
	xnic_coll_req_free(q);
	xnic_comm_destroy(c);
}

TEST(dead_rank_fails_fast)
{
	struct scenario sc = {
		.kind = SC_DEATH, .nranks = 3, .timeout_ms = 20000,
	};
	struct rank_arg args[3];
	int r;

	run(_metadata, &sc, args);
	for (r = 0; r < 2; r++) {
		TH_LOG("rank %d: %d after %d ms: %s", r, args[r].ret,
		       args[r].elapsed_ms, args[r].msg);
		EXPECT_EQ(0, args[r].init_ret);
		EXPECT_EQ(-ECONNRESET, args[r].ret);
		EXPECT_NE(NULL, strstr(args[r].msg, "rank 2 (node 3) is gone"));
		/* far below the 20 s timeout (loose: a loaded host) */
		EXPECT_LT(args[r].elapsed_ms, 10000);
		EXPECT_EQ(0, args[r].bad);
	}
	EXPECT_EQ(0, args[2].ret);
}

/*
 * Rank 3's connect to rank 1 fails (refused, or timed out). Ranks 1 and 2,
 * which wait for its request, fail on its abort notice, naming it; rank
 * 0, which every rank connected to, fails on the ready exchange. All at
 * once, not after the 20 s timeout.
 */
TEST(failed_connect_aborts_the_waiting_ranks)
{
	static const int errs[] = { -ECONNREFUSED, -ETIMEDOUT };
	struct scenario sc = {
		.kind = SC_DATA, .nranks = 4, .count = 10, .timeout_ms = 20000,
	};
	struct rank_arg args[4];
	unsigned int k;
	int r;

	for (k = 0; k < sizeof(errs) / sizeof(errs[0]); k++) {
		pthread_mutex_lock(&sim_lock);
		memset(sim_inject, 0, sizeof(sim_inject));
		sim_inject[0] = (struct sim_cm_inject){
			.from = 4, .to = 2, .err = errs[k],
		};
		pthread_mutex_unlock(&sim_lock);
		run(_metadata, &sc, args);
		for (r = 0; r < 4; r++)
			TH_LOG("%s: rank %d: %d after %d ms: %s",
			       strerror(-errs[k]), r, args[r].init_ret,
			       args[r].init_ms, args[r].msg);
		EXPECT_TRUE(sim_inject[0].fired);
		EXPECT_EQ(errs[k], args[3].init_ret);
		EXPECT_NE(NULL, strstr(args[3].msg,
				       "connecting to rank 1 (node 2"));
		for (r = 1; r < 3; r++) {
			EXPECT_EQ(-ECONNABORTED, args[r].init_ret);
			EXPECT_NE(NULL, strstr(args[r].msg,
					       "rank 3 (node 4) failed to connect to its peers and left"));
		}
		/* rank 0 names the rank that failed first, not one told */
		EXPECT_EQ(-ECONNABORTED, args[0].init_ret);
		EXPECT_NE(NULL, strstr(args[0].msg, "rank 3 failed to connect"));
		/* far below the 20 s timeout (loose: a loaded host) */
		for (r = 0; r < 4; r++)
			ASSERT_LT(args[r].init_ms, 5000);
	}
}

/*
 * Rank 2 dies during set-up, after connecting to rank 0 and before rank
 * 1 (whose connect to rank 0 is 1.5 s late) is in. Rank 0, which
 * accepted it and still waits for rank 1, fails on its QP's DREQ naming
 * it, and stops listening; rank 1 is then refused by rank 0. Without
 * that, rank 0 would accept rank 1 and rank 1 wait for rank 2's request
 * until the 20 s timeout.
 */
TEST(rank_dying_during_setup_fails_its_peers_fast)
{
	struct scenario sc = {
		.kind = SC_DATA, .nranks = 3, .count = 10, .timeout_ms = 20000,
	};
	struct rank_arg args[3];
	int r;

	pthread_mutex_lock(&sim_lock);
	sim_inject[0] = (struct sim_cm_inject){
		.from = 2, .to = 1, .delay_ms = 1500,
	};
	sim_inject[1] = (struct sim_cm_inject){
		.from = 3, .to = 2, .die = true,
	};
	pthread_mutex_unlock(&sim_lock);
	run(_metadata, &sc, args);
	for (r = 0; r < 3; r++)
		TH_LOG("rank %d: %d after %d ms: %s", r, args[r].init_ret,
		       args[r].init_ms, args[r].msg);
	EXPECT_TRUE(sim_inject[1].fired);
	EXPECT_EQ(-ENETDOWN, args[2].init_ret);
	EXPECT_EQ(-ECONNRESET, args[0].init_ret);
	EXPECT_NE(NULL, strstr(args[0].msg,
			       "rank 2 (node 3) left during set-up"));
	EXPECT_EQ(-ECONNREFUSED, args[1].init_ret);
	EXPECT_NE(NULL, strstr(args[1].msg, "connecting to rank 0 (node 1"));
	for (r = 0; r < 3; r++)
		EXPECT_LT(args[r].init_ms, 5000);
}

TEST(setup_failure_reaches_every_rank)
{
	struct scenario sc = { .kind = SC_BADDEV, .nranks = 3 };
	struct rank_arg args[3];

	run(_metadata, &sc, args);
	EXPECT_EQ(-ENODEV, args[1].init_ret);
	EXPECT_NE(NULL, strstr(args[1].msg, "opening device missing"));
	EXPECT_EQ(-ECONNABORTED, args[0].init_ret);
	EXPECT_EQ(-ECONNABORTED, args[2].init_ret);
	EXPECT_NE(NULL, strstr(args[0].msg, "rank 1 failed"));
}

TEST(absent_rank_times_out)
{
	struct scenario sc = {
		.kind = SC_ABSENT, .nranks = 2, .count = 10,
		.timeout_ms = 300,
	};
	struct rank_arg args[2];

	run(_metadata, &sc, args);
	EXPECT_EQ(0, args[0].init_ret);
	EXPECT_EQ(-ETIMEDOUT, args[0].ret);
	EXPECT_NE(NULL, strstr(args[0].msg, "no progress for 300 ms"));
	EXPECT_NE(NULL, strstr(args[0].msg, "waiting for rank 1"));
	EXPECT_EQ(0, args[0].bad);
}

/* A failed request freed after its communicator: its error, no stale read. */
TEST(failed_request_outlives_its_comm)
{
	struct scenario sc = {
		.kind = SC_STALE, .nranks = 2, .timeout_ms = 300,
	};
	struct rank_arg args[2];

	run(_metadata, &sc, args);
	EXPECT_EQ(0, args[0].init_ret);
	EXPECT_EQ(-ETIMEDOUT, args[0].ret);
	EXPECT_NE(NULL, strstr(args[0].msg, "no progress for 300 ms"))
		TH_LOG("%s", args[0].msg);
	EXPECT_EQ(0, args[0].bad);
}

/* A request its caller did not look at for a while: no false timeout. */
TEST(unwatched_request_not_timed_out)
{
	struct scenario sc = {
		.kind = SC_UNWATCHED, .nranks = 2, .timeout_ms = 500,
	};
	struct rank_arg args[2];
	int r;

	run(_metadata, &sc, args);
	for (r = 0; r < 2; r++) {
		EXPECT_EQ(0, args[r].init_ret);
		EXPECT_EQ(0, args[r].ret) TH_LOG("rank %d: %s", r, args[r].msg);
		EXPECT_EQ(0, args[r].bad);
	}
}

/* A request still running when its communicator is destroyed: cancelled. */
TEST(unfinished_request_cancelled_by_destroy)
{
	struct scenario sc = {
		.kind = SC_CANCEL, .nranks = 2, .timeout_ms = 300,
	};
	struct rank_arg args[2];

	run(_metadata, &sc, args);
	EXPECT_EQ(0, args[0].init_ret);
	EXPECT_EQ(-ECANCELED, args[0].ret);
	EXPECT_NE(NULL, strstr(args[0].msg,
			       "cancelled: its communicator was destroyed"))
		TH_LOG("%s", args[0].msg);
}

TEST(mismatched_counts_fail)
{
	struct scenario sc = {
		.kind = SC_MISMATCH, .nranks = 2, .count = 100,
		.timeout_ms = 500,
	};
	struct rank_arg args[2];
	int r, proto = 0;

	run(_metadata, &sc, args);
	for (r = 0; r < 2; r++) {
		EXPECT_NE(0, args[r].ret);
		if (args[r].ret == -EPROTO) {
			proto++;
			EXPECT_NE(NULL, strstr(args[r].msg, "same arguments"));
		}
	}
	EXPECT_GT(proto, 0);
}

TEST(tcp_bootstrap)
{
	struct scenario sc = {
		.kind = SC_DATA, .nranks = 4, .count = 12345,
		.dtype = XNIC_COLL_FLOAT32, .chunk = 1024, .tcp = true,
		.port = (uint16_t)(30000 + getpid() % 20000),
	};
	struct rank_arg args[4];
	int r;

	run(_metadata, &sc, args);
	for (r = 0; r < 4; r++) {
		if (args[r].init_ret || args[r].ret)
			TH_LOG("rank %d: %s", r, args[r].msg);
		EXPECT_EQ(0, args[r].init_ret);
		EXPECT_EQ(0, args[r].ret);
		EXPECT_EQ(0, args[r].bad);
	}
}

/* A connection to @port on this host, retried while nobody listens. */
static int connect_to(uint16_t port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int fd = -1, i;

	for (i = 0; i < 500 && fd < 0; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			fd = -1;
			usleep(10000);
		}
	}
	return fd;
}

/*
 * Rank 1 of a TCP bootstrap that sends its part of an all-gather and then
 * reads nothing (stopped, or busy elsewhere): the bootstrap's wire format
 * by hand (bootstrap_tcp.c), so it can stop midway.
 */
#define MUTE_LEN	(8U << 20)

struct mute_rank {
	uint16_t port;
	atomic_bool done;
};

static void *mute_rank1(void *arg)
{
	struct mute_rank *m = arg;
	uint32_t hello[3] = { htole32(XNIC_BS_MAGIC), htole32(1), htole32(2) };
	uint32_t hdr[2] = { htole32(XNIC_BS_MAGIC), htole32(MUTE_LEN) };
	uint32_t ack[2];
	char *part = calloc(1, MUTE_LEN);
	int fd = connect_to(m->port);

	if (fd >= 0 && part &&
	    send(fd, hello, sizeof(hello), 0) == sizeof(hello) &&
	    recv(fd, ack, sizeof(ack), MSG_WAITALL) == sizeof(ack) &&
	    send(fd, hdr, sizeof(hdr), 0) == sizeof(hdr))
		send(fd, part, MUTE_LEN, 0);
	while (!atomic_load(&m->done))
		usleep(10000);
	if (fd >= 0)
		close(fd);
	free(part);
	return NULL;
}

TEST(tcp_bootstrap_peer_not_reading)
{
	struct mute_rank m = { .port = (uint16_t)(30000 + (getpid() + 1) % 20000) };
	char *mine = calloc(1, MUTE_LEN), *all = calloc(2, MUTE_LEN);
	struct xnic_bootstrap *bs = NULL;
	pthread_t t;
	uint64_t t0;
	int err, ms;

	ASSERT_NE(NULL, mine);
	ASSERT_NE(NULL, all);
	ASSERT_EQ(0, pthread_create(&t, NULL, mute_rank1, &m));
	err = xnic_bootstrap_tcp(0, 2, NULL, m.port, 5000, &bs);
	ASSERT_EQ(0, err) TH_LOG("%s", xnic_comm_strerror(NULL));
	t0 = xnic_coll_now_ns();
	/* Rank 0 then sends 16 MiB more than the sockets hold. */
	err = bs->ops->allgather(bs, mine, all, MUTE_LEN, 1000);
	ms = (int)((xnic_coll_now_ns() - t0) / 1000000);
	TH_LOG("all-gather: %d after %d ms: %s", err, ms,
	       xnic_comm_strerror(NULL));
	EXPECT_EQ(-ETIMEDOUT, err);
	EXPECT_LT(ms, 3000);
	atomic_store(&m.done, true);
	pthread_join(t, NULL);
	bs->ops->close(bs);
	free(mine);
	free(all);
}

/* Has the other end closed @fd (within @ms)? */
static bool closed_within(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	return fd >= 0 && poll(&pfd, 1, ms) == 1 &&
	       recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

/*
 * Stray connections to rank 0's bootstrap port (a port scanner, another
 * program) before ranks 1 and 2 connect: one sends 12 bytes that are not
 * a hello, one sends nothing and stays open, one closes at once. The
 * three ranks (threads) must bootstrap and all-gather anyway, at once,
 * not at the deadline; rank 0 then closes the silent one.
 */
#define STRAY_TIMEOUT	10000

struct stray_rank {
	int rank;
	uint16_t port;
	atomic_bool *go;
	int err;
	uint32_t all[3];
	char msg[XNIC_COLL_ERRLEN];
};

static void *stray_rank_main(void *arg)
{
	struct stray_rank *a = arg;
	struct xnic_bootstrap *bs = NULL;
	uint32_t mine = 100 + (uint32_t)a->rank;

	while (!atomic_load(a->go))
		usleep(1000);
	a->err = xnic_bootstrap_tcp(a->rank, 3, NULL, a->port, STRAY_TIMEOUT,
				    &bs);
	if (!a->err)
		a->err = bs->ops->allgather(bs, &mine, a->all, sizeof(mine),
					    STRAY_TIMEOUT);
	if (a->err)
		snprintf(a->msg, sizeof(a->msg), "%s",
			 xnic_comm_strerror(NULL));
	xnic_bootstrap_close(bs);
	return NULL;
}

/* One stray connection of @kind (0 silent, 1 closes, 2 garbage). */
static int stray(uint16_t port, int kind)
{
	static const char garbage[] = "GET / HTTP/1.0\r\n";
	int fd = connect_to(port);

	if (fd < 0 || !kind)
		return fd;
	if (kind == 2 && send(fd, garbage, 12, 0) != 12) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void run_strays(struct __test_metadata *_metadata, uint16_t port,
		       const int kinds[3])
{
	atomic_bool now = true, later = false;
	struct stray_rank a[3];
	int silent = -1, fd, r, k, ms;
	uint64_t t0 = xnic_coll_now_ns();
	pthread_t t[3];

	for (r = 0; r < 3; r++) {
		a[r] = (struct stray_rank){
			.rank = r, .port = port, .go = r ? &later : &now,
		};
		ASSERT_EQ(0, pthread_create(&t[r], NULL, stray_rank_main,
					    &a[r]));
	}
	for (k = 0; k < 3; k++) {
		fd = stray(port, kinds[k]);
		EXPECT_LE(0, fd);
		if (!kinds[k])
			silent = fd;
	}
	atomic_store(&later, true);
	for (r = 0; r < 3; r++)
		pthread_join(t[r], NULL);
	ms = (int)((xnic_coll_now_ns() - t0) / 1000000);
	TH_LOG("bootstrap and all-gather in %d ms", ms);
	for (r = 0; r < 3; r++) {
		if (a[r].err)
			TH_LOG("rank %d: %d: %s", r, a[r].err, a[r].msg);
		EXPECT_EQ(0, a[r].err);
		for (k = 0; k < 3 && !a[r].err; k++)
			EXPECT_EQ(100 + k, (int)a[r].all[k]);
	}
	EXPECT_LT(ms, STRAY_TIMEOUT / 2);
	/* Every rank is in: rank 0 closed the stray still pending. */
	EXPECT_TRUE(closed_within(silent, 1000));
	if (silent >= 0)
		close(silent);
}

TEST(tcp_bootstrap_ignores_strays_garbage_first)
{
	static const int kinds[3] = { 2, 0, 1 };

	run_strays(_metadata, (uint16_t)(30000 + (getpid() + 2) % 20000),
		   kinds);
}

TEST(tcp_bootstrap_ignores_strays_silent_first)
{
	static const int kinds[3] = { 0, 1, 2 };

	run_strays(_metadata, (uint16_t)(30000 + (getpid() + 3) % 20000),
		   kinds);
}

/*
 * A hello with our magic but an impossible claim is a misconfigured job:
 * rank 0 fails with -EPROTO and says what was claimed, at once, even
 * behind a stray connection that sends nothing.
 */
struct bad_claim {
	uint16_t port;
	uint32_t hello[2][3];	/* a zero nranks is not sent */
	atomic_bool done;
};

static void *bad_claim_main(void *arg)
{
	struct bad_claim *b = arg;
	int silent = connect_to(b->port), fd[2] = { -1, -1 }, i;

	for (i = 0; i < 2 && b->hello[i][2]; i++) {
		fd[i] = connect_to(b->port);
		if (fd[i] >= 0)
			send(fd[i], b->hello[i], sizeof(b->hello[i]), 0);
	}
	while (!atomic_load(&b->done))
		usleep(10000);
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	if (silent >= 0)
		close(silent);
	return NULL;
}

static void run_bad_claim(struct __test_metadata *_metadata, uint16_t port,
			  const uint32_t claim[2][2], const char *msg)
{
	struct bad_claim b = { .port = port };
	struct xnic_bootstrap *bs = NULL;
	uint64_t t0 = xnic_coll_now_ns();
	pthread_t t;
	int i, err, ms;

	for (i = 0; i < 2; i++) {
		b.hello[i][0] = htole32(XNIC_BS_MAGIC);
		b.hello[i][1] = htole32(claim[i][0]);
		b.hello[i][2] = htole32(claim[i][1]);
	}
	ASSERT_EQ(0, pthread_create(&t, NULL, bad_claim_main, &b));
	err = xnic_bootstrap_tcp(0, 3, NULL, port, 4000, &bs);
	ms = (int)((xnic_coll_now_ns() - t0) / 1000000);
	TH_LOG("want \"%s\": %d after %d ms: %s", msg, err, ms,
	       xnic_comm_strerror(NULL));
	atomic_store(&b.done, true);
	pthread_join(t, NULL);
	xnic_bootstrap_close(bs);
	EXPECT_EQ(-EPROTO, err);
	EXPECT_NE(NULL, strstr(xnic_comm_strerror(NULL), msg));
	EXPECT_LT(ms, 2000);
}

TEST(tcp_bootstrap_bad_claim_fails)
{
	static const uint32_t nranks[2][2] = { { 1, 4 } },
			      range[2][2] = { { 3, 3 } },
			      twice[2][2] = { { 1, 3 }, { 1, 3 } };
	uint16_t port = (uint16_t)(30000 + (getpid() + 4) % 20000);

	run_bad_claim(_metadata, port, nranks,
		      "rank 1 of 4, but this job has 3 ranks");
	run_bad_claim(_metadata, port + 1, range, "rank 3 of 3: out of range");
	run_bad_claim(_metadata, port + 2, twice,
		      "a second connection claimed to be rank 1 of 3");
}

TEST(bad_arguments)
{
	struct xnic_comm_cfg cfg = { .rank = 2, .nranks = 2 };
	struct xnic_comm *c = (void *)1;
	float x[4] = { 1, 2, 3, 4 }, y[4];

	EXPECT_EQ(-EINVAL, xnic_comm_init(&c, &cfg));
	EXPECT_EQ(NULL, c);
	EXPECT_NE(NULL, strstr(xnic_comm_strerror(NULL), "rank 2"));
	cfg.rank = 0;
	EXPECT_EQ(-EINVAL, xnic_comm_init(&c, &cfg));	/* no bootstrap */
	/* one rank needs neither device nor bootstrap */
	cfg.nranks = 1;
	ASSERT_EQ(0, xnic_comm_init(&c, &cfg));
	EXPECT_EQ(-EINVAL, xnic_allreduce(c, x, y, 4, 7, XNIC_COLL_SUM));
	EXPECT_EQ(-EINVAL, xnic_allreduce(c, x, y, 4, XNIC_COLL_FLOAT32, 3));
	EXPECT_EQ(-EINVAL, xnic_allreduce(c, x, x + 1, 3, XNIC_COLL_FLOAT32,
					  XNIC_COLL_SUM));
	EXPECT_EQ(-EINVAL, xnic_allreduce(c, (char *)x + 1, y, 2,
					  XNIC_COLL_FLOAT32, XNIC_COLL_SUM));
	EXPECT_EQ(-EINVAL, xnic_broadcast(c, x, 4, 1));
	EXPECT_EQ(0, xnic_allreduce(c, x, y, 4, XNIC_COLL_FLOAT32,
				    XNIC_COLL_SUM));
	EXPECT_EQ(0, memcmp(x, y, sizeof(x)));
	EXPECT_EQ(0, xnic_barrier(c));
	EXPECT_EQ(0, xnic_broadcast(c, x, 4, 0));
	xnic_comm_destroy(c);
	EXPECT_EQ(-EINVAL, xnic_barrier(NULL));
}

TEST_HARNESS_MAIN
