// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The topology file (Documentation/topology.rst), read and written with
 * jansson. Every error names the field: "nodes[3].appliance: ...".
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "xnic_map.h"
#include "priv.h"

#define XNIC_MAP_VERSION 1

/* obj[key] as a string; NULL (and err set) when absent or not a string. */
static const char *get_str(json_t *obj, const char *key, const char *where,
			   int i, char *err)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_string(v) || !json_string_length(v)) {
		xnic_map_err(err, "%s[%d].%s: %s", where, i, key,
			     v ? "not a non-empty string" : "missing");
		return NULL;
	}
	return json_string_value(v);
}

static int get_num(json_t *obj, const char *key, const char *where, int i,
		   double *out, char *err)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_number(v)) {
		xnic_map_err(err, "%s[%d].%s: %s", where, i, key,
			     v ? "not a number" : "missing");
		return -EINVAL;
	}
	*out = json_number_value(v);
	return 0;
}

/* root[key] as an array; each element must be an object. */
static json_t *get_array(json_t *root, const char *key, int optional,
			 char *err)
{
	json_t *a = json_object_get(root, key), *v;
	size_t i;

	if (!a && optional)
		return json_array();
	if (!json_is_array(a)) {
		xnic_map_err(err, "%s: %s", key, a ? "not an array" : "missing");
		return NULL;
	}
	json_array_foreach(a, i, v)
		if (!json_is_object(v)) {
			xnic_map_err(err, "%s[%zu]: not an object", key, i);
			return NULL;
		}
	return json_incref(a);
}

/* The first byte of @s that is a space or a control character, or -1. */
static int bad_host_byte(const char *s)
{
	int i;

	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return i;
	return -1;
}

static int appliance_of(struct xnic_map_topo *t, json_t *obj,
			const char *where, int i, char *err)
{
	const char *name = get_str(obj, "appliance", where, i, err);
	int a;

	if (!name)
		return -EINVAL;
	a = xnic_map_find_appliance(t, name);
	if (a < 0)
		xnic_map_err(err, "%s[%d].appliance: no appliance named \"%s\"",
			     where, i, name);
	return a < 0 ? -EINVAL : a;
}

