// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An MPI job whose every received byte is checked: a ring of point-to-point
 * messages at several sizes, MPI_Allreduce, MPI_Alltoall, and one-sided
 * MPI_Put / MPI_Get. Rank 0 then times a ping-pong with rank 1 (latency at
 * 8 B, bandwidth at 4 MiB) and prints it. Exits non-zero on any mismatch.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errors;

/* The byte rank r puts at offset i of message m. */
static uint8_t pattern(int r, size_t i, int m)
{
	return (uint8_t)(r * 131 + i * 7 + (i >> 12) + m * 17 + 1);
}

static void fill(uint8_t *b, size_t len, int r, int m)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pattern(r, i, m);
}

static void check(const char *what, const uint8_t *b, size_t len, int r, int m)
{
	for (size_t i = 0; i < len; i++) {
		if (b[i] != pattern(r, i, m)) {
			fprintf(stderr, "rank %d: %s: byte %zu of %zu is %#x, want %#x\n",
				rank, what, i, len, b[i], pattern(r, i, m));
			errors++;
			return;
		}
	}
}

static void ring(size_t len, int reps)
{
	uint8_t *out = malloc(len), *in = malloc(len);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	for (int m = 0; m < reps; m++) {
		fill(out, len, rank, m);
		memset(in, 0, len);
		MPI_Sendrecv(out, (int)len, MPI_BYTE, next, m, in, (int)len,
			     MPI_BYTE, prev, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		check("ring", in, len, prev, m);
	}
	free(out);
	free(in);
}

static void allreduce(int n)
{
	int64_t *v = malloc(n * sizeof(*v)), *sum = malloc(n * sizeof(*sum));

	for (int i = 0; i < n; i++)
		v[i] = (int64_t)(rank + 1) * (i + 1);
	MPI_Allreduce(v, sum, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < n; i++) {
		int64_t want = (int64_t)size * (size + 1) / 2 * (i + 1);

		if (sum[i] != want) {
			fprintf(stderr, "rank %d: allreduce[%d] = %lld, want %lld\n",
				rank, i, (long long)sum[i], (long long)want);
			errors++;
			break;
		}
	}
	free(v);
	free(sum);
}

static void alltoall(size_t len)
{
	uint8_t *out = malloc(len * size), *in = malloc(len * size);

	/* Block d of rank r's send buffer is message d from r. */
	for (int d = 0; d < size; d++)
		fill(out + d * len, len, rank, d);
	memset(in, 0, len * size);
	MPI_Alltoall(out, (int)len, MPI_BYTE, in, (int)len, MPI_BYTE, MPI_COMM_WORLD);
	for (int s = 0; s < size; s++)
		check("alltoall", in + s * len, len, s, rank);
	free(out);
	free(in);
}

/* Each rank puts into its right neighbour's window and gets from its left. */
static void one_sided(size_t len)
{
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;
	uint8_t *win_buf, *src = malloc(len), *got = malloc(len);
	MPI_Win win;

	MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &win_buf);
	fill(win_buf, len, rank, 50);
	MPI_Win_create(win_buf, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

	MPI_Win_fence(0, win);
	memset(got, 0, len);
	MPI_Get(got, (int)len, MPI_BYTE, prev, 0, (int)len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	check("get", got, len, prev, 50);

	fill(src, len, rank, 51);
	MPI_Put(src, (int)len, MPI_BYTE, next, 0, (int)len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	check("put", win_buf, len, prev, 51);

	MPI_Win_free(&win);
	MPI_Free_mem(win_buf);
	free(src);
	free(got);
}

static double pingpong(size_t len, int iters)
{
	uint8_t *b = malloc(len);
	double t0;

	memset(b, rank, len);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters && rank < 2; i++) {
		if (rank == 0) {
			MPI_Send(b, (int)len, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(b, (int)len, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(b, (int)len, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(b, (int)len, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
	free(b);
	return (MPI_Wtime() - t0) / iters / 2; /* one way */
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 8, 4096, 65536, 1 << 20, 4 << 20 };
	int total;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ring(sizes[i], sizes[i] >= (1 << 20) ? 20 : 200);
	allreduce(1);
	allreduce(1 << 18);
	alltoall(8);
	alltoall(1 << 20);
	one_sided(8);
	one_sided(1 << 20);

	if (size >= 2) {
		double lat = pingpong(8, 1000), bw = pingpong(4 << 20, 20);

		if (rank == 0)
			printf("pingpong: 8 B %.2f us, 4 MiB %.1f MB/s\n",
			       lat * 1e6, (4 << 20) / bw / 1e6);
	}
	MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_check: %d ranks, %d errors\n", size, total);
	MPI_Finalize();
	return total ? 1 : 0;
}
