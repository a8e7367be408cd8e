// SPDX-License-Identifier: GPL-2.0
/*
 * MPI with MPI_THREAD_MULTIPLE (pair_engines.sh): each rank runs THREADS
 * threads at once, each on a communicator of its own (a dup of
 * MPI_COMM_WORLD), moving data between rank pairs (0 with 1, 2 with 3,
 * ...): ping-pongs of 8 B to 1 MiB, a window of nonblocking sends, and
 * one-sided puts and gets on a window of the thread's own. Open MPI's
 * UCX one-sided component then runs a UCX worker per thread, which users
 * report failing on software RoCE. Every message is checked on arrival.
 * Rank 0 prints one line per check,
 *   ok NAME key=value ...     or     not ok NAME: what was wrong
 * and the exit status is 1 if any check failed on any rank.
 *
 * usage: mpi_threads [THREADS]   (default 4; an even number of ranks)
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_util.h"
#include "pattern.h"

#define MAX_THREADS	16
#define PP_ROUNDS	10
#define WINDOW		8		/* nonblocking sends in flight */
#define WINDOW_SIZE	(64 << 10)
#define RMA_SIZE	(256 << 10)

static int rank, nranks, peer;

struct thread {
	pthread_t id;
	int index;
	MPI_Comm comm;
	long bad_msg;		/* first wrong byte of a message, or -1 */
	long bad_rma;		/* of the window, or -1 */
	unsigned long msgs;	/* messages checked */
};

/* The seed of message I of SIZE bytes of THREAD, sent by rank FROM. */
static uint64_t seed_of(int thread, size_t size, int i, int from)
{
	return (uint64_t)thread << 48 ^ (uint64_t)size << 16 ^
	       (uint64_t)i << 4 ^ (uint64_t)from;
}

static void check(struct thread *t, long *bad, const void *buf, size_t len,
		  uint64_t seed)
{
	int64_t at = pattern_check(buf, len, PAT_COUNT, seed, 0, NULL);

	t->msgs++;
	if (at >= 0 && *bad < 0)
		*bad = at;
}

/* Ping-pongs: the lower rank of a pair sends, the higher echoes. */
static void ping_pong(struct thread *t, char *buf, size_t size)
{
	int i, lower = rank < peer;

	for (i = 0; i < PP_ROUNDS; i++) {
		if (lower) {
			pattern_fill(buf, size, PAT_COUNT, seed_of(t->index, size, i, rank), 0);
			MPI_Send(buf, size, MPI_BYTE, peer, i, t->comm);
			MPI_Recv(buf, size, MPI_BYTE, peer, i, t->comm, MPI_STATUS_IGNORE);
			check(t, &t->bad_msg, buf, size, seed_of(t->index, size, i, peer));
		} else {
			MPI_Recv(buf, size, MPI_BYTE, peer, i, t->comm, MPI_STATUS_IGNORE);
			check(t, &t->bad_msg, buf, size, seed_of(t->index, size, i, peer));
			pattern_fill(buf, size, PAT_COUNT, seed_of(t->index, size, i, rank), 0);
			MPI_Send(buf, size, MPI_BYTE, peer, i, t->comm);
		}
	}
}

/* WINDOW messages each way at once, every one posted before any waits. */
static void windowed(struct thread *t, char *buf)
{
	MPI_Request req[2 * WINDOW];
	char *rx = buf, *tx = buf + WINDOW * WINDOW_SIZE;
	int i;

	for (i = 0; i < WINDOW; i++)
		MPI_Irecv(rx + i * WINDOW_SIZE, WINDOW_SIZE, MPI_BYTE, peer, 100 + i,
			  t->comm, &req[i]);
	for (i = 0; i < WINDOW; i++) {
		pattern_fill(tx + i * WINDOW_SIZE, WINDOW_SIZE, PAT_COUNT,
			     seed_of(t->index, WINDOW_SIZE, 100 + i, rank), 0);
		MPI_Isend(tx + i * WINDOW_SIZE, WINDOW_SIZE, MPI_BYTE, peer, 100 + i,
			  t->comm, &req[WINDOW + i]);
	}
	MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
	for (i = 0; i < WINDOW; i++)
		check(t, &t->bad_msg, rx + i * WINDOW_SIZE, WINDOW_SIZE,
		      seed_of(t->index, WINDOW_SIZE, 100 + i, peer));
}

/*
 * One-sided on the thread's own window: each rank puts its pattern into
 * the first half of its peer's window, then gets the second half, which
 * the peer filled before the window was made.
 */
