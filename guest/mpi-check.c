// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mpi-check: what guest-mpi runs under OpenMPI's mpirun across the
 * guests (scripts/guest-mpi-test.sh). Rank 0 ping-pongs with every other
 * rank at 8 B, 64 KiB and 1 MiB, each message a pattern of its sender,
 * round and rank that the receiver checks word by word; then all ranks
 * allreduce 2 MiB of int64 five times and check every sum. Rank 0
 * prints one "mpi-check:" line per result and "mpi-check: RESULT PASS"
 * when every check held.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define ALLREDUCE_N	(1 << 18)	/* int64: 2 MiB */
#define ALLREDUCE_ROUNDS 5

static const struct {
	int bytes, rounds;
} sizes[] = { { 8, 200 }, { 65536, 50 }, { 1 << 20, 10 } };

static uint32_t word(int rank, int round, size_t i)
{
	return (uint32_t)rank * 2654435761u ^ (uint32_t)round * 40503u ^
	       (uint32_t)i * 2246822519u;
}

static void fill(uint32_t *b, int words, int rank, int round)
{
	for (int i = 0; i < words; i++)
		b[i] = word(rank, round, i);
}

/* The words of @b that are not @rank's of @round. */
static int bad_words(const uint32_t *b, int words, int rank, int round)
{
	int bad = 0;

	for (int i = 0; i < words; i++)
		bad += b[i] != word(rank, round, i);
	return bad;
}

/* Rank 0 and @peer: @rounds round trips of @bytes; the words gone bad. */
static long pingpong(int me, int peer, int bytes, int rounds, double *secs)
{
	int words = bytes / 4, other = me ? 0 : peer;
	uint32_t *b = malloc(bytes);
	double t0 = MPI_Wtime();
	long bad = 0;

	for (int r = 0; r < rounds; r++) {
		if (me == 0) {
			fill(b, words, 0, r);
			MPI_Send(b, words, MPI_UINT32_T, other, r,
				 MPI_COMM_WORLD);
			MPI_Recv(b, words, MPI_UINT32_T, other, r,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += bad_words(b, words, peer, r);
		} else {
			MPI_Recv(b, words, MPI_UINT32_T, other, r,
				 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			bad += bad_words(b, words, 0, r);
			fill(b, words, me, r);
			MPI_Send(b, words, MPI_UINT32_T, other, r,
				 MPI_COMM_WORLD);
		}
	}
	*secs = MPI_Wtime() - t0;
	free(b);
	return bad;
}

static long pingpongs(int rank, int size)
{
	long fails = 0, bad;
	double secs;

	for (int peer = 1; peer < size; peer++) {
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			if (rank != 0 && rank != peer)
				continue;
			bad = pingpong(rank, peer, sizes[k].bytes,
				       sizes[k].rounds, &secs);
			fails += bad != 0;
			if (rank != 0)
				continue;
			printf("mpi-check: pingpong 0<->%d %d B: %d round trips, %.1f us each, %.2f MB/s, %s\n",
			       peer, sizes[k].bytes, sizes[k].rounds,
			       secs * 1e6 / sizes[k].rounds,
			       2.0 * sizes[k].bytes * sizes[k].rounds / secs / 1e6,
			       bad ? "DATA BAD" : "data checked");
		}
	}
	return fails;
}

/* Every rank's element i is rank * 1000003 + i + round: sums are known. */
static long allreduce(int rank, int size)
{
	int64_t *in = malloc(ALLREDUCE_N * sizeof(*in));
	int64_t *out = malloc(ALLREDUCE_N * sizeof(*out));
	int64_t ranks = (int64_t)size * (size - 1) / 2 * 1000003;
	double t0 = MPI_Wtime(), secs;
	long bad = 0;

	for (int r = 0; r < ALLREDUCE_ROUNDS; r++) {
		for (int i = 0; i < ALLREDUCE_N; i++)
			in[i] = (int64_t)rank * 1000003 + i + r;
		MPI_Allreduce(in, out, ALLREDUCE_N, MPI_INT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		for (int i = 0; i < ALLREDUCE_N; i++)
			bad += out[i] != ranks + (int64_t)size * (i + r);
	}
	secs = MPI_Wtime() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi-check: allreduce %d ranks, %d x %zu KiB of int64: %.1f ms each, %s\n",
		       size, ALLREDUCE_ROUNDS,
		       ALLREDUCE_N * sizeof(*in) / 1024,
		       secs * 1e3 / ALLREDUCE_ROUNDS,
		       bad ? "SUMS BAD" : "every sum checked");
	free(in);
	free(out);
	return bad != 0;
}

int main(int argc, char **argv)
{
	int rank, size;
	long fails;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == 0)
		printf("mpi-check: %d ranks\n", size);
	fails = pingpongs(rank, size);
	MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_LONG, MPI_SUM,
		      MPI_COMM_WORLD);
	fails += allreduce(rank, size);
	if (rank == 0)
		printf("mpi-check: RESULT %s\n", fails ? "FAIL" : "PASS");
	MPI_Finalize();
	return fails != 0;
}
