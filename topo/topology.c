// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The topology in memory: appliances, nodes and switches (vertices),
 * links; building it, looking names up, and the links a flow between two
 * nodes crosses (the route the cost model charges).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xnic_map.h"
#include "priv.h"

void xnic_map_err(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, XNIC_MAP_ERRLEN, fmt, ap);
	va_end(ap);
}

/* Grow *p (of *cap elements of @size bytes) to hold @n; 0 or -ENOMEM. */
int xnic_map_grow(void *p, int *cap, int n, size_t size)
{
	void **pp = p, *q;
	int c = *cap ? *cap : 4;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	q = realloc(*pp, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*pp = q;
	*cap = c;
	return 0;
}

const char *xnic_map_kind_name(enum xnic_map_kind kind)
{
	static const char *const names[] = { "node", "leaf", "spine" };

	return names[kind];
}

struct xnic_map_topo *xnic_map_topo_new(void)
{
	return calloc(1, sizeof(struct xnic_map_topo));
}

void xnic_map_topo_free(struct xnic_map_topo *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->nappliances; i++) {
		free(t->appliances[i].name);
		free(t->appliances[i].nodes);
	}
	for (i = 0; i < t->nvertices; i++) {
		free(t->vertices[i].name);
		free(t->vertices[i].host);
		free(t->vertices[i].links);
	}
	free(t->appliances);
	free(t->vertices);
	free(t->links);
	free(t->nodes);
	free(t->by_name);
	free(t->app_by_name);
	free(t);
}

/*
 * Building a topology: add its appliances, then its nodes and switches,
 * then its links (ends by vertex index), then xnic_map_topo_finish().
 * Each returns the new element's index, or a negative errno: -ENOMEM, or
 * -EINVAL (with @err) for a link the model does not allow.
 */
int xnic_map_add_appliance(struct xnic_map_topo *t, const char *name)
{
	struct xnic_map_appliance *a;

	if (xnic_map_grow(&t->appliances, &t->appliances_cap,
			  t->nappliances + 1, sizeof(*a)))
		return -ENOMEM;
	a = &t->appliances[t->nappliances++];
	memset(a, 0, sizeof(*a));
	a->name = strdup(name);
	return a->name ? t->nappliances - 1 : -ENOMEM;
}

/* @appliance: its index, -1 for a spine; @host: a node's, or NULL. */
int xnic_map_add_vertex(struct xnic_map_topo *t, const char *name,
			enum xnic_map_kind kind, int appliance,
			const char *host)
{
	struct xnic_map_vertex *v;
	struct xnic_map_appliance *a;
	int i = t->nvertices;

	if (xnic_map_grow(&t->vertices, &t->vertices_cap, i + 1, sizeof(*v)))
		return -ENOMEM;
	v = &t->vertices[t->nvertices++];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->appliance = appliance;
	v->name = strdup(name);
	v->host = host ? strdup(host) : NULL;
	if (!v->name || (host && !v->host))
		return -ENOMEM;
	if (kind != XNIC_MAP_NODE)
		return i;
	a = &t->appliances[appliance];
	if (xnic_map_grow(&a->nodes, &a->nodes_cap, a->nnodes + 1, sizeof(int)) ||
	    xnic_map_grow(&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(int)))
		return -ENOMEM;
	a->nodes[a->nnodes++] = i;
	t->nodes[t->nnodes++] = i;
	return i;
}

static int attach(struct xnic_map_vertex *v, int link)
{
	if (xnic_map_grow(&v->links, &v->links_cap, v->nlinks + 1, sizeof(int)))
		return -ENOMEM;
	v->links[v->nlinks++] = link;
	return 0;
}

