// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layouts and the mapper. A block is one TP group (one pipeline stage pp
 * of one data-parallel replica dp); each appliance holds nnodes / TP
 * blocks, so every TP group sits on one appliance's mesh. The mapper lays
 * the blocks out in bands of c stages (for each band: for each replica:
 * the band's stages) and fills the appliances in order; band 1 keeps each
 * DP group on as few appliances as can be, wider bands keep pipeline
 * neighbours together. It keeps the band whose busiest link (cost.c) is
 * the least loaded.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xnic_map.h"
#include "priv.h"

int xnic_map_rank(const struct xnic_map_layout *l, int tp, int pp, int dp)
{
	return tp + l->tp * (dp + l->dp * pp);
}

struct xnic_map_coord xnic_map_coord(const struct xnic_map_layout *l,
				     int rank)
{
	struct xnic_map_coord c = {
		.tp = rank % l->tp,
		.dp = rank / l->tp % l->dp,
		.pp = rank / l->tp / l->dp,
	};

	return c;
}

/* TP x PP x DP == the node count (sizes >= 1), without overflow. */
static int one_rank_a_node(const struct xnic_map_topo *t,
			   const struct xnic_map_layout *l)
{
	long long tp_pp = (long long)l->tp * l->pp;

	return tp_pp <= t->nnodes && tp_pp * l->dp == t->nnodes;
}

/**
 * xnic_map_layout_check() - may this layout be mapped onto this topology?
 * @t: the topology
 * @l: the layout
 * @err: why not
 *
 * Return: 0, or -EINVAL: a size below 1, bytes negative or not finite,
 * TP x PP x DP not the node count (one rank a node), TP larger than the
 * largest appliance, or an appliance whose node count TP does not divide
 * (its nodes could not all hold whole TP groups).
 */
int xnic_map_layout_check(const struct xnic_map_topo *t,
			  const struct xnic_map_layout *l, char *err)
{
	int i, big = 0;

	if (l->tp < 1 || l->pp < 1 || l->dp < 1) {
		xnic_map_err(err, "TP=%d PP=%d DP=%d: every size must be >= 1",
			     l->tp, l->pp, l->dp);
		return -EINVAL;
	}
	if (!(l->tp_bytes >= 0 && l->pp_bytes >= 0 && l->dp_bytes >= 0) ||
	    !isfinite(l->tp_bytes + l->pp_bytes + l->dp_bytes)) {
		xnic_map_err(err, "bytes per step (TP %g, PP %g, DP %g) must be finite and >= 0",
			     l->tp_bytes, l->pp_bytes, l->dp_bytes);
		return -EINVAL;
	}
	if (!one_rank_a_node(t, l)) {
		xnic_map_err(err, "TP x PP x DP = %d x %d x %d = %.0f ranks, but the topology has %d nodes (one rank a node)",
			     l->tp, l->pp, l->dp, (double)l->tp * l->pp * l->dp,
			     t->nnodes);
		return -EINVAL;
	}
	for (i = 0; i < t->nappliances; i++)
		if (t->appliances[i].nnodes > t->appliances[big].nnodes)
			big = i;
	if (l->tp > t->appliances[big].nnodes) {
		xnic_map_err(err, "TP=%d is larger than the largest appliance (\"%s\", %d nodes): a TP group must sit on one appliance's mesh",
			     l->tp, t->appliances[big].name, t->appliances[big].nnodes);
		return -EINVAL;
	}
	for (i = 0; i < t->nappliances; i++)
		if (t->appliances[i].nnodes % l->tp) {
			xnic_map_err(err, "appliance \"%s\" has %d nodes, not a multiple of TP=%d: its nodes cannot all hold whole TP groups",
				     t->appliances[i].name, t->appliances[i].nnodes, l->tp);
			return -EINVAL;
		}
	return 0;
}

/* The naive order: rank r on the r-th node of the file. */
int xnic_map_naive(const struct xnic_map_topo *t,
		   const struct xnic_map_layout *l, int *node_of_rank)
{
	int r;

	if (!one_rank_a_node(t, l))
		return -EINVAL;
	for (r = 0; r < t->nnodes; r++)
		node_of_rank[r] = t->nodes[r];
	return 0;
}

/**
 * xnic_map_tiled() - the blocks in bands of @band stages, appliances
 * filled in file order.
 * @t: the topology
 * @l: a layout that passed xnic_map_layout_check()
 * @band: stages a band, 1..PP
 * @node_of_rank: TP x PP x DP vertex indices, filled in
 *
 * Return: 0, or -EINVAL for a band out of range.
 */
int xnic_map_tiled(const struct xnic_map_topo *t,
		   const struct xnic_map_layout *l, int band, int *node_of_rank)
{
	int b, dp, pp, tp, app = 0, slot = 0;

	if (band < 1 || band > l->pp)
		return -EINVAL;
	for (b = 0; b < l->pp; b += band)
		for (dp = 0; dp < l->dp; dp++)
			for (pp = b; pp < b + band && pp < l->pp; pp++) {
				const struct xnic_map_appliance *a = &t->appliances[app];

				for (tp = 0; tp < l->tp; tp++)
					node_of_rank[xnic_map_rank(l, tp, pp, dp)] =
						a->nodes[slot + tp];
				slot += l->tp;
				if (slot == a->nnodes) {
					app++;
					slot = 0;
				}
			}
	return 0;
}

/* The bands tried after band c: up to min(PP, kmax) one by one, then PP. */
static int next_band(int c, int kmax, int pp)
{
	if (c < kmax && c < pp)
		return c + 1;
	return c < pp ? pp : pp + 1;
}

/**
 * xnic_map_assign() - map a layout onto a topology.
 * @t: the topology
 * @l: the layout
 * @node_of_rank: TP x PP x DP vertex indices, filled in
 * @band: if not NULL, the band chosen (xnic_map_tiled())
 * @err: why it failed
 *
 * Tries bands 1 .. min(PP, the most blocks an appliance holds), and PP,
 * and keeps the cheapest by xnic_map_cost() (the narrower on a tie).
 *
 * Return: 0; -EINVAL for a layout xnic_map_layout_check() refuses or a
 * topology without a path the layout needs; -ENOMEM.
 */
int xnic_map_assign(const struct xnic_map_topo *t,
		    const struct xnic_map_layout *l, int *node_of_rank,
		    int *band, char *err)
{
	int i, c, kmax = 0, best_c = 0, ret;
	struct xnic_map_cost cost;
	double best = INFINITY;
	int *tmp;

	ret = xnic_map_layout_check(t, l, err);
	if (ret)
		return ret;
	for (i = 0; i < t->nappliances; i++)
		if (t->appliances[i].nnodes / l->tp > kmax)
			kmax = t->appliances[i].nnodes / l->tp;
	tmp = malloc(sizeof(int) * t->nnodes);
	if (!tmp)
		return -ENOMEM;
	for (c = 1; c <= l->pp; c = next_band(c, kmax, l->pp)) {
		xnic_map_tiled(t, l, c, tmp);
		ret = xnic_map_cost(t, l, tmp, &cost, err);
		if (ret)
			break;
		/* the first always: every step may be infinite (slow links) */
		if (!best_c || cost.step_s < best * (1 - 1e-12)) {
			best = cost.step_s;
			best_c = c;
			memcpy(node_of_rank, tmp, sizeof(int) * t->nnodes);
		}
	}
	free(tmp);
	if (!ret && band)
		*band = best_c;
	return ret;
}

/**
 * xnic_map_check() - the constraints every mapping of xnic_map_assign()
 * meets.
 * @t: the topology
 * @l: the layout
 * @node_of_rank: TP x PP x DP vertex indices
 * @err: the first constraint broken
 *
 * 1. Every node holds exactly one rank.
 * 2. Every TP group sits on one appliance.
 * 3. Every DP group, in ring (dp) order, enters each appliance it spans
 *    once: its members on one appliance are consecutive, so its ring
 *    crosses between appliances as few times as its spread allows.
 *
 * Return: 0, -EINVAL (broken), -ENOMEM.
 */
int xnic_map_check(const struct xnic_map_topo *t,
		   const struct xnic_map_layout *l, const int *node_of_rank,
		   char *err)
{
	int n = t->nnodes, r, g, i, ret = -EINVAL;
	int *seen = calloc(t->nvertices + t->nappliances, sizeof(int));
	int *stamp;

	if (!seen)
		return -ENOMEM;
	stamp = seen + t->nvertices;
	for (r = 0; r < n; r++) {
		int v = node_of_rank[r];

		if (v < 0 || v >= t->nvertices || t->vertices[v].kind != XNIC_MAP_NODE ||
		    seen[v]++) {
			xnic_map_err(err, "rank %d: vertex %d is not a node holding no other rank",
				     r, v);
			goto out;
		}
	}
	for (r = 0; r < n; r++) {
		struct xnic_map_coord c = xnic_map_coord(l, r);
		int a0 = t->vertices[node_of_rank[r - c.tp]].appliance;

		if (t->vertices[node_of_rank[r]].appliance != a0) {
			xnic_map_err(err, "TP group of rank %d spans appliances \"%s\" and \"%s\"",
				     r, t->appliances[a0].name,
				     t->appliances[t->vertices[node_of_rank[r]].appliance].name);
			goto out;
		}
	}
	for (g = 0; g < l->tp * l->pp; g++) {	/* DP group (tp, pp) */
		int tp = g % l->tp, pp = g / l->tp, spans = 0, entries = 0;

		for (i = 0; i < l->dp; i++) {
			int a = t->vertices[node_of_rank[xnic_map_rank(l, tp, pp, i)]].appliance;
			int prev = t->vertices[node_of_rank[xnic_map_rank(l, tp, pp,
					(i + l->dp - 1) % l->dp)]].appliance;

			if (stamp[a] != g + 1) {
				stamp[a] = g + 1;
				spans++;
			}
			entries += a != prev;
		}
		if (spans > 1 && entries != spans) {
			xnic_map_err(err, "DP group of rank %d: its ring enters %d times the %d appliances it spans",
				     xnic_map_rank(l, tp, pp, 0), entries, spans);
			goto out;
		}
	}
	ret = 0;
out:
	free(seen);
	return ret;
}
