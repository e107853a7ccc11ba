// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A CUDA (or gloo) call's entry and return, from BPF's ring or the launch
 * hook's (callback_ops.c), paired per thread and, once paired, put into the
 * open segment: out of events.c so that the fast path's drain, which
 * events.c calls, hands calls here without calling back into events.c.
 */
#include <errno.h>

#include "model/session.h"
#include "pipeline/api_events.h"
#include "pipeline/api_pairing.h"
#include "pipeline/comm/collectives.h"
#include "pipeline/drops.h"
#include "pipeline/gpu_join.h"
#include "pipeline/pystack.h"
#include "pipeline/segment.h"
#include "probes/cuda_api.h"
#include "proc/elf/symbolizer.h"
#include "util/name_table.h"
#include "proc/proc_info.h"

/* The kernel a host function names, symbolised once per address. */
static uint32_t kernel_of(struct session *s, struct session_target *t, uint64_t func)
{
	char name[512];
	uint32_t id;

	id = (uint32_t)addr_cache_get(&t->kernels, func);
	if (id)
		return id;
	if (symbolizer_lookup(s->sym, t->proc->pid, func, name, sizeof(name)))
		s->kernels_unknown++;
	id = name_table_intern(&s->knames, name);
	if (id)
		addr_cache_put(&t->kernels, func, id);
	return id;
}

void events_record_call(struct session *s, struct session_target *t, struct api_call *c)
{
	const struct api_row *r = cuda_api_row(c->api_id);
	uint32_t id;
	int err;

	if (r && r->decoder == DEC_GET_KERNEL) {
		/* Plumbing, not shown: remember what the handle stands for. */
		if (c->out && !c->no_return && (id = kernel_of(s, t, c->args[1]))) {
			addr_cache_put(&t->kernels, c->out, id);
			t->kernel_handles++;
		}
		return;
	}
	if (r && r->layer == LAYER_GLOO) {
		struct collective coll;

		/* joined, not shown as calls: a collective when the run ends */
		if (coll_on_call(t->coll, t->proc->pid, &s->knames, c, &coll) != 1)
			return;
		err = seg_add_collective(t->tracker, &coll);
		if (err == -ENOENT)
			t->colls_outside++;
		else if (err)
			t->colls_dropped++; /* the segment's limit or memory */
		return;
	}
	if (r && (r->decoder == DEC_LAUNCH_RT || r->decoder == DEC_LAUNCH_RT_EXC))
		c->kernel = kernel_of(s, t, cuda_api_launch_func(c));
	err = seg_add_call(t->tracker, c);
	if (err) {
		if (err == -ENOENT)
			t->calls_outside++; /* -ENOSPC: the segment counts it */
		return;
	}
	t->calls++;
	if (c->correlation)
		gpu_join_note_call(t->gpu, c->correlation, t->tracker->cur->seq,
				   t->tracker->cur->ncalls - 1);
	if (c->correlation2)
		gpu_join_note_call(t->gpu, c->correlation2, t->tracker->cur->seq,
				   t->tracker->cur->ncalls - 1);
}

int events_api_enter(struct session *s, struct session_target *t, const struct fvbpf_api_enter *e)
{
	int err;

	(void)s; /* as events_api_exit(), which records the call */
	/* Calls still open from before this segment lost their return to a
	 * drop: do not let them parent everything after. */
	if (t->loss->drops_seen && t->tracker->cur)
		api_pairing_drop_before(t->pairing, e->hdr.tid, t->tracker->cur->start_ns);
	err = api_pairing_enter(t->pairing, e);
	if (!err && t->pystk) /* --with-stack: a launch's stack came just before */
		api_pairing_set_stack(t->pairing, e->hdr.tid,
				      pystack_take(t->pystk, e->hdr.tid, e->hdr.ts_ns));
	return err;
}

void events_api_exit(struct session *s, struct session_target *t, const struct fvbpf_api_exit *x)
{
	struct api_call call;

	if (api_pairing_exit(t->pairing, x, &call) == 1)
		events_record_call(s, t, &call);
}
