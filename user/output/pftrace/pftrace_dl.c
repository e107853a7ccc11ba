// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* DataLoader workers in the pftrace (pftrace_dl.h). */
#include <stdio.h>
#include <stdlib.h>

#include "output/json/trace_dl.h"
#include "output/pftrace/pftrace_dl.h"
#include "pipeline/loader/dl_join.h"
#include "pipeline/segment.h"
#include "util/checked_math.h"

/* Flow ids apart from the launch -> kernel ones (CUPTI correlation ids). */
#define PF_DL_FLOW 0xc0000000u

/* Worker @w's tracks: its process, then its thread, after all others. */
static uint32_t worker_track(const struct pf *p, uint32_t w, bool thread)
{
	return (uint32_t)(p->dl_base + 2 * (size_t)w + thread);
}

static bool worker_of(const struct dl_seg *d, pid_t pid, uint32_t *w)
{
	for (*w = 0; *w < d->sum.nworkers; (*w)++)
		if (d->sum.workers[*w].pid == pid)
			return true;
	return false;
}

/* @flow ends in @to: its flow_in, or one more (pf.more_in, kept in slice
 * order: the batches come in receipt order, their slices in time order,
 * so one insertion sort step); false on no memory. */
static bool end_flow(struct pf *p, struct pf_slice *to, uint32_t flow)
{
	struct pf_flow_in *v;
	size_t i;

	if (!to->flow_in) {
		to->flow_in = flow;
		return true;
	}
	v = realloc(p->more_in, (p->nmore_in + 1) * sizeof(*v));
	if (!v)
		return false;
	p->more_in = v;
	for (i = p->nmore_in; i > 0 && v[i - 1].order > to->order; i--)
		v[i] = v[i - 1];
	v[i] = (struct pf_flow_in){ to->order, flow };
	p->nmore_in++;
	to->more_in++;
	return true;
}

/* A slice a receipt may end in: one on a thread's track. */
struct held {
	uint64_t start, end;
	uint32_t track, idx; /* idx: in p->sl */
};

/* By track, start, then the enclosing slice before those it holds. */
static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The slices collected on the threads' tracks (1..ncpu), sorted, once per
 * segment rather than a walk of every slice per batch; NULL (no flows)
 * when there are none or no memory. */
static struct held *held_index(struct pf *p, size_t *n)
{
	struct held *ix = p->nsl ? malloc(p->nsl * sizeof(*ix)) : NULL;
	size_t i;

	*n = 0;
	for (i = 0; ix && i < p->nsl; i++)
		if (p->sl[i].track >= 1 && p->sl[i].track <= p->ncpu)
			ix[(*n)++] = (struct held){ p->sl[i].start, p->sl[i].end, p->sl[i].track,
						    (uint32_t)i };
	if (ix && *n)
		qsort(ix, *n, sizeof(*ix), cmp_held);
	return ix;
}

/* The innermost slice of @ix on @track that holds @ts, or NULL: back from
 * the last one to start by @ts, the first that lasts until @ts (the one
 * holding it that starts latest; of equal starts, the shortest). */
static struct pf_slice *holding(struct pf *p, const struct held *ix, size_t n, uint32_t track,
				uint64_t ts)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ix[mid].track < track || (ix[mid].track == track && ix[mid].start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && ix[lo - 1].track == track)
		if (ix[--lo].end >= ts)
			return &p->sl[ix[lo].idx];
	return NULL;
}

void pf_dl_collect(struct pf *p, const struct seg_output_ctx *c)
{
	const struct dl_seg *d = c->seg->dl;
	struct held *ix;
	struct pf_slice *to;
	char name[64];
	uint32_t w, track, flow;
	size_t i, nix, charged;

	if (!d || !d->n)
		return;
	ix = held_index(p, &nix);
	charged = ix ? p->nsl * sizeof(*ix) : 0; /* the slices grow below */
	if (p->mem)
		budget_charge(p->mem, charged);
	for (i = 0; i < d->n && !p->err; i++) {
		const struct dl_batch *b = &d->batches[i];

		if (!b->end_ns || !worker_of(d, b->pid, &w))
			continue;
		flow = PF_DL_FLOW + (uint32_t)i;
		/* the receipt first: without a slice to end in, no flow */
		track = b->recv_ns ? pf_cpu_track(p, b->recv_tid) : 0;
		to = track && ix ? holding(p, ix, nix, track, b->recv_ns) : NULL;
		if (!to || !end_flow(p, to, flow))
			flow = 0;
		snprintf(name, sizeof(name), "DataLoader batch %lld", (long long)b->idx);
		pf_add_slice(p, worker_track(p, w, true), b->start_ns,
			     span_u64(b->start_ns, b->end_ns), name, "dataloader", flow, 0);
	}
	free(ix);
	if (p->mem)
		budget_release(p->mem, charged);
}

void pf_dl_descriptors(struct pf *p, const struct seg_output_ctx *c)
{
	const struct dl_seg *d = c->seg->dl;
	char label[128];
	uint32_t w;

	for (w = 0; d && w < d->sum.nworkers; w++) {
		const struct dl_worker_sum *ws = &d->sum.workers[w];

		trace_dl_worker_label(c, ws->worker_id, ws->pid, label, sizeof(label));
		pf_process_descriptor(p, track_uuid(worker_track(p, w, false)), ws->pid, label, false);
		pf_thread_descriptor(p, track_uuid(worker_track(p, w, true)),
				     track_uuid(worker_track(p, w, false)), ws->pid, ws->pid,
				     "DataLoader worker");
	}
}
