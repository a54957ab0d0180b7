// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The cost model of one training step under a mapping.
 *
 * Traffic: each TP group and each DP group all-reduces its bytes
 * (allreduce() below); each rank of stage p sends the PP bytes to the same
 * (tp, dp) rank of stage p + 1, which sends as many back.
 *
 * Routes (xnic_map_route()): a flow is split evenly over the direct links
 * of its two nodes (the mesh, 1 hop); else over the leaves they share (2
 * hops); else over the sender's uplinks and the receiver's uplinks, each
 * leaf's share of both spread evenly over its spine links (4 hops: exact
 * for a leaf/spine CLOS, where every spine reaches every leaf).
 *
 * Cost: every link direction carries its bytes at its bandwidth; the step
 * takes as long as the busiest link direction. Byte-hops (bytes x links
 * crossed, summed over flows) tell the traffic's total footprint.
 */
#include <errno.h>
#include <stdlib.h>

#include "xnic_map.h"
#include "priv.h"

struct load {
	const struct xnic_map_topo *t;
	double *dir;		/* bytes per link direction: [2 * link + d] */
	double *up, *down;	/* per vertex: bytes a leaf sends to / gets
				 * from the spines */
	struct xnic_map_cost *c;
	char *err;
};

static void charge(struct load *ld, int link, int from, double bytes)
{
	ld->dir[2 * link + (ld->t->links[link].a != from)] += bytes;
}

static int flow(struct load *ld, int x, int y, double bytes, const char *what,
		int rank)
{
	const struct xnic_map_topo *t = ld->t;
	struct xnic_map_route r;
	int i, leaf;

	if (x == y || bytes <= 0)
		return 0;
	if (xnic_map_route(t, x, y, &r) < 0) {
		xnic_map_err(ld->err, "no path from node \"%s\" to \"%s\" (%s traffic of rank %d)",
			     t->vertices[x].name, t->vertices[y].name, what, rank);
		return -EINVAL;
	}
	ld->c->byte_hops += bytes * r.hops;
	if (t->vertices[x].appliance != t->vertices[y].appliance)
		ld->c->cross_bytes += bytes;
	for (i = 0; i < r.nsrc; i++) {
		charge(ld, r.src[i], x, bytes / r.nsrc);
		leaf = xnic_map_other(t, r.src[i], x);
		if (r.hops == 4)
			ld->up[leaf] += bytes / r.nsrc;
		else if (r.hops == 2)
			charge(ld, r.dst[i], leaf, bytes / r.nsrc);
	}
	for (i = 0; r.hops == 4 && i < r.ndst; i++) {
		leaf = xnic_map_other(t, r.dst[i], y);
		charge(ld, r.dst[i], leaf, bytes / r.ndst);
		ld->down[leaf] += bytes / r.ndst;
	}
	return 0;
}

/* Members of a group ordered by appliance, then by their group rank. */
struct member {
	int appliance, index, node;
};

static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;

	if (a->appliance != b->appliance)
		return a->appliance < b->appliance ? -1 : 1;
	return a->index - b->index;
}

/*
 * All-reduce of @bytes among n ranks, as libxniccoll does it (direct
 * reduce-scatter and all-gather over the mesh: each member sends 2 x
 * bytes / m to each other member of its appliance's m), hierarchical
 * across appliances (Documentation/topology.rst): the members' shards
 * all-reduced in a ring of the R appliances, member k sending 2 (R - 1) /
 * R x its shard to member k mod m' of the next appliance.
 */
static int allreduce(struct load *ld, const int *node_of_rank,
		     const int *ranks, int n, double bytes, const char *what,
		     struct member *m)
{
	int i, j, s, e, next, nruns = 0, ret = 0;

	for (i = 0; i < n; i++)
		m[i] = (struct member){
			ld->t->vertices[node_of_rank[ranks[i]]].appliance, i,
			node_of_rank[ranks[i]] };
	qsort(m, n, sizeof(*m), cmp_member);
	for (i = 0; i < n; i++)
		nruns += !i || m[i].appliance != m[i - 1].appliance;
	for (s = 0; s < n && !ret; s = e) {
		for (e = s + 1; e < n && m[e].appliance == m[s].appliance; e++)
			;
		for (i = s; i < e && !ret; i++)
			for (j = s; j < e && !ret; j++)
				if (i != j)
					ret = flow(ld, m[i].node, m[j].node,
						   2 * bytes / (e - s), what,
						   ranks[m[i].index]);
		if (nruns == 1)
			break;
		next = e < n ? e : 0;	/* the next appliance's first member */
		for (j = next + 1; j < n && m[j].appliance == m[next].appliance; j++)
			;
		for (i = s; i < e && !ret; i++)
			ret = flow(ld, m[i].node, m[next + (i - s) % (j - next)].node,
				   2.0 * (nruns - 1) / nruns * bytes / (e - s),
				   what, ranks[m[i].index]);
	}
	return ret;
}