static int parse_vertices(struct xnic_map_topo *t, json_t *nodes,
			  json_t *switches, char *err)
{
	json_t *v;
	size_t i;
	int a;

	json_array_foreach(nodes, i, v) {
		const char *name = get_str(v, "name", "nodes", i, err);
		json_t *host = json_object_get(v, "host");
		const char *h;
		int bad;

		if (!name || (a = appliance_of(t, v, "nodes", i, err)) < 0)
			return -EINVAL;
		if (host && (!json_is_string(host) || !json_string_length(host))) {
			xnic_map_err(err, "nodes[%zu].host: not a non-empty string", i);
			return -EINVAL;
		}
		/* one word on a line of the rankfile and the node-rank list */
		h = host ? json_string_value(host) : name;
		bad = bad_host_byte(h);
		if (bad >= 0) {
			xnic_map_err(err, "nodes[%zu].%s: a space or a control character at byte %d%s",
				     i, host ? "host" : "name", bad,
				     host ? "" : " (the host unless one is given)");
			return -EINVAL;
		}
		if (xnic_map_add_vertex(t, name, XNIC_MAP_NODE, a, h) < 0)
			return -ENOMEM;
	}
	json_array_foreach(switches, i, v) {
		const char *name = get_str(v, "name", "switches", i, err);
		const char *role = name ? get_str(v, "role", "switches", i, err) : NULL;
		enum xnic_map_kind kind;

		if (!role)
			return -EINVAL;
		a = -1;
		if (!strcmp(role, "leaf")) {
			kind = XNIC_MAP_LEAF;
			a = appliance_of(t, v, "switches", i, err);
			if (a < 0)
				return -EINVAL;
		} else if (!strcmp(role, "spine")) {
			kind = XNIC_MAP_SPINE;
		} else {
			xnic_map_err(err, "switches[%zu].role: \"%s\" is neither \"leaf\" nor \"spine\"",
				     i, role);
			return -EINVAL;
		}
		if (xnic_map_add_vertex(t, name, kind, a, NULL) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* links[i].ends[j] or paths[i].from/to as a vertex (a node if @node). */
static int end_of(struct xnic_map_topo *t, const char *name,
		  const char *field, int node, char *err)
{
	int v = name ? xnic_map_find(t, name) : -1;

	if (v < 0 && name)
		xnic_map_err(err, "%s: no node or switch named \"%s\"", field, name);
	else if (v >= 0 && node && t->vertices[v].kind != XNIC_MAP_NODE) {
		xnic_map_err(err, "%s: \"%s\" is a switch, not a node", field, name);
		v = -1;
	}
	return v;
}

static int parse_links(struct xnic_map_topo *t, json_t *links, char *err)
{
	char field[64], why[XNIC_MAP_ERRLEN];
	json_t *v, *ends;
	size_t i;
	int e[2], j;
	double gbps;

	json_array_foreach(links, i, v) {
		ends = json_object_get(v, "ends");
		if (!json_is_array(ends) || json_array_size(ends) != 2) {
			xnic_map_err(err, "links[%zu].ends: %s", i,
				     ends ? "not an array of two names" : "missing");
			return -EINVAL;
		}
		for (j = 0; j < 2; j++) {
			snprintf(field, sizeof(field), "links[%zu].ends[%d]", i, j);
			if (!json_is_string(json_array_get(ends, j))) {
				xnic_map_err(err, "%s: not a string", field);
				return -EINVAL;
			}
			e[j] = end_of(t, json_string_value(json_array_get(ends, j)),
				      field, 0, err);
			if (e[j] < 0)
				return -EINVAL;
		}
		if (get_num(v, "gbps", "links", i, &gbps, err))
			return -EINVAL;
		if (xnic_map_add_link(t, e[0], e[1], gbps, why) < 0) {
			xnic_map_err(err, "links[%zu]: %s", i, why);
			return -EINVAL;
		}
	}
	return 0;
}

/* Paths are checked against the links: hops and bandwidth must agree. */
static int check_paths(struct xnic_map_topo *t, json_t *paths, char *err)
{
	struct xnic_map_route r;
	char field[64];
	double hops, gbps, cap;
	json_t *v;
	size_t i;
	int x, y;

	json_array_foreach(paths, i, v) {
		snprintf(field, sizeof(field), "paths[%zu].from", i);
		x = end_of(t, get_str(v, "from", "paths", i, err), field, 1, err);
		if (x < 0)
			return -EINVAL;
		snprintf(field, sizeof(field), "paths[%zu].to", i);
		y = end_of(t, get_str(v, "to", "paths", i, err), field, 1, err);
		if (y < 0)
			return -EINVAL;
		if (get_num(v, "hops", "paths", i, &hops, err) ||
		    get_num(v, "gbps", "paths", i, &gbps, err))
			return -EINVAL;
		if (x == y || xnic_map_route(t, x, y, &r) < 0) {
			xnic_map_err(err, "paths[%zu]: the links give no path from \"%s\" to \"%s\"",
				     i, t->vertices[x].name, t->vertices[y].name);
			return -EINVAL;
		}
		if (hops != r.hops) {
			xnic_map_err(err, "paths[%zu].hops: %g, but the links give %d from \"%s\" to \"%s\"",
				     i, hops, r.hops, t->vertices[x].name,
				     t->vertices[y].name);
			return -EINVAL;
		}
		cap = xnic_map_path_gbps(t, &r);
		if (!(gbps > 0) || gbps > cap * (1 + 1e-9)) {
			xnic_map_err(err, "paths[%zu].gbps: %g, not in (0, %g], the links' capacity",
				     i, gbps, cap);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_root(struct xnic_map_topo *t, json_t *root, char *err)
{
	json_t *ver = json_object_get(root, "version"), *a[5] = { NULL };
	static const char *const keys[] = {
		"appliances", "nodes", "switches", "links", "paths",
	};
	json_t *v;
	size_t i;
	int ret = -EINVAL;

	if (!json_is_object(root)) {
		xnic_map_err(err, "the top level is not an object");
		return -EINVAL;
	}
	if (!json_is_integer(ver) || json_integer_value(ver) != XNIC_MAP_VERSION) {
		xnic_map_err(err, "version: %s (this is version %d)",
			     ver ? "not supported" : "missing", XNIC_MAP_VERSION);
		return -EINVAL;
	}
	for (i = 0; i < 5; i++)
		if (!(a[i] = get_array(root, keys[i], i >= 2, err)))
			goto out;
	json_array_foreach(a[0], i, v) {
		const char *name = get_str(v, "name", "appliances", i, err);

		if (!name)
			goto out;
		if (xnic_map_add_appliance(t, name) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if ((ret = xnic_map_topo_index(t, err)) ||
	    (ret = parse_vertices(t, a[1], a[2], err)) ||
	    (ret = xnic_map_topo_index(t, err)) ||
	    (ret = parse_links(t, a[3], err)) ||
	    (ret = xnic_map_topo_finish(t, err)))
		goto out;
	ret = check_paths(t, a[4], err);
out:
	for (i = 0; i < 5; i++)
		json_decref(a[i]);
	return ret;
}

static struct xnic_map_topo *from_json(json_t *root, json_error_t *je,
				       const char *what, char *err)
{
	struct xnic_map_topo *t;
	char why[XNIC_MAP_ERRLEN];

	if (!root && je->line < 1) {		/* could not read it */
		xnic_map_err(err, "%s: %s", what, je->text);
		return NULL;
	}
	if (!root) {
		xnic_map_err(err, "%s: line %d column %d: %s", what, je->line,
			     je->column, je->text);
		return NULL;
	}
	t = xnic_map_topo_new();
	if (!t) {
		xnic_map_err(err, "%s: out of memory", what);
	} else if (parse_root(t, root, why)) {
		xnic_map_err(err, "%s: %s", what, why);
		xnic_map_topo_free(t);
		t = NULL;
	}
	json_decref(root);
	return t;
}

/**
 * xnic_map_topo_load() - read a topology file.
 * @path: the JSON file (Documentation/topology.rst)
 * @err: XNIC_MAP_ERRLEN bytes for the reason of a failure, or NULL
 *
 * Return: the topology (xnic_map_topo_free() it), or NULL with @err set:
 * the file and line of a JSON syntax error, else the field at fault.
 */
struct xnic_map_topo *xnic_map_topo_load(const char *path, char *err)
{
	json_error_t je;
	struct stat st;

	/* jansson would call a directory an empty document. */
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		xnic_map_err(err, "%s: is a directory, not a topology file",
			     path);
		return NULL;
	}
	return from_json(json_load_file(path, JSON_REJECT_DUPLICATES, &je),
			 &je, path, err);
}

/* As xnic_map_topo_load(), from a string. */
struct xnic_map_topo *xnic_map_topo_parse(const char *text, char *err)
{
	json_error_t je;

	return from_json(json_loads(text, JSON_REJECT_DUPLICATES, &je), &je,
			 "topology", err);
}

static json_t *path_json(const struct xnic_map_topo *t, int x, int y)
{
	struct xnic_map_route r;

	if (x == y || xnic_map_route(t, x, y, &r) < 0)
		return NULL;
	return json_pack("{s:s, s:s, s:i, s:f}", "from", t->vertices[x].name,
			 "to", t->vertices[y].name, "hops", r.hops,
			 "gbps", xnic_map_path_gbps(t, &r));
}

/*
 * The paths written: from each appliance's first node to its second and
 * to the next appliance's first node (a sample for the reader to check;
 * every path follows from the links).
 */
static json_t *paths_json(const struct xnic_map_topo *t)
{
	json_t *paths = json_array(), *p;
	int i;

	for (i = 0; i < t->nappliances; i++) {
		const struct xnic_map_appliance *a = &t->appliances[i];
		const struct xnic_map_appliance *b = &t->appliances[(i + 1) % t->nappliances];

		if (a->nnodes > 1 && (p = path_json(t, a->nodes[0], a->nodes[1])))
			json_array_append_new(paths, p);
		if (t->nappliances > 1 && (p = path_json(t, a->nodes[0], b->nodes[0])))
			json_array_append_new(paths, p);
	}
	return paths;
}

/**
 * xnic_map_topo_write() - write a topology in its JSON form.
 * @t: the topology
 * @f: where to
 *
 * Return: 0, or -EIO / -ENOMEM.
 */
int xnic_map_topo_write(const struct xnic_map_topo *t, FILE *f)
{
	json_t *root, *apps = json_array(), *nodes = json_array();
	json_t *sw = json_array(), *links = json_array();
	int i, ret;

	for (i = 0; i < t->nappliances; i++)
		json_array_append_new(apps, json_pack("{s:s}", "name",
						      t->appliances[i].name));
	for (i = 0; i < t->nvertices; i++) {
		const struct xnic_map_vertex *v = &t->vertices[i];
		json_t *o = json_pack("{s:s}", "name", v->name);

		if (v->kind == XNIC_MAP_NODE)
			json_object_set_new(o, "host", json_string(v->host));
		else
			json_object_set_new(o, "role",
					    json_string(xnic_map_kind_name(v->kind)));
		if (v->appliance >= 0)
			json_object_set_new(o, "appliance",
					    json_string(t->appliances[v->appliance].name));
		json_array_append_new(v->kind == XNIC_MAP_NODE ? nodes : sw, o);
	}
	for (i = 0; i < t->nlinks; i++)
		json_array_append_new(links, json_pack("{s:[s,s], s:f}", "ends",
			t->vertices[t->links[i].a].name,
			t->vertices[t->links[i].b].name, "gbps", t->links[i].gbps));
	root = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o}", "version",
			 XNIC_MAP_VERSION, "appliances", apps, "nodes", nodes,
			 "switches", sw, "links", links, "paths", paths_json(t));
	if (!root)
		return -ENOMEM;
	ret = json_dumpf(root, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return ret || fputc('\n', f) == EOF ? -EIO : 0;
}
