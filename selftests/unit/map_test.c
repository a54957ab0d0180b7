// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnicmap (topo/), the mapping: refusal of impossible layouts, the cost
 * model on hand-computed cases, the constraint check catching each broken
 * constraint, every constraint on every mapping (seeded random topologies
 * too), the choice between DP and PP locality, and the launcher files.
 * Run on the host under ASan and UBSan.
 */
#include <math.h>

#include "map_util.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static unsigned int rnd(unsigned int n)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (unsigned int)(x % n);
}

/* Independent of xnic_map_check(): a bijection, TP groups on one appliance. */
static int tp_ok(const struct xnic_map_topo *t, const struct xnic_map_layout *l,
		 const int *map)
{
	int *seen = calloc(t->nvertices, sizeof(int)), r, ok = 1;

	for (r = 0; ok && r < t->nnodes; r++) {
		ok = map[r] >= 0 && map[r] < t->nvertices &&
		     t->vertices[map[r]].kind == XNIC_MAP_NODE && !seen[map[r]]++;
		ok = ok && t->vertices[map[r]].appliance ==
			   t->vertices[map[r - r % l->tp]].appliance;
	}
	free(seen);
	return ok;
}

static double step_of(const struct xnic_map_topo *t,
		      const struct xnic_map_layout *l, const int *map)
{
	struct xnic_map_cost c;
	char err[XNIC_MAP_ERRLEN];

	if (xnic_map_cost(t, l, map, &c, err)) {
		fprintf(stderr, "cost: %s\n", err);
		return NAN;
	}
	return c.step_s;
}

TEST(refuses_impossible_layouts)
{
	static const struct {
		struct xnic_map_layout l;
		const char *want;
	} cases[] = {
		{ { 0, 4, 6, 0, 0, 0 }, "every size must be >= 1" },
		{ { 4, -1, 6, 0, 0, 0 }, "every size must be >= 1" },
		{ { 4, 2, 2, 0, 0, 0 }, "4 x 2 x 2 = 16 ranks, but the topology has 24 nodes" },
		{ { 1, 1, 25, 0, 0, 0 }, "= 25 ranks, but the topology has 24" },
		{ { 1 << 30, 1 << 30, 1 << 30, 0, 0, 0 }, "ranks, but the topology has 24" },
		{ { 12, 1, 2, 0, 0, 0 }, "TP=12 is larger than the largest appliance (\"a0\", 8 nodes)" },
		{ { 3, 1, 8, 0, 0, 0 }, "appliance \"a0\" has 8 nodes, not a multiple of TP=3" },
		{ { 8, 3, 1, -1, 0, 0 }, "must be finite and >= 0" },
		{ { 8, 3, 1, 0, INFINITY, 0 }, "must be finite and >= 0" },
		{ { 8, 3, 1, 0, 0, NAN }, "must be finite and >= 0" },
	};
	struct xnic_map_topo *t = synth(3, 8, 1, 1, 100, 100, 100);
	char err[XNIC_MAP_ERRLEN];
	int map[24], band;
	unsigned int i;

	ASSERT_NE(NULL, t);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(-EINVAL, xnic_map_assign(t, &cases[i].l, map, &band, err));
		EXPECT_NE(NULL, strstr(err, cases[i].want))
			TH_LOG("case %u: \"%s\" does not say \"%s\"", i, err, cases[i].want);
	}
	xnic_map_topo_free(t);
}

/*
 * Links so slow that every band's step is infinite (bytes x 8 / bps
 * overflows): the mapping is still made, and meets the constraints.
 */
TEST(assign_when_every_cost_overflows)
{
	struct xnic_map_topo *t = synth(2, 2, 1, 1, 5e-324, 5e-324, 5e-324);
	struct xnic_map_layout l = { 1, 2, 2, 1e9, 1e9, 1e9 };
	char err[XNIC_MAP_ERRLEN];
	int map[4], band = 0, r;

	ASSERT_NE(NULL, t);
	for (r = 0; r < 4; r++)
		map[r] = -1;
	ASSERT_EQ(0, xnic_map_assign(t, &l, map, &band, err)) TH_LOG("%s", err);
	EXPECT_LE(1, band);
	EXPECT_LE(band, 2);
	EXPECT_EQ(0, xnic_map_check(t, &l, map, err)) TH_LOG("%s", err);
	EXPECT_EQ(INFINITY, step_of(t, &l, map));
	xnic_map_topo_free(t);
}

