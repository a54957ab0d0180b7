// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-allreduce - run and check xnic_allreduce() on N ranks of one host.
 *
 * Forks N ranks; rank i opens device PREFIX<i> (or the i-th of --devices),
 * joins a communicator over the TCP bootstrap (or, with --bootstrap cm,
 * over the fabric's connection manager), fills its input from the
 * seed, runs the all-reduce, and checks every element of its result
 * against a reference it computes on its own, in double, from the seeds
 * of all ranks: exactly for small-integer inputs, else within a bound
 * that follows from the data type and N; and that every rank's result is
 * bit-identical (a hash of each). Prints the time, the algorithm
 * bandwidth (bytes / time) and the bus bandwidth (algbw * 2(N-1)/N), as
 * nccl-tests define them, and the algorithm the communicator chose (flat
 * or hierarchical, on how many appliances); exits non-zero on any
 * mismatch or error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "xnic.h"
#include "xnic_coll.h"
#include "../tools/xnic_tool.h"

#define MAX_ITERS	1000
#define MSG_LEN		512

static const char *prog = "xnic-allreduce";

enum { VALUES_INT, VALUES_REAL };

struct opts {
	int nodes;
	size_t count;
	int dtype;
	uint64_t seed;
	const char *prefix;
	char *devices;
	unsigned int port;
	bool cm;
	uint64_t service;
	uint32_t node_ids[XNIC_COLL_MAX_RANKS];
	size_t chunk;
	unsigned int slots;
	int iters;
	int warmup;
	bool inplace;
	int values;
	int timeout_s;
	unsigned int spin_us;
	size_t max_inflight;
	bool max_inflight_set;
	size_t bcast;
	bool json;
	int concurrent;
	int algo;
};

#define MAX_CONCURRENT	8

/* What a rank reports to the parent, in shared memory. */
struct rank_result {
	int status;		/* 0 ok, 1 mismatch, 2 error */
	char msg[MSG_LEN];
	double secs[MAX_ITERS];
	double cpu;		/* CPU seconds spent in the timed calls */
	uint64_t mismatches;
	uint64_t hash;		/* of the result's bytes */
	int algo;		/* xnic_comm_algo() */
	int appliances;
	uint64_t first_bad;
	double got, want, tol;
	int bcast_ok;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [options]\n"
"  --nodes N             ranks, one device each (default 2)\n"
"  --count C             elements (K, M, G or Ki, Mi, Gi: binary; default 1Mi)\n"
"  --dtype f32|bf16      element type (default f32)\n"
"  --seed S              input seed (default 1)\n"
"  --device-prefix P     rank i uses device P<i> (default xnic)\n"
"  --devices A,B,...     explicit device of each rank\n"
"  --bootstrap tcp|cm    how the ranks meet: TCP on 127.0.0.1 or the\n"
"                        fabric's connection manager (default tcp)\n"
"  --port P              bootstrap TCP port on 127.0.0.1 (default from pid)\n"
"  --service S           CM bootstrap service id (default from pid)\n"
"  --chunk BYTES         pipeline chunk (default 1Mi)\n"
"  --slots N             chunks in flight per channel (default 2)\n"
"  --iters N             timed all-reduces (default 1)\n"
"  --warmup N            untimed all-reduces first (default 0)\n"
"  --inplace             sendbuf == recvbuf\n"
"  --values int|real     small integers (exact check) or fractions in\n"
"                        [-1, 1) (checked within the rounding bound);\n"
"                        default real\n"
"  --bcast BYTES         also check a broadcast of BYTES from the last rank\n"
"  --timeout SEC         communicator timeout (default 30)\n"
"  --spin-us US          busy-poll before sleeping (default 0)\n"
"  --max-inflight BYTES  most bytes of writes in flight per rank (default\n"
"                        4Mi; 0: no limit but the slots)\n"
"  --concurrent K        K communicators (QP sets); each all-reduce is\n"
"                        split into K near-equal parts started at once\n"
"                        with xnic_allreduce_start() and finished with\n"
"                        xnic_coll_waitall() (default 1: xnic_allreduce());\n"
"                        each gets 1/K of the default --max-inflight\n"
"  --algo auto|flat|hier all-reduce algorithm (default auto: hierarchical\n"
"                        when the ranks form 2 or more equal appliances)\n"
"  --json                one JSON line instead of the text report\n",
		prog);
}

