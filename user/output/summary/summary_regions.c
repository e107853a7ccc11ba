// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Region slices' self times and parents (summary_regions.h): every CPU
 * event of the segment sorted per thread by time, then one sweep with a
 * stack of the events still open. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/grow.h"
#include "output/summary/summary_regions.h"

enum ev_kind {
	EV_OP = 0,      /* first on equal bounds: the outer one */
	EV_REGION = 1,
	EV_CALL = 2,
};

struct ev {
	uint32_t tid;
	uint8_t kind;
	size_t idx;             /* in seg->slices, ops or calls */
	uint64_t start, end;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the longer one holds the shorter */
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* An event that ends before it starts (an open one, a target's clock) is
 * empty, not 2^64 ns long. */
static struct ev make_ev(uint32_t tid, uint8_t kind, size_t idx, uint64_t start, uint64_t end)
{
	return (struct ev){ tid, kind, idx, start, end > start ? end : start };
}

static size_t collect(const struct segment *seg, struct ev *v)
{
	uint64_t end;
	size_t i, n = 0;

	for (i = 0; i < seg->nslices; i++)
		v[n++] = make_ev(seg->slices[i].tid, EV_REGION, i, seg->slices[i].start_ns,
				 seg->slices[i].end_ns);
	for (i = 0; i < seg->nops; i++) {
		/* an operator still open at the end lasts to the segment's end */
		end = seg->ops[i].end_ns ? seg->ops[i].end_ns : seg->end_ns;
		v[n++] = make_ev(seg->ops[i].tid, EV_OP, i, seg->ops[i].start_ns, end);
	}
	for (i = 0; i < seg->ncalls; i++)
		if (!seg->calls[i].depth) /* a driver call in a runtime call is in its time */
			v[n++] = make_ev(seg->calls[i].tid, EV_CALL, i, seg->calls[i].start_ns,
					 seg->calls[i].end_ns);
	return n;
}

/* The innermost open event holding @e (searched down at most
 * SUMMARY_REGIONS_SEARCH), or -1; with @region_only, the innermost region. */
static long holder(const struct ev *v, const size_t *stack, size_t depth, const struct ev *e,
		   bool region_only)
{
	size_t k, looked = 0;

	for (k = depth; k > 0 && looked < SUMMARY_REGIONS_SEARCH; k--, looked++) {
		const struct ev *o = &v[stack[k - 1]];

		if (o->end >= e->end && (!region_only || o->kind == EV_REGION))
			return (long)stack[k - 1];
	}
	return -1;
}

static int sweep(const struct ev *v, size_t n, struct region_times *t)
{
	size_t *stack = NULL, depth = 0, cap = 0, i;
	uint64_t *kids = t->self_ns; /* children's time first, self after */
	long p;

	for (i = 0; i < n; i++) {
		const struct ev *e = &v[i];

		if (depth && v[stack[depth - 1]].tid != e->tid)
			depth = 0; /* a new thread */
		while (depth && v[stack[depth - 1]].end <= e->start && v[stack[depth - 1]].end < e->end)
			depth--;
		p = holder(v, stack, depth, e, false);
		if (p >= 0 && v[p].kind == EV_REGION)
			kids[v[p].idx] = sat_add_u64(kids[v[p].idx], e->end - e->start);
		if (e->kind == EV_REGION) {
			p = holder(v, stack, depth, e, true);
			t->parent[e->idx] = p >= 0 ? (long)v[p].idx : -1;
		}
		if (grow_one(&stack, depth, &cap, sizeof(*stack), 64)) {
			free(stack);
			return -ENOMEM;
		}
		stack[depth++] = i;
	}
	free(stack);
	return 0;
}

int region_times_build(const struct segment *seg, struct region_times *t)
{
	size_t n = seg->nslices + seg->nops + seg->ncalls, i, nv;
	struct ev *v;
	uint64_t dur;

	memset(t, 0, sizeof(*t));
	t->self_ns = calloc(seg->nslices ? seg->nslices : 1, sizeof(*t->self_ns));
	t->parent = calloc(seg->nslices ? seg->nslices : 1, sizeof(*t->parent));
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!t->self_ns || !t->parent || !v)
		goto fail;
	nv = collect(seg, v);
	qsort(v, nv, sizeof(*v), cmp_ev);
	if (sweep(v, nv, t))
		goto fail;
	free(v);
	for (i = 0; i < seg->nslices; i++) {
		dur = span_u64(seg->slices[i].start_ns, seg->slices[i].end_ns);
		t->self_ns[i] = t->self_ns[i] < dur ? dur - t->self_ns[i] : 0;
	}
	return 0;
fail:
	free(v);
	region_times_free(t);
	return -ENOMEM;
}

void region_times_free(struct region_times *t)
{
	free(t->self_ns);
	free(t->parent);
	memset(t, 0, sizeof(*t));
}