/* Two nodes, one 100 Gbit/s mesh link; TP all-reduce of 1 GB: 1 GB each way. */
TEST(cost_mesh_pair)
{
	struct xnic_map_topo *t = synth(1, 2, 0, 0, 100, 100, 100);
	struct xnic_map_layout l = { 2, 1, 1, 1e9, 0, 0 };
	struct xnic_map_cost c;
	int map[2];

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, xnic_map_assign(t, &l, map, NULL, NULL));
	ASSERT_EQ(0, xnic_map_cost(t, &l, map, &c, NULL));
	EXPECT_EQ(0, fabs(c.step_s - 0.08) > 1e-12);	/* 8e9 bit / 1e11 bit/s */
	EXPECT_EQ(2e9, c.byte_hops);
	EXPECT_EQ(0, c.cross_bytes);
	EXPECT_EQ(0, c.busiest_link);
	xnic_map_topo_free(t);
}

/* Two one-node appliances, PP 2: 1 GB each way over 4 hops of 100 Gbit/s. */
TEST(cost_pipeline_over_a_spine)
{
	struct xnic_map_topo *t = synth(2, 1, 1, 1, 100, 100, 100);
	struct xnic_map_layout l = { 1, 2, 1, 0, 1e9, 0 };
	struct xnic_map_cost c;
	int map[2];

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, xnic_map_assign(t, &l, map, NULL, NULL));
	ASSERT_EQ(0, xnic_map_cost(t, &l, map, &c, NULL));
	EXPECT_EQ(0, fabs(c.step_s - 0.08) > 1e-12);
	EXPECT_EQ(8e9, c.byte_hops);
	EXPECT_EQ(2e9, c.cross_bytes);
	xnic_map_topo_free(t);
}

/*
 * 2 appliances x 2 nodes, 2 uplinks (100 Gbit/s), 2 spines (10 Gbit/s),
 * a DP group of 4 all-reducing 4 GB, hierarchically: inside each
 * appliance each member sends 2 x 4 GB / 2 = 4 GB to the other (0.32 s on
 * a 100 Gbit/s mesh link); across, member k of a0 and of a1 all-reduce
 * their 2 GB shards: 2 (2 - 1) / 2 x 2 GB = 2 GB each way, 1 GB on each
 * uplink, each leaf's 2 GB over 2 spine links: 1 GB = 8 Gbit at 10 Gbit/s
 * = 0.8 s, the busiest. Byte-hops: 4 x 4 GB x 1 + 4 x 2 GB x 4 = 48 GB;
 * 8 GB leave an appliance.
 */
TEST(cost_hierarchical_across_spines)
{
	struct xnic_map_topo *t = synth(2, 2, 2, 2, 100, 100, 10);
	struct xnic_map_layout l = { 1, 1, 4, 0, 0, 4e9 };
	struct xnic_map_cost c;
	const struct xnic_map_link *k;
	int map[4];

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, xnic_map_assign(t, &l, map, NULL, NULL));
	ASSERT_EQ(0, xnic_map_cost(t, &l, map, &c, NULL));
	EXPECT_EQ(0, fabs(c.step_s - 0.8) > 1e-9);
	EXPECT_EQ(0, fabs(c.byte_hops - 48e9) > 1);
	EXPECT_EQ(8e9, c.cross_bytes);
	ASSERT_LE(0, c.busiest_link);
	k = &t->links[c.busiest_link];
	EXPECT_EQ(XNIC_MAP_LEAF, t->vertices[k->a].kind);
	EXPECT_EQ(XNIC_MAP_SPINE, t->vertices[k->b].kind);
	xnic_map_topo_free(t);
}

