// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* --max-memory of `fvbpf report` and `merge`: their tables charged as they
 * grow. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "offline/manifest/manifest_read.h"
#include "util/budget.h"

int mf_charge(struct mf_budget *b, uint64_t bytes)
{
	if (!b || !b->max_memory)
		return 0;
	b->over_rss = false;
	if (bytes > b->limit || b->held > b->limit - bytes)
		return -ENOSPC;
	/* The charges are estimates (allocator slack, json-c's trees): the
	 * RSS itself is the bound that is stated. */
	if (++b->charges % MF_RSS_EVERY == 0 && budget_rss_now() > b->max_memory) {
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

static int charge_cb(void *ctx, uint64_t bytes)
{
	return mf_charge(ctx, bytes);
}

static void uncharge_cb(void *ctx, uint64_t bytes)
{
	mf_uncharge(ctx, bytes);
}

struct charge_hook mf_charger(struct mf_budget *b)
{
	return (struct charge_hook){ charge_cb, uncharge_cb, b };
}

int mf_grow(struct mf_budget *b, void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	struct charge_hook c = mf_charger(b);

	return grow_one_charged(&c, v, n, cap, size, first);
}

int mf_index_find(struct mf_budget *b, struct pair_index *x, const void *arr, size_t count,
		  pair_key_fn key, const char *name, const char *kind, size_t *pos)
{
	struct charge_hook c = mf_charger(b);

	return pair_index_find_charged(&c, x, arr, count, key, name, kind, pos);
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