#define die(...)	xnic_tool_die(2, __VA_ARGS__)

static uint64_t parse_size(const char *s, const char *what)
{
	return xnic_tool_num(2, what, s, 0, UINT64_MAX, true);
}

/* An int or unsigned option within [min, max] (no wrapping), or exit. */
static int parse_int(const char *s, const char *what, int min, int max)
{
	return (int)xnic_tool_num(2, what, s, (uint64_t)min, (uint64_t)max,
				  false);
}

static unsigned int parse_uint(const char *s, const char *what)
{
	return (unsigned int)xnic_tool_num(2, what, s, 0, UINT_MAX, false);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' },
		{ "dtype", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "device-prefix", required_argument, NULL, 'd' },
		{ "devices", required_argument, NULL, 'D' },
		{ "port", required_argument, NULL, 'p' },
		{ "chunk", required_argument, NULL, 'C' },
		{ "slots", required_argument, NULL, 'S' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "inplace", no_argument, NULL, 'I' },
		{ "values", required_argument, NULL, 'v' },
		{ "bcast", required_argument, NULL, 'b' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "spin-us", required_argument, NULL, 'u' },
		{ "max-inflight", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "concurrent", required_argument, NULL, 'K' },
		{ "bootstrap", required_argument, NULL, 'B' },
		{ "service", required_argument, NULL, 'V' },
		{ "algo", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts) {
		.nodes = 2, .count = 1 << 20, .dtype = XNIC_COLL_FLOAT32,
		.seed = 1, .prefix = "xnic", .port = 0, .iters = 1,
		.concurrent = 1,
		.values = VALUES_REAL, .timeout_s = 30,
	};
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->nodes = parse_int(optarg, "--nodes", 1,
					     XNIC_COLL_MAX_RANKS);
			break;
		case 'c':
			o->count = parse_size(optarg, "--count");
			break;
		case 't':
			if (!strcmp(optarg, "f32") || !strcmp(optarg, "float32"))
				o->dtype = XNIC_COLL_FLOAT32;
			else if (!strcmp(optarg, "bf16") ||
				 !strcmp(optarg, "bfloat16"))
				o->dtype = XNIC_COLL_BFLOAT16;
			else
				die("--dtype must be f32 or bf16, not '%s'", optarg);
			break;
		case 's':
			o->seed = parse_size(optarg, "--seed");
			break;
		case 'd':
			o->prefix = optarg;
			break;
		case 'D':
			o->devices = optarg;
			break;
		case 'p':
			o->port = (unsigned int)parse_int(optarg, "--port", 0,
							 65535);
			break;
		case 'C':
			o->chunk = parse_size(optarg, "--chunk");
			break;
		case 'S':
			o->slots = parse_uint(optarg, "--slots");
			break;
		case 'i':
			o->iters = parse_int(optarg, "--iters", 1, MAX_ITERS);
			break;
		case 'w':
			o->warmup = parse_int(optarg, "--warmup", 0, INT_MAX);
			break;
		case 'I':
			o->inplace = true;
			break;
		case 'v':
			if (!strcmp(optarg, "int"))
				o->values = VALUES_INT;
			else if (!strcmp(optarg, "real"))
				o->values = VALUES_REAL;
			else
				die("--values must be int or real, not '%s'", optarg);
			break;
		case 'b':
			o->bcast = parse_size(optarg, "--bcast");
			break;
		case 'T':
			o->timeout_s = parse_int(optarg, "--timeout", 1, 3600);
			break;
		case 'u':
			o->spin_us = parse_uint(optarg, "--spin-us");
			break;
		case 'm':
			o->max_inflight = parse_size(optarg, "--max-inflight");
			o->max_inflight_set = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'K':
			o->concurrent = parse_int(optarg, "--concurrent", 1,
						    MAX_CONCURRENT);
			break;
		case 'B':
			if (strcmp(optarg, "tcp") && strcmp(optarg, "cm"))
				die("--bootstrap must be tcp or cm, not '%s'", optarg);
			o->cm = !strcmp(optarg, "cm");
			break;
		case 'V':
			o->service = parse_size(optarg, "--service");
			break;
		case 'A':
			if (!strcmp(optarg, "auto"))
				o->algo = XNIC_COLL_ALGO_AUTO;
			else if (!strcmp(optarg, "flat"))
				o->algo = XNIC_COLL_ALGO_FLAT;
			else if (!strcmp(optarg, "hier"))
				o->algo = XNIC_COLL_ALGO_HIER;
			else
				die("--algo must be auto, flat or hier, not '%s'",
				    optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
	if (o->nodes < 1 || o->nodes > XNIC_COLL_MAX_RANKS)
		die("--nodes must be 1..%d", XNIC_COLL_MAX_RANKS);
	if (o->iters < 1 || o->iters > MAX_ITERS)
		die("--iters must be 1..%d", MAX_ITERS);
	if (o->timeout_s < 1 || o->timeout_s > 3600)
		die("--timeout must be 1..3600 seconds");
	if (o->concurrent < 1 || o->concurrent > MAX_CONCURRENT)
		die("--concurrent must be 1..%d", MAX_CONCURRENT);
	if (!o->port)
		o->port = 20000 + (unsigned int)getpid() % 20000;
	if (o->port > 65535)
		die("--port must be 1..65535");
	if (!o->service)
		o->service = 0x58434f4c4c000000ULL | (uint64_t)getpid();
}

/* ------------------------------ inputs ------------------------------ */

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t rank_key(uint64_t seed, int r)
{
	return mix64(seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1)));
}

