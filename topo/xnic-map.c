// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xnic-map - map a TP x PP x DP layout onto a topology (libxnicmap), print
 * the cost of its mapping and of the naive rank order, write the launcher
 * files. Documentation/topology.rst, section "Rank mapping".
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xnic_map.h"

#define MiB 1048576.0

struct opts {
	const char *topology, *synthetic, *rankfile, *hosts, *write_topology;
	struct xnic_map_layout layout;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xnic-map (--topology FILE | --synthetic A,N,U,S[,MESH,UP,SPINE])\n"
		"                --tp N --pp N --dp N [--tp-bytes B] [--pp-bytes B] [--dp-bytes B]\n"
		"                [--rankfile FILE] [--hosts FILE] [--write-topology FILE]\n"
		"  --synthetic       A appliances of N nodes, U uplinks a node, S spines\n"
		"                    (optional Gbit/s of mesh, uplink, leaf-spine links; 100)\n"
		"  --tp/--pp/--dp    the layout; TP x PP x DP must be the node count\n"
		"  --*-bytes         bytes per step of each TP group's and DP group's\n"
		"                    all-reduce and of each PP send (suffix K M G T:\n"
		"                    powers of 1024; default 1G, 256M, 1G)\n"
		"  --rankfile        write an Open MPI rankfile\n"
		"  --hosts           write the node-rank list (\"HOST NODE_RANK\")\n"
		"  --write-topology  write the topology as JSON\n");
}

