/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Which rank a process is, from the environment its launcher gave it. */
#ifndef FVBPF_PROC_RANK_H
#define FVBPF_PROC_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RANK_MAX 1000000

enum rank_source {
	RANK_DEFAULT,           /* nothing found: 0 */
	RANK_FROM_RANK,         /* RANK (torchrun, FastVideo) */
	RANK_FROM_GROUP_LOCAL,  /* GROUP_RANK * LOCAL_WORLD_SIZE + LOCAL_RANK */
	RANK_FROM_LOCAL,        /* LOCAL_RANK alone: unique per node only */
	RANK_FROM_OMPI,         /* OMPI_COMM_WORLD_RANK */
	RANK_FROM_SLURM,        /* SLURM_PROCID */
	RANK_FROM_PMI,          /* PMI_RANK (MPICH, Intel MPI, srun --mpi=pmi2) */
	RANK_FROM_PMIX,         /* PMIX_RANK (Open MPI 5, srun --mpi=pmix) */
};

struct rank_info {
	int rank;
	enum rank_source source;
	int local_rank;         /* LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK,
				 * MPI_LOCALRANKID or SLURM_LOCALID; -1: unknown */
	int node_rank;          /* GROUP_RANK, NODE_RANK or SLURM_NODEID; -1 unknown */
	int world_size;         /* WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE or
				 * SLURM_NTASKS; -1 */
};

/*
 * Resolve from an environment block as /proc/PID/environ holds it
 * ("K=V\0K=V\0...", @len bytes, need not end in NUL).  Values that are not
 * plain decimals from 0 to RANK_MAX are ignored, as if absent.
 */
void rank_from_environ(const char *env, size_t len, struct rank_info *ri);
/* The same from /proc/PID/environ: 0, or -errno (then @ri says default). */
int proc_read_rank_info(pid_t pid, struct rank_info *ri);
/* "RANK", "GROUP_RANK*LOCAL_WORLD_SIZE+LOCAL_RANK", ..., "default" */
const char *rank_source_name(enum rank_source s);

#endif /* FVBPF_PROC_RANK_H */
