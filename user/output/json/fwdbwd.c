// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "output/json/fwdbwd.h"
#include "probes/torch_ops.h"

struct fwd_slot {
	uint64_t seq1;          /* the key: sequence number + 1 (0: an empty slot) ... */
	uint32_t tid;           /* ... and the RecordFunction thread */
	bool linked;
	size_t op;
};

/* An open-addressed table the size of a power of two past twice the
 * operators: (thread, sequence number) -> the forward operator. */
struct fwd_table {
	struct fwd_slot *slots;
	size_t mask;
};

/* Its slot, or the empty one where it goes (the table is never full). */
static struct fwd_slot *slot_of(struct fwd_table *t, const struct torch_call *o)
{
	size_t i = (size_t)((o->seq1 ^ ((uint64_t)o->fwd_tid << 40)) * 0x9e3779b97f4a7c15ull) & t->mask;

	while (t->slots[i].seq1 && (t->slots[i].seq1 != o->seq1 || t->slots[i].tid != o->fwd_tid))
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static bool is_forward(const struct torch_call *o)
{
	return o->kind == TORCH_OP && o->seq1;
}

static bool is_backward(const struct torch_call *o)
{
	return o->kind == TORCH_NODE && o->seq1 && o->fwd_tid && o->end_ns;
}

static const struct segment *sort_seg; /* qsort has no context argument */

static int by_end(const void *a, const void *b)
{
	const struct torch_call *x = &sort_seg->ops[*(const size_t *)a];
	const struct torch_call *y = &sort_seg->ops[*(const size_t *)b];

	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/* Backward nodes by end time: a node ends before the evaluate_function
 * around it, which carries the same numbers (torch links the node). */
static size_t backward_in_end_order(const struct segment *seg, size_t *out)
{
	size_t i, n = 0;

	for (i = 0; i < seg->nops; i++)
		if (is_backward(&seg->ops[i]))
			out[n++] = i;
	sort_seg = seg;
	qsort(out, n, sizeof(*out), by_end);
	return n;
}

long fwdbwd_pairs(const struct segment *seg, struct fwdbwd_pair **pairs)
{
	struct fwd_table t = { 0 };
	struct fwd_slot *sl;
	size_t i, n, size = 16, *bwd = NULL;
	long np = 0;

	*pairs = NULL;
	while (size < 2 * seg->nops)
		size *= 2;
	t.slots = calloc(size, sizeof(*t.slots));
	bwd = malloc((seg->nops ? seg->nops : 1) * sizeof(*bwd));
	if (!t.slots || !bwd)
		goto nomem;
	t.mask = size - 1;
	/* of the operators with one key, the one that began last */
	for (i = 0; i < seg->nops; i++) {
		const struct torch_call *o = &seg->ops[i];

		if (!is_forward(o))
			continue;
		sl = slot_of(&t, o);
		if (!sl->seq1 || o->start_ns >= seg->ops[sl->op].start_ns) {
			sl->seq1 = o->seq1;
			sl->tid = o->fwd_tid;
			sl->op = i;
		}
	}
	n = backward_in_end_order(seg, bwd);
	*pairs = malloc((n ? n : 1) * sizeof(**pairs));
	if (!*pairs)
		goto nomem;
	for (i = 0; i < n; i++) {
		sl = slot_of(&t, &seg->ops[bwd[i]]);
		if (!sl->seq1 || sl->linked)
			continue;
		(*pairs)[np++] = (struct fwdbwd_pair){ .fwd = sl->op, .bwd = bwd[i] };
		sl->linked = true; /* once, as torch erases it */
	}
	free(t.slots);
	free(bwd);
	return np;
nomem:
	free(t.slots);
	free(bwd);
	free(*pairs);
	*pairs = NULL;
	return -ENOMEM;
}
