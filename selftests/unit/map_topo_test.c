// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libxnicmap (topo/), the topology: the synthetic generator, routes, the
 * JSON file's parser and writer, and errors that name the field at fault.
 * Run on the host under ASan and UBSan.
 */
#include "map_util.h"

TEST(synthetic_shape_and_routes)
{
	struct xnic_map_topo *t = synth(3, 4, 2, 2, 100, 100, 100);
	struct xnic_map_route r;
	int x, y;

	ASSERT_NE(NULL, t);
	EXPECT_EQ(3, t->nappliances);
	EXPECT_EQ(12, t->nnodes);
	EXPECT_EQ(12 + 6 + 2, t->nvertices);
	EXPECT_EQ(3 * 6 + 3 * 4 * 2 + 6 * 2, t->nlinks);
	x = xnic_map_find(t, "a0n0");
	y = xnic_map_find(t, "a0n3");
	ASSERT_LE(0, x);
	EXPECT_EQ(1, xnic_map_route(t, x, y, &r));
	EXPECT_EQ(1, r.nsrc);
	EXPECT_EQ(100, xnic_map_path_gbps(t, &r));
	y = xnic_map_find(t, "a2n1");
	EXPECT_EQ(4, xnic_map_route(t, x, y, &r));
	EXPECT_EQ(2, r.nsrc);
	EXPECT_EQ(2, r.ndst);
	EXPECT_EQ(200, xnic_map_path_gbps(t, &r));
	EXPECT_EQ(-1, xnic_map_find(t, "a3n0"));
	EXPECT_EQ(2, xnic_map_find_appliance(t, "a2"));
	xnic_map_topo_free(t);
}

TEST(synthetic_spec)
{
	char err[XNIC_MAP_ERRLEN];
	struct xnic_map_synth s;

	ASSERT_EQ(0, xnic_map_synth_parse("1250,8,4,32", &s, err));
	EXPECT_EQ(1250, s.appliances);
	EXPECT_EQ(32, s.spines);
	EXPECT_EQ(100, s.spine_gbps);
	ASSERT_EQ(0, xnic_map_synth_parse("2,4,2,2,400,200,50", &s, err));
	EXPECT_EQ(400, s.mesh_gbps);
	EXPECT_EQ(50, s.spine_gbps);
	EXPECT_EQ(-EINVAL, xnic_map_synth_parse("2,4,2", &s, err));
	EXPECT_NE(NULL, strstr(err, "expected A,N,U,S"));
	EXPECT_EQ(-EINVAL, xnic_map_synth_parse("2,4,2,2x", &s, err));
	/* beyond an int: refused, not wrapped to 1 appliance */
	err[0] = 0;
	EXPECT_EQ(-EINVAL, xnic_map_synth_parse("4294967297,1,0,0", &s, err));
	EXPECT_NE(NULL, strstr(err, "\"4294967297\" is not a count"))
		TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, xnic_map_synth_parse("2,99999999999999999999,1,1", &s, err));
	EXPECT_EQ(-EINVAL, xnic_map_synth_parse("2,4,1,1,1e999,1,1", &s, err));
	EXPECT_EQ(-EINVAL, xnic_map_synth_parse("2,,1,1", &s, err));
	s = (struct xnic_map_synth){ 0, 4, 1, 1, 100, 100, 100 };
	EXPECT_EQ(NULL, xnic_map_synthetic(&s, err));
	EXPECT_NE(NULL, strstr(err, "must be >= 1"));
	/* 10^12 leaf-spine links: refused at once, not built for hours */
	s = (struct xnic_map_synth){ 1000000, 1, 1, 1000000, 100, 100, 100 };
	EXPECT_EQ(NULL, xnic_map_synthetic(&s, err));
	EXPECT_NE(NULL, strstr(err, "1000001000000 links, more than 10000000"))
		TH_LOG("%s", err);
	s = (struct xnic_map_synth){ 2, 4, 1, 1, 100, -1, 100 };
	EXPECT_EQ(NULL, xnic_map_synthetic(&s, err));
	EXPECT_NE(NULL, strstr(err, "not a positive number"));
}

