// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fabric_mpi_test - a plain MPI program (nothing xnic in it), run by
 * fabric_mpi_test.sh over Open MPI's mtl ofi on the xnic provider:
 *   - point to point around a ring, 1 B .. 4 MiB (ofi_rxm's eager, SAR
 *     and rendezvous protocols), every byte checked;
 *   - MPI_Allreduce of float sums, 1 .. 1 Mi elements, every element
 *     checked against the value computed locally;
 *   - MPI_Bcast of 1 MiB from every root, checked;
 * with --rma instead: one-sided MPI_Put and MPI_Get of 64 KiB to and from
 * the next rank in fence epochs, checked.
 * Prints "fabric_mpi_test: PASS" on rank 0 when every rank passed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, bad;

static unsigned char pattern(int src, size_t i)
{
	return (unsigned char)(src * 31 + i * 7 + (i >> 9));
}

static void ring(size_t len)
{
	unsigned char *s = calloc(len, 1), *r = calloc(len, 1);
	int to = (rank + 1) % size, from = (rank + size - 1) % size;
	size_t i;

	for (i = 0; i < len; i++)
		s[i] = pattern(rank, i);
	memset(r, 0, len);
	MPI_Sendrecv(s, (int)len, MPI_BYTE, to, 7, r, (int)len, MPI_BYTE,
		     from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < len; i++) {
		if (r[i] != pattern(from, i)) {
			fprintf(stderr, "rank %d: ring %zu B: byte %zu is %u, want %u\n",
				rank, len, i, r[i], pattern(from, i));
			bad++;
			break;
		}
	}
	free(s);
	free(r);
}

static void allreduce(int n)
{
	float *in = calloc(n, sizeof(float)), *out = calloc(n, sizeof(float));
	int i, j;

	for (i = 0; i < n; i++)
		in[i] = (float)((rank + 1) * (i % 1000)) * 0.5f;
	MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < n; i++) {
		float want = 0;

		for (j = 0; j < size; j++)	/* the same order: exact */
			want += (float)((j + 1) * (i % 1000)) * 0.5f;
		if (out[i] != want) {
			fprintf(stderr, "rank %d: allreduce %d: [%d] = %g, want %g\n",
				rank, n, i, out[i], want);
			bad++;
			break;
		}
	}
	free(in);
	free(out);
}

static void bcast(size_t len)
{
	unsigned char *b = calloc(len, 1);
	int root;
	size_t i;

	for (root = 0; root < size; root++) {
		for (i = 0; i < len; i++)
			b[i] = rank == root ? pattern(root, i) : 0;
		MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
		for (i = 0; i < len; i++) {
			if (b[i] != pattern(root, i)) {
				fprintf(stderr, "rank %d: bcast from %d: byte %zu\n",
					rank, root, i);
				bad++;
				break;
			}
		}
	}
	free(b);
}

static void rma(size_t len)
{
	int to = (rank + 1) % size, from = (rank + size - 1) % size;
	unsigned char *win_buf, *local = calloc(len, 1);
	MPI_Win win;
	size_t i;

	MPI_Win_allocate((MPI_Aint)(2 * len), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
			 &win_buf, &win);
	memset(win_buf, 0, 2 * len);
	for (i = 0; i < len; i++)
		local[i] = pattern(rank, i);
	MPI_Win_fence(0, win);
	MPI_Put(local, (int)len, MPI_BYTE, to, 0, (int)len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	for (i = 0; i < len; i++) {
		if (win_buf[i] != pattern(from, i)) {
			fprintf(stderr, "rank %d: put: byte %zu\n", rank, i);
			bad++;
			break;
		}
	}
	for (i = 0; i < len; i++)
		win_buf[len + i] = pattern(rank + 100, i);
	memset(local, 0, len);
	MPI_Win_fence(0, win);
	MPI_Get(local, (int)len, MPI_BYTE, from, (MPI_Aint)len, (int)len,
		MPI_BYTE, win);
	MPI_Win_fence(0, win);
	for (i = 0; i < len; i++) {
		if (local[i] != pattern(from + 100, i)) {
			fprintf(stderr, "rank %d: get: byte %zu\n", rank, i);
			bad++;
			break;
		}
	}
	MPI_Win_free(&win);
	free(local);
}

int main(int argc, char **argv)
{
	size_t len;
	int n, all;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1 && !strcmp(argv[1], "--rma")) {
		rma(65536);
		goto out;
	}
	for (len = 1; len <= 4u << 20; len *= 4)
		ring(len);
	ring(65537);
	for (n = 1; n <= 1 << 20; n *= 16)
		allreduce(n);
	allreduce(1000003);
	bcast(1 << 20);
out:
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (!rank)
		printf("fabric_mpi_test: %d ranks: %s\n", size,
		       all ? "FAIL" : "PASS");
	MPI_Finalize();
	return all ? 1 : 0;
}
