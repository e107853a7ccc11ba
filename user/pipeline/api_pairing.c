// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/api_pairing.h"
#include "util/thread_table.h"

/* A thread with no open call holds nothing: its entry may be reused. */
static bool thread_idle(const void *entry)
{
	return !((const struct api_thread *)entry)->depth;
}

static const struct thread_table_shape api_threads = {
	.size = sizeof(struct api_thread), .first = 8, .idle = thread_idle,
};

/*
 * The entry of @tid.  Threads come and go in a long job: past
 * API_MAX_THREADS an idle entry is reused, and when every one has a call
 * open the event is dropped (counted in threads_dropped).
 */
static struct api_thread *thread_of(struct api_pairing *p, uint32_t tid, int create)
{
	struct api_thread *t;
	int err;

	if (!create)
		return thread_table_find(p->threads, p->n, sizeof(*t), tid);
	t = thread_table_get(&api_threads, &p->threads, &p->n, &p->cap, API_MAX_THREADS, tid, &err);
	if (err == -ENOSPC)
		p->threads_dropped++;
	return t;
}

int api_pairing_enter(struct api_pairing *p, const struct fvbpf_api_enter *e)
{
	struct api_thread *t = thread_of(p, e->hdr.tid, 1);
	struct api_call *c;

	if (!t)
		return p->n < API_MAX_THREADS ? -ENOMEM : 0;
	if (t->depth == API_STACK_MAX) {
		p->too_deep++;
		return 0;
	}
	c = &t->stack[t->depth];
	memset(c, 0, sizeof(*c));
	c->tid = e->hdr.tid;
	c->api_id = e->api_id;
	c->start_ns = e->hdr.ts_ns;
	memcpy(c->args, e->args, sizeof(c->args));
	c->deref_len = e->deref_len <= FVBPF_API_DEREF ? e->deref_len : FVBPF_API_DEREF;
	memcpy(c->deref, e->deref, c->deref_len);
	c->depth = t->depth++;
	return 0;
}

void api_pairing_set_stack(struct api_pairing *p, uint32_t tid, uint32_t stack)
{
	struct api_thread *t = thread_of(p, tid, 0);

	if (t && t->depth)
		t->stack[t->depth - 1].stack = stack;
}

int api_pairing_exit(struct api_pairing *p, const struct fvbpf_api_exit *x, struct api_call *out)
{
	struct api_thread *t = thread_of(p, x->hdr.tid, 0);
	uint32_t level;

	/* The innermost open call of that function on this thread; calls
	 * above it lost their return record. */
	for (level = t ? t->depth : 0; level > 0; level--)
		if (t->stack[level - 1].api_id == x->api_id)
			break;
	if (!level) {
		p->unmatched_exits++;
		return 0;
	}
	p->lost_returns += t->depth - level;
	t->depth = level - 1;
	*out = t->stack[t->depth];
	out->end_ns = x->hdr.ts_ns;
	out->ret = x->ret;
	out->out = x->out;
	return 1;
}

int api_pairing_drain(struct api_pairing *p, uint64_t ts, struct api_call *out)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		struct api_thread *t = &p->threads[i];

		if (!t->depth)
			continue;
		*out = t->stack[--t->depth];
		out->end_ns = ts;
		out->no_return = true;
		p->lost_returns++;
		return 1;
	}
	return 0;
}

int api_pairing_set_correlation(struct api_pairing *p, uint32_t tid, uint32_t correlation)
{
	struct api_thread *t = thread_of(p, tid, 0);
	struct api_call *c;

	if (!t || !t->depth)
		return -ENOENT;
	/* Runtime and driver callbacks may both name the same call: keep both,
	 * whichever the GPU record carries joins. */
	c = &t->stack[t->depth - 1];
	if (!c->correlation)
		c->correlation = correlation;
	else if (c->correlation != correlation)
		c->correlation2 = correlation;
	return 0;
}

void api_pairing_drop_before(struct api_pairing *p, uint32_t tid, uint64_t ts)
{
	struct api_thread *t = thread_of(p, tid, 0);
	uint32_t keep = 0;

	if (!t)
		return;
	while (keep < t->depth && t->stack[keep].start_ns < ts)
		keep++;
	if (!keep)
		return;
	/* The stack is in start order: the first @keep entries are stale. */
	p->lost_returns += keep;
	memmove(t->stack, t->stack + keep, (t->depth - keep) * sizeof(t->stack[0]));
	t->depth -= keep;
	for (keep = 0; keep < t->depth; keep++)
		t->stack[keep].depth = keep;
}

void api_pairing_free(struct api_pairing *p)
{
	free(p->threads);
	memset(p, 0, sizeof(*p));
}

struct api_pairing *api_pairing__new(void)
{
	return calloc(1, sizeof(struct api_pairing));
}

void api_pairing__free(struct api_pairing *p)
{
	if (!p)
		return;
	api_pairing_free(p);
	free(p);
}
