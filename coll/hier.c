// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxniccoll - choosing the all-reduce algorithm from the topology.
 *
 * At xnic_comm_init() each rank asks its kernel which nodes it reaches
 * over mesh links (mesh_nl.c) and sends, in the bootstrap's second
 * exchange, one bit per rank: "I reach your node over the mesh". Every
 * rank thus holds the same matrix and makes the same choice: ranks that
 * reach each other over the mesh share an appliance
 * (xnic_coll_appliances()); two or more appliances of equally many (>= 2)
 * ranks run the hierarchical all-reduce (ops.c), anything else the flat
 * one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

/**
 * xnic_coll_mesh_row() - our row of the mesh matrix
 * @c: communicator (peers' node ids known)
 * @device: our xnic device
 * @row: XNIC_COLL_MAX_RANKS / 8 bytes: bit r set when we reach rank r's
 *	node over a mesh link; bit @c->rank set when the kernel was asked
 *	and answered (a row without it says "not known")
 */
void xnic_coll_mesh_row(struct xnic_comm *c, const char *device,
			uint8_t *row)
{
	uint32_t nodes[XNIC_COLL_MAX_RANKS];
	int n, k, r;

	memset(row, 0, XNIC_COLL_MAX_RANKS / 8);
	n = xnic_coll_mesh_nodes(device, nodes, XNIC_COLL_MAX_RANKS);
	if (n < 0)
		return;
	row[c->rank / 8] |= (uint8_t)(1U << (c->rank % 8));
	for (r = 0; r < c->nranks; r++)
		for (k = 0; k < n && r != c->rank; k++)
			if (nodes[k] == c->peers[r].node)
				row[r / 8] |= (uint8_t)(1U << (r % 8));
}

static const char *xnic_coll_algo_name(int algo)
{
	return algo == XNIC_COLL_ALGO_HIER ? "hierarchical" :
	       algo == XNIC_COLL_ALGO_FLAT ? "flat" : "automatic";
}

/**
 * xnic_coll_pick_algo() - choose the all-reduce algorithm
 * @c: communicator
 * @want: enum xnic_coll_algo asked for (the same on every rank)
 * @mesh: nranks rows of XNIC_COLL_MAX_RANKS / 8 bytes, each rank's row
 *	(xnic_coll_mesh_row()), or NULL when not exchanged
 *
 * Sets c->algo, c->nappl and, for the hierarchical algorithm, the groups
 * (c->local, c->nlocal, c->li, c->across).
 * Return: 0; -EINVAL (message set) when @want is HIER and the ranks do
 * not form equal appliances; -ENOMEM.
 */
int xnic_coll_pick_algo(struct xnic_comm *c, int want, const uint8_t *mesh)
{
	unsigned int n = (unsigned int)c->nranks, per = 0, r, s;
	const unsigned int rb = XNIC_COLL_MAX_RANKS / 8;
	uint8_t *m = NULL;
	int *appl = NULL, nappl = -1, a, k, err = 0;
	bool known = mesh != NULL;

	c->algo = XNIC_COLL_ALGO_FLAT;
	c->nappl = 0;
	for (r = 0; known && r < n; r++)
		known = mesh[r * rb + r / 8] & (1U << (r % 8));
	m = calloc((size_t)n * n, 1);
	appl = calloc(n, sizeof(*appl));
	if (!m || !appl) {
		err = xnic_coll_seterr(c, -ENOMEM, "out of memory");
		goto out;
	}
	if (known) {
		for (r = 0; r < n; r++)
			for (s = 0; s < n; s++)
				m[r * n + s] = !!(mesh[r * rb + s / 8] &
						  (1U << (s % 8)));
		nappl = xnic_coll_appliances(n, m, appl);
		per = nappl > 0 ? xnic_coll_hier_ok(n, appl, nappl) : 0;
		c->nappl = nappl > 0 ? nappl : 0;
	}
	if (want == XNIC_COLL_ALGO_FLAT || (!per && want == XNIC_COLL_ALGO_AUTO))
		goto out;
	if (!per) {
		err = xnic_coll_seterr(c, -EINVAL,
				       "the %s all-reduce was asked for, but %s",
				       xnic_coll_algo_name(want),
				       !known ? "a rank could not read its mesh links from the kernel" :
				       nappl < 0 ? "the mesh links do not group the ranks into appliances (a mesh link down on one side, or a partial mesh)" :
				       nappl == 1 ? "all ranks are on one appliance" :
				       "the ranks are not on two or more appliances of equally many (>= 2) ranks");
		goto out;
	}
	c->local = calloc(per, sizeof(*c->local));
	c->across = calloc((size_t)nappl, sizeof(*c->across));
	if (!c->local || !c->across) {
		err = xnic_coll_seterr(c, -ENOMEM, "out of memory");
		goto out;
	}
	for (r = 0, k = 0; r < n; r++) {
		if (appl[r] != appl[c->rank])
			continue;
		if ((int)r == c->rank)
			c->li = k;
		c->local[k++] = (int)r;
	}
	for (a = 0; a < nappl; a++)
		for (r = 0, k = 0; r < n; r++)
			if (appl[r] == a && k++ == c->li)
				c->across[a] = (int)r;
	c->nlocal = (int)per;
	c->algo = XNIC_COLL_ALGO_HIER;
out:
	free(m);
	free(appl);
	return err;
}

int xnic_comm_algo(const struct xnic_comm *comm, int *appliances)
{
	if (appliances)
		*appliances = comm->nappl;
	return comm->algo;
}
