// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/torch/op_tree.h"
#include "pipeline/torch/torch_pairing.h"
#include "util/addr_table.h"

/* @o returned before @i began: it holds nothing that comes after. */
static bool ended_before(const struct torch_call *o, const struct torch_call *i)
{
	return o->end_ns && o->end_ns < i->start_ns;
}

/*
 * The parent of call @i: up the chain of its thread's last call, the first
 * one shallower than @i and still open.  Only one exactly a level up
 * encloses it; a gap (the caller began before the segment, or was never
 * recorded) leaves it without parent, never with a stale one of an earlier
 * chain.
 */
static long parent_of(const struct segment *seg, const struct op_tree *t, long last, size_t i)
{
	uint16_t d = seg->ops[i].depth;

	while (last >= 0 && (seg->ops[last].depth >= d || ended_before(&seg->ops[last], &seg->ops[i])))
		last = t->parent[last];
	return last >= 0 && seg->ops[last].depth + 1 == d ? last : -1;
}

/* Parents per thread: the last call of each thread, keyed by tid + 1. */
static int link_parents(const struct segment *seg, struct op_tree *t)
{
	struct addr_table last = { .max = seg->nops };
	struct addr_entry e;
	size_t i;
	long p;
	int err = 0;

	for (i = 0; i < seg->nops; i++) {
		const struct torch_call *o = &seg->ops[i];
		uint64_t key = (uint64_t)o->tid + 1;

		t->parent[i] = -1;
		if (o->depth >= TORCH_STACK_MAX) {
			t->too_deep++;
			continue; /* off every chain: nothing below it finds it */
		}
		p = addr_table_get(&last, key, &e) ? (long)e.size : -1;
		if (o->depth)
			t->parent[i] = parent_of(seg, t, p, i);
		if (t->parent[i] >= 0)
			t->kids[t->parent[i]]++;
		err = addr_table_put(&last, key, i, 0);
		if (err)
			break;
	}
	addr_table_free(&last);
	return err;
}

int op_tree_build(const struct segment *seg, struct op_tree *t)
{
	size_t n = seg->nops ? seg->nops : 1, i;
	long p;
	int err;

	memset(t, 0, sizeof(*t));
	t->parent = malloc(n * sizeof(*t->parent));
	t->kids = calloc(n, sizeof(*t->kids));
	t->merged = calloc(n, sizeof(*t->merged));
	if (!t->parent || !t->kids || !t->merged) {
		op_tree_free(t);
		return -ENOMEM;
	}
	t->n = seg->nops;
	err = link_parents(seg, t);
	if (err) {
		op_tree_free(t);
		return err;
	}
	/* Entry order: a parent's merge is decided before its children's. */
	for (i = 0; i < seg->nops; i++) {
		p = t->parent[i];
		t->merged[i] = p >= 0 && t->kids[p] == 1 && seg->ops[p].name == seg->ops[i].name &&
			       seg->ops[p].kind == seg->ops[i].kind;
	}
	return 0;
}

long op_tree_resolve(const struct op_tree *t, long i)
{
	while (i >= 0 && t->merged[i])
		i = t->parent[i];
	return i;
}

void op_tree_free(struct op_tree *t)
{
	free(t->parent);
	free(t->kids);
	free(t->merged);
	memset(t, 0, sizeof(*t));
}
