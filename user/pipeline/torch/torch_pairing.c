// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/torch/torch_pairing.h"
#include "util/thread_table.h"

static bool thread_idle(const void *entry)
{
	return !((const struct torch_thread *)entry)->depth;
}

/* An idle thread's entry is reused before the array grows: each holds a
 * TORCH_STACK_MAX-deep stack (4 KiB). */
static const struct thread_table_shape torch_threads = {
	.size = sizeof(struct torch_thread), .first = 4, .reuse_first = true, .idle = thread_idle,
};

static struct torch_thread *thread_of(struct torch_pairing *p, uint32_t tid, int create)
{
	struct torch_thread *t;
	int err;

	if (!create)
		return thread_table_find(p->threads, p->n, sizeof(*t), tid);
	t = thread_table_get(&torch_threads, &p->threads, &p->n, &p->cap, TORCH_MAX_THREADS, tid,
			     &err);
	if (err == -ENOSPC)
		p->threads_dropped++;
	return t;
}

int torch_pairing_enter(struct torch_pairing *p, struct segment *seg, uint32_t id,
			struct torch_call *op, uint64_t handle, int region)
{
	struct torch_thread *t = thread_of(p, op->tid, 1);
	struct torch_open *o;
	long idx = -1;

	if (!t)
		return -ENOMEM;
	if (t->depth == TORCH_STACK_MAX) {
		p->too_deep++;
		return 0;
	}
	op->depth = (uint16_t)t->depth;
	op->end_ns = 0;
	if (seg)
		idx = seg_add_op(seg, op);
	o = &t->stack[t->depth++];
	o->id = id;
	o->seq = idx >= 0 ? seg->seq + 1 : 0;
	o->idx = idx >= 0 ? (size_t)idx : 0;
	o->handle = handle;
	o->region = region;
	return 0;
}

static void close_one(struct segment *seg, const struct torch_open *o, uint64_t ts, bool returned)
{
	struct torch_call *c;

	if (!seg || !o->seq || o->seq != seg->seq + 1 || o->idx >= seg->nops)
		return;
	c = &seg->ops[o->idx];
	c->end_ns = ts > c->start_ns ? ts : c->start_ns;
	if (!returned)
		c->flags |= TORCH_CALL_NO_RETURN;
}

/* Close levels [level, depth) of @t: the one at @level returned. */
static void close_from(struct torch_pairing *p, struct segment *seg, struct torch_thread *t,
		       uint32_t level, uint64_t ts)
{
	while (t->depth > level + 1) {
		close_one(seg, &t->stack[--t->depth], ts, false);
		p->lost_returns++;
	}
	close_one(seg, &t->stack[--t->depth], ts, true);
}

int torch_pairing_exit(struct torch_pairing *p, struct segment *seg, uint32_t tid, uint32_t id,
		       uint64_t ts)
{
	struct torch_thread *t = thread_of(p, tid, 0);
	uint32_t level;

	for (level = t ? t->depth : 0; level > 0; level--)
		if (t->stack[level - 1].id == id)
			break;
	if (!level) {
		p->unmatched++;
		return 0;
	}
	close_from(p, seg, t, level - 1, ts);
	return 1;
}

int torch_pairing_scope_end(struct torch_pairing *p, struct segment *seg, uint64_t handle,
			    uint64_t ts, int *region, uint32_t *tid)
{
	struct torch_thread *t;
	uint32_t level;
	size_t i;

	for (i = 0; i < p->n; i++) {
		t = &p->threads[i];
		for (level = t->depth; level > 0; level--) {
			if (t->stack[level - 1].id != TORCH_SCOPE_ID || t->stack[level - 1].handle != handle)
				continue;
			*region = t->stack[level - 1].region;
			*tid = t->tid;
			close_from(p, seg, t, level - 1, ts);
			return 1;
		}
	}
	p->unmatched++;
	return 0;
}

long torch_pairing_innermost(const struct torch_pairing *p, const struct segment *seg, uint32_t tid)
{
	const struct torch_thread *t;
	uint32_t level;

	if (!seg)
		return -1;
	t = thread_table_find((void *)p->threads, p->n, sizeof(*t), tid);
	for (level = t ? t->depth : 0; level > 0; level--) {
		const struct torch_open *o = &t->stack[level - 1];

		if (o->seq == seg->seq + 1 && o->idx < seg->nops)
			return (long)o->idx;
	}
	return -1;
}

void torch_pairing_free(struct torch_pairing *p)
{
	free(p->threads);
	memset(p, 0, sizeof(*p));
}

uint32_t torch_pairing_top_op(struct torch_pairing *p, uint32_t tid)
{
	struct torch_thread *t = thread_of(p, tid, 0);
	uint32_t level;

	for (level = t ? t->depth : 0; level > 0; level--)
		if (t->stack[level - 1].id != TORCH_SCOPE_ID)
			return t->stack[level - 1].id;
	return TORCH_SCOPE_ID;
}

int torch_pairing_forget_scope(struct torch_pairing *p, struct segment *seg, uint64_t handle,
			       uint64_t ts)
{
	struct torch_thread *t;
	uint32_t level;
	size_t i;
	int n = 0;

	for (i = 0; handle && i < p->n; i++) {
		t = &p->threads[i];
		for (level = t->depth; level > 0; level--) {
			if (t->stack[level - 1].id != TORCH_SCOPE_ID || t->stack[level - 1].handle != handle)
				continue;
			close_one(seg, &t->stack[level - 1], ts, false);
			memmove(&t->stack[level - 1], &t->stack[level],
				(t->depth - level) * sizeof(t->stack[0]));
			t->depth--;
			n++;
		}
	}
	p->scope_ends_lost += (uint64_t)n;
	return n;
}

struct torch_pairing *torch_pairing__new(void)
{
	return calloc(1, sizeof(struct torch_pairing));
}

void torch_pairing__free(struct torch_pairing *p)
{
	if (!p)
		return;
	torch_pairing_free(p);
	free(p);
}

struct torch_state *torch_state__new(void)
{
	return calloc(1, sizeof(struct torch_state));
}

void torch_state__free(struct torch_state *p)
{
	free(p);
}