/* One flow a0n0 -> a1n0 of 1 GB over 2 spines: the bytes on each direction. */
TEST(flow_loads_each_link_direction)
{
	struct xnic_map_topo *t = synth(2, 1, 1, 2, 100, 100, 100);
	struct xnic_map_cost c = { 0 };
	struct load ld = { .t = t, .c = &c };
	static const struct {
		const char *from, *to;
		double bytes;
	} want[] = {
		{ "a0n0", "a0l0", 1e9 }, { "a0l0", "s0", 0.5e9 }, { "a0l0", "s1", 0.5e9 },
		{ "s0", "a1l0", 0.5e9 }, { "s1", "a1l0", 0.5e9 }, { "a1l0", "a1n0", 1e9 },
	};
	double total = 0;
	unsigned int i, k;

	ASSERT_NE(NULL, t);
	ld.dir = calloc(2 * t->nlinks + 2 * t->nvertices, sizeof(double));
	ld.up = ld.dir + 2 * t->nlinks;
	ld.down = ld.up + t->nvertices;
	ASSERT_EQ(0, flow(&ld, xnic_map_find(t, "a0n0"), xnic_map_find(t, "a1n0"),
			  1e9, "PP", 0));
	spines(&ld);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int from = xnic_map_find(t, want[i].from), to = xnic_map_find(t, want[i].to);

		for (k = 0; k < (unsigned int)t->nlinks; k++)
			if ((t->links[k].a == from && t->links[k].b == to) ||
			    (t->links[k].a == to && t->links[k].b == from))
				break;
		ASSERT_GT(t->nlinks, (int)k);
		EXPECT_EQ(want[i].bytes, ld.dir[2 * k + (t->links[k].a != from)])
			TH_LOG("%s -> %s", want[i].from, want[i].to);
	}
	for (k = 0; k < 2 * (unsigned int)t->nlinks; k++)
		total += ld.dir[k];
	EXPECT_EQ(4e9, total);	/* nothing anywhere else */
	EXPECT_EQ(4e9, c.byte_hops);
	free(ld.dir);
	xnic_map_topo_free(t);
}

/* No mesh link: the TP all-reduce goes through the two leaves both nodes reach. */
TEST(cost_through_shared_leaves)
{
	struct xnic_map_topo *t = xnic_map_topo_new();
	struct xnic_map_layout l = { 2, 1, 1, 1e9, 0, 0 };
	struct xnic_map_cost c;
	int map[2], n0, n1, l0, l1;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, xnic_map_add_appliance(t, "a"));
	n0 = xnic_map_add_vertex(t, "n0", XNIC_MAP_NODE, 0, "n0");
	n1 = xnic_map_add_vertex(t, "n1", XNIC_MAP_NODE, 0, "n1");
	l0 = xnic_map_add_vertex(t, "l0", XNIC_MAP_LEAF, 0, NULL);
	l1 = xnic_map_add_vertex(t, "l1", XNIC_MAP_LEAF, 0, NULL);
	ASSERT_LE(0, xnic_map_add_link(t, n0, l0, 100, NULL));
	ASSERT_LE(0, xnic_map_add_link(t, n0, l1, 100, NULL));
	ASSERT_LE(0, xnic_map_add_link(t, l0, n1, 100, NULL));
	ASSERT_LE(0, xnic_map_add_link(t, l1, n1, 100, NULL));
	ASSERT_EQ(0, xnic_map_topo_finish(t, NULL));
	ASSERT_EQ(0, xnic_map_assign(t, &l, map, NULL, NULL));
	ASSERT_EQ(0, xnic_map_cost(t, &l, map, &c, NULL));
	EXPECT_EQ(0, fabs(c.step_s - 0.04) > 1e-12);	/* 0.5 GB a link */
	EXPECT_EQ(4e9, c.byte_hops);
	xnic_map_topo_free(t);
}

TEST(cost_names_a_missing_path)
{
	struct xnic_map_topo *t = synth(2, 2, 0, 0, 100, 100, 100);
	struct xnic_map_layout l = { 2, 1, 2, 1, 1, 1 };
	char err[XNIC_MAP_ERRLEN];
	int map[4];

	ASSERT_NE(NULL, t);
	EXPECT_EQ(-EINVAL, xnic_map_assign(t, &l, map, NULL, err));
	EXPECT_NE(NULL, strstr(err, "no path from node \"a0n0\" to \"a1n0\" (DP traffic of rank 0)"))
		TH_LOG("%s", err);
	xnic_map_topo_free(t);
}

