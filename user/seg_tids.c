// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "seg_tids.h"

struct tid_set {
	uint32_t *slot;    /* 0 empty; tid 0 is kept apart */
	size_t nslot, n;
	bool zero, have_last;
	uint32_t last;
	int err;
};

static size_t slot_of(uint32_t tid, size_t nslot)
{
	return (size_t)((tid * 2654435761u) & (nslot - 1));
}

static int set_grow(struct tid_set *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 64, i, j;
	uint32_t *slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (i = 0; i < t->nslot; i++) {
		if (!t->slot[i])
			continue;
		for (j = slot_of(t->slot[i], nslot); slot[j]; j = (j + 1) & (nslot - 1))
			;
		slot[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
	return 0;
}

static void set_add(struct tid_set *t, uint32_t tid)
{
	size_t j;

	/* Records of one thread come in runs: most adds stop here. */
	if (t->have_last && tid == t->last)
		return;
	t->have_last = true;
	t->last = tid;
	if (!tid) {
		t->zero = true;
		return;
	}
	if (t->err)
		return;
	if ((t->n + 1) * 2 > t->nslot && (t->err = set_grow(t)))
		return;
	for (j = slot_of(tid, t->nslot); t->slot[j]; j = (j + 1) & (t->nslot - 1))
		if (t->slot[j] == tid)
			return;
	t->slot[j] = tid;
	t->n++;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

long seg_tids(const struct segment *s, uint32_t **out)
{
	struct tid_set t = { 0 };
	uint32_t *v;
	size_t i, n = 0;

	*out = NULL;
	for (i = 0; i < s->nslices; i++)
		set_add(&t, s->slices[i].tid);
	for (i = 0; i < s->ncalls; i++)
		set_add(&t, s->calls[i].tid);
	for (i = 0; i < s->nops; i++)
		set_add(&t, s->ops[i].tid);
	v = t.err ? NULL : malloc((t.n + 1) * sizeof(*v));
	if (!v) {
		free(t.slot);
		return -ENOMEM;
	}
	if (t.zero)
		v[n++] = 0;
	for (i = 0; i < t.nslot; i++)
		if (t.slot[i])
			v[n++] = t.slot[i];
	free(t.slot);
	qsort(v, n, sizeof(*v), cmp_u32);
	*out = v;
	return (long)n;
}
