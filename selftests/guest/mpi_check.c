// SPDX-License-Identifier: GPL-2.0
/*
 * MPI over whatever transports mpirun was given (mpi.sh, pair_mpi.sh):
 * a ping-pong, a windowed bandwidth run, one-sided puts and gets, and
 * three collectives, between the ranks of MPI_COMM_WORLD. Every message's
 * contents are checked on arrival. Rank 0 prints one line per check,
 *   ok NAME key=value ...     or     not ok NAME: what was wrong
 * and the exit status is 1 if any check failed on any rank.
 *
 * Ping-pong and bandwidth run between ranks 0 and 1; the others wait.
 *
 * MPI_CHECK_COUNTERS="IBDEV PATH": the first rank of each host writes
 * IBDEV's port counters to PATH.start once all ranks are up and to
 * PATH.end once all are done, before MPI_Finalize: the test judges the
 * traffic in between, not the teardown (where a QP whose peer is gone
 * times out, as it should).
 */
#include <dirent.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"
#include "pattern.h"

#define PP_ITERS	100
#define BW_SIZE		(1 << 20)
#define BW_WINDOW	8
#define BW_ROUNDS	4
#define RMA_WORDS	(1 << 17)	/* 1 MiB window */
#define COLL_WORDS	(1 << 18)	/* 2 MiB per rank */

static int rank, nranks;
static unsigned int failures;

/* Word i of message SEED: no two messages of a run look alike. */
static void fill_words(uint64_t *buf, size_t words, uint64_t seed)
{
	pattern_fill(buf, words * 8, PAT_COUNT, seed, 0);
}

/* The index of the first wrong word, or -1. */
static long check_words(const uint64_t *buf, size_t words, uint64_t seed)
{
	int64_t at = pattern_check(buf, words * 8, PAT_COUNT, seed, 0, NULL);

	return at < 0 ? -1 : (long)(at / 8);
}

/*
 * One check's verdict, agreed by all ranks: BAD is this rank's first
 * wrong word (or -1); rank 0 prints the result.
 */
