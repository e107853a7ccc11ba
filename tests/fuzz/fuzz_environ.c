// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Rank resolution (user/proc/proc_rank.c) on any environment block a target
 * can have: the rank is in range, its source says where it came from, and
 * nothing is read outside the block (the copy has no NUL after it).
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <string.h>

#include "proc/proc_rank.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rank_info ri;
	char *env = malloc(size ? size : 1);

	if (!env)
		return 0;
	memcpy(env, data, size);
	rank_from_environ(env, size, &ri);
	if (ri.rank < 0 || ri.rank > RANK_MAX || (ri.source == RANK_DEFAULT && ri.rank != 0) ||
	    ri.local_rank < -1 || ri.local_rank > RANK_MAX || ri.node_rank < -1 ||
	    ri.world_size < -1 || !rank_source_name(ri.source))
		abort();
	free(env);
	return 0;
}
