// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Rank resolution.  The order is what launchers set: torchrun and FastVideo
 * RANK; a launcher that gives only per-node numbers LOCAL_RANK, made global
 * by GROUP_RANK/LOCAL_WORLD_SIZE where both are there; then MPI's, then
 * Slurm's.  The innermost launcher wins: a variable is inherited by all a
 * process starts, and Slurm is the outermost (mpirun's or mpiexec's ranks
 * in a batch script, or under the daemons srun started on each node, all
 * carry that task's SLURM_PROCID beside their own MPI rank).
 * The environment is the one the process was started with (the kernel's
 * copy): a rank a process sets in its own os.environ later is not seen.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_read.h"
#include "proc/proc_rank.h"

#define ENVIRON_MAX (4u << 20)

enum env_key {
	K_RANK, K_LOCAL_RANK, K_GROUP_RANK, K_NODE_RANK, K_LOCAL_WORLD_SIZE, K_WORLD_SIZE,
	K_OMPI_RANK, K_OMPI_SIZE, K_OMPI_LOCAL, K_SLURM_PROCID, K_SLURM_NODEID, K_SLURM_NTASKS,
	K_SLURM_LOCALID, K_PMI_RANK, K_PMI_SIZE, K_MPI_LOCAL, K_PMIX_RANK, K_N,
};

static const char *const env_names[K_N] = {
	"RANK", "LOCAL_RANK", "GROUP_RANK", "NODE_RANK", "LOCAL_WORLD_SIZE", "WORLD_SIZE",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
	"SLURM_PROCID", "SLURM_NODEID", "SLURM_NTASKS", "SLURM_LOCALID", "PMI_RANK",
	"PMI_SIZE", "MPI_LOCALRANKID", "PMIX_RANK",
};

/* A plain decimal from 0 to RANK_MAX ("007" is 7), else -1. */
static int parse_value(const char *v, size_t len)
{
	long n = 0;
	size_t i;

	if (!len || len > 7)
		return -1;
	for (i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n <= RANK_MAX ? (int)n : -1;
}

/* First definition wins, as getenv() finds it. */
static void scan_env(const char *env, size_t len, int vals[K_N])
{
	const char *p = env, *end = env + len, *eq, *next;
	size_t klen;
	int k;

	for (k = 0; k < K_N; k++)
		vals[k] = -2; /* absent */
	while (p < end) {
		next = memchr(p, '\0', (size_t)(end - p));
		if (!next)
			next = end;
		eq = memchr(p, '=', (size_t)(next - p));
		if (eq) {
			klen = (size_t)(eq - p);
			for (k = 0; k < K_N; k++)
				if (vals[k] == -2 && strlen(env_names[k]) == klen &&
				    !memcmp(p, env_names[k], klen))
					vals[k] = parse_value(eq + 1, (size_t)(next - eq - 1));
		}
		p = next + 1;
	}
	for (k = 0; k < K_N; k++)
		if (vals[k] < 0)
			vals[k] = -1;
}

static int first_of(int a, int b, int c)
{
	return a >= 0 ? a : b >= 0 ? b : c;
}

/* The global rank from MPI's or Slurm's variables, innermost first. */
static void launcher_rank(const int v[K_N], struct rank_info *ri)
{
	static const struct { enum env_key k; enum rank_source src; } order[] = {
		{ K_OMPI_RANK, RANK_FROM_OMPI }, { K_PMI_RANK, RANK_FROM_PMI },
		{ K_PMIX_RANK, RANK_FROM_PMIX }, { K_SLURM_PROCID, RANK_FROM_SLURM },
	};
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (v[order[i].k] >= 0) {
			ri->rank = v[order[i].k];
			ri->source = order[i].src;
			return;
		}
}

void rank_from_environ(const char *env, size_t len, struct rank_info *ri)
{
	int v[K_N];
	int64_t global;

	scan_env(env, len, v);
	ri->local_rank = first_of(v[K_LOCAL_RANK], v[K_OMPI_LOCAL],
				  v[K_MPI_LOCAL] >= 0 ? v[K_MPI_LOCAL] : v[K_SLURM_LOCALID]);
	ri->node_rank = first_of(v[K_GROUP_RANK], v[K_NODE_RANK], v[K_SLURM_NODEID]);
	ri->world_size = first_of(v[K_WORLD_SIZE], v[K_OMPI_SIZE],
				  v[K_PMI_SIZE] >= 0 ? v[K_PMI_SIZE] : v[K_SLURM_NTASKS]);
	ri->source = RANK_DEFAULT;
	ri->rank = 0;
	if (v[K_RANK] >= 0) {
		ri->rank = v[K_RANK];
		ri->source = RANK_FROM_RANK;
	} else if (v[K_LOCAL_RANK] >= 0) {
		global = (int64_t)v[K_GROUP_RANK] * v[K_LOCAL_WORLD_SIZE] + v[K_LOCAL_RANK];
		if (v[K_GROUP_RANK] >= 0 && v[K_LOCAL_WORLD_SIZE] > v[K_LOCAL_RANK] &&
		    global <= RANK_MAX) {
			ri->rank = (int)global;
			ri->source = RANK_FROM_GROUP_LOCAL;
		} else {
			ri->rank = v[K_LOCAL_RANK];
			ri->source = RANK_FROM_LOCAL;
		}
	} else {
		launcher_rank(v, ri);
	}
}

int proc_read_rank_info(pid_t pid, struct rank_info *ri)
{
	char path[64], *buf;
	ssize_t n;

	rank_from_environ("", 0, ri);
	buf = malloc(ENVIRON_MAX);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = proc_read_file(path, buf, ENVIRON_MAX);
	if (n >= 0)
		rank_from_environ(buf, (size_t)n, ri);
	free(buf);
	return n < 0 ? (int)n : 0;
}

const char *rank_source_name(enum rank_source s)
{
	switch (s) {
	case RANK_FROM_RANK: return "RANK";
	case RANK_FROM_GROUP_LOCAL: return "GROUP_RANK*LOCAL_WORLD_SIZE+LOCAL_RANK";
	case RANK_FROM_LOCAL: return "LOCAL_RANK";
	case RANK_FROM_OMPI: return "OMPI_COMM_WORLD_RANK";
	case RANK_FROM_SLURM: return "SLURM_PROCID";
	case RANK_FROM_PMI: return "PMI_RANK";
	case RANK_FROM_PMIX: return "PMIX_RANK";
	default: return "default";
	}
}
