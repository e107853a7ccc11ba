// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Rank resolution from an environment block (user/proc/proc_rank.c). */
#include <string.h>

#include "proc/proc_rank.h"
#include "unit.h"

#define ENV(lit) lit, sizeof(lit) - 1

static struct rank_info resolve(const char *env, size_t len)
{
	struct rank_info ri;

	memset(&ri, 0x5a, sizeof(ri));
	rank_from_environ(env, len, &ri);
	return ri;
}

static void test_rank_first(void)
{
	struct rank_info ri = resolve(ENV("LOCAL_RANK=1\0RANK=7\0WORLD_SIZE=8\0SLURM_PROCID=3\0"));

	CHECK_EQ(ri.rank, 7);
	CHECK_EQ(ri.source, RANK_FROM_RANK);
	CHECK_EQ(ri.local_rank, 1);
	CHECK_EQ(ri.world_size, 8);
	CHECK_STR(rank_source_name(ri.source), "RANK");
}

static void test_group_local(void)
{
	struct rank_info ri = resolve(ENV("GROUP_RANK=2\0LOCAL_WORLD_SIZE=4\0LOCAL_RANK=3\0"));

	CHECK_EQ(ri.rank, 11);
	CHECK_EQ(ri.source, RANK_FROM_GROUP_LOCAL);
	CHECK_EQ(ri.node_rank, 2);
	/* LOCAL_RANK not below LOCAL_WORLD_SIZE: no global rank from it */
	ri = resolve(ENV("GROUP_RANK=2\0LOCAL_WORLD_SIZE=4\0LOCAL_RANK=4\0"));
	CHECK_EQ(ri.rank, 4);
	CHECK_EQ(ri.source, RANK_FROM_LOCAL);
	ri = resolve(ENV("LOCAL_RANK=5\0NODE_RANK=1\0"));
	CHECK_EQ(ri.rank, 5);
	CHECK_EQ(ri.source, RANK_FROM_LOCAL);
	CHECK_EQ(ri.node_rank, 1);
}

static void test_mpi_slurm_pmi(void)
{
	struct rank_info ri = resolve(ENV("OMPI_COMM_WORLD_RANK=9\0OMPI_COMM_WORLD_SIZE=16\0SLURM_PROCID=2\0"));

	CHECK_EQ(ri.rank, 9);
	CHECK_EQ(ri.source, RANK_FROM_OMPI);
	CHECK_EQ(ri.world_size, 16);
	ri = resolve(ENV("SLURM_PROCID=2\0SLURM_NODEID=1\0SLURM_NTASKS=8\0SLURM_LOCALID=3\0"));
	CHECK_EQ(ri.rank, 2);
	CHECK_EQ(ri.source, RANK_FROM_SLURM);
	CHECK_EQ(ri.node_rank, 1);
	CHECK_EQ(ri.world_size, 8);
	CHECK_EQ(ri.local_rank, 3);
	CHECK_STR(rank_source_name(ri.source), "SLURM_PROCID");
	ri = resolve(ENV("PMI_RANK=5\0PMI_SIZE=6\0"));
	CHECK_EQ(ri.rank, 5);
	CHECK_EQ(ri.source, RANK_FROM_PMI);
	CHECK_EQ(ri.world_size, 6);
	ri = resolve(ENV("PMIX_RANK=7\0"));
	CHECK_EQ(ri.rank, 7);
	CHECK_EQ(ri.source, RANK_FROM_PMIX);
	CHECK_STR(rank_source_name(ri.source), "PMIX_RANK");
}

/*
 * The innermost launcher wins: MPI ranks started inside a Slurm task (a
 * batch script's mpiexec, or the daemon srun started on a node) carry that
 * task's SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID beside their own.
 */
