// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/name_table.h"
#include "output/seg_tids.h"

struct tid_set {
	struct addr_cache seen;   /* tid -> 1 */
	uint32_t last;
	bool have_last;
	int err;
};

static void set_add(struct tid_set *t, uint32_t tid)
{
	/* Records of one thread come in runs: most adds stop here. */
	if (t->err || (t->have_last && tid == t->last))
		return;
	t->have_last = true;
	t->last = tid;
	/* A tid is below pid_max (at most 2^22, the cache's bound): never refused. */
	t->err = addr_cache_put(&t->seen, tid, 1);
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
	for (i = 0; i < s->ncolls; i++) { /* the backend's threads and the callers' */
		set_add(&t, s->colls[i].tid);
		set_add(&t, s->colls[i].arrive_tid);
	}
	v = t.err ? NULL : malloc((t.seen.n + 1) * sizeof(*v));
	if (!v) {
		addr_cache_free(&t.seen);
		return t.err ? t.err : -ENOMEM;
	}
	for (i = 0; i < t.seen.cap; i++)
		if (t.seen.vals[i])
			v[n++] = (uint32_t)t.seen.keys[i];
	addr_cache_free(&t.seen);
	qsort(v, n, sizeof(*v), cmp_u32);
	*out = v;
	return (long)n;
}
