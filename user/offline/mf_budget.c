// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* --max-memory of `fvbpf report` and `merge`: their tables charged as they
 * grow. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/grow.h"
#include "offline/manifest_read.h"
#include "util/mem_budget.h"

int mf_charge(struct mf_budget *b, uint64_t bytes)
{
	if (!b || !b->max_memory)
		return 0;
	b->over_rss = false;
	if (bytes > b->limit || b->held > b->limit - bytes)
		return -ENOSPC;
	/* The charges are estimates (allocator slack, json-c's trees): the
	 * RSS itself is the bound that is stated. */
	if (++b->charges % MF_RSS_EVERY == 0 && mem_rss_now() > b->max_memory) {
		b->over_rss = true;
		return -ENOSPC;
	}
	b->held += bytes;
	if (b->held > b->peak)
		b->peak = b->held;
	return 0;
}

void mf_uncharge(struct mf_budget *b, uint64_t bytes)
{
	if (b)
		b->held = bytes < b->held ? b->held - bytes : 0;
}

int mf_grow(struct mf_budget *b, void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	uint64_t more;
	int ret;

	if (n < *cap)
		return 0;
	more = (uint64_t)(*cap ? *cap : first) * size;
	ret = mf_charge(b, more);
	if (ret)
		return ret;
	ret = grow_one(v, n, cap, size, first);
	if (ret)
		mf_uncharge(b, more);
	return ret;
}

int mf_index_find(struct mf_budget *b, struct pair_index *x, const void *arr, size_t count,
		  pair_key_fn key, const char *name, const char *kind, size_t *pos)
{
	uint64_t more = 0, old = (uint64_t)x->n * sizeof(size_t);
	int ret;

	/* pair_index_find() doubles the slots when half full: the new
	 * table is charged, the old one given back once it is gone */
	if ((count + 1) * 2 > x->n)
		more = (uint64_t)(x->n ? x->n * 2 : 64) * sizeof(size_t);
	ret = mf_charge(b, more);
	if (ret)
		return ret;
	ret = pair_index_find(x, arr, count, key, name, kind, pos);
	if (ret < 0)
		mf_uncharge(b, more);
	else if (more)
		mf_uncharge(b, old);
	return ret;
}

void mf_budget_error(const struct mf_budget *b, char *buf, size_t len)
{
	unsigned long long mib = b ? b->max_memory >> 20 : 0;

	if (b && b->over_rss)
		snprintf(buf, len, "fvbpf's memory (RSS) reached --max-memory (%llu MiB): give a "
			 "larger one, e.g. --max-memory %lluM", mib, mib * 2 + 1);
	else
		snprintf(buf, len, "the file lists and tables of the given directories need more than "
			 "--max-memory (%llu MiB) leaves for them (%llu MiB): give a larger one, e.g. "
			 "--max-memory %lluM", mib, b ? (unsigned long long)(b->limit >> 20) : 0ULL,
			 mib * 2 + 1);
}