/* Each constraint of xnic_map_check(), broken on purpose, is caught. */
TEST(check_catches_each_constraint)
{
	struct xnic_map_topo *t = synth(3, 2, 1, 1, 100, 100, 100);
	struct xnic_map_layout tp = { 2, 1, 3, 1, 1, 1 }, dp = { 1, 1, 6, 1, 1, 1 };
	char err[XNIC_MAP_ERRLEN];
	int map[6], tmp;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, xnic_map_assign(t, &tp, map, NULL, NULL));
	ASSERT_EQ(0, xnic_map_check(t, &tp, map, err));
	map[1] = map[0];
	EXPECT_EQ(-EINVAL, xnic_map_check(t, &tp, map, err));
	EXPECT_NE(NULL, strstr(err, "rank 1: vertex"));
	map[1] = xnic_map_find(t, "s0");
	EXPECT_EQ(-EINVAL, xnic_map_check(t, &tp, map, err));
	map[1] = -1;
	EXPECT_EQ(-EINVAL, xnic_map_check(t, &tp, map, err));
	ASSERT_EQ(0, xnic_map_assign(t, &tp, map, NULL, NULL));
	tmp = map[1], map[1] = map[2], map[2] = tmp;
	EXPECT_EQ(-EINVAL, xnic_map_check(t, &tp, map, err));
	EXPECT_NE(NULL, strstr(err, "TP group of rank 1 spans appliances \"a0\" and \"a1\""))
		TH_LOG("%s", err);
	EXPECT_EQ(0, tp_ok(t, &tp, map));

	/* DP ring a0 a0 a1 a1 a2 a2 -> a0 a1 a0 a1 a2 a2: enters a0 twice */
	ASSERT_EQ(0, xnic_map_assign(t, &dp, map, NULL, NULL));
	ASSERT_EQ(0, xnic_map_check(t, &dp, map, err));
	tmp = map[1], map[1] = map[2], map[2] = tmp;
	EXPECT_EQ(-EINVAL, xnic_map_check(t, &dp, map, err));
	EXPECT_NE(NULL, strstr(err, "its ring enters 5 times the 3 appliances"))
		TH_LOG("%s", err);
	xnic_map_topo_free(t);
}

/*
 * 2 appliances x 4 nodes, TP 2 x PP 2 x DP 2: DP-heavy traffic keeps each
 * DP group on one appliance (band 1); PP-heavy keeps each pipeline on one
 * (band 2), and then beats the naive order, which splits every pipeline.
 */
TEST(dp_or_pp_locality_by_bytes)
{
	struct xnic_map_topo *t = synth(2, 4, 1, 1, 100, 100, 100);
	struct xnic_map_layout dp = { 2, 2, 2, 1e6, 1e6, 1e9 };
	struct xnic_map_layout pp = { 2, 2, 2, 1e6, 1e9, 1e6 };
	int map[8], naive[8], band, r;

	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, xnic_map_assign(t, &dp, map, &band, NULL));
	EXPECT_EQ(1, band);
	for (r = 0; r < 8; r++)	/* rank r and its DP peer r ^ 2 */
		EXPECT_EQ(t->vertices[map[r]].appliance,
			  t->vertices[map[r ^ 2]].appliance);
	ASSERT_EQ(0, xnic_map_assign(t, &pp, map, &band, NULL));
	EXPECT_EQ(2, band);
	ASSERT_EQ(0, xnic_map_check(t, &pp, map, NULL));
	for (r = 0; r < 4; r++)	/* rank r and its next stage r + 4 */
		EXPECT_EQ(t->vertices[map[r]].appliance,
			  t->vertices[map[r + 4]].appliance);
	ASSERT_EQ(0, xnic_map_naive(t, &pp, naive));
	EXPECT_LT(step_of(t, &pp, map), step_of(t, &pp, naive) * 0.5);
	xnic_map_topo_free(t);
}

/*
 * A random topology: 1-6 appliances of TP x 1..3 nodes (nodes listed in
 * appliance order or shuffled), 1-3 uplinks and spines, some mesh links
 * missing, bandwidths of 25, 50 or 100 Gbit/s.
 */
