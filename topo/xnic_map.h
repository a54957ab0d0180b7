/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xnic_map: topology-aware rank mapping (libxnicmap, topo/).
 *
 * A topology is appliances of nodes (each appliance a full mesh of member
 * links), leaf switches (each in one appliance) that the nodes' uplinks
 * reach, and spine switches every leaf reaches (Documentation/topology.rst
 * defines the JSON form). A layout is TP x PP x DP ranks, one rank per
 * node; a mapping gives each rank its node. Ranks are numbered as in
 * Megatron-LM's default order (tp-cp-ep-dp-pp, cp = ep = 1): TP varies
 * fastest, then DP, then PP:
 *
 *	rank = tp + TP * (dp + DP * pp)
 *
 * Functions that can fail return 0 or a negative errno and, when given an
 * error buffer (@err, XNIC_MAP_ERRLEN bytes), a sentence naming the field
 * or the constraint at fault.
 */
#ifndef XNIC_MAP_H
#define XNIC_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define XNIC_MAP_ERRLEN 256

enum xnic_map_kind {
	XNIC_MAP_NODE,
	XNIC_MAP_LEAF,
	XNIC_MAP_SPINE,
};

/* A node or a switch. */
struct xnic_map_vertex {
	char *name;		/* unique among nodes and switches */
	char *host;		/* nodes: host name for the rankfile */
	enum xnic_map_kind kind;
	int appliance;		/* index into appliances; -1 for a spine */
	int *links;		/* indices into links, in file order */
	int nlinks, links_cap;
	int nup;		/* node: links to leaves; leaf: to spines */
};

/* A full-duplex link: @gbps in each direction (10^9 bit/s). */
struct xnic_map_link {
	int a, b;		/* vertex indices */
	double gbps;
};

struct xnic_map_appliance {
	char *name;
	int *nodes;		/* vertex indices, in file order */
	int nnodes, nodes_cap;
};

struct xnic_map_topo {
	struct xnic_map_appliance *appliances;
	int nappliances, appliances_cap;
	struct xnic_map_vertex *vertices;
	int nvertices, vertices_cap;
	struct xnic_map_link *links;
	int nlinks, links_cap;
	int *nodes;		/* vertex index of each node, in file order */
	int nnodes, nodes_cap;
	int *by_name;		/* vertex indices sorted by name */
	int *app_by_name;	/* appliance indices sorted by name */
};

/*
 * The links one flow from node x to node y uses (xnic_map_route()): hops 1,
 * the direct links x-y (the mesh); hops 2, src[i] x-leaf and dst[i]
 * leaf-y for each leaf both reach; hops 4, src = x's uplinks and dst = y's
 * uplinks, the leaves between joined over every spine.
 */
#define XNIC_MAP_ROUTE_MAX 256
struct xnic_map_route {
	int x, y;
	int hops;
	int nsrc, ndst;
	int src[XNIC_MAP_ROUTE_MAX], dst[XNIC_MAP_ROUTE_MAX];
};

/* topology.c: building, lookup, routes. */
struct xnic_map_topo *xnic_map_topo_new(void);
void xnic_map_topo_free(struct xnic_map_topo *t);
int xnic_map_add_appliance(struct xnic_map_topo *t, const char *name);
int xnic_map_add_vertex(struct xnic_map_topo *t, const char *name,
			enum xnic_map_kind kind, int appliance,
			const char *host);
int xnic_map_add_link(struct xnic_map_topo *t, int a, int b, double gbps,
		      char *err);
int xnic_map_topo_index(struct xnic_map_topo *t, char *err);
int xnic_map_topo_finish(struct xnic_map_topo *t, char *err);
int xnic_map_find(const struct xnic_map_topo *t, const char *name);
int xnic_map_find_appliance(const struct xnic_map_topo *t, const char *name);
int xnic_map_other(const struct xnic_map_topo *t, int link, int v);
int xnic_map_route(const struct xnic_map_topo *t, int x, int y,
		   struct xnic_map_route *r);
double xnic_map_path_gbps(const struct xnic_map_topo *t,
			  const struct xnic_map_route *r);
const char *xnic_map_kind_name(enum xnic_map_kind kind);

/* topo_json.c: the JSON form (Documentation/topology.rst). */
struct xnic_map_topo *xnic_map_topo_load(const char *path, char *err);
struct xnic_map_topo *xnic_map_topo_parse(const char *text, char *err);
int xnic_map_topo_write(const struct xnic_map_topo *t, FILE *f);

/* synthetic.c */
struct xnic_map_synth {
	int appliances, nodes, uplinks, spines;
	double mesh_gbps, uplink_gbps, spine_gbps;
};
struct xnic_map_topo *xnic_map_synthetic(const struct xnic_map_synth *s,
					 char *err);
int xnic_map_synth_parse(const char *spec, struct xnic_map_synth *s,
			 char *err);

/* layout.c: layouts, the mapper, the constraint check. */
struct xnic_map_layout {
	int tp, pp, dp;
	/*
	 * Bytes per training step: all-reduced by each TP group and by each
	 * DP group; sent by each rank of stage p to the same (tp, dp) rank
	 * of stage p + 1 and the same amount back (activations, gradients).
	 */
	double tp_bytes, pp_bytes, dp_bytes;
};

struct xnic_map_coord {
	int tp, pp, dp;
};

int xnic_map_layout_check(const struct xnic_map_topo *t,
			  const struct xnic_map_layout *l, char *err);
int xnic_map_rank(const struct xnic_map_layout *l, int tp, int pp, int dp);
struct xnic_map_coord xnic_map_coord(const struct xnic_map_layout *l,
				     int rank);
int xnic_map_naive(const struct xnic_map_topo *t,
		   const struct xnic_map_layout *l, int *node_of_rank);
int xnic_map_tiled(const struct xnic_map_topo *t,
		   const struct xnic_map_layout *l, int band, int *node_of_rank);
int xnic_map_assign(const struct xnic_map_topo *t,
		    const struct xnic_map_layout *l, int *node_of_rank,
		    int *band, char *err);
int xnic_map_check(const struct xnic_map_topo *t,
		   const struct xnic_map_layout *l, const int *node_of_rank,
		   char *err);

/* cost.c: the cost model of one step. */
struct xnic_map_cost {
	double step_s;		/* busiest link direction: bytes * 8 / bps */
	double byte_hops;	/* sum over flows of bytes x links crossed */
	double cross_bytes;	/* bytes that leave an appliance */
	int busiest_link;	/* index into links; -1 if no traffic */
	int busiest_dir;	/* 0: a to b, 1: b to a */
};

int xnic_map_cost(const struct xnic_map_topo *t,
		  const struct xnic_map_layout *l, const int *node_of_rank,
		  struct xnic_map_cost *c, char *err);

/* output.c: launcher files. */
int xnic_map_write_rankfile(const struct xnic_map_topo *t, int nranks,
			    const int *node_of_rank, FILE *f);
int xnic_map_write_hosts(const struct xnic_map_topo *t, int nranks,
			 const int *node_of_rank, FILE *f);

#endif /* XNIC_MAP_H */