static int traffic(struct load *ld, const struct xnic_map_layout *l,
		   const int *node_of_rank, int *ranks, struct member *m)
{
	int tp, pp, dp, r, next, ret = 0;

	for (pp = 0; pp < l->pp && !ret; pp++)
		for (dp = 0; dp < l->dp && !ret; dp++) {
			for (tp = 0; tp < l->tp; tp++)
				ranks[tp] = xnic_map_rank(l, tp, pp, dp);
			ret = allreduce(ld, node_of_rank, ranks, l->tp, l->tp_bytes,
					"TP", m);
		}
	for (pp = 0; pp < l->pp && !ret; pp++)
		for (tp = 0; tp < l->tp && !ret; tp++) {
			for (dp = 0; dp < l->dp; dp++)
				ranks[dp] = xnic_map_rank(l, tp, pp, dp);
			ret = allreduce(ld, node_of_rank, ranks, l->dp, l->dp_bytes,
					"DP", m);
		}
	for (r = 0; r + l->tp * l->dp < l->tp * l->dp * l->pp && !ret; r++) {
		next = r + l->tp * l->dp;	/* same tp, dp; stage + 1 */
		ret = flow(ld, node_of_rank[r], node_of_rank[next], l->pp_bytes,
			   "PP", r);
		if (!ret)
			ret = flow(ld, node_of_rank[next], node_of_rank[r],
				   l->pp_bytes, "PP", next);
	}
	return ret;
}

/* Spread each leaf's spine traffic over its spine links. */
static void spines(struct load *ld)
{
	const struct xnic_map_topo *t = ld->t;
	int v, i, s;

	for (v = 0; v < t->nvertices; v++) {
		const struct xnic_map_vertex *leaf = &t->vertices[v];

		if (leaf->kind != XNIC_MAP_LEAF || !(ld->up[v] + ld->down[v]))
			continue;
		for (i = 0; i < leaf->nlinks; i++) {
			s = xnic_map_other(t, leaf->links[i], v);
			if (t->vertices[s].kind != XNIC_MAP_SPINE)
				continue;
			charge(ld, leaf->links[i], v, ld->up[v] / leaf->nup);
			charge(ld, leaf->links[i], s, ld->down[v] / leaf->nup);
		}
	}
}

/**
 * xnic_map_cost() - the cost of one step under a mapping.
 * @t: the topology
 * @l: the layout and its bytes per step
 * @node_of_rank: TP x PP x DP vertex indices (nodes)
 * @c: filled in; step_s in seconds, the busiest link direction's bytes x 8
 *     / (gbps x 10^9)
 * @err: why it failed
 *
 * Return: 0; -EINVAL when two ranks that talk have no path; -ENOMEM.
 */
int xnic_map_cost(const struct xnic_map_topo *t,
		  const struct xnic_map_layout *l, const int *node_of_rank,
		  struct xnic_map_cost *c, char *err)
{
	int n = l->tp > l->dp ? l->tp : l->dp, i, ret = -ENOMEM;
	struct load ld = { .t = t, .c = c, .err = err };
	int *ranks = malloc(sizeof(int) * n);
	struct member *m = malloc(sizeof(*m) * n);
	double s;

	*c = (struct xnic_map_cost){ .busiest_link = -1 };
	ld.dir = calloc(2 * (size_t)t->nlinks + 2 * (size_t)t->nvertices,
			sizeof(double));
	if (!ranks || !m || !ld.dir)
		goto out;
	ld.up = ld.dir + 2 * (size_t)t->nlinks;
	ld.down = ld.up + t->nvertices;
	ret = traffic(&ld, l, node_of_rank, ranks, m);
	if (ret)
		goto out;
	spines(&ld);
	for (i = 0; i < 2 * t->nlinks; i++) {
		s = ld.dir[i] * 8 / (t->links[i / 2].gbps * 1e9);
		if (s > c->step_s) {
			c->step_s = s;
			c->busiest_link = i / 2;
			c->busiest_dir = i % 2;
		}
	}
out:
	if (ret == -ENOMEM)
		xnic_map_err(err, "out of memory");
	free(ranks);
	free(m);
	free(ld.dir);
	return ret;
}
