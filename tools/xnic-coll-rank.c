// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-coll-rank - one rank of a checked all-reduce, for ranks that live
 * on different hosts (tools/xnic-demo-vms: one rank per VM), where
 * coll/xnic-allreduce (which forks every rank on one host) cannot go.
 *
 * Joins a communicator of --nodes ranks on --device through the
 * bootstrap (--bootstrap tcp:ADDR: rank 0 listens on ADDR:--port, the
 * others connect to it; --bootstrap cm:NODE0,NODE1,...: the xnic node id
 * of every rank, in rank order, and rank 0 listens on CM service id
 * --service: no TCP and no IP at all), fills its float32 input from the
 * seed, runs
 * --warmup untimed and --iters timed all-reduces (sum), each after a
 * barrier, and checks every element of its result against the exact sum
 * it computes on its own from the seeds of all ranks. The inputs are
 * integers in [-16, 16], so every sum is exact in float32 and the check is
 * equality. Prints one JSON line: rank, elements, bytes, the mean and best
 * time of a timed all-reduce (us), PASS or FAIL and a message; exits 0
 * (PASS), 1 (a mismatch) or 2 (an error).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../coll/xnic_coll.h"
#include "xnic_tool.h"

#define MSG_LEN	400
#define DEF_SERVICE	0x58434f4c4c000000ULL	/* "XCOLL" */

static const char *prog = "xnic-coll-rank";

struct opts {
	int rank;
	int nodes;
	const char *device;
	const char *bootstrap;
	unsigned int port;
	uint32_t *node_ids;
	uint64_t service;
	size_t count;
	uint64_t seed;
	int iters;
	int warmup;
	int timeout_s;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s --rank R --nodes N --device DEV\n"
"          (--bootstrap tcp:ADDR --port P | --bootstrap cm:NODE0,NODE1,...\n"
"          [--service S]) [--count C] [--seed S] [--iters N] [--warmup N]\n"
"          [--timeout SEC]\n"
"  --bootstrap cm:NODES  xnic node id of every rank, in rank order; rank 0\n"
"                 listens on CM service id S (default %#llx)\n"
"  --count C      float32 elements (default 1048576)\n"
"  --seed S       input seed, the same on every rank (default 1)\n"
"  --iters N      timed all-reduces (default 1)\n"
"  --warmup N     untimed all-reduces first (default 0)\n"
"  --timeout SEC  bootstrap and communicator timeout (default 120)\n",
		prog, DEF_SERVICE);
}

#define die(...)	xnic_tool_die(2, __VA_ARGS__)

static unsigned long long num(const char *s, const char *what,
			      unsigned long long min, unsigned long long max)
{
	return xnic_tool_num(2, what, s, min, max, false);
}

/* cm:NODE0,NODE1,...: exactly --nodes node ids (0..65534). */
static void parse_nodes(struct opts *o, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int n = 0;

	o->node_ids = calloc((size_t)o->nodes, sizeof(*o->node_ids));
	if (!copy || !o->node_ids)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == o->nodes)
			die("--bootstrap cm: more than --nodes %d node ids",
			    o->nodes);
		o->node_ids[n++] = (uint32_t)num(tok, "node id", 0, 65534);
	}
	free(copy);
	if (n != o->nodes)
		die("--bootstrap cm: %d node ids for --nodes %d", n, o->nodes);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "rank", required_argument, NULL, 'r' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "device", required_argument, NULL, 'd' },
		{ "bootstrap", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "service", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'i' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct opts){ .rank = -1, .count = 1 << 20, .seed = 1,
			    .iters = 1, .timeout_s = 120,
			    .service = DEF_SERVICE };
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'r': o->rank = (int)num(optarg, "--rank", 0, 1023); break;
		case 'N': o->nodes = (int)num(optarg, "--nodes", 1, 1024); break;
		case 'd': o->device = optarg; break;
		case 'b': o->bootstrap = optarg; break;
		case 'p': o->port = (unsigned int)num(optarg, "--port", 0, 65535); break;
		case 'S': o->service = num(optarg, "--service", 0, UINT64_MAX); break;
		case 'c': o->count = num(optarg, "--count", 0, 1ULL << 30); break;
		case 's': o->seed = num(optarg, "--seed", 0, UINT64_MAX); break;
		case 'i': o->iters = (int)num(optarg, "--iters", 1, 1000); break;
		case 'w': o->warmup = (int)num(optarg, "--warmup", 0, 1000); break;
		case 't': o->timeout_s = (int)num(optarg, "--timeout", 0, 86400); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc || o->rank < 0 || o->nodes < 1 ||
	    o->rank >= o->nodes || !o->device || !o->bootstrap ||
	    o->iters < 1) {
		usage(stderr);
		exit(2);
	}
	if (!strncmp(o->bootstrap, "cm:", 3))
		parse_nodes(o, o->bootstrap + 3);
	else if (strncmp(o->bootstrap, "tcp:", 4) || !o->bootstrap[4])
		die("--bootstrap: tcp:ADDR or cm:NODE0,NODE1,..., got '%s'",
		    o->bootstrap);
	else if (!o->port)
		die("--bootstrap tcp needs --port");
}