static struct xnic_map_topo *random_topo(int tp, int shuffle)
{
	struct xnic_map_topo *t = xnic_map_topo_new();
	int a, i, j, na = 1 + rnd(6), nu = 1 + rnd(3), ns = 1 + rnd(3), left = 0;
	int size[6], added[6] = { 0 }, first_leaf[6], spine0, *app_nodes[6];
	static const double gbps[] = { 25, 50, 100 };
	char name[32];

	spine0 = 0;
	for (i = 0; i < ns; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		xnic_map_add_vertex(t, name, XNIC_MAP_SPINE, -1, NULL);
	}
	for (a = 0; a < na; a++) {
		snprintf(name, sizeof(name), "a%d", a);
		xnic_map_add_appliance(t, name);
		size[a] = tp * (1 + rnd(3));
		left += size[a];
		app_nodes[a] = calloc(size[a], sizeof(int));
		first_leaf[a] = t->nvertices;
		for (i = 0; i < nu; i++) {
			snprintf(name, sizeof(name), "a%dl%d", a, i);
			xnic_map_add_vertex(t, name, XNIC_MAP_LEAF, a, NULL);
			for (j = 0; j < ns; j++)
				xnic_map_add_link(t, t->nvertices - 1, spine0 + j,
						  gbps[rnd(3)], NULL);
		}
	}
	for (a = 0; left; left--) {
		if (shuffle)
			do a = rnd(na); while (added[a] == size[a]);
		else
			while (added[a] == size[a])
				a++;
		snprintf(name, sizeof(name), "a%dn%d", a, added[a]);
		app_nodes[a][added[a]++] = xnic_map_add_vertex(t, name, XNIC_MAP_NODE, a, name);
	}
	for (a = 0; a < na; a++) {
		for (i = 0; i < size[a]; i++) {
			for (j = i + 1; j < size[a]; j++)
				if (rnd(10))
					xnic_map_add_link(t, app_nodes[a][i], app_nodes[a][j],
							  gbps[rnd(3)], NULL);
			for (j = 0; j < nu; j++)
				xnic_map_add_link(t, app_nodes[a][i], first_leaf[a] + j,
						  gbps[rnd(3)], NULL);
		}
		free(app_nodes[a]);
	}
	if (xnic_map_topo_finish(t, NULL)) {
		xnic_map_topo_free(t);
		return NULL;
	}
	return t;
}

static double random_bytes(void)
{
	return rnd(4) ? (1 + rnd(1000)) * 1e6 : 0;
}

/*
 * Every mapping meets every constraint (checked twice: independently and by
 * xnic_map_check()), as does every band the mapper tries; its cost is no
 * more than band 1's, band PP's, and the naive order's when that order
 * meets the constraints too; a TP that no appliance size admits is refused.
 */
TEST(random_topologies)
{
	int iter, tp, blocks, pp, band, c, *map, *other, valid_naive = 0, refusals = 0;
	struct xnic_map_layout l;
	char err[XNIC_MAP_ERRLEN];
	struct xnic_map_topo *t;
	double best;

	for (iter = 0; iter < 300; iter++) {
		tp = 1 + rnd(4);
		t = random_topo(tp, iter % 2);
		ASSERT_NE(NULL, t);
		blocks = t->nnodes / tp;
		do pp = 1 + rnd(blocks); while (blocks % pp);
		l = (struct xnic_map_layout){ tp, pp, blocks / pp, random_bytes(),
					      random_bytes(), random_bytes() };
		map = malloc(sizeof(int) * t->nnodes);
		other = malloc(sizeof(int) * t->nnodes);
		ASSERT_EQ(0, xnic_map_assign(t, &l, map, &band, err))
			TH_LOG("iteration %d: %s", iter, err);
		ASSERT_TRUE(band >= 1 && band <= pp);
		ASSERT_TRUE(tp_ok(t, &l, map));
		ASSERT_EQ(0, xnic_map_check(t, &l, map, err))
			TH_LOG("iteration %d: %s", iter, err);
		best = step_of(t, &l, map);
		for (c = 1; c <= pp; c++) {
			ASSERT_EQ(0, xnic_map_tiled(t, &l, c, other));
			ASSERT_EQ(0, xnic_map_check(t, &l, other, err))
				TH_LOG("iteration %d band %d: %s", iter, c, err);
			if (c == 1 || c == pp)
				ASSERT_LE(best, step_of(t, &l, other));
		}
		ASSERT_EQ(0, xnic_map_naive(t, &l, other));
		if (!xnic_map_check(t, &l, other, NULL)) {
			ASSERT_LE(best, step_of(t, &l, other) * (1 + 1e-12));
			valid_naive++;
		}
		/* TP + 1: refused exactly when an appliance size is no multiple */
		l = (struct xnic_map_layout){ tp + 1, 1, t->nnodes / (tp + 1), 1, 1, 1 };
		if (t->nnodes % (tp + 1) == 0) {
			int refuse = 0, a;

			for (a = 0; a < t->nappliances; a++)
				refuse |= t->appliances[a].nnodes % (tp + 1) != 0;
			err[0] = 0;
			ASSERT_EQ(refuse ? -EINVAL : 0,
				  xnic_map_assign(t, &l, map, NULL, err));
			ASSERT_EQ(refuse, err[0] != 0);
			refusals += refuse;
		}
		free(map);
		free(other);
		xnic_map_topo_free(t);
	}
	EXPECT_LT(100, valid_naive);	/* the naive order was compared often */
	EXPECT_LT(10, refusals);
}

