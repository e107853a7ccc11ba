// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <json-c/json.h>

#include "output/json/trace_dl.h"
#include "output/seg_meta.h"
#include "output/summary/summary_dl.h"
#include "pipeline/segment.h"

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static json_object *worker_json(const struct seg_output_ctx *c, const struct dl_worker_sum *w)
{
	json_object *o = json_object_new_object();
	char label[128];

	if (!o)
		return NULL;
	trace_dl_worker_label(c, w->worker_id, w->pid, label, sizeof(label));
	json_object_object_add(o, "worker_id", w->worker_id >= 0 ? json_object_new_int(w->worker_id) :
								    NULL);
	json_object_object_add(o, "pid", json_object_new_int(w->pid));
	json_object_object_add(o, "name", json_object_new_string(label));
	json_object_object_add(o, "batches", json_object_new_uint64(w->batches));
	json_object_object_add(o, "fetch_us", seg_meta_us_json(w->fetch_ns));
	json_object_object_add(o, "collate_us", seg_meta_us_json(w->collate_ns));
	json_object_object_add(o, "busy_us", seg_meta_us_json(w->busy_ns));
	json_object_object_add(o, "idle_us", seg_meta_us_json(w->idle_ns));
	return o;
}

static json_object *batch_json(const struct dl_batch *b)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "batch", json_object_new_int64(b->idx));
	json_object_object_add(o, "worker_id", b->worker_id >= 0 ? json_object_new_int(b->worker_id) :
								    NULL);
	json_object_object_add(o, "worker_pid", json_object_new_int(b->pid));
	json_object_object_add(o, "samples", json_object_new_uint64(b->samples));
	json_object_object_add(o, "wait_us", seg_meta_us_json(b->wait_ns));
	json_object_object_add(o, "fetch_us", seg_meta_us_json(dl_fetch_ns(b)));
	json_object_object_add(o, "collate_us", b->collate_ns ? seg_meta_us_json(dl_collate_ns(b)) :
								 NULL);
	return o;
}

/* What joined nothing or was cut, the trainer's totals when it closed. */
static json_object *lost_json(const struct dl_seg *d)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "unfinished", json_object_new_uint64(d->counts.unfinished));
	json_object_object_add(o, "receipts_unmatched", json_object_new_uint64(d->counts.recv_unmatched));
	json_object_object_add(o, "ends_unmatched", json_object_new_uint64(d->counts.end_unmatched));
	json_object_object_add(o, "evicted", json_object_new_uint64(d->counts.evicted));
	json_object_object_add(o, "workers_over", json_object_new_uint64(d->counts.workers_over));
	json_object_object_add(o, "bad", json_object_new_uint64(d->counts.bad));
	json_object_object_add(o, "batches_cut", json_object_new_uint64(d->batches_cut));
	return o;
}

static json_object *dl_json(const struct seg_output_ctx *c, const struct dl_seg *d)
{
	json_object *o = json_object_new_object(), *a;
	size_t i;

	if (!o)
		return NULL;
	json_object_object_add(o, "wait_us", seg_meta_us_json(d->waits_ns));
	json_object_object_add(o, "batches", json_object_new_uint64(d->sum.batches));
	a = json_object_new_array();
	for (i = 0; a && i < d->n; i++)
		json_object_array_add(a, batch_json(&d->batches[i]));
	json_object_object_add(o, "per_batch", a);
	a = json_object_new_array();
	for (i = 0; a && i < d->sum.nworkers; i++)
		json_object_array_add(a, worker_json(c, &d->sum.workers[i]));
	json_object_object_add(o, "workers", a);
	json_object_object_add(o, "bottleneck", d->sentence[0] ? json_object_new_string(d->sentence) :
								   NULL);
	json_object_object_add(o, "lost", lost_json(d));
	return o;
}

int summary_dl_json(FILE *f, const struct seg_output_ctx *c)
{
	const struct dl_seg *d = c->seg->dl;
	json_object *o;
	const char *txt;

	if (!d)
		return 0;
	o = dl_json(c, d);
	txt = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						    JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	if (txt)
		fprintf(f, ",\n  \"dataloader\": %s", txt);
	json_object_put(o);
	return txt ? 0 : -ENOMEM;
}

void summary_dl_text(FILE *f, const struct seg_output_ctx *c)
{
	const struct dl_seg *d = c->seg->dl;
	char label[128];
	size_t i;

	if (!d)
		return;
	fprintf(f, "\nDataLoader: the trainer waited %.3f ms in its __next__; batches received: %u\n",
		ms(d->waits_ns), d->sum.batches);
	fprintf(f, "%-32s %8s %8s %12s %12s %12s\n", "Worker", "PID", "Batches", "Fetch",
		"Collate", "Idle");
	for (i = 0; i < d->sum.nworkers; i++) {
		const struct dl_worker_sum *w = &d->sum.workers[i];

		trace_dl_worker_label(c, w->worker_id, w->pid, label, sizeof(label));
		fprintf(f, "%-32s %8d %8u %9.3f ms %9.3f ms %9.3f ms\n", label, (int)w->pid,
			w->batches, ms(w->fetch_ns), ms(w->collate_ns), ms(w->idle_ns));
	}
	for (i = 0; i < d->n; i++) {
		const struct dl_batch *b = &d->batches[i];

		trace_dl_worker_label(c, b->worker_id, b->pid, label, sizeof(label));
		fprintf(f, "batch %lld (%u samples) from %s: waited %.3f ms, fetch %.3f ms, "
			"collate %.3f ms\n", (long long)b->idx, b->samples, label, ms(b->wait_ns),
			ms(dl_fetch_ns(b)), ms(dl_collate_ns(b)));
	}
	if (d->sentence[0])
		fprintf(f, "bottleneck: %s\n", d->sentence);
}
