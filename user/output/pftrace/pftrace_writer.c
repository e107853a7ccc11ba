// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Perfetto's native trace (protos/perfetto/trace/trace_packet.proto).  The
 * layout, chosen for size:
 *   - sequence 1: the track descriptors (the process, its threads, one
 *     track per GPU device and per stream, and an "fvbpf segment" track
 *     whose one slice carries the segment's metadata as debug annotations);
 *   - one packet sequence per track after that: its first packet clears the
 *     incremental state, sets TracePacketDefaults (the track, and clock 64
 *     as the timestamp clock) and a ClockSnapshot that makes clock 64 an
 *     incremental clock equal to CLOCK_MONOTONIC; every later packet is one
 *     TrackEvent (SLICE_BEGIN / SLICE_END) whose timestamp is the delta
 *     from the packet before, with names and categories interned
 *     (InternedData) the first time the sequence uses them.
 * Launch -> kernel arrows are flow_ids / terminating_flow_ids (the CUPTI
 * correlation id).  Slices on a track must nest: a slice that outlives its
 * parent is ended with the parent.  The interned strings are pf_strtab.c's,
 * the segment slice's annotations pftrace_meta.c's, the track descriptors
 * pftrace_tracks.c's, --with-stack's annotations and python_function
 * tracks pftrace_pystack.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "probes/cuda_api.h"
#include "output/pftrace/pb_writer.h"
#include "output/pftrace/pf_strtab.h"
#include "output/pftrace/pftrace_fields.h"
#include "output/pftrace/pftrace_meta.h"
#include "output/pftrace/pftrace_dl.h"
#include "output/pftrace/pftrace_priv.h"
#include "output/pftrace/pftrace_pystack.h"
#include "output/pftrace/pftrace_writer.h"
#include "output/seg_tids.h"
#include "util/text_out.h"
#include "util/text_sanitize.h"
#include "probes/torch_ops.h"
#include "output/json/trace_writer.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint32_t pf_cpu_track(const struct pf *p, uint32_t tid)
{
	uint32_t *t = bsearch(&tid, p->cpu, p->ncpu, sizeof(*t), cmp_u32);

	return t ? (uint32_t)(1 + (t - p->cpu)) : 0;
}

#define SYNC_TRACK(stream) (0x40000000u | (stream))

static uint32_t gpu_tid(const struct gpu_activity *a)
{
	return a->kind == FVBPF_GPU_SYNC ? SYNC_TRACK(a->stream) : a->stream;
}

static uint32_t gpu_track(const struct pf *p, const struct gpu_activity *a)
{
	uint64_t key = (uint64_t)a->device << 32 | gpu_tid(a);
	uint64_t *t = bsearch(&key, p->gpu, p->ngpu, sizeof(*t), cmp_u64);

	return t ? (uint32_t)(1 + p->ncpu + (size_t)(t - p->gpu)) : 0;
}

static size_t uniq_u64(uint64_t *v, size_t n)
{
	size_t i, m = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		if (!m || v[i] != v[m - 1])
			v[m++] = v[i];
	return m;
}

static int build_tracks(struct pf *p, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	size_t i;
	int ret;

	long ncpu = seg_tids(s, &p->cpu);

	if (ncpu < 0)
		return (int)ncpu;
	p->ncpu = (size_t)ncpu;
	p->gpu = malloc((s->ngpu + 1) * sizeof(*p->gpu));
	if (!p->gpu)
		return -ENOMEM;
	for (i = 0; i < s->ngpu; i++)
		p->gpu[i] = (uint64_t)s->gpu[i].device << 32 | gpu_tid(&s->gpu[i]);
	p->ngpu = uniq_u64(p->gpu, s->ngpu);
	ret = pf_py_tracks(p, c);
	/* past the process's (1 + ncpu + ngpu + npy) and the devices' */
	p->dl_base = 2 + p->ncpu + 2 * p->ngpu + p->npy;
	return ret;
}

static void add_slice_iid(struct pf *p, uint32_t track, uint64_t start, uint64_t dur,
			  uint32_t name, uint32_t cat, uint32_t flow_out, uint32_t flow_in)
{
	struct pf_slice *sl;

	if (p->err || p->names.err || p->cats.err) {
		if (!p->err)
			p->err = -ENOMEM;
		return;
	}
	if (p->nsl == p->capsl) {
		size_t cap = p->capsl ? p->capsl * 2 : 256;

		sl = realloc(p->sl, cap * sizeof(*sl));
		if (!sl) {
			p->err = -ENOMEM;
			return;
		}
		/* The sorted copy is held beside the segment: --max-memory counts it. */
		if (p->mem)
			budget_charge(p->mem, (cap - p->capsl) * sizeof(*sl));
		p->sl = sl;
		p->capsl = cap;
	}
	sl = &p->sl[p->nsl];
	sl->start = start;
	sl->end = start + dur < start ? UINT64_MAX : start + dur;
	sl->track = track;
	sl->name = name;
	sl->cat = cat;
	sl->flow_out = flow_out;
	sl->flow_in = flow_in;
	sl->order = (uint32_t)p->nsl++;
	sl->stack = 0;
	sl->pyline = 0;
	sl->more_in = 0;
}

void pf_add_slice(struct pf *p, uint32_t track, uint64_t start, uint64_t dur, const char *name,
		  const char *cat, uint32_t flow_out, uint32_t flow_in)
{
	uint32_t n = strtab_intern(&p->names, name), k = strtab_intern(&p->cats, cat);

	add_slice_iid(p, track, start, dur, n, k, flow_out, flow_in);
}

/* The same slices, names and times as trace_writer.c's "X" events. */
static void collect(struct pf *p, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint32_t last_region = UINT32_MAX, name_iid = 0, cat_iid, tid = 0, track = 0;
	char name[1024];
	size_t i;

	/* Slices come in runs of one region and one thread: look each up once per run. */
	cat_iid = strtab_intern(&p->cats, "user_annotation");
	for (i = 0; i < s->nslices; i++) {
		const struct seg_slice *sl = &s->slices[i];

		if (sl->region != last_region) {
			snprintf(name, sizeof(name), "fvbpf.region::%s", c->reg->defs[sl->region].name);
			name_iid = strtab_intern(&p->names, name);
			last_region = sl->region;
		}
		if (!i || sl->tid != tid) {
			tid = sl->tid;
			track = pf_cpu_track(p, tid);
		}
		add_slice_iid(p, track, sl->start_ns, span_u64(sl->start_ns, sl->end_ns), name_iid,
			      cat_iid, 0, 0);
		pf_py_mark(p, c, sl->stack); /* --with-stack */
	}
	for (i = 0; i < s->nops; i++) {
		const struct torch_call *op = &s->ops[i];
		uint64_t end = op->end_ns ? op->end_ns :
			       (s->end_ns > op->start_ns ? s->end_ns : op->start_ns);

		name_table_get(c->knames, op->name, name, sizeof(name));
		pf_add_slice(p, pf_cpu_track(p, op->tid), op->start_ns, span_u64(op->start_ns, end), name,
			     op->kind == TORCH_SCOPE ? "user_annotation" : "cpu_op", 0, 0);
		pf_py_mark(p, c, op->stack);
	}
	for (i = 0; i < s->ncalls; i++) {
		const struct api_call *call = &s->calls[i];
		const struct api_row *r = cuda_api_row(call->api_id);

		if (!r)
			continue;
		pf_add_slice(p, pf_cpu_track(p, call->tid), call->start_ns,
			     span_u64(call->start_ns, call->end_ns), cuda_api_symbol(call->api_id),
			     cuda_api_layer_cat(r->layer),
			     call->correlation && call->gpu_records ? call->correlation : 0, 0);
		pf_py_mark(p, c, call->stack);
	}
	for (i = 0; i < s->ngpu; i++) {
		const struct gpu_activity *a = &s->gpu[i];
		const char *cat;

		trace_gpu_name(c, a, name, sizeof(name));
		cat = trace_gpu_cat(a->kind);
		pf_add_slice(p, gpu_track(p, a), a->start, span_u64(a->start, a->end), name, cat, 0,
			     a->call >= 0 && a->correlation ? a->correlation : 0);
	}
	pf_py_collect(p, c);
	pf_dl_collect(p, c); /* last: its flows end in the slices above */
	if (p->names.err || p->cats.err || p->lines.err)
		p->err = -ENOMEM;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct pf_slice *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1; /* the enclosing one first */
	return x->order < y->order ? -1 : x->order > y->order;
}

static void seq_start(struct pf *p, struct pf_seq *q, size_t track, uint64_t base)
{
	size_t m, mm, m3;

	q->id = (uint32_t)track + 2;
	q->last_ts = base;
	memset(q->named, 0, p->names.n + 1);
	memset(q->catted, 0, p->cats.n + 1);
	memset(q->lined, 0, p->lines.n + 1);
	q->da_named = false;
	pb_uint(&p->b, TP_SEQ_ID, q->id);
	pb_uint(&p->b, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	m = pb_begin(&p->b, TP_DEFAULTS);
	pb_uint(&p->b, DEF_CLOCK_ID, CLOCK_SEQ_INCR);
	mm = pb_begin(&p->b, DEF_TRACK_EVENT);
	pb_uint(&p->b, TED_TRACK_UUID, track_uuid(track));
	pb_end(&p->b, mm);
	pb_end(&p->b, m);
	m = pb_begin(&p->b, TP_CLOCK_SNAPSHOT);
	mm = pb_begin(&p->b, CS_CLOCKS);
	pb_uint(&p->b, CLK_ID, CLOCK_MONOTONIC_ID);
	pb_uint(&p->b, CLK_TIMESTAMP, base);
	pb_end(&p->b, mm);
	m3 = pb_begin(&p->b, CS_CLOCKS);
	pb_uint(&p->b, CLK_ID, CLOCK_SEQ_INCR);
	pb_uint(&p->b, CLK_TIMESTAMP, base);
	pb_uint(&p->b, CLK_INCREMENTAL, 1);
	pb_end(&p->b, m3);
	pb_end(&p->b, m);
	pf_put_packet(p);
}

/* The flows ending in @sl past its flow_in (pf.more_in is in slice order). */
static void more_flows_in(struct pf *p, const struct pf_slice *sl)
{
	size_t lo = 0, hi = p->nmore_in, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->more_in[mid].order < sl->order)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->nmore_in && p->more_in[lo].order == sl->order; lo++)
		pb_fixed64(&p->b, TE_TERMINATING_FLOW_IDS, p->more_in[lo].flow);
}