/* splitmix64: the input of rank @r at element @i, an integer in [-16, 16]. */
static float input(uint64_t seed, int r, size_t i)
{
	uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)r * 0xbf58476d1ce4e5b9ULL +
		     (uint64_t)i * 0x94d049bb133111ebULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (float)((int)(z % 33) - 16);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(const struct opts *o, const char *result, double avg,
		   double best, const char *msg)
{
	const char *p;

	printf("{\"rank\":%d,\"nodes\":%d,\"device\":\"%s\",\"count\":%zu,"
	       "\"bytes\":%zu,\"iters\":%d,\"time_us\":%.1f,\"best_us\":%.1f,"
	       "\"result\":\"%s\",\"message\":\"", o->rank, o->nodes,
	       o->device, o->count, o->count * sizeof(float), o->iters,
	       avg * 1e6, best * 1e6, result);
	for (p = msg; *p; p++)
		if (*p != '"' && *p != '\\' && (unsigned char)*p >= ' ')
			putchar(*p);
	printf("\"}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct xnic_comm_cfg cfg = { 0 };
	struct xnic_bootstrap *bs = NULL;
	struct xnic_comm *comm = NULL;
	double t0, t, sum = 0, best = 0;
	float *send = NULL, *recv = NULL;
	char msg[MSG_LEN] = "";
	uint64_t bad = 0;
	struct opts o;
	int err, it, r, rc = 2;
	size_t i;

	parse_opts(argc, argv, &o);
	send = malloc(o.count * sizeof(float) + 1);
	recv = malloc(o.count * sizeof(float) + 1);
	if (!send || !recv) {
		snprintf(msg, sizeof(msg), "out of memory");
		goto out;
	}
	if (o.node_ids)
		err = xnic_bootstrap_cm(o.rank, o.nodes, o.device, o.node_ids,
					o.service, o.timeout_s * 1000, &bs);
	else
		err = xnic_bootstrap_tcp(o.rank, o.nodes, o.bootstrap + 4,
					 (uint16_t)o.port, o.timeout_s * 1000,
					 &bs);
	if (err) {
		snprintf(msg, sizeof(msg), "bootstrap %s: %s (%s)", o.bootstrap,
			 xnic_comm_strerror(NULL), strerror(-err));
		goto out;
	}
	cfg.rank = o.rank;
	cfg.nranks = o.nodes;
	cfg.device = o.device;
	cfg.bootstrap = bs;
	cfg.timeout_ms = o.timeout_s * 1000;
	err = xnic_comm_init(&comm, &cfg);
	xnic_bootstrap_close(bs);
	if (err) {
		snprintf(msg, sizeof(msg), "communicator: %s (%s)",
			 xnic_comm_strerror(NULL), strerror(-err));
		goto out;
	}
	for (i = 0; i < o.count; i++)
		send[i] = input(o.seed, o.rank, i);
	for (it = -o.warmup; it < o.iters; it++) {
		err = xnic_barrier(comm);
		if (!err) {
			t0 = now_s();
			err = xnic_allreduce(comm, send, recv, o.count,
					     XNIC_COLL_FLOAT32, XNIC_COLL_SUM);
			t = now_s() - t0;
		}
		if (err) {
			snprintf(msg, sizeof(msg), "all-reduce: %s (%s)",
				 xnic_comm_strerror(comm), strerror(-err));
			goto out;
		}
		if (it >= 0) {
			sum += t;
			best = it == 0 || t < best ? t : best;
		}
	}
	for (i = 0; i < o.count; i++) {
		float want = 0;

		for (r = 0; r < o.nodes; r++)
			want += input(o.seed, r, i);
		if (recv[i] != want && !bad++)
			snprintf(msg, sizeof(msg),
				 "element %zu is %g, expected %g", i,
				 (double)recv[i], (double)want);
	}
	if (bad) {
		char more[64];

		snprintf(more, sizeof(more), " (%" PRIu64 " of %zu wrong)",
			 bad, o.count);
		strncat(msg, more, sizeof(msg) - strlen(msg) - 1);
		rc = 1;
	} else {
		rc = 0;
	}
	/* Nobody leaves while a peer may still write to it. */
	err = xnic_barrier(comm);
	if (err && !rc) {
		snprintf(msg, sizeof(msg), "final barrier: %s (%s)",
			 xnic_comm_strerror(comm), strerror(-err));
		rc = 2;
	}
out:
	report(&o, rc ? "FAIL" : "PASS", o.iters ? sum / o.iters : 0, best,
	       msg);
	xnic_comm_destroy(comm);
	free(recv);
	free(send);
	free(o.node_ids);
	return rc;
}