static void report(const char *name, long bad, const char *values)
{
	long worst;

	MPI_Allreduce(&bad, &worst, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
	if (rank)
		return;
	if (worst < 0) {
		printf("ok %s%s%s\n", name, values ? " " : "", values ? values : "");
	} else {
		printf("not ok %s: word %ld of a message differs\n", name, worst);
		failures++;
	}
	fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Ranks 0 and 1 exchange PP_ITERS messages of SIZE bytes each way. Rank 0
 * reports the median half round trip (ucx_perftest's "50.0%ile" is the
 * same measure) and the bandwidth over all of them.
 */
static void ping_pong(size_t size)
{
	size_t words = size / sizeof(uint64_t);
	uint64_t *buf = xmalloc(size);
	double rtt[PP_ITERS] = { 0 }, t0 = 0, t;
	int peer = !rank, i;
	long bad = -1, at;
	char name[64], values[64];

	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; rank < 2 && i < PP_ITERS + 1; i++) {
		t = MPI_Wtime();
		/* The first round trip connects and warms up: not timed. */
		if (i == 1)
			t0 = t;
		if (rank == 0) {
			fill_words(buf, words, 2 * i);
			MPI_Send(buf, size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			at = check_words(buf, words, 2 * i + 1);
		} else {
			MPI_Recv(buf, size, MPI_BYTE, peer, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			at = check_words(buf, words, 2 * i);
			fill_words(buf, words, 2 * i + 1);
			MPI_Send(buf, size, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
		}
		if (i)
			rtt[i - 1] = MPI_Wtime() - t;
		if (at >= 0 && bad < 0)
			bad = at;
	}
	t = MPI_Wtime() - t0;
	qsort(rtt, PP_ITERS, sizeof(rtt[0]), cmp_double);
	snprintf(name, sizeof(name), "pingpong %zu B", size);
	/* The check of each message included. */
	snprintf(values, sizeof(values), "lat_us=%.1f MiBps=%.2f",
		 rtt[PP_ITERS / 2] * 1e6 / 2, 2.0 * PP_ITERS * size / t / (1 << 20));
	report(name, bad, values);
	free(buf);
}

/* Rank 0 streams windows of nonblocking sends to rank 1, which acks each. */
static void bandwidth(void)
{
	size_t words = BW_SIZE / sizeof(uint64_t);
	uint64_t *buf = xmalloc((size_t)BW_WINDOW * BW_SIZE);
	MPI_Request req[BW_WINDOW];
	int r, w, ack = 0;
	long bad = -1, at;
	double t0 = 0, t;
	char values[64];

	MPI_Barrier(MPI_COMM_WORLD);
	for (r = 0; rank < 2 && r < BW_ROUNDS + 1; r++) {
		if (r == 1)
			t0 = MPI_Wtime();
		for (w = 0; w < BW_WINDOW; w++) {
			uint64_t *b = buf + w * words;

			if (rank == 0) {
				fill_words(b, words, 1000 + r * BW_WINDOW + w);
				MPI_Isend(b, BW_SIZE, MPI_BYTE, 1, w,
					  MPI_COMM_WORLD, &req[w]);
			} else {
				MPI_Irecv(b, BW_SIZE, MPI_BYTE, 0, w,
					  MPI_COMM_WORLD, &req[w]);
			}
		}
		MPI_Waitall(BW_WINDOW, req, MPI_STATUSES_IGNORE);
		if (rank == 1) {
			for (w = 0; w < BW_WINDOW; w++) {
				at = check_words(buf + w * words, words,
						 1000 + r * BW_WINDOW + w);
				if (at >= 0 && bad < 0)
					bad = at;
			}
			MPI_Send(&ack, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
		} else {
			MPI_Recv(&ack, 1, MPI_INT, 1, 99, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		}
	}
	t = MPI_Wtime() - t0;
	snprintf(values, sizeof(values), "MiBps=%.2f",
		 (double)BW_ROUNDS * BW_WINDOW * BW_SIZE / t / (1 << 20));
	report("bandwidth 1 MiB x 8 in flight", bad, values);
	free(buf);
}

/* One-sided: each rank puts into its right neighbour's window, then gets
 * its left neighbour's window back.
 */
static void one_sided(void)
{
	size_t len = RMA_WORDS * sizeof(uint64_t);
	uint64_t *win_buf, *local = xmalloc(len);
	int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
	long bad;
	MPI_Win win;

	MPI_Alloc_mem(len, MPI_INFO_NULL, &win_buf);
	memset(win_buf, 0, len);
	MPI_Win_create(win_buf, len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

	fill_words(local, RMA_WORDS, 5000 + rank);
	MPI_Win_fence(0, win);
	MPI_Put(local, len, MPI_BYTE, right, 0, len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	bad = check_words(win_buf, RMA_WORDS, 5000 + left);
	report("put 1 MiB to a neighbour, fence", bad, NULL);

	/* The left neighbour's window holds what this rank put there. */
	memset(local, 0, len);
	MPI_Win_fence(0, win);
	MPI_Get(local, len, MPI_BYTE, right, 0, len, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	bad = check_words(local, RMA_WORDS, 5000 + rank);
	report("get 1 MiB from a neighbour, fence", bad, NULL);

	MPI_Win_free(&win);
	MPI_Free_mem(win_buf);
	free(local);
}

static void collectives(void)
{
	size_t i, words = COLL_WORDS;
	uint64_t *in = xmalloc(words * sizeof(uint64_t));
	uint64_t *out = xmalloc(words * sizeof(uint64_t));
	uint64_t ranks_sum = (uint64_t)nranks * (nranks + 1) / 2;
	size_t chunk = words / nranks;
	long bad = -1;
	int r;

	/* Allreduce: rank r gives (r + 1) * i, the sum is i * n(n+1)/2. */
	for (i = 0; i < words; i++)
		in[i] = (rank + 1) * i;
	MPI_Allreduce(in, out, words, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < words && bad < 0; i++)
		if (out[i] != i * ranks_sum)
			bad = (long)i;
	report("allreduce 2 MiB sum", bad, NULL);

	/* Bcast from the last rank, so that rank 0 receives too. */
	if (rank == nranks - 1)
		fill_words(out, words, 7000);
	MPI_Bcast(out, words, MPI_UINT64_T, nranks - 1, MPI_COMM_WORLD);
	report("bcast 2 MiB", check_words(out, words, 7000), NULL);

	/* Alltoall: the chunk rank s sends to rank d is message 8000+s*n+d. */
	for (r = 0; r < nranks; r++)
		fill_words(in + r * chunk, chunk, 8000 + rank * nranks + r);
	MPI_Alltoall(in, chunk, MPI_UINT64_T, out, chunk, MPI_UINT64_T,
		     MPI_COMM_WORLD);
	bad = -1;
	for (r = 0; r < nranks && bad < 0; r++)
		bad = check_words(out + r * chunk, chunk, 8000 + r * nranks + rank);
	report("alltoall", bad, NULL);

	free(in);
	free(out);
}

/* Each counter of the port as "name value ", on one line. */
static void write_counters(const char *dev, const char *path)
{
	char dir[160], file[512], val[32];
	struct dirent *e;
	FILE *out, *in;
	DIR *d;

	snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/1/hw_counters", dev);
	d = opendir(dir);
	out = fopen(path, "w");
	if (!d || !out) {
		fprintf(stderr, "# counters of %s to %s: %m\n", dev, path);
		goto out;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
		in = fopen(file, "r");
		if (!in)
			continue;
		if (fscanf(in, "%31s", val) == 1)
			fprintf(out, "%s %s ", e->d_name, val);
		fclose(in);
	}
	fprintf(out, "\n");
out:
	if (out)
		fclose(out);
	if (d)
		closedir(d);
}

/* Once every rank is here, the first of each host saves the counters. */
static void counters_snapshot(MPI_Comm host, const char *tag)
{
	const char *env = getenv("MPI_CHECK_COUNTERS");
	char dev[64], path[PATH_MAX - 16], file[PATH_MAX];
	int host_rank;

	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Comm_rank(host, &host_rank);
	if (!env || host_rank || sscanf(env, "%63s %4079s", dev, path) != 2)
		return;
	snprintf(file, sizeof(file), "%s.%s", path, tag);
	write_counters(dev, file);
}

int main(int argc, char **argv)
{
	MPI_Comm host_comm;
	unsigned int all_failures;
	char host[MPI_MAX_PROCESSOR_NAME];
	int len;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Get_processor_name(host, &len);
	printf("# rank %d of %d on %s\n", rank, nranks, host);
	fflush(stdout);
	if (nranks < 2) {
		if (!rank)
			printf("not ok ranks: %d, 2 or more needed\n", nranks);
		MPI_Finalize();
		return 1;
	}

	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
			    MPI_INFO_NULL, &host_comm);
	counters_snapshot(host_comm, "start");
	ping_pong(8);
	ping_pong(4096);
	ping_pong(65536);
	ping_pong(1 << 20);
	bandwidth();
	one_sided();
	collectives();

	MPI_Reduce(&failures, &all_failures, 1, MPI_UNSIGNED, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	counters_snapshot(host_comm, "end");
	MPI_Comm_free(&host_comm);
	MPI_Finalize();
	return rank == 0 && all_failures ? 1 : 0;
}
