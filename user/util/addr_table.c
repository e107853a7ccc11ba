// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/addr_table.h"

static size_t slot_of(uint64_t addr, size_t cap)
{
	/* allocator addresses share their low bits: mix them (Murmur3's finaliser) */
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdULL;
	addr ^= addr >> 33;
	return (size_t)addr & (cap - 1);
}

static void insert(struct addr_entry *e, size_t cap, const struct addr_entry *in)
{
	size_t i = slot_of(in->addr, cap);

	while (e[i].addr && e[i].addr != in->addr)
		i = (i + 1) & (cap - 1);
	e[i] = *in;
}

/* Double (or start at 1024): the table stays at most half full. */
static int grow(struct addr_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i;
	struct addr_entry *e;

	if (cap < t->cap)
		return -ENOMEM;
	e = calloc(cap, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->e[i].addr)
			insert(e, cap, &t->e[i]);
	free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

static long find(const struct addr_table *t, uint64_t addr)
{
	size_t i;

	if (!t->cap)
		return -1;
	for (i = slot_of(addr, t->cap); t->e[i].addr; i = (i + 1) & (t->cap - 1))
		if (t->e[i].addr == addr)
			return (long)i;
	return -1;
}

int addr_table_put(struct addr_table *t, uint64_t addr, uint64_t size, uint64_t tag)
{
	struct addr_entry in = { addr, size, tag };
	size_t max = t->max ? t->max : ADDR_TABLE_DEFAULT_MAX;
	long at;
	int err;

	if (!addr)
		return -EINVAL;
	at = find(t, addr);
	if (at >= 0) {
		t->e[at] = in;
		return 0;
	}
	if (t->n >= max)
		return -ENOSPC;
	if ((t->n + 1) * 2 > t->cap) {
		err = grow(t);
		if (err)
			return err;
	}
	insert(t->e, t->cap, &in);
	t->n++;
	return 0;
}

int addr_table_get(const struct addr_table *t, uint64_t addr, struct addr_entry *out)
{
	long at = addr ? find(t, addr) : -1;

	if (at < 0)
		return 0;
	*out = t->e[at];
	return 1;
}

int addr_table_take(struct addr_table *t, uint64_t addr, struct addr_entry *out)
{
	long at = addr ? find(t, addr) : -1;
	size_t i, j, home;

	if (at < 0)
		return 0;
	*out = t->e[at];
	/* Backward shift: move later entries of the run into the hole when
	 * their home slot is not between the hole and them. */
	i = (size_t)at;
	for (j = (i + 1) & (t->cap - 1); t->e[j].addr; j = (j + 1) & (t->cap - 1)) {
		home = slot_of(t->e[j].addr, t->cap);
		if (((j - home) & (t->cap - 1)) >= ((j - i) & (t->cap - 1))) {
			t->e[i] = t->e[j];
			i = j;
		}
	}
	memset(&t->e[i], 0, sizeof(t->e[i]));
	t->n--;
	return 1;
}

void addr_table_each(const struct addr_table *t, void (*fn)(const struct addr_entry *e, void *ctx),
		     void *ctx)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		if (t->e[i].addr)
			fn(&t->e[i], ctx);
}

void addr_table_clear(struct addr_table *t)
{
	if (t->e)
		memset(t->e, 0, t->cap * sizeof(*t->e));
	t->n = 0;
}

void addr_table_free(struct addr_table *t)
{
	free(t->e);
	t->e = NULL;
	t->cap = t->n = 0;
}