/* Hosts come from the file; rank r's line names the node it mapped to. */
TEST(launcher_files)
{
	struct xnic_map_topo *t = xnic_map_topo_new();
	struct xnic_map_layout l = { 2, 1, 2, 1, 1, 1 };
	static const char *const names[] = { "x0", "y0", "x1", "y1" };
	char *text = NULL, err[XNIC_MAP_ERRLEN], host[16];
	int map[4], i, x, y;
	size_t len;
	FILE *f;

	ASSERT_NE(NULL, t);
	xnic_map_add_appliance(t, "x");
	xnic_map_add_appliance(t, "y");
	for (i = 0; i < 4; i++) {
		snprintf(host, sizeof(host), "h-%s", names[i]);
		xnic_map_add_vertex(t, names[i], XNIC_MAP_NODE, i % 2, host);
	}
	x = xnic_map_add_vertex(t, "lx", XNIC_MAP_LEAF, 0, NULL);
	y = xnic_map_add_vertex(t, "ly", XNIC_MAP_LEAF, 1, NULL);
	i = xnic_map_add_vertex(t, "s", XNIC_MAP_SPINE, -1, NULL);
	xnic_map_add_link(t, x, i, 100, NULL);
	xnic_map_add_link(t, y, i, 100, NULL);
	for (i = 0; i < 4; i++)
		xnic_map_add_link(t, i, i % 2 ? y : x, 100, NULL);
	xnic_map_add_link(t, 0, 2, 100, NULL);
	xnic_map_add_link(t, 1, 3, 100, NULL);
	ASSERT_EQ(0, xnic_map_topo_finish(t, NULL));
	ASSERT_EQ(0, xnic_map_assign(t, &l, map, NULL, NULL));

	f = open_memstream(&text, &len);
	ASSERT_EQ(0, xnic_map_write_rankfile(t, 4, map, f));
	fclose(f);
	EXPECT_STREQ("rank 0=h-x0 slot=0\nrank 1=h-x1 slot=0\n"
		     "rank 2=h-y0 slot=0\nrank 3=h-y1 slot=0\n", text);
	free(text);
	f = open_memstream(&text, &len);
	ASSERT_EQ(0, xnic_map_write_hosts(t, 4, map, f));
	fclose(f);
	EXPECT_STREQ("h-x0 0\nh-x1 1\nh-y0 2\nh-y1 3\n", text);
	free(text);

	/* the naive order puts rank 1 on y0: a TP group across appliances */
	ASSERT_EQ(0, xnic_map_naive(t, &l, map));
	EXPECT_EQ(-EINVAL, xnic_map_check(t, &l, map, err));
	EXPECT_NE(NULL, strstr(err, "TP group of rank 1 spans"));
	xnic_map_topo_free(t);
}

TEST_HARNESS_MAIN
