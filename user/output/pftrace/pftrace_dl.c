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

/* The innermost slice collected on @track that holds @ts, or NULL. */
static struct pf_slice *holding(struct pf *p, uint32_t track, uint64_t ts)
{
	struct pf_slice *best = NULL;
	size_t i;

	for (i = 0; i < p->nsl; i++) {
		struct pf_slice *sl = &p->sl[i];

		if (sl->track == track && sl->start <= ts && ts <= sl->end &&
		    (!best || sl->start >= best->start))
			best = sl;
	}
	return best;
}

void pf_dl_collect(struct pf *p, const struct seg_output_ctx *c)
{
	const struct dl_seg *d = c->seg->dl;
	struct pf_slice *to;
	char name[64];
	uint32_t w, track, flow;
	size_t i;

	for (i = 0; d && i < d->n && !p->err; i++) {
		const struct dl_batch *b = &d->batches[i];

		if (!b->end_ns || !worker_of(d, b->pid, &w))
			continue;
		flow = PF_DL_FLOW + (uint32_t)i;
		/* the receipt first: without a slice to end in, no flow */
		track = b->recv_ns ? pf_cpu_track(p, b->recv_tid) : 0;
		to = track ? holding(p, track, b->recv_ns) : NULL;
		if (!to || !end_flow(p, to, flow))
			flow = 0;
		snprintf(name, sizeof(name), "DataLoader batch %lld", (long long)b->idx);
		pf_add_slice(p, worker_track(p, w, true), b->start_ns,
			     span_u64(b->start_ns, b->end_ns), name, "dataloader", flow, 0);
	}
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