int xnic_map_add_link(struct xnic_map_topo *t, int a, int b, double gbps,
		      char *err)
{
	struct xnic_map_vertex *va = &t->vertices[a], *vb = &t->vertices[b];
	struct xnic_map_link *l;

	if (!(gbps > 0) || !isfinite(gbps)) {
		xnic_map_err(err, "bandwidth %g Gbit/s is not a positive number", gbps);
		return -EINVAL;
	}
	if (a == b) {
		xnic_map_err(err, "both ends are %s", va->name);
		return -EINVAL;
	}
	if (va->kind > vb->kind) {
		struct xnic_map_vertex *tmp = va;

		va = vb;
		vb = tmp;
	}
	/* node-node in one appliance, node-leaf of its appliance, leaf-spine */
	if (va->kind == XNIC_MAP_NODE && vb->kind == XNIC_MAP_SPINE) {
		xnic_map_err(err, "%s to %s: a node reaches spines through leaves only",
			     va->name, vb->name);
		return -EINVAL;
	}
	if (va->kind == vb->kind && va->kind != XNIC_MAP_NODE) {
		xnic_map_err(err, "%s to %s: two %s switches are never linked",
			     va->name, vb->name, xnic_map_kind_name(va->kind));
		return -EINVAL;
	}
	if (vb->kind != XNIC_MAP_SPINE && va->appliance != vb->appliance) {
		xnic_map_err(err, "%s (appliance %s) to %s (appliance %s): a %s joins one appliance",
			     va->name, t->appliances[va->appliance].name,
			     vb->name, t->appliances[vb->appliance].name,
			     vb->kind == XNIC_MAP_NODE ? "mesh link" : "leaf");
		return -EINVAL;
	}
	if (xnic_map_grow(&t->links, &t->links_cap, t->nlinks + 1, sizeof(*l)))
		return -ENOMEM;
	l = &t->links[t->nlinks];
	l->a = a;
	l->b = b;
	l->gbps = gbps;
	if (attach(&t->vertices[a], t->nlinks) || attach(&t->vertices[b], t->nlinks))
		return -ENOMEM;
	if (va->kind + 1 == vb->kind)	/* node-leaf or leaf-spine */
		va->nup++;
	return t->nlinks++;
}

/* The end of @link that is not @v. */
int xnic_map_other(const struct xnic_map_topo *t, int link, int v)
{
	const struct xnic_map_link *l = &t->links[link];

	return l->a == v ? l->b : l->a;
}

static const char *vertex_name(const struct xnic_map_topo *t, int i)
{
	return t->vertices[i].name;
}

static const char *appliance_name(const struct xnic_map_topo *t, int i)
{
	return t->appliances[i].name;
}

typedef const char *name_fn(const struct xnic_map_topo *t, int i);

struct by_name {
	const struct xnic_map_topo *t;
	name_fn *name;
};

static int cmp_name(const void *x, const void *y, void *arg)
{
	const struct by_name *b = arg;

	return strcmp(b->name(b->t, *(const int *)x), b->name(b->t, *(const int *)y));
}

/* Sort 0..n-1 by name into *out; the first name found twice, or NULL. */
static const char *index_names(const struct xnic_map_topo *t, int n,
			       int **out, name_fn *name)
{
	struct by_name b = { t, name };
	int i, *ix = malloc(sizeof(int) * (n ? n : 1));

	free(*out);
	*out = ix;
	if (!ix)
		return NULL;
	for (i = 0; i < n; i++)
		ix[i] = i;
	qsort_r(ix, n, sizeof(int), cmp_name, &b);
	for (i = 1; i < n; i++)
		if (!strcmp(name(t, ix[i - 1]), name(t, ix[i])))
			return name(t, ix[i]);
	return NULL;
}

/* Index the names (again, after more were added); -EINVAL for a duplicate. */
int xnic_map_topo_index(struct xnic_map_topo *t, char *err)
{
	const char *dup;

	dup = index_names(t, t->nappliances, &t->app_by_name, appliance_name);
	if (!dup)
		dup = index_names(t, t->nvertices, &t->by_name, vertex_name);
	if (!t->by_name || !t->app_by_name)
		return -ENOMEM;
	if (dup) {
		xnic_map_err(err, "the name \"%s\" is used twice", dup);
		return -EINVAL;
	}
	return 0;
}

/*
 * Index the names and check the whole: nodes exist, every appliance has
 * one, no node has more than XNIC_MAP_ROUTE_MAX links. 0 or -EINVAL.
 */
