// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <string.h>

#include "util/grow.h"
#include "util/row_table.h"

int charge_hook_take(const struct charge_hook *c, uint64_t bytes)
{
	return c && c->charge ? c->charge(c->ctx, bytes) : 0;
}

void charge_hook_give(const struct charge_hook *c, uint64_t bytes)
{
	if (c && c->uncharge)
		c->uncharge(c->ctx, bytes);
}

int grow_one_charged(const struct charge_hook *c, void *v, size_t n, size_t *cap, size_t size,
		     size_t first)
{
	uint64_t more;
	int ret;

	if (n < *cap)
		return 0;
	more = (uint64_t)(*cap ? *cap : first) * size;
	ret = charge_hook_take(c, more);
	if (ret)
		return ret;
	ret = grow_one(v, n, cap, size, first);
	if (ret)
		charge_hook_give(c, more);
	return ret;
}

int pair_index_find_charged(const struct charge_hook *c, struct pair_index *x, const void *arr,
			    size_t count, pair_key_fn key, const char *name, const char *kind,
			    size_t *pos)
{
	uint64_t more = 0, old = (uint64_t)x->n * sizeof(size_t);
	int ret;

	/* pair_index_find() doubles the slots when half full: the new
	 * table is charged, the old one given back once it is gone */
	if ((count + 1) * 2 > x->n)
		more = (uint64_t)(x->n ? x->n * 2 : 64) * sizeof(size_t);
	ret = charge_hook_take(c, more);
	if (ret)
		return ret;
	ret = pair_index_find(x, arr, count, key, name, kind, pos);
	if (ret < 0)
		charge_hook_give(c, more);
	else if (more)
		charge_hook_give(c, old);
	return ret;
}

int row_table_get(const struct row_table *t, const char *name, const char *kind, void **row)
{
	char **rows = t->rows, *r;
	size_t pos;
	int ret;

	*row = NULL;
	ret = pair_index_find_charged(t->charge, t->index, *rows, *t->n, t->key, name, kind, &pos);
	if (ret < 0)
		return ret;
	if (ret) {
		*row = *rows + pos * t->size;
		return 0;
	}
	ret = grow_one_charged(t->charge, t->rows, *t->n, t->cap, t->size, t->first);
	if (ret)
		return ret;
	r = *rows + *t->n * t->size;
	memset(r, 0, t->size);
	ret = t->init(r, name, kind, t->ctx);
	if (ret)
		return ret;
	pair_index_set(t->index, pos, (*t->n)++);
	*row = r;
	return 0;
}
