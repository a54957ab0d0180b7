/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* libxnicmap's sources and helpers for its unit tests (map_*_test.c). */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "topo/topology.c"
#include "topo/topo_json.c"
#include "topo/synthetic.c"
#include "topo/layout.c"
#include "topo/cost.c"
#include "topo/output.c"

static struct xnic_map_topo *synth(int a, int n, int u, int s, double mesh,
				   double up, double spine)
{
	struct xnic_map_synth sy = { a, n, u, s, mesh, up, spine };
	char err[XNIC_MAP_ERRLEN];
	struct xnic_map_topo *t = xnic_map_synthetic(&sy, err);

	if (!t)
		fprintf(stderr, "synthetic: %s\n", err);
	return t;
}

