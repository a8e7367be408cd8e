/* SPDX-License-Identifier: GPL-2.0 */
/* What the MPI test programs (mpi_check.c, mpi_threads.c) share. */
#ifndef SRDMA_MPI_UTIL_H
#define SRDMA_MPI_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* malloc(), or the whole job aborted: a rank short of memory cannot go on. */
static inline void *xmalloc(size_t len)
{
	void *p = malloc(len);
	int rank;

	if (!p) {
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

#endif /* SRDMA_MPI_UTIL_H */
