// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Launcher files for a mapping: an Open MPI rankfile and a node-rank list
 * for torchrun (one rank a node).
 */
#include <errno.h>

#include "xnic_map.h"

/**
 * xnic_map_write_rankfile() - an Open MPI rankfile: "rank R=HOST slot=0"
 * for each rank R (mpirun --rankfile FILE -np NRANKS).
 * @t: the topology (hosts)
 * @nranks: TP x PP x DP
 * @node_of_rank: vertex index of each rank's node
 * @f: where to
 *
 * Return: 0 or -EIO.
 */
int xnic_map_write_rankfile(const struct xnic_map_topo *t, int nranks,
			    const int *node_of_rank, FILE *f)
{
	int r;

	for (r = 0; r < nranks; r++)
		if (fprintf(f, "rank %d=%s slot=0\n", r,
			    t->vertices[node_of_rank[r]].host) < 0)
			return -EIO;
	return fflush(f) ? -EIO : 0;
}

/**
 * xnic_map_write_hosts() - the node-rank list: line R is "HOST R", the host
 * that runs torchrun --node_rank=R --nnodes=NRANKS --nproc_per_node=1 (and
 * the hosts in node-rank order, e.g. for a hostfile).
 * @t: the topology (hosts)
 * @nranks: TP x PP x DP
 * @node_of_rank: vertex index of each rank's node
 * @f: where to
 *
 * Return: 0 or -EIO.
 */
int xnic_map_write_hosts(const struct xnic_map_topo *t, int nranks,
			 const int *node_of_rank, FILE *f)
{
	int r;

	for (r = 0; r < nranks; r++)
		if (fprintf(f, "%s %d\n", t->vertices[node_of_rank[r]].host, r) < 0)
			return -EIO;
	return fflush(f) ? -EIO : 0;
}