/*
 * Element i of a rank's input, as a double. Every value is exactly
 * representable in the data type: integers in [-16, 16]; fractions in
 * [-1, 1) with 24 (f32) or 8 (bf16) significant bits.
 */
static inline double input_value(uint64_t key, size_t i, int values,
				 int dtype)
{
	uint64_t h = mix64(key + (uint64_t)i * 0xd1b54a32d192ed03ULL);

	if (values == VALUES_INT)
		return (double)(int)(h % 33) - 16.0;
	if (dtype == XNIC_COLL_FLOAT32)
		return ((double)(int64_t)(h >> 40) - 8388608.0) / 8388608.0;
	return ((double)(int)(h >> 56) - 128.0) / 128.0;
}

/* The bfloat16 bits of an exactly representable value (no rounding). */
static uint16_t exact_bf16(double v)
{
	float f = (float)v;
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return (uint16_t)(u >> 16);
}

static double elem_get(const void *buf, int dtype, size_t i)
{
	if (dtype == XNIC_COLL_FLOAT32)
		return ((const float *)buf)[i];
	{
		uint32_t u = (uint32_t)((const uint16_t *)buf)[i] << 16;
		float f;

		memcpy(&f, &u, sizeof(f));
		return f;
	}
}

static void fill_input(void *buf, const struct opts *o, int rank)
{
	uint64_t key = rank_key(o->seed, rank);
	size_t i;

	for (i = 0; i < o->count; i++) {
		double v = input_value(key, i, o->values, o->dtype);

		if (o->dtype == XNIC_COLL_FLOAT32)
			((float *)buf)[i] = (float)v;
		else
			((uint16_t *)buf)[i] = exact_bf16(v);
	}
}