static void one_sided(struct thread *t)
{
	char *win_buf = xmalloc(2 * RMA_SIZE), *local = xmalloc(RMA_SIZE);
	MPI_Win win;

	memset(win_buf, 0, RMA_SIZE);
	pattern_fill(win_buf + RMA_SIZE, RMA_SIZE, PAT_COUNT,
		     seed_of(t->index, RMA_SIZE, 2, rank), 0);
	MPI_Win_create(win_buf, 2 * RMA_SIZE, 1, MPI_INFO_NULL, t->comm, &win);

	pattern_fill(local, RMA_SIZE, PAT_COUNT, seed_of(t->index, RMA_SIZE, 1, rank), 0);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
	MPI_Put(local, RMA_SIZE, MPI_BYTE, peer, 0, RMA_SIZE, MPI_BYTE, win);
	MPI_Win_unlock(peer, win);

	memset(local, 0, RMA_SIZE);
	MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
	MPI_Get(local, RMA_SIZE, MPI_BYTE, peer, RMA_SIZE, RMA_SIZE, MPI_BYTE, win);
	MPI_Win_unlock(peer, win);
	check(t, &t->bad_rma, local, RMA_SIZE, seed_of(t->index, RMA_SIZE, 2, peer));

	/* The peer's put has landed once both are past this. */
	MPI_Barrier(t->comm);
	MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
	check(t, &t->bad_rma, win_buf, RMA_SIZE, seed_of(t->index, RMA_SIZE, 1, peer));
	MPI_Win_unlock(rank, win);
	MPI_Win_free(&win);
	free(local);
	free(win_buf);
}

static void *run(void *arg)
{
	struct thread *t = arg;
	static const size_t sizes[] = { 8, 4096, 65536, 1 << 20 };
	char *buf = xmalloc(2 * WINDOW * WINDOW_SIZE);
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ping_pong(t, buf, sizes[i]);
	windowed(t, buf);
	one_sided(t);
	free(buf);
	return NULL;
}

/* Every rank's worst of BAD over its threads; rank 0 prints the result. */
static unsigned int report(const char *name, long bad, const char *values)
{
	long worst;

	MPI_Allreduce(&bad, &worst, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
	if (rank)
		return 0;
	if (worst < 0)
		printf("ok %s%s%s\n", name, values ? " " : "", values ? values : "");
	else
		printf("not ok %s: byte %ld of a message differs\n", name, worst);
	fflush(stdout);
	return worst >= 0;
}

int main(int argc, char **argv)
{
	struct thread threads[MAX_THREADS];
	int provided, n = argc > 1 ? atoi(argv[1]) : 4, i, err;
	long bad_msg = -1, bad_rma = -1;
	unsigned long msgs = 0, all_msgs;
	unsigned int failures = 0;
	char values[64];

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (n < 1 || n > MAX_THREADS || nranks % 2) {
		if (!rank)
			fprintf(stderr, "usage: %s [THREADS 1..%d], an even number of ranks\n",
				argv[0], MAX_THREADS);
		MPI_Finalize();
		return 2;
	}
	if (provided < MPI_THREAD_MULTIPLE) {
		if (!rank)
			printf("not ok MPI_THREAD_MULTIPLE: provided level %d\n", provided);
		MPI_Finalize();
		return 1;
	}
	if (!rank)
		printf("ok MPI_THREAD_MULTIPLE\n");
	peer = rank ^ 1;
	/* Collective over MPI_COMM_WORLD: made in one thread, in order. */
	for (i = 0; i < n; i++) {
		threads[i] = (struct thread){ .index = i, .bad_msg = -1, .bad_rma = -1 };
		MPI_Comm_dup(MPI_COMM_WORLD, &threads[i].comm);
	}
	for (i = 0; i < n; i++) {
		err = pthread_create(&threads[i].id, NULL, run, &threads[i]);
		if (err) {
			fprintf(stderr, "rank %d: pthread_create: %s\n", rank, strerror(err));
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(threads[i].id, NULL);
		if (threads[i].bad_msg >= 0 && bad_msg < 0)
			bad_msg = threads[i].bad_msg;
		if (threads[i].bad_rma >= 0 && bad_rma < 0)
			bad_rma = threads[i].bad_rma;
		msgs += threads[i].msgs;
		MPI_Comm_free(&threads[i].comm);
	}
	MPI_Reduce(&msgs, &all_msgs, 1, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	snprintf(values, sizeof(values), "threads=%d checked=%lu", n, all_msgs);
	failures += report("threads: send and receive 8 B to 1 MiB, each on its own communicator",
			   bad_msg, values);
	failures += report("threads: put and get 256 KiB, each on its own window",
			   bad_rma, NULL);
	MPI_Finalize();
	return failures ? 1 : 0;
}