static int parse_int(const char *s, const char *opt, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1 << 30) {
		fprintf(stderr, "xnic-map: %s \"%s\": not a positive integer\n", opt, s);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_bytes(const char *s, const char *opt, double *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (*end && end[1] == 0 && (u = strchr(units, *end))) {
		v *= (double)(1ull << (10 * (u - units + 1)));
		end++;
	}
	if (errno || end == s || *end || !(v >= 0) || v > 1e18) {
		fprintf(stderr, "xnic-map: %s \"%s\": not a byte count (e.g. 512M)\n", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "topology", required_argument, NULL, 'f' },
		{ "synthetic", required_argument, NULL, 's' },
		{ "tp", required_argument, NULL, 't' },
		{ "pp", required_argument, NULL, 'p' },
		{ "dp", required_argument, NULL, 'd' },
		{ "tp-bytes", required_argument, NULL, 'T' },
		{ "pp-bytes", required_argument, NULL, 'P' },
		{ "dp-bytes", required_argument, NULL, 'D' },
		{ "rankfile", required_argument, NULL, 'r' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "write-topology", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c, bad = 0;

	o->layout.tp_bytes = o->layout.dp_bytes = 1 << 30;
	o->layout.pp_bytes = 256 << 20;
	while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
		switch (c) {
		case 'f': o->topology = optarg; break;
		case 's': o->synthetic = optarg; break;
		case 'r': o->rankfile = optarg; break;
		case 'H': o->hosts = optarg; break;
		case 'w': o->write_topology = optarg; break;
		case 't': bad |= parse_int(optarg, "--tp", &o->layout.tp); break;
		case 'p': bad |= parse_int(optarg, "--pp", &o->layout.pp); break;
		case 'd': bad |= parse_int(optarg, "--dp", &o->layout.dp); break;
		case 'T': bad |= parse_bytes(optarg, "--tp-bytes", &o->layout.tp_bytes); break;
		case 'P': bad |= parse_bytes(optarg, "--pp-bytes", &o->layout.pp_bytes); break;
		case 'D': bad |= parse_bytes(optarg, "--dp-bytes", &o->layout.dp_bytes); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (bad)
		return -1;
	if (optind < argc || !o->topology == !o->synthetic) {
		fprintf(stderr, "xnic-map: give one of --topology and --synthetic%s\n",
			optind < argc ? " and no other arguments" : "");
		return -1;
	}
	if (!o->layout.tp || !o->layout.pp || !o->layout.dp) {
		fprintf(stderr, "xnic-map: --tp, --pp and --dp are required\n");
		return -1;
	}
	return 0;
}

static struct xnic_map_topo *load(const struct opts *o, char *err)
{
	struct xnic_map_synth s;

	if (o->topology)
		return xnic_map_topo_load(o->topology, err);
	if (xnic_map_synth_parse(o->synthetic, &s, err))
		return NULL;
	return xnic_map_synthetic(&s, err);
}

/* Write a file with one of the writers; 0 or -1 (reported). */
static int write_file(const char *path, const char *what,
		      int (*fn)(FILE *, const void *), const void *arg)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f) {
		fprintf(stderr, "xnic-map: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ret = fn(f, arg);
	if (fclose(f) || ret) {
		fprintf(stderr, "xnic-map: %s: cannot write the %s\n", path, what);
		return -1;
	}
	return 0;
}

struct mapped {
	const struct xnic_map_topo *t;
	int nranks;
	const int *node_of_rank;
};

static int rankfile(FILE *f, const void *arg)
{
	const struct mapped *m = arg;

	return xnic_map_write_rankfile(m->t, m->nranks, m->node_of_rank, f);
}

static int hosts(FILE *f, const void *arg)
{
	const struct mapped *m = arg;

	return xnic_map_write_hosts(m->t, m->nranks, m->node_of_rank, f);
}

static int topology(FILE *f, const void *arg)
{
	return xnic_map_topo_write(arg, f);
}

static void print_cost(const struct xnic_map_topo *t, const char *what,
		       const struct xnic_map_cost *c)
{
	const char *from = "-", *to = "-";

	/* none without traffic (a topology may have no links at all) */
	if (c->busiest_link >= 0) {
		const struct xnic_map_link *l = &t->links[c->busiest_link];

		from = t->vertices[c->busiest_dir ? l->b : l->a].name;
		to = t->vertices[c->busiest_dir ? l->a : l->b].name;
	}
	printf("  %-12s %12.3f %14.3f %14.3f   %s -> %s\n", what, c->step_s * 1e3,
	       c->byte_hops / 1e9, c->cross_bytes / 1e9, from, to);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int report(const struct opts *o, const struct xnic_map_topo *t,
		  const int *mapped, const int *naive, int band, double ms)
{
	const struct xnic_map_layout *l = &o->layout;
	struct xnic_map_cost cm, cn;
	char err[XNIC_MAP_ERRLEN], why[XNIC_MAP_ERRLEN];

	if (xnic_map_check(t, l, mapped, err)) {
		fprintf(stderr, "xnic-map: internal error: the mapping breaks a constraint: %s\n", err);
		return -1;
	}
	if (xnic_map_cost(t, l, mapped, &cm, err) || xnic_map_cost(t, l, naive, &cn, err)) {
		fprintf(stderr, "xnic-map: %s\n", err);
		return -1;
	}
	printf("topology: %d appliances, %d nodes, %d switches, %d links\n",
	       t->nappliances, t->nnodes, t->nvertices - t->nnodes, t->nlinks);
	printf("layout: TP %d x PP %d x DP %d; a step: TP %.4g MiB, PP %.4g MiB, DP %.4g MiB\n",
	       l->tp, l->pp, l->dp, l->tp_bytes / MiB, l->pp_bytes / MiB,
	       l->dp_bytes / MiB);
	printf("mapping: bands of %d stage%s, in %.1f ms; constraints met\n",
	       band, band > 1 ? "s" : "", ms);
	printf("naive order (rank r on the r-th node): %s\n",
	       xnic_map_check(t, l, naive, why) ? why : "constraints met");
	printf("cost of a step:  step (ms)  byte-hops (GB)  cross-app (GB)   busiest link\n");
	print_cost(t, "xnic-map", &cm);
	print_cost(t, "naive", &cn);
	printf("cost_vs_naive %.4f\n", cn.step_s > 0 ? cm.step_s / cn.step_s : 1.0);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	char err[XNIC_MAP_ERRLEN];
	struct xnic_map_topo *t;
	int *mapped = NULL, *naive = NULL, band, ret = 1;
	struct timespec t0;
	struct mapped m;

	if (parse_opts(argc, argv, &o))
		return 2;
	t = load(&o, err);
	if (!t) {
		fprintf(stderr, "xnic-map: %s\n", err);
		return 1;
	}
	if (xnic_map_layout_check(t, &o.layout, err)) {
		fprintf(stderr, "xnic-map: impossible layout: %s\n", err);
		goto out;
	}
	mapped = malloc(sizeof(int) * t->nnodes);
	naive = malloc(sizeof(int) * t->nnodes);
	if (!mapped || !naive) {
		fprintf(stderr, "xnic-map: out of memory\n");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (xnic_map_assign(t, &o.layout, mapped, &band, err)) {
		fprintf(stderr, "xnic-map: %s\n", err);
		goto out;
	}
	xnic_map_naive(t, &o.layout, naive);
	if (report(&o, t, mapped, naive, band, ms_since(&t0)))
		goto out;
	m = (struct mapped){ t, t->nnodes, mapped };
	if ((o.rankfile && write_file(o.rankfile, "rankfile", rankfile, &m)) ||
	    (o.hosts && write_file(o.hosts, "node-rank list", hosts, &m)) ||
	    (o.write_topology && write_file(o.write_topology, "topology", topology, t)))
		goto out;
	ret = 0;
out:
	free(mapped);
	free(naive);
	xnic_map_topo_free(t);
	return ret;
}
