// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Synthetic topologies (xnic-map --synthetic A,N,U,S): A appliances of N
 * nodes, each a full mesh; each node with U uplinks to the U leaves of its
 * appliance; every leaf linked to each of S spines. Names: appliance "a3",
 * node "a3n5" (also its host), leaf "a3l1", spine "s7".
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xnic_map.h"
#include "priv.h"

#define SYNTH_MAX_NODES 1000000
#define SYNTH_MAX_LINKS 10000000

/**
 * xnic_map_synth_parse() - parse "A,N,U,S" or "A,N,U,S,MESH,UP,SPINE".
 * @spec: the counts, then optionally the Gbit/s of mesh links, uplinks
 *	  and leaf-spine links (default 100 each)
 * @s: filled in
 * @err: the reason of a failure
 *
 * Return: 0 or -EINVAL: not 4 or 7 fields, a count that is not an int, a
 * bandwidth that is not a number (or overflows).
 */
int xnic_map_synth_parse(const char *spec, struct xnic_map_synth *s,
			 char *err)
{
	int *count[] = { &s->appliances, &s->nodes, &s->uplinks, &s->spines };
	double *gbps[] = { &s->mesh_gbps, &s->uplink_gbps, &s->spine_gbps };
	const char *p = spec;
	char *end;
	int i, n;
	long v;

	s->mesh_gbps = s->uplink_gbps = s->spine_gbps = 100;
	for (n = 1, i = 0; spec[i]; i++)
		n += spec[i] == ',';
	if (n != 4 && n != 7) {
		xnic_map_err(err, "--synthetic \"%s\": expected A,N,U,S or A,N,U,S,MESH_GBPS,UPLINK_GBPS,SPINE_GBPS",
			     spec);
		return -EINVAL;
	}
	/* strtol, not sscanf's %d: a count beyond an int is refused, not wrapped */
	for (i = 0; i < n; i++, p = end + 1) {
		errno = 0;
		if (i < 4) {
			v = strtol(p, &end, 10);
			*count[i] = (int)v;
			if (v < INT_MIN || v > INT_MAX)
				errno = ERANGE;
		} else {
			*gbps[i - 4] = strtod(p, &end);
		}
		if (errno || end == p || (*end && *end != ',')) {
			xnic_map_err(err, "--synthetic \"%s\": \"%.*s\" is not a %s",
				     spec, (int)strcspn(p, ","), p,
				     i < 4 ? "count" : "bandwidth");
			return -EINVAL;
		}
	}
	return 0;
}

static int check(const struct xnic_map_synth *s, char *err)
{
	long long links;

	if (s->appliances < 1 || s->nodes < 1 || s->uplinks < 0 || s->spines < 0) {
		xnic_map_err(err, "synthetic topology %d,%d,%d,%d: appliances and nodes must be >= 1, uplinks and spines >= 0",
			     s->appliances, s->nodes, s->uplinks, s->spines);
		return -EINVAL;
	}
	if ((long)s->appliances * s->nodes > SYNTH_MAX_NODES ||
	    s->nodes - 1 + s->uplinks > XNIC_MAP_ROUTE_MAX ||
	    s->spines > SYNTH_MAX_NODES) {
		xnic_map_err(err, "synthetic topology %d,%d,%d,%d: too large (at most %d nodes and %d links a node)",
			     s->appliances, s->nodes, s->uplinks, s->spines,
			     SYNTH_MAX_NODES, XNIC_MAP_ROUTE_MAX);
		return -EINVAL;
	}
	/* each appliance's mesh, uplinks, and its leaves' spine links */
	links = (long long)s->appliances *
		((long long)s->nodes * (s->nodes - 1) / 2 +
		 (long long)s->nodes * s->uplinks +
		 (long long)s->uplinks * s->spines);
	if (links > SYNTH_MAX_LINKS) {
		xnic_map_err(err, "synthetic topology %d,%d,%d,%d: too large (%lld links, more than %d)",
			     s->appliances, s->nodes, s->uplinks, s->spines,
			     links, SYNTH_MAX_LINKS);
		return -EINVAL;
	}
	return 0;
}

static int build(struct xnic_map_topo *t, const struct xnic_map_synth *s,
		 char *err)
{
	int a, i, j, spine0, leaf0, node0;
	char name[48];

	spine0 = t->nvertices;
	for (i = 0; i < s->spines; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		if (xnic_map_add_vertex(t, name, XNIC_MAP_SPINE, -1, NULL) < 0)
			return -ENOMEM;
	}
	for (a = 0; a < s->appliances; a++) {
		snprintf(name, sizeof(name), "a%d", a);
		if (xnic_map_add_appliance(t, name) < 0)
			return -ENOMEM;
		node0 = t->nvertices;
		for (i = 0; i < s->nodes; i++) {
			snprintf(name, sizeof(name), "a%dn%d", a, i);
			if (xnic_map_add_vertex(t, name, XNIC_MAP_NODE, a, name) < 0)
				return -ENOMEM;
		}
		leaf0 = t->nvertices;
		for (i = 0; i < s->uplinks; i++) {
			snprintf(name, sizeof(name), "a%dl%d", a, i);
			if (xnic_map_add_vertex(t, name, XNIC_MAP_LEAF, a, NULL) < 0)
				return -ENOMEM;
		}
		for (i = 0; i < s->nodes; i++) {
			for (j = i + 1; j < s->nodes; j++)
				if (xnic_map_add_link(t, node0 + i, node0 + j,
						      s->mesh_gbps, err) < 0)
					return -EINVAL;
			for (j = 0; j < s->uplinks; j++)
				if (xnic_map_add_link(t, node0 + i, leaf0 + j,
						      s->uplink_gbps, err) < 0)
					return -EINVAL;
		}
		for (i = 0; i < s->uplinks; i++)
			for (j = 0; j < s->spines; j++)
				if (xnic_map_add_link(t, leaf0 + i, spine0 + j,
						      s->spine_gbps, err) < 0)
					return -EINVAL;
	}
	return xnic_map_topo_finish(t, err);
}

/**
 * xnic_map_synthetic() - generate a leaf/spine topology of appliances.
 * @s: the counts and bandwidths
 * @err: the reason of a failure
 *
 * Return: the topology, or NULL (bad counts, bandwidths, more than a
 * million nodes or ten million links, or no memory).
 */
struct xnic_map_topo *xnic_map_synthetic(const struct xnic_map_synth *s,
					 char *err)
{
	struct xnic_map_topo *t;

	if (check(s, err))
		return NULL;
	t = xnic_map_topo_new();
	if (!t) {
		xnic_map_err(err, "out of memory");
		return NULL;
	}
	xnic_map_err(err, "out of memory");	/* unless build() says why */
	if (build(t, s, err)) {
		xnic_map_topo_free(t);
		return NULL;
	}
	return t;
}
