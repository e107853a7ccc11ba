// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/pair_index.h"

static uint64_t pair_hash(const char *name, const char *kind)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *p;

	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (p = kind; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

static int grow(struct pair_index *x, const void *arr, size_t count, pair_key_fn key)
{
	size_t n = x->n ? x->n * 2 : 64, i, j;
	size_t *slots = calloc(n, sizeof(*slots));
	const char *name, *kind;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		key(arr, i, &name, &kind);
		for (j = pair_hash(name, kind) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = i + 1;
	}
	free(x->slots);
	x->slots = slots;
	x->n = n;
	return 0;
}

int pair_index_find(struct pair_index *x, const void *arr, size_t count, pair_key_fn key,
		    const char *name, const char *kind, size_t *pos)
{
	const char *n, *k;
	size_t j;

	if ((count + 1) * 2 > x->n && grow(x, arr, count, key))
		return -ENOMEM;
	for (j = pair_hash(name, kind) & (x->n - 1); x->slots[j]; j = (j + 1) & (x->n - 1)) {
		key(arr, x->slots[j] - 1, &n, &k);
		if (!strcmp(n, name) && !strcmp(k, kind)) {
			*pos = x->slots[j] - 1;
			return 1;
		}
	}
	*pos = j;
	return 0;
}

void pair_index_set(struct pair_index *x, size_t slot, size_t i)
{
	x->slots[slot] = i + 1;
}

void pair_index_free(struct pair_index *x)
{
	free(x->slots);
	x->slots = NULL;
	x->n = 0;
}