int xnic_map_topo_finish(struct xnic_map_topo *t, char *err)
{
	int i, ret = xnic_map_topo_index(t, err);

	if (ret)
		return ret;
	if (!t->nnodes) {
		xnic_map_err(err, "the topology has no nodes");
		return -EINVAL;
	}
	for (i = 0; i < t->nappliances; i++)
		if (!t->appliances[i].nnodes) {
			xnic_map_err(err, "appliance \"%s\" has no nodes",
				     t->appliances[i].name);
			return -EINVAL;
		}
	for (i = 0; i < t->nnodes; i++) {
		const struct xnic_map_vertex *v = &t->vertices[t->nodes[i]];

		if (v->nlinks > XNIC_MAP_ROUTE_MAX) {
			xnic_map_err(err, "node \"%s\" has %d links, more than %d",
				     v->name, v->nlinks, XNIC_MAP_ROUTE_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

static int lookup(const int *ix, int n, const char *name, name_fn *name_of,
		  const struct xnic_map_topo *t)
{
	int lo = 0, hi = n - 1;

	while (ix && lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(name, name_of(t, ix[mid]));

		if (!c)
			return ix[mid];
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return -1;
}

/* The vertex (appliance) of that name, or -1; after xnic_map_topo_index(). */
int xnic_map_find(const struct xnic_map_topo *t, const char *name)
{
	return lookup(t->by_name, t->nvertices, name, vertex_name, t);
}

int xnic_map_find_appliance(const struct xnic_map_topo *t, const char *name)
{
	return lookup(t->app_by_name, t->nappliances, name, appliance_name, t);
}

/*
 * The route of a flow from node x to node y (x != y): the mesh when they
 * share a link, else the leaves they share, else up to the spines (every
 * leaf on each side must reach one); hops -1 when none exists.
 */
int xnic_map_route(const struct xnic_map_topo *t, int x, int y,
		   struct xnic_map_route *r)
{
	const struct xnic_map_vertex *vx = &t->vertices[x], *vy = &t->vertices[y];
	int i, j;

	r->x = x;
	r->y = y;
	r->nsrc = r->ndst = 0;
	for (i = 0; i < vx->nlinks; i++)
		if (xnic_map_other(t, vx->links[i], x) == y)
			r->src[r->nsrc++] = vx->links[i];
	r->hops = 1;
	if (r->nsrc)
		return r->hops;
	for (i = 0; i < vx->nlinks; i++) {
		int leaf = xnic_map_other(t, vx->links[i], x);

		if (t->vertices[leaf].kind != XNIC_MAP_LEAF)
			continue;
		for (j = 0; j < vy->nlinks; j++)
			if (xnic_map_other(t, vy->links[j], y) == leaf) {
				r->src[r->nsrc] = vx->links[i];
				r->dst[r->ndst++] = vy->links[j];
				r->nsrc++;
				break;
			}
	}
	r->hops = 2;
	if (r->nsrc)
		return r->hops;
	r->hops = -1;
	for (i = 0; i < vx->nlinks; i++) {
		int leaf = xnic_map_other(t, vx->links[i], x);

		if (t->vertices[leaf].kind != XNIC_MAP_LEAF)
			continue;
		if (!t->vertices[leaf].nup)
			return r->hops;
		r->src[r->nsrc++] = vx->links[i];
	}
	for (j = 0; j < vy->nlinks; j++) {
		int leaf = xnic_map_other(t, vy->links[j], y);

		if (t->vertices[leaf].kind != XNIC_MAP_LEAF)
			continue;
		if (!t->vertices[leaf].nup)
			return r->hops;
		r->dst[r->ndst++] = vy->links[j];
	}
	if (r->nsrc && r->ndst)
		r->hops = 4;
	return r->hops;
}

/* Sum of the bandwidths of the spine links of the leaves @links reach from v. */
static double spine_gbps(const struct xnic_map_topo *t, const int *links,
			 int n, int v)
{
	double sum = 0;
	int i, j;

	for (i = 0; i < n; i++) {
		int l = xnic_map_other(t, links[i], v);
		const struct xnic_map_vertex *leaf = &t->vertices[l];

		for (j = 0; j < leaf->nlinks; j++)
			if (t->vertices[xnic_map_other(t, leaf->links[j], l)].kind ==
			    XNIC_MAP_SPINE)
				sum += t->links[leaf->links[j]].gbps;
	}
	return sum;
}

static double sum_gbps(const struct xnic_map_topo *t, const int *links, int n)
{
	double sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += t->links[links[i]].gbps;
	return sum;
}

/*
 * The capacity of route r, Gbit/s: the least, over the stages it crosses
 * (uplinks, leaf-spine links on each side, downlinks), of the stage's
 * summed bandwidth; the bound of a single flow with no other traffic.
 */
double xnic_map_path_gbps(const struct xnic_map_topo *t,
			  const struct xnic_map_route *r)
{
	double c = 0;
	int i;

	if (r->hops == 2) {
		for (i = 0; i < r->nsrc; i++)
			c += fmin(t->links[r->src[i]].gbps, t->links[r->dst[i]].gbps);
		return c;
	}
	c = sum_gbps(t, r->src, r->nsrc);
	if (r->hops == 4) {
		c = fmin(c, sum_gbps(t, r->dst, r->ndst));
		c = fmin(c, spine_gbps(t, r->src, r->nsrc, r->x));
		c = fmin(c, spine_gbps(t, r->dst, r->ndst, r->y));
	}
	return c;
}