/*
 * The reference: the double-precision sum of all inputs and the allowed
 * error of each element. Each rank computes a slice of it into memory
 * shared by all ranks (computing it N times would cost more than the
 * all-reduce in the test VM); every rank then checks all of its result.
 * Integer inputs: exact. f32: rank-order float sums err by at most
 * (N-1) * 2^-24 * sum|x|; we allow N * 2^-24 * sum|x|. bf16: the sum of
 * the bf16 inputs in float plus one rounding to bf16, at most half a
 * bf16 ulp of the exact sum (2^(e-9) for a sum in [2^(e-1), 2^e)); the
 * hierarchical algorithm also rounds each appliance's partial sum to
 * bf16, at most half an ulp of each, 2^-8 * sum|x| in all.
 */
struct reference {
	double *want;
	float *tol;
};

static void reference_slice(const struct reference *ref, const struct opts *o,
			    int rank, bool hier)
{
	size_t lo = o->count / (size_t)o->nodes * (size_t)rank, hi, i;
	uint64_t keys[XNIC_COLL_MAX_RANKS];
	int r, e;

	hi = rank == o->nodes - 1 ? o->count :
	     o->count / (size_t)o->nodes * (size_t)(rank + 1);
	for (r = 0; r < o->nodes; r++)
		keys[r] = rank_key(o->seed, r);
	for (i = lo; i < hi; i++) {
		double want = 0, mag = 0, tol = 0, v;

		for (r = 0; r < o->nodes; r++) {
			v = input_value(keys[r], i, o->values, o->dtype);
			want += v;
			mag += fabs(v);
		}
		if (o->values == VALUES_REAL) {
			tol = o->nodes * ldexp(mag, -24);
			if (o->dtype == XNIC_COLL_BFLOAT16 && want != 0) {
				frexp(want, &e);
				tol += ldexp(1.0, e - 9);
			}
			if (o->dtype == XNIC_COLL_BFLOAT16 && hier)
				tol += ldexp(mag, -8);
		}
		ref->want[i] = want;
		ref->tol[i] = (float)tol;
	}
}

static void check_result(const void *buf, const struct opts *o,
			 const struct reference *ref, struct rank_result *res)
{
	size_t i;

	for (i = 0; i < o->count; i++) {
		double got = elem_get(buf, o->dtype, i);

		if (fabs(got - ref->want[i]) <= ref->tol[i])
			continue;
		if (!res->mismatches++) {
			res->first_bad = i;
			res->got = got;
			res->want = ref->want[i];
			res->tol = ref->tol[i];
		}
	}
	res->hash = 0xcbf29ce484222325ULL;	/* FNV-1a */
	for (i = 0; i < o->count * xnic_coll_dtype_size(o->dtype); i++)
		res->hash = (res->hash ^ ((const unsigned char *)buf)[i]) *
			    0x100000001b3ULL;
	if (res->mismatches) {
		res->status = 1;
		snprintf(res->msg, sizeof(res->msg),
			 "%" PRIu64 " of %zu elements wrong; first: [%" PRIu64 "] = %.9g, expected %.9g (tolerance %.3g)",
			 res->mismatches, o->count, res->first_bad, res->got,
			 res->want, res->tol);
	}
}