/* Begin of @sl (or its end when @sl is NULL) at @ts; @annotate writes debug annotations. */
static void event(struct pf *p, struct pf_seq *q, const struct pf_slice *sl, uint64_t ts,
		  void (*annotate)(struct pb_buf *, const struct seg_output_ctx *),
		  const struct seg_output_ctx *c)
{
	size_t m, mm;

	pb_uint(&p->b, TP_TIMESTAMP, ts - q->last_ts);
	q->last_ts = ts;
	pb_uint(&p->b, TP_SEQ_ID, q->id);
	if (sl && (!q->named[sl->name] || !q->catted[sl->cat] || pf_py_needs_interning(p, q, sl))) {
		pb_uint(&p->b, TP_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
		m = pb_begin(&p->b, TP_INTERNED_DATA);
		pf_intern_once(p, ID_EVENT_CATEGORIES, sl->cat, &p->cats, q->catted);
		pf_intern_once(p, ID_EVENT_NAMES, sl->name, &p->names, q->named);
		pf_py_intern(p, q, sl);
		pb_end(&p->b, m);
	}
	mm = pb_begin(&p->b, TP_TRACK_EVENT);
	pb_uint(&p->b, TE_TYPE, sl ? SLICE_BEGIN : SLICE_END);
	if (sl) {
		pb_uint(&p->b, TE_CATEGORY_IIDS, sl->cat);
		pb_uint(&p->b, TE_NAME_IID, sl->name);
		if (sl->flow_out)
			pb_fixed64(&p->b, TE_FLOW_IDS, sl->flow_out);
		if (sl->flow_in)
			pb_fixed64(&p->b, TE_TERMINATING_FLOW_IDS, sl->flow_in);
		if (sl->more_in)
			more_flows_in(p, sl);
		if (annotate)
			annotate(&p->b, c);
		pf_py_annotations(p, sl);
	}
	pb_end(&p->b, mm);
	pf_put_packet(p);
}

static void emit_track(struct pf *p, struct pf_seq *q, size_t track, const struct pf_slice *sl,
		       size_t n, uint64_t *stack, const struct seg_output_ctx *c)
{
	size_t i, sp = 0;
	uint64_t end;

	seq_start(p, q, track, sl[0].start);
	for (i = 0; i < n && !p->err; i++) {
		while (sp && stack[sp - 1] <= sl[i].start)
			event(p, q, NULL, stack[--sp], NULL, c);
		end = sl[i].end;
		if (sp && end > stack[sp - 1])
			end = stack[sp - 1]; /* outlives its parent: ended with it */
		event(p, q, &sl[i], sl[i].start, track ? NULL : pftrace_segment_annotations, c);
		stack[sp++] = end;
	}
	while (sp && !p->err)
		event(p, q, NULL, stack[--sp], NULL, c);
}

int pftrace_write(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	struct pf p = { 0 };
	struct pf_seq q = { 0 };
	uint64_t *stack = NULL;
	char label[160];
	size_t i, j;

	pb_init(&p.b);
	p.out = malloc(sizeof(*p.out));
	if (!p.out)
		return -ENOMEM;
	ob_init(p.out, f);
	p.mem = s->mem;
	p.err = build_tracks(&p, c);
	if (!p.err) {
		/* The metadata slice spans the segment. */
		snprintf(label, sizeof(label), "segment %04u: %s", s->seq, c->reg->defs[s->region].name);
		pf_add_slice(&p, 0, s->start_ns, span_u64(s->start_ns, s->end_ns), label, "fvbpf", 0, 0);
		collect(&p, c);
	}
	if (!p.err) {
		qsort(p.sl, p.nsl, sizeof(*p.sl), cmp_slice);
		stack = malloc((p.nsl + 1) * sizeof(*stack));
		q.named = malloc(p.names.n + 1);
		q.catted = malloc(p.cats.n + 1);
		q.lined = malloc(p.lines.n + 1);
		if (!stack || !q.named || !q.catted || !q.lined)
			p.err = -ENOMEM;
	}
	if (!p.err)
		pf_descriptors(&p, c);
	for (i = 0; i < p.nsl && !p.err; i = j) {
		for (j = i + 1; j < p.nsl && p.sl[j].track == p.sl[i].track; j++)
			;
		emit_track(&p, &q, p.sl[i].track, &p.sl[i], j - i, stack, c);
	}
	free(stack);
	free(q.named);
	free(q.catted);
	free(q.lined);
	free(p.sl);
	if (p.mem)
		budget_release(p.mem, p.capsl * sizeof(*p.sl));
	free(p.cpu);
	free(p.gpu);
	free(p.py);
	free(p.more_in);
	strtab_free(&p.names);
	strtab_free(&p.cats);
	strtab_free(&p.lines);
	pb_free(&p.b);
	if (!p.err)
		p.err = ob_flush(p.out);
	free(p.out);
	if (!p.err && ferror(f))
		p.err = -(errno ? errno : EIO);
	return p.err;
}
