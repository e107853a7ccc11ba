// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>

#include "output/json/trace_dl.h"
#include "output/json/trace_where.h"
#include "pipeline/segment.h"
#include "proc/proc_info.h"
#include "util/checked_math.h"

/* Flow ids apart from fwdbwd's (1...), ac2g's and the collectives' (1 << 40). */
#define DL_FLOW_ID (2ull << 40)
/* Worker tracks sort after every rank's own. */
#define DL_SORT_BASE 1000000

void trace_dl_worker_label(const struct seg_output_ctx *c, int32_t worker_id, int pid, char *buf,
			   size_t len)
{
	char who[48], w[48];

	if (c->proc->name_by_pid || c->proc->rank == PROC_NO_RANK)
		snprintf(who, sizeof(who), "PID %d", c->seg->pid);
	else
		snprintf(who, sizeof(who), "rank %d", c->proc->rank);
	if (worker_id >= 0)
		snprintf(w, sizeof(w), "worker %d", worker_id);
	else
		snprintf(w, sizeof(w), "worker (PID %d)", pid);
	snprintf(buf, len, "%s %s", who, w);
}

static void worker_tracks(struct obuf *f, const struct seg_output_ctx *c, const struct dl_seg *d)
{
	char label[128];
	uint32_t i;

	for (i = 0; i < d->sum.nworkers; i++) {
		const struct dl_worker_sum *w = &d->sum.workers[i];

		trace_dl_worker_label(c, w->worker_id, w->pid, label, sizeof(label));
		ob_lit(f, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
		ob_i64(f, w->pid);
		ob_lit(f, ",\"tid\":0,\"args\":{\"name\":");
		ob_json_string(f, label);
		ob_lit(f, "},\"ts\":");
		ob_us(f, c->seg->start_ns);
		ob_lit(f, "},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
		ob_i64(f, w->pid);
		ob_lit(f, ",\"tid\":0,\"args\":{\"sort_index\":");
		ob_i64(f, DL_SORT_BASE + (int64_t)(c->proc->rank > 0 ? c->proc->rank : 0) * 1000 +
			      (w->worker_id >= 0 && w->worker_id < 1000 ? w->worker_id : 999));
		ob_lit(f, "},\"ts\":");
		ob_us(f, c->seg->start_ns);
		ob_lit(f, "},\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
		ob_i64(f, w->pid);
		ob_lit(f, ",\"tid\":");
		ob_i64(f, w->pid);
		ob_lit(f, ",\"args\":{\"name\":\"DataLoader worker\"},\"ts\":");
		ob_us(f, c->seg->start_ns);
		ob_char(f, '}');
	}
}

static void batch_slice(struct obuf *f, const struct dl_batch *b, uint64_t flow)
{
	ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"dataloader\",\"name\":\"DataLoader batch ");
	ob_i64(f, b->idx);
	ob_char(f, '"');
	trace_where_when(f, b->pid, (uint64_t)b->pid, b->start_ns);
	ob_lit(f, ",\"dur\":");
	ob_us(f, span_u64(b->start_ns, b->end_ns));
	ob_lit(f, ",\"args\":{\"worker_id\":");
	ob_i64(f, b->worker_id);
	ob_lit(f, ",\"worker_pid\":");
	ob_i64(f, b->pid);
	ob_lit(f, ",\"batch\":");
	ob_i64(f, b->idx);
	ob_lit(f, ",\"samples\":");
	ob_u64(f, b->samples);
	ob_lit(f, ",\"fetch_us\":");
	ob_us(f, dl_fetch_ns(b));
	ob_lit(f, ",\"collate_us\":");
	ob_us(f, dl_collate_ns(b));
	ob_lit(f, ",\"collate_seen\":");
	ob_puts(f, b->collate_ns ? "true" : "false");
	ob_lit(f, ",\"wait_us\":");
	ob_us(f, b->wait_ns);
	ob_lit(f, "}}");
	/* the batch -> the trainer's receipt, inside its wait */
	ob_lit(f, ",\n{\"ph\":\"s\",\"cat\":\"dataloader\",\"name\":\"dataloader\",\"id\":");
	ob_u64(f, flow);
	trace_where_when(f, b->pid, (uint64_t)b->pid, b->end_ns);
	ob_lit(f, "}");
}

static void receipt(struct obuf *f, const struct segment *s, const struct dl_batch *b, uint64_t flow)
{
	ob_lit(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dataloader\",\"name\":\"dataloader\",\"id\":");
	ob_u64(f, flow);
	trace_where_when(f, s->pid, b->recv_tid, b->recv_ns);
	ob_char(f, '}');
}

void trace_dl_events(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct dl_seg *d = c->seg->dl;
	size_t i;

	if (!d)
		return;
	worker_tracks(f, c, d);
	for (i = 0; i < d->n; i++) {
		const struct dl_batch *b = &d->batches[i];

		if (!b->end_ns)
			continue;
		batch_slice(f, b, DL_FLOW_ID + i);
		receipt(f, c->seg, b, DL_FLOW_ID + i);
	}
}
