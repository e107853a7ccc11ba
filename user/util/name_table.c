// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/name_table.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

void name_table_init(struct name_table *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->max_names = NAME_TABLE_MAX_NAMES;
	t->max_bytes = NAME_TABLE_MAX_BYTES;
}

void name_table_free(struct name_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->names[i]);
	free(t->names);
	free(t->slots);
	charge_hook_give(t->charge, t->charged);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

void name_table_set_charge(struct name_table *t, const struct charge_hook *c)
{
	pthread_mutex_lock(&t->lock);
	t->charge = c;
	pthread_mutex_unlock(&t->lock);
}

static int grow_slots(struct name_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 64, i, j;
	uint32_t *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (j = str_hash(t->names[i]) & (n - 1); s[j]; j = (j + 1) & (n - 1))
			;
		s[j] = (uint32_t)(i + 1);
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

/* Append @name at slot @j: its id, or 0 when out of memory. */
static uint32_t add_name(struct name_table *t, const char *name, size_t j)
{
	char **names;
	size_t len = strlen(name) + 1;

	if (t->n == t->cap) {
		names = realloc(t->names, (t->cap ? t->cap * 2 : 32) * sizeof(*names));
		if (!names)
			return 0;
		t->names = names;
		t->cap = t->cap ? t->cap * 2 : 32;
	}
	t->names[t->n] = strdup(name);
	if (!t->names[t->n])
		return 0;
	t->bytes += len;
	t->slots[j] = (uint32_t)++t->n;
	return t->slots[j];
}

/* The slot of @name, or of the empty slot where it would go. */
static size_t find_slot(const struct name_table *t, const char *name)
{
	size_t j;

	for (j = str_hash(name) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
		if (!strcmp(t->names[t->slots[j] - 1], name))
			break;
	return j;
}

static bool over_bounds(const struct name_table *t, const char *name)
{
	return t->n >= t->max_names || t->bytes + strlen(name) + 1 > t->max_bytes;
}

/* Take (@sign > 0) or give back what @name costs through the hook: 0, or
 * -ENOSPC when the hook refuses. */
static int charge_name(struct name_table *t, const char *name, int sign)
{
	uint64_t cost = strlen(name) + 1 + NAME_TABLE_NAME_COST;

	if (!t->charge)
		return 0;
	if (sign < 0) {
		charge_hook_give(t->charge, cost);
		t->charged -= cost;
		return 0;
	}
	if (charge_hook_take(t->charge, cost))
		return -ENOSPC;
	t->charged += cost;
	return 0;
}

uint32_t name_table_intern(struct name_table *t, const char *name)
{
	uint32_t id = 0;
	size_t j;

	pthread_mutex_lock(&t->lock);
	if ((t->n + 2) * 2 > t->nslots && grow_slots(t))
		goto out;
	j = find_slot(t, name);
	if (t->slots[j]) {
		id = t->slots[j];
		goto out;
	}
	if (over_bounds(t, name) || charge_name(t, name, 1)) {
		t->capped++;
		/* The one name let past the bounds, so that they hold. */
		if (!t->overflow_id)
			t->overflow_id = add_name(t, NAME_TABLE_OVERFLOW,
						  find_slot(t, NAME_TABLE_OVERFLOW));
		id = t->overflow_id;
		goto out;
	}
	id = add_name(t, name, j);
	if (!id)
		charge_name(t, name, -1);
out:
	pthread_mutex_unlock(&t->lock);
	return id;
}

void name_table_get(struct name_table *t, uint32_t id, char *buf, size_t len)
{
	pthread_mutex_lock(&t->lock);
	snprintf(buf, len, "%s", id && id <= t->n ? t->names[id - 1] : "?");
	pthread_mutex_unlock(&t->lock);
}

static size_t addr_slot(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
}

uint64_t addr_cache_get(const struct addr_cache *c, uint64_t addr)
{
	size_t j;

	if (!c->cap)
		return 0;
	for (j = addr_slot(addr, c->cap); c->vals[j]; j = (j + 1) & (c->cap - 1))
		if (c->keys[j] == addr)
			return c->vals[j];
	return 0;
}

int addr_cache_put(struct addr_cache *c, uint64_t addr, uint64_t id)
{
	size_t j, i, cap;
	uint64_t *keys, *vals;

	if (c->n >= (c->max ? c->max : ADDR_CACHE_MAX_ENTRIES) && !addr_cache_get(c, addr)) {
		c->refused++;
		return -ENOSPC;
	}
	if ((c->n + 1) * 2 > c->cap) {
		cap = c->cap ? c->cap * 2 : 64;
		keys = calloc(cap, sizeof(*keys));
		vals = calloc(cap, sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		for (i = 0; i < c->cap; i++) {
			if (!c->vals[i])
				continue;
			for (j = addr_slot(c->keys[i], cap); vals[j]; j = (j + 1) & (cap - 1))
				;
			keys[j] = c->keys[i];
			vals[j] = c->vals[i];
		}
		free(c->keys);
		free(c->vals);
		c->keys = keys;
		c->vals = vals;
		c->cap = cap;
	}
	for (j = addr_slot(addr, c->cap); c->vals[j]; j = (j + 1) & (c->cap - 1))
		if (c->keys[j] == addr)
			break;
	if (!c->vals[j])
		c->n++;
	c->keys[j] = addr;
	c->vals[j] = id;
	return 0;
}

void addr_cache_drop(struct addr_cache *c, uint64_t val)
{
	struct addr_cache kept = { .max = c->max, .refused = c->refused };
	size_t i;

	for (i = 0; i < c->cap; i++) {
		if (c->vals[i] && c->vals[i] != val && addr_cache_put(&kept, c->keys[i], c->vals[i])) {
			addr_cache_free(&kept);
			return; /* out of memory: keep the old table */
		}
	}
	addr_cache_free(c);
	*c = kept;
}

void addr_cache_free(struct addr_cache *c)
{
	free(c->keys);
	free(c->vals);
	memset(c, 0, sizeof(*c));
}