TEST(json_round_trip)
{
	struct xnic_map_topo *t = synth(3, 2, 2, 3, 100, 50, 25), *u;
	char err[XNIC_MAP_ERRLEN], *text = NULL;
	size_t len = 0;
	FILE *f;
	int i;

	ASSERT_NE(NULL, t);
	f = open_memstream(&text, &len);
	ASSERT_EQ(0, xnic_map_topo_write(t, f));
	fclose(f);
	ASSERT_NE(NULL, strstr(text, "\"paths\""));
	u = xnic_map_topo_parse(text, err);
	ASSERT_NE(NULL, u) TH_LOG("%s", err);
	ASSERT_EQ(t->nvertices, u->nvertices);
	ASSERT_EQ(t->nlinks, u->nlinks);
	ASSERT_EQ(t->nnodes, u->nnodes);
	for (i = 0; i < t->nvertices; i++) {	/* the file lists nodes first */
		const struct xnic_map_vertex *v = &t->vertices[i];
		int j = xnic_map_find(u, v->name);

		ASSERT_LE(0, j);
		EXPECT_EQ(v->kind, u->vertices[j].kind);
		EXPECT_EQ(v->appliance, u->vertices[j].appliance);
	}
	for (i = 0; i < t->nlinks; i++) {
		EXPECT_STREQ(t->vertices[t->links[i].a].name,
			     u->vertices[u->links[i].a].name);
		EXPECT_STREQ(t->vertices[t->links[i].b].name,
			     u->vertices[u->links[i].b].name);
		EXPECT_EQ(t->links[i].gbps, u->links[i].gbps);
	}
	for (i = 0; i < t->nnodes; i++)
		EXPECT_STREQ(t->vertices[t->nodes[i]].name,
			     u->vertices[u->nodes[i]].name);
	free(text);
	xnic_map_topo_free(t);
	xnic_map_topo_free(u);
}

/* A small valid file; the error cases below each break one field of it. */
#define HEAD "{\"version\": 1, \"appliances\": [{\"name\": \"a0\"}, {\"name\": \"a1\"}], "
#define NODES "\"nodes\": [{\"name\": \"n0\", \"appliance\": \"a0\"}, " \
	"{\"name\": \"n1\", \"appliance\": \"a0\", \"host\": \"h1\"}, " \
	"{\"name\": \"m0\", \"appliance\": \"a1\"}], "
#define SWITCHES "\"switches\": [{\"name\": \"l0\", \"role\": \"leaf\", \"appliance\": \"a0\"}, " \
	"{\"name\": \"l1\", \"role\": \"leaf\", \"appliance\": \"a1\"}, " \
	"{\"name\": \"s0\", \"role\": \"spine\"}], "
#define LINKS "\"links\": [{\"ends\": [\"n0\", \"n1\"], \"gbps\": 100}, " \
	"{\"ends\": [\"n0\", \"l0\"], \"gbps\": 100}, {\"ends\": [\"n1\", \"l0\"], \"gbps\": 100}, " \
	"{\"ends\": [\"m0\", \"l1\"], \"gbps\": 100}, {\"ends\": [\"l0\", \"s0\"], \"gbps\": 40}, " \
	"{\"ends\": [\"s0\", \"l1\"], \"gbps\": 40}]"

TEST(json_valid_file)
{
	char err[XNIC_MAP_ERRLEN];
	struct xnic_map_topo *t;
	struct xnic_map_route r;

	t = xnic_map_topo_parse(HEAD NODES SWITCHES LINKS ", \"paths\": "
		"[{\"from\": \"n0\", \"to\": \"m0\", \"hops\": 4, \"gbps\": 40}, "
		"{\"from\": \"n1\", \"to\": \"n0\", \"hops\": 1, \"gbps\": 90}]}", err);
	ASSERT_NE(NULL, t) TH_LOG("%s", err);
	EXPECT_EQ(3, t->nnodes);
	EXPECT_STREQ("n0", t->vertices[xnic_map_find(t, "n0")].host);
	EXPECT_STREQ("h1", t->vertices[xnic_map_find(t, "n1")].host);
	EXPECT_EQ(4, xnic_map_route(t, xnic_map_find(t, "n0"),
				    xnic_map_find(t, "m0"), &r));
	EXPECT_EQ(40, xnic_map_path_gbps(t, &r));
	xnic_map_topo_free(t);
}

