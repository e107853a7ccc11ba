// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Closed segments wait here for their GPU records (the agent flushes them
 * after the outermost region ends) before they go to the writer thread.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/memory/mem_events.h"
#include "pipeline/ring_consume.h"
#include "pipeline/seg_close.h"
#include "util/grow.h"
#include "util/log.h"
#include "pipeline/gpu_join.h"
#include "pipeline/loader/dl_seg.h"
#include "pipeline/schedule.h"
#include "pipeline/segment.h"
#include "pipeline/torch/callback_ops.h"
#include "proc/proc_info.h"

/* Only libfvbpf.so's agent sends GPU records: a process without the
 * library (operators and CUDA calls by uprobes alone) has none to wait for. */
static bool segment_waits(const struct session_target *t, const struct segment *seg)
{
	if (!t->has_markers)
		return false;
	return !t->agent->heard || (t->agent->active && gpu_join_missing(seg));
}

static void submit_segment(struct session_target *t, struct segment *seg)
{
	struct session *s = t->session;

	snprintf(seg->gpu_status, sizeof(seg->gpu_status), "%s", t->agent->status);
	seg->gpu_clock = t->agent->clock;
	seg->cupti_dropped = t->agent->cupti_dropped;
	seg->ops_by_callbacks = t->ops == OPS_CALLBACKS;
	seg->gpu_missing = gpu_join_missing(seg);
	t->agent->gpu_missing += seg->gpu_missing;
	gpu_join_forget(t->gpu, seg);
	dl_seg_attach(s, t, seg);
	if (!s->hooks.write_segment) {
		segment_free(seg); /* no writer (a session built by hand) */
		return;
	}
	/* A spill that failed has said why (seg_writer.c). */
	if (s->hooks.write_segment(s, seg, t->proc) == -ENOMEM)
		log_warn("out of memory queueing segment of pid %d", t->proc->pid);
}

static int hold_segment(struct session_target *t, struct segment *seg)
{
	if (grow_one(&t->held->segs, t->held->n, &t->held->cap, sizeof(*t->held->segs), 8))
		return -ENOMEM;
	t->held->segs[t->held->n].seg = seg;
	t->held->segs[t->held->n].until = clock_ns(CLOCK_MONOTONIC) + t->session->gpu_wait_ns;
	t->held->n++;
	return 0;
}

/* Write held segments that are whole, or whose wait is over (@force: all). */
void seg_close_release(struct session_target *t, bool force)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	size_t i = 0;

	/* Over a third of --max-memory: what waits goes now (GPU records that
	 * come later are counted late), as spilling one would lose them too. */
	force = force || budget_pressure(&t->session->mem);
	while (i < t->held->n) {
		struct segment *seg = t->held->segs[i].seg;

		if (!force && (seg->align_pending ||
			       (segment_waits(t, seg) && now < t->held->segs[i].until))) {
			i++;
			continue;
		}
		if (seg == t->align_seg)
			t->align_seg = NULL;
		submit_segment(t, t->held->segs[i].seg);
		t->held->n--;
		memmove(&t->held->segs[i], &t->held->segs[i + 1], (t->held->n - i) * sizeof(*t->held->segs));
	}
}

/* Where segment @seq of a target is, for GPU records that arrive late. */
struct segment *seg_close_find(void *ctx, uint32_t seq)
{
	struct session_target *t = ctx;
	size_t i;

	if (t->tracker->cur && t->tracker->cur->seq == seq)
		return t->tracker->cur;
	if (t->tracker->held_child && t->tracker->held_child->seq == seq)
		return t->tracker->held_child;
	for (i = 0; i < t->held->n; i++)
		if (t->held->segs[i].seg->seq == seq)
			return t->held->segs[i].seg;
	return NULL;
}

void seg_close_segment(struct segment *seg, void *ctx)
{
	struct session_target *t = ctx;
	uint64_t lost = callback_ops_lost(t->fast);

	/* What the callbacks' rings lost since the last segment closed: its
	 * own (callbacks run only inside segments); what a process loses after
	 * its last segment is in no segment's count, only the manifest's. */
	seg->callback_lost = lost > t->callback_lost_charged ? lost - t->callback_lost_charged : 0;
	t->callback_lost_charged = lost;
	mem_state_close(t->mem, seg);
	if (!schedule_keep(&t->session->schedule, t->closed++)) {
		t->schedule_skipped++;
		log_debug("pid %d: segment %u skipped (--schedule)", seg->pid, seg->seq);
		segment_free(seg);
		return;
	}
	t->segments++;
	if (seg->incomplete)
		t->incomplete++;
	log_debug("pid %d: segment %u (%s) closed, %zu slices%s", seg->pid, seg->seq,
		  t->session->reg->defs[seg->region].name, seg->nslices,
		  seg->incomplete ? ", incomplete" : "");
	/* A rank's first, to be compared with the other ranks' firsts. */
	if (t->align_first && !seg->not_counted && !seg->incomplete) {
		t->align_first = false;
		if (hold_segment(t, seg) == 0) {
			seg->align_pending = true;
			t->align_seg = seg;
			return;
		}
	}
	/* Its GPU records come later (the agent flushes when the outermost
	 * region ends), and the agent may not have said yet whether it runs:
	 * wait for both, for a bounded time. */
	if (!t->exited && !budget_pressure(&t->session->mem) && segment_waits(t, seg) &&
	    hold_segment(t, seg) == 0)
		return;
	submit_segment(t, seg);
}

void seg_close_wait(struct session *s)
{
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + s->gpu_wait_ns;
	bool any;
	int i;

	do {
		ring_pass(s);
		any = false;
		for (i = 0; i < s->ntargets; i++) {
			seg_close_release(&s->targets[i], false);
			any |= s->targets[i].held->n > 0;
		}
		if (any)
			usleep(20000);
	} while (any && clock_ns(CLOCK_MONOTONIC) < until);
}

struct held_queue *held_queue__new(void)
{
	return calloc(1, sizeof(struct held_queue));
}

void held_queue__free(struct held_queue *q)
{
	size_t k;

	if (!q)
		return;
	for (k = 0; k < q->n; k++)
		segment_free(q->segs[k].seg);
	free(q->segs);
	free(q);
}