/* ------------------------------ a rank ------------------------------ */

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *device_of(const struct opts *o, int rank, char *buf,
			     size_t size)
{
	const char *p = o->devices;
	int k;

	if (!p) {
		snprintf(buf, size, "%s%d", o->prefix, rank);
		return buf;
	}
	for (k = 0; k < rank && p; k++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	if (!p || !*p)
		return NULL;
	snprintf(buf, size, "%.*s", (int)strcspn(p, ","), p);
	return buf;
}

static int fail(struct rank_result *res, const char *what, int err,
		const struct xnic_comm *comm)
{
	res->status = 2;
	snprintf(res->msg, sizeof(res->msg), "%s: %s (%s)", what,
		 xnic_comm_strerror(comm), strerror(-err));
	return 2;
}

static int bcast_check(struct xnic_comm *comm, const struct opts *o,
		       int rank, struct rank_result *res)
{
	unsigned char *b = malloc(o->bcast);
	int root = o->nodes - 1, err;
	size_t i;

	if (!b)
		return fail(res, "broadcast buffer", -ENOMEM, NULL);
	for (i = 0; i < o->bcast; i++)
		b[i] = rank == root ? (unsigned char)mix64(o->seed + i) : 0xaa;
	err = xnic_broadcast(comm, b, o->bcast, root);
	if (err) {
		free(b);
		return fail(res, "broadcast", err, comm);
	}
	for (i = 0; i < o->bcast; i++) {
		if (b[i] != (unsigned char)mix64(o->seed + i)) {
			res->status = 1;
			snprintf(res->msg, sizeof(res->msg),
				 "broadcast: byte %zu is %#x, expected %#x", i,
				 b[i], (unsigned char)mix64(o->seed + i));
			free(b);
			return 1;
		}
	}
	free(b);
	res->bcast_ok = 1;
	return 0;
}

/* The CM bootstrap needs every rank's node id: ask each device. */
static void lookup_nodes(struct opts *o)
{
	struct xnic_ctx *ctx;
	char dev[64];
	int r, err;

	for (r = 0; r < o->nodes; r++) {
		if (!device_of(o, r, dev, sizeof(dev)))
			die("--devices names too few devices");
		err = xnic_open(dev, &ctx);
		if (err)
			die("opening %s: %s", dev, xnic_strerror(err));
		o->node_ids[r] = xnic_ctx_info(ctx)->node_id;
		xnic_close(ctx);
	}
}

/*
 * One all-reduce: with --concurrent K, part k of the buffer (near-equal
 * parts) on communicator k, all started before any is waited for.
 */
static int allreduce_parts(struct xnic_comm **comms, const struct opts *o,
			   const void *send, void *recv, int *failed)
{
	struct xnic_coll_req *reqs[MAX_CONCURRENT] = { NULL };
	size_t es = xnic_coll_dtype_size(o->dtype), off, n;
	int k, err;

	*failed = 0;
	if (o->concurrent == 1)
		return xnic_allreduce(comms[0], send, recv, o->count, o->dtype,
				      XNIC_COLL_SUM);
	for (k = 0; k < o->concurrent; k++) {
		off = o->count / (size_t)o->concurrent * (size_t)k;
		n = k == o->concurrent - 1 ? o->count - off :
		    o->count / (size_t)o->concurrent;
		err = xnic_allreduce_start(comms[k], (const char *)send + off * es,
					   (char *)recv + off * es, n, o->dtype,
					   XNIC_COLL_SUM, &reqs[k]);
		if (err) {
			*failed = k;
			xnic_coll_waitall(reqs, k);
			return err;
		}
	}
	err = xnic_coll_waitall(reqs, o->concurrent);
	for (k = 0; err && k < o->concurrent; k++)
		if (xnic_comm_strerror(comms[k])[0]) {
			*failed = k;
			break;
		}
	return err;
}

static int run_rank(const struct opts *o, int rank,
		    const struct reference *ref, struct rank_result *res)
{
	size_t bytes = o->count * xnic_coll_dtype_size(o->dtype);
	struct xnic_comm_cfg cfg = {
		.rank = rank,
		.nranks = o->nodes,
		.chunk_bytes = o->chunk,
		.slots = o->slots,
		.timeout_ms = o->timeout_s * 1000,
		.spin_us = o->spin_us,
		.max_inflight = o->max_inflight_set && !o->max_inflight ?
				SIZE_MAX : o->max_inflight,
		.algo = o->algo,
	};

	/* K communicators share the rank's budget of bytes in flight. */
	if (!o->max_inflight_set)
		cfg.max_inflight = XNIC_COLL_DEF_INFLIGHT / (size_t)o->concurrent;
	struct xnic_comm *comms[MAX_CONCURRENT] = { NULL }, *comm = NULL;
	struct xnic_bootstrap *bs = NULL;
	void *send = NULL, *recv = NULL;
	char dev[64];
	double t0, c0;
	int err, it, k, bad;

	cfg.device = device_of(o, rank, dev, sizeof(dev));
	if (!cfg.device)
		return fail(res, "--devices names too few devices", -EINVAL, NULL);
	if (o->cm)
		err = xnic_bootstrap_cm(rank, o->nodes, cfg.device, o->node_ids,
					o->service, o->timeout_s * 1000, &bs);
	else
		err = xnic_bootstrap_tcp(rank, o->nodes, "127.0.0.1",
					 (uint16_t)o->port, o->timeout_s * 1000,
					 &bs);
	if (err)
		return fail(res, "bootstrap", err, NULL);
	cfg.bootstrap = bs;
	for (k = 0, err = 0; k < o->concurrent && !err; k++)
		err = xnic_comm_init(&comms[k], &cfg);
	xnic_bootstrap_close(bs);
	comm = comms[0];
	if (err) {
		err = fail(res, "communicator", err, NULL);
		goto out;
	}
	res->algo = xnic_comm_algo(comm, &res->appliances);

	send = malloc(bytes ? bytes : 1);
	recv = o->inplace ? send : malloc(bytes ? bytes : 1);
	if (!send || !recv) {
		err = fail(res, "buffers", -ENOMEM, NULL);
		goto out;
	}
	for (it = -o->warmup; it < o->iters; it++) {
		if (it == -o->warmup || o->inplace)
			fill_input(send, o, rank);
		err = xnic_barrier(comm);
		if (err) {
			err = fail(res, "barrier", err, comm);
			goto out;
		}
		c0 = cpu_s();
		t0 = now_s();
		err = allreduce_parts(comms, o, send, recv, &bad);
		if (err) {
			err = fail(res, "allreduce", err, comms[bad]);
			goto out;
		}
		if (it >= 0) {
			res->secs[it] = now_s() - t0;
			res->cpu += cpu_s() - c0;
		}
	}
	/*
	 * The reference takes CPU the slower ranks' engines still need: a
	 * barrier first; another before the slices are all there.
	 */
	err = xnic_barrier(comm);
	if (!err) {
		reference_slice(ref, o, rank,
				res->algo == XNIC_COLL_ALGO_HIER);
		err = xnic_barrier(comm);
	}
	if (err) {
		err = fail(res, "barrier", err, comm);
		goto out;
	}
	check_result(recv, o, ref, res);
	err = res->status;
	if (!err && o->bcast)
		err = bcast_check(comm, o, rank, res);
	if (!err) {
		err = xnic_barrier(comm);
		if (err)
			err = fail(res, "final barrier", err, comm);
	}
out:
	if (recv != send)
		free(recv);
	free(send);
	for (k = 0; k < o->concurrent; k++)
		xnic_comm_destroy(comms[k]);
	return err;
}

/* ------------------------------ parent ------------------------------ */

static const char *dtype_name(int dtype)
{
	return dtype == XNIC_COLL_FLOAT32 ? "f32" : "bf16";
}

static const char *algo_name(int algo)
{
	return algo == XNIC_COLL_ALGO_HIER ? "hier" : "flat";
}

int main(int argc, char **argv)
{
	struct opts o;
	struct rank_result *res;
	struct reference ref;
	size_t bytes, shm;
	double avg = 0, best = 0, algbw, busbw, cpu = 0;
	pid_t *pids;
	int r, it, st, bad = 0, worst = 0;

	parse_opts(argc, argv, &o);
	bytes = o.count * xnic_coll_dtype_size(o.dtype);
	if (o.count && bytes / o.count != xnic_coll_dtype_size(o.dtype))
		die("--count too large");
	shm = (size_t)o.nodes * sizeof(*res);
	res = mmap(NULL, shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		   -1, 0);
	pids = calloc((size_t)o.nodes, sizeof(*pids));
	if (res == MAP_FAILED || !pids)
		die("out of memory");
	memset(res, 0, shm);
	/* The reference, shared by the ranks: 12 bytes per element. */
	ref.want = mmap(NULL, o.count * sizeof(double) + 1,
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ref.tol = mmap(NULL, o.count * sizeof(float) + 1,
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ref.want == MAP_FAILED || ref.tol == MAP_FAILED)
		die("no memory for the reference of %zu elements", o.count);
	if (o.cm)
		lookup_nodes(&o);
	fflush(NULL);
	for (r = 0; r < o.nodes; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			die("fork: %s", strerror(errno));
		if (!pids[r])
			_exit(run_rank(&o, r, &ref, &res[r]));
	}
	for (r = 0; r < o.nodes; r++) {
		if (waitpid(pids[r], &st, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (WIFSIGNALED(st)) {
			res[r].status = 2;
			snprintf(res[r].msg, sizeof(res[r].msg),
				 "killed by signal %d", WTERMSIG(st));
		} else if (WEXITSTATUS(st) && !res[r].status) {
			res[r].status = 2;
			snprintf(res[r].msg, sizeof(res[r].msg),
				 "exited with status %d", WEXITSTATUS(st));
		}
		if (res[r].status)
			bad++;
		if (res[r].status > worst)
			worst = res[r].status;
	}
	for (r = 1; r < o.nodes && !bad; r++) {
		if (res[r].hash == res[0].hash)
			continue;
		res[r].status = 1;
		snprintf(res[r].msg, sizeof(res[r].msg),
			 "its result differs from rank 0's (hash %#" PRIx64 " vs %#" PRIx64 ")",
			 res[r].hash, res[0].hash);
		bad++;
		worst = worst > 1 ? worst : 1;
	}
	for (it = 0; it < o.iters && !bad; it++) {
		double m = 0;

		for (r = 0; r < o.nodes; r++)
			if (res[r].secs[it] > m)
				m = res[r].secs[it];
		avg += m / o.iters;
		if (!it || m < best)
			best = m;
	}
	for (r = 0; r < o.nodes; r++)
		cpu += res[r].cpu / o.nodes / o.iters;
	algbw = avg > 0 ? (double)bytes / avg / 1e6 : 0;
	busbw = algbw * 2.0 * (o.nodes - 1) / o.nodes;
	if (o.json) {
		printf("{\"nodes\":%d,\"count\":%zu,\"dtype\":\"%s\",\"bytes\":%zu,"
		       "\"inplace\":%s,\"values\":\"%s\",\"iters\":%d,"
		       "\"time_us\":%.1f,\"best_us\":%.1f,"
		       "\"algbw_MBps\":%.2f,\"busbw_MBps\":%.2f,"
		       "\"rank_cpu_us\":%.1f,\"algo\":\"%s\",\"appliances\":%d,"
		       "\"result\":\"%s\"}\n",
		       o.nodes, o.count, dtype_name(o.dtype), bytes,
		       o.inplace ? "true" : "false",
		       o.values == VALUES_INT ? "int" : "real", o.iters,
		       avg * 1e6, best * 1e6, algbw, busbw, cpu * 1e6,
		       algo_name(res[0].algo), res[0].appliances,
		       bad ? "FAIL" : "PASS");
	} else {
		printf("allreduce %s: %d nodes, %zu elements (%zu bytes)%s, %s values: ",
		       dtype_name(o.dtype), o.nodes, o.count, bytes,
		       o.inplace ? " in place" : "",
		       o.values == VALUES_INT ? "integer" : "real");
		printf("%s algorithm (%d appliances): ", algo_name(res[0].algo),
		       res[0].appliances);
		if (bad)
			printf("FAIL\n");
		else
			printf("time %.3f ms (best %.3f ms of %d, CPU %.3f ms per rank), algbw %.2f MB/s, busbw %.2f MB/s: PASS\n",
			       avg * 1e3, best * 1e3, o.iters, cpu * 1e3,
			       algbw, busbw);
	}
	for (r = 0; r < o.nodes; r++)
		if (res[r].status)
			fprintf(stderr, "%s: rank %d: %s\n", prog, r, res[r].msg);
	return worst;
}
