// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Kineto's keys in fvbpf's JSON traces (see trace_kineto.h).  fvbpf's own
 * keys stay; these are added beside them, with Kineto's spelling, so that
 * HolisticTraceAnalysis finds the rank, the steps, the op of each launch
 * and the GPU work of each op as it does in torch.profiler's traces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/seg_output.h"
#include "output/json/trace_colls.h"
#include "output/json/trace_kineto.h"
#include "pipeline/gpu_join.h"
#include "pipeline/registry.h"
#include "pipeline/segment.h"
#include "util/checked_math.h"
#include "util/text_out.h"

/* Ops walked back per call to find the one it was made in: nesting deeper
 * than this gives the call no External id (never a wrong one). */
#define OP_WALK_MAX 64
/* gpu_user_annotation spans: region slices x GPU records compared, at most. */
#define GPU_ANNOT_WORK_MAX 20000000u
#define GPU_ANNOT_TRACKS 16

static int cmp_op(const void *a, const void *b, void *seg)
{
	const struct segment *s = seg;
	const struct torch_call *x = &s->ops[*(const uint32_t *)a];
	const struct torch_call *y = &s->ops[*(const uint32_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint64_t op_end(const struct segment *s, const struct torch_call *op)
{
	if (op->end_ns)
		return op->end_ns;
	return s->end_ns > op->start_ns ? s->end_ns : op->start_ns;
}

/* The last op (in @order) of thread @tid that started at or before @ts; -1. */
static long last_started(const struct segment *s, const uint32_t *order, size_t n, uint32_t tid,
			 uint64_t ts)
{
	size_t lo = 0, hi = n;
	const struct torch_call *op;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		op = &s->ops[order[mid]];
		if (op->tid < tid || (op->tid == tid && op->start_ns <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || s->ops[order[lo - 1]].tid != tid)
		return -1;
	return (long)lo - 1;
}

static uint32_t enclosing_op(const struct segment *s, const uint32_t *order, size_t n,
			     const struct api_call *call)
{
	long i = last_started(s, order, n, call->tid, call->start_ns);
	int walked;

	for (walked = 0; i >= 0 && walked < OP_WALK_MAX; i--, walked++) {
		const struct torch_call *op = &s->ops[order[i]];

		if (op->tid != call->tid)
			break;
		if (op_end(s, op) >= call->end_ns)
			return order[i] + 1;
	}
	return 0;
}

int kineto_ids_init(struct kineto_ids *k, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint32_t *order = NULL;
	size_t i;

	memset(k, 0, sizeof(*k));
	if (!s->ncalls || !s->nops || s->nops > UINT32_MAX - 1)
		return 0;
	k->call_op = calloc(s->ncalls, sizeof(*k->call_op));
	order = malloc(s->nops * sizeof(*order));
	if (!k->call_op || !order) {
		free(k->call_op);
		free(order);
		k->call_op = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < s->nops; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, s->nops, sizeof(*order), cmp_op, (void *)s);
	for (i = 0; i < s->ncalls; i++)
		k->call_op[i] = enclosing_op(s, order, s->nops, &s->calls[i]);
	free(order);
	return 0;
}

void kineto_ids_free(struct kineto_ids *k)
{
	free(k->call_op);
	k->call_op = NULL;
}

void kineto_header(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct proc_target *p = c->proc;
	int world = p->ri.world_size > 0 ? p->ri.world_size : 1;
	uint64_t base = 0;

	/* A process without a rank (a launcher) must not read as rank 0. */
	if (p->rank != PROC_NO_RANK)
		ob_printf(f, "\"distributedInfo\":{\"backend\":\"%s\",\"rank\": %d,\"world_size\": %d",
			  c->seg->ncolls ? "gloo" : "unknown", p->rank, world);
	if (p->rank != PROC_NO_RANK) {
		trace_coll_pg_config(f, c); /* the process groups its collectives named */
		ob_lit(f, "},\n");
	}
	/* The wall clock of ts 0: ts are CLOCK_MONOTONIC microseconds. */
	if (c->meta && c->meta->real_at_start_ns > c->meta->mono_at_start_ns)
		base = c->meta->real_at_start_ns - c->meta->mono_at_start_ns;
	ob_printf(f, "\"baseTimeNanoseconds\":%" PRIu64 ",\n", base);
}

static void ev_idx(struct obuf *f, struct kineto_ids *k)
{
	ob_lit(f, ",\"Ev Idx\":");
	ob_u64(f, k->ev_idx++);
}

void kineto_op_args(struct obuf *f, struct kineto_ids *k, size_t op)
{
	ob_lit(f, ",\"External id\":");
	ob_u64(f, (uint64_t)op + 1);
	ev_idx(f, k);
}

static uint32_t call_ext(const struct kineto_ids *k, size_t call)
{
	return k->call_op ? k->call_op[call] : 0;
}

void kineto_call_args(struct obuf *f, struct kineto_ids *k, size_t call)
{
	uint32_t ext = call_ext(k, call);

	if (ext) {
		ob_lit(f, ",\"External id\":");
		ob_u64(f, ext);
	}
	ev_idx(f, k);
}

void kineto_gpu_args(struct obuf *f, struct kineto_ids *k, const struct seg_output_ctx *c,
		     const struct gpu_activity *a)
{
	uint64_t dur = span_u64(a->start, a->end);
	uint32_t ext = 0;

	if (a->call >= 0 && (size_t)a->call < c->seg->ncalls)
		ext = call_ext(k, (size_t)a->call);
	if (ext) {
		ob_lit(f, ",\"External id\":");
		ob_u64(f, ext);
	}
	if (a->kind == FVBPF_GPU_KERNEL)
		ob_printf(f, ",\"registers per thread\":%u,\"shared memory\":%" PRId64, a->registers,
			  (int64_t)a->static_smem + a->dynamic_smem);
	if (a->kind == FVBPF_GPU_MEMCPY || a->kind == FVBPF_GPU_MEMSET)
		ob_printf(f, ",\"memory bandwidth (GB/s)\":%.3f",
			  dur ? (double)a->bytes / (double)dur : 0.0);
	if (a->kind == FVBPF_GPU_SYNC) {
		ob_lit(f, ",\"cuda_sync_kind\":");
		ob_json_string(f, kineto_sync_name(a->copy_kind));
	}
	ev_idx(f, k);
}

const char *kineto_sync_name(uint8_t type)
{
	/* CUpti_ActivitySynchronizationType */
	switch (type) {
	case 1: return "Event Sync";
	case 2: return "Stream Wait Event";
	case 3: return "Stream Sync";
	case 4: return "Context Sync";
	default: return "Sync";
	}
}

void kineto_step_slice(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint32_t tid = s->nslices ? s->slices[0].tid : s->pid;

	ob_printf(f, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%u\","
		  "\"pid\":%u,\"tid\":%u,\"ts\":", s->seq, s->pid, tid);
	ob_us(f, s->start_ns);
	ob_lit(f, ",\"dur\":");
	ob_us(f, span_u64(s->start_ns, s->end_ns));
	ob_lit(f, ",\"args\":{\"fvbpf\":\"the segment\"");
	if (s->incomplete)
		ob_lit(f, ",\"incomplete\":true");
	if (s->started_before_attach)
		ob_lit(f, ",\"started_before_attach\":true");
	ob_lit(f, "}}");
}

struct track_span {
	uint32_t device, stream;
	uint64_t start, end;
};

/* The GPU work launched from inside @sl, per stream (at most
 * GPU_ANNOT_TRACKS streams); how many spans. */
static size_t slice_gpu_spans(const struct segment *s, const struct seg_slice *sl,
			      struct track_span *t)
{
	size_t i, j, n = 0;

	for (i = 0; i < s->ngpu; i++) {
		const struct gpu_activity *a = &s->gpu[i];
		const struct api_call *call;

		if (a->call < 0 || (size_t)a->call >= s->ncalls || a->kind == FVBPF_GPU_SYNC)
			continue;
		call = &s->calls[a->call];
		if (call->tid != sl->tid || call->start_ns < sl->start_ns || call->start_ns > sl->end_ns)
			continue;
		for (j = 0; j < n; j++)
			if (t[j].device == a->device && t[j].stream == a->stream)
				break;
		if (j == n) {
			if (n == GPU_ANNOT_TRACKS)
				continue;
			t[n++] = (struct track_span){ a->device, a->stream, a->start, a->end };
			continue;
		}
		if (a->start < t[j].start)
			t[j].start = a->start;
		if (a->end > t[j].end)
			t[j].end = a->end;
	}
	return n;
}

void kineto_gpu_annotations(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	struct track_span t[GPU_ANNOT_TRACKS];
	size_t i, j, n;

	if (!s->ngpu || !s->nslices || s->nslices > GPU_ANNOT_WORK_MAX / s->ngpu)
		return;
	for (i = 0; i < s->nslices; i++) {
		n = slice_gpu_spans(s, &s->slices[i], t);
		for (j = 0; j < n; j++) {
			ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"fvbpf.region::");
			ob_json_chars(f, c->reg->defs[s->slices[i].region].name);
			ob_printf(f, "\",\"pid\":%u,\"tid\":%u,\"ts\":", t[j].device, t[j].stream);
			ob_us(f, t[j].start);
			ob_lit(f, ",\"dur\":");
			ob_us(f, span_u64(t[j].start, t[j].end));
			ob_lit(f, ",\"args\":{\"device\":");
			ob_u64(f, t[j].device);
			ob_lit(f, ",\"stream\":");
			ob_u64(f, t[j].stream);
			ob_lit(f, "}}");
		}
	}
}