TEST(json_errors_name_the_field)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "{\"version\": 1,", "line 1" },
		{ "[]", "top level is not an object" },
		{ "{\"appliances\": []}", "version: missing" },
		{ "{\"version\": 2}", "version: not supported" },
		{ "{\"version\": 1}", "appliances: missing" },
		{ HEAD "\"nodes\": {}}", "nodes: not an array" },
		{ HEAD "\"nodes\": [1]}", "nodes[0]: not an object" },
		{ HEAD "\"nodes\": [{\"appliance\": \"a0\"}]}", "nodes[0].name: missing" },
		{ HEAD "\"nodes\": [{\"name\": 3, \"appliance\": \"a0\"}]}",
		  "nodes[0].name: not a non-empty string" },
		{ HEAD "\"nodes\": [{\"name\": \"n0\", \"appliance\": \"a9\"}]}",
		  "nodes[0].appliance: no appliance named \"a9\"" },
		{ HEAD "\"nodes\": [{\"name\": \"n0\", \"appliance\": \"a0\", \"host\": 1}]}",
		  "nodes[0].host: not a non-empty string" },
		{ HEAD "\"nodes\": [{\"name\": \"n0\", \"appliance\": \"a0\"}, "
		  "{\"name\": \"n0\", \"appliance\": \"a1\"}]}", "\"n0\" is used twice" },
		/* a host goes into the launcher files' lines as one word */
		{ HEAD "\"nodes\": [{\"name\": \"n0\", \"appliance\": \"a0\", "
		  "\"host\": \"h x\\nrank 9=evil\"}]}",
		  "nodes[0].host: a space or a control character at byte 1" },
		{ HEAD "\"nodes\": [{\"name\": \"n 0\", \"appliance\": \"a0\"}]}",
		  "nodes[0].name: a space or a control character at byte 1 (the host unless one is given)" },
		{ HEAD "\"nodes\": [{\"name\": \"n0\", \"appliance\": \"a0\"}]}",
		  "appliance \"a1\" has no nodes" },
		{ HEAD NODES "\"switches\": [{\"name\": \"x\", \"role\": \"core\"}]}",
		  "switches[0].role: \"core\" is neither" },
		{ HEAD NODES "\"switches\": [{\"name\": \"x\", \"role\": \"leaf\"}]}",
		  "switches[0].appliance: missing" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"n0\"], \"gbps\": 1}]}",
		  "links[0].ends: not an array of two names" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"n0\", \"zz\"], \"gbps\": 1}]}",
		  "links[0].ends[1]: no node or switch named \"zz\"" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"n0\", \"n1\"]}]}",
		  "links[0].gbps: missing" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"n0\", \"n1\"], \"gbps\": -5}]}",
		  "links[0]: bandwidth -5 Gbit/s is not a positive number" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"n0\", \"n0\"], \"gbps\": 5}]}",
		  "links[0]: both ends are n0" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"s0\", \"n1\"], \"gbps\": 5}]}",
		  "links[0]: n1 to s0: a node reaches spines through leaves only" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"l0\", \"l1\"], \"gbps\": 5}]}",
		  "two leaf switches are never linked" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"n0\", \"m0\"], \"gbps\": 5}]}",
		  "a mesh link joins one appliance" },
		{ HEAD NODES SWITCHES "\"links\": [{\"ends\": [\"m0\", \"l0\"], \"gbps\": 5}]}",
		  "a leaf joins one appliance" },
		{ HEAD NODES SWITCHES LINKS ", \"paths\": [{\"from\": \"n0\", \"to\": \"s0\", "
		  "\"hops\": 2, \"gbps\": 1}]}", "paths[0].to: \"s0\" is a switch, not a node" },
		{ HEAD NODES SWITCHES LINKS ", \"paths\": [{\"from\": \"n0\", \"to\": \"m0\", "
		  "\"hops\": 2, \"gbps\": 1}]}", "paths[0].hops: 2, but the links give 4" },
		{ HEAD NODES SWITCHES LINKS ", \"paths\": [{\"from\": \"n0\", \"to\": \"m0\", "
		  "\"hops\": 4, \"gbps\": 41}]}", "paths[0].gbps: 41, not in (0, 40]" },
		{ HEAD NODES SWITCHES LINKS ", \"paths\": [{\"from\": \"n0\", \"to\": \"m0\", "
		  "\"gbps\": 4}]}", "paths[0].hops: missing" },
	};
	char err[XNIC_MAP_ERRLEN];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		EXPECT_EQ(NULL, xnic_map_topo_parse(cases[i].text, err));
		EXPECT_NE(NULL, strstr(err, cases[i].want))
			TH_LOG("case %u: \"%s\" does not say \"%s\"", i, err, cases[i].want);
	}
}

TEST(json_file_errors_name_the_file)
{
	char err[XNIC_MAP_ERRLEN];

	EXPECT_EQ(NULL, xnic_map_topo_load("/nonexistent/topology.json", err));
	EXPECT_NE(NULL, strstr(err, "/nonexistent/topology.json"));
}

TEST_HARNESS_MAIN