static void test_mpi_inside_slurm(void)
{
	struct rank_info ri;

	ri = resolve(ENV("SLURM_PROCID=0\0SLURM_NTASKS=2\0SLURM_LOCALID=0\0PMI_RANK=5\0"
			 "PMI_SIZE=8\0MPI_LOCALRANKID=1\0"));
	CHECK_EQ(ri.rank, 5);
	CHECK_EQ(ri.source, RANK_FROM_PMI);
	CHECK_EQ(ri.world_size, 8);
	CHECK_EQ(ri.local_rank, 1);
	ri = resolve(ENV("SLURM_PROCID=1\0PMIX_RANK=6\0"));
	CHECK_EQ(ri.rank, 6);
	CHECK_EQ(ri.source, RANK_FROM_PMIX);
	ri = resolve(ENV("SLURM_PROCID=1\0SLURM_LOCALID=0\0PMIX_RANK=6\0OMPI_COMM_WORLD_RANK=6\0"
			 "OMPI_COMM_WORLD_LOCAL_RANK=2\0"));
	CHECK_EQ(ri.source, RANK_FROM_OMPI);
	CHECK_EQ(ri.local_rank, 2);
	/* torchrun under srun: its workers' RANK and LOCAL_RANK */
	ri = resolve(ENV("SLURM_PROCID=1\0SLURM_LOCALID=0\0RANK=5\0LOCAL_RANK=1\0"));
	CHECK_EQ(ri.rank, 5);
	CHECK_EQ(ri.source, RANK_FROM_RANK);
	CHECK_EQ(ri.local_rank, 1);
}

static void test_default_and_bad_values(void)
{
	struct rank_info ri = resolve(ENV("PATH=/bin\0HOME=/root\0"));

	CHECK_EQ(ri.rank, 0);
	CHECK_EQ(ri.source, RANK_DEFAULT);
	CHECK_EQ(ri.local_rank, -1);
	CHECK_EQ(ri.node_rank, -1);
	CHECK_EQ(ri.world_size, -1);
	/* not plain decimals in range: as if absent, the next source wins */
	ri = resolve(ENV("RANK=-1\0LOCAL_RANK=2\0"));
	CHECK_EQ(ri.source, RANK_FROM_LOCAL);
	ri = resolve(ENV("RANK=1e3\0RANK=4\0SLURM_PROCID=1\0"));
	CHECK_EQ(ri.source, RANK_FROM_SLURM); /* the first RANK counts, as getenv() */
	ri = resolve(ENV("RANK=1000001\0"));
	CHECK_EQ(ri.source, RANK_DEFAULT);
	ri = resolve(ENV("RANK=1000000\0"));
	CHECK_EQ(ri.rank, 1000000);
	ri = resolve(ENV("RANK=\0"));
	CHECK_EQ(ri.source, RANK_DEFAULT);
	ri = resolve(ENV("RANK= 3\0"));
	CHECK_EQ(ri.source, RANK_DEFAULT);
	/* huge products stay within RANK_MAX */
	ri = resolve(ENV("GROUP_RANK=999999\0LOCAL_WORLD_SIZE=999999\0LOCAL_RANK=1\0"));
	CHECK_EQ(ri.rank, 1);
	CHECK_EQ(ri.source, RANK_FROM_LOCAL);
}

static void test_odd_blocks(void)
{
	struct rank_info ri;

	/* no trailing NUL, a key that only starts like RANK, an entry without '=' */
	ri = resolve(ENV("RANKX=5\0NORANK\0RANK=3"));
	CHECK_EQ(ri.rank, 3);
	CHECK_EQ(ri.source, RANK_FROM_RANK);
	ri = resolve("RANK=12", 6); /* cut: "RANK=1" */
	CHECK_EQ(ri.rank, 1);
	ri = resolve("", 0);
	CHECK_EQ(ri.source, RANK_DEFAULT);
	ri = resolve(ENV("\0\0\0=\0=RANK=3\0"));
	CHECK_EQ(ri.source, RANK_DEFAULT);
}

int main(void)
{
	RUN(test_rank_first);
	RUN(test_group_local);
	RUN(test_mpi_slurm_pmi);
	RUN(test_mpi_inside_slurm);
	RUN(test_default_and_bad_values);
	RUN(test_odd_blocks);
	UNIT_DONE();
}
