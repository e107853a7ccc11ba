// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "proc/inject/inject.h"
#include "util/json_writer.h"
#include "output/json/fwdbwd.h"
#include "output/json/trace_colls.h"
#include "output/json/trace_dl.h"
#include "output/json/trace_where.h"
#include "output/memory/mem_output.h"
#include "output/seg_meta.h"
#include "output/seg_tids.h"
#include "output/json/slice_heads.h"
#include "util/text_out.h"
#include "probes/torch_ops.h"
#include "output/json/trace_kineto.h"
#include "pipeline/torch/torch_shapes.h"
#include "output/stacks/pystack_trace.h"
#include "output/json/trace_colls.h"
#include "output/json/trace_writer.h"

/* @pid is 64-bit: process ids and GPU device numbers (any uint32) share it. */
/* Metadata carries a ts (the segment's start) as Kineto's does. */
static uint64_t meta_ts_of(const struct segment *s)
{
	return s->start_ns;
}

static void meta_event(struct obuf *f, uint64_t ts, int64_t pid, uint32_t tid,
		       const char *what, const char *key, const char *sval, long ival)
{
	ob_lit(f, ",\n{\"ph\":\"M\",\"pid\":");
	ob_i64(f, pid);
	ob_lit(f, ",\"tid\":");
	ob_u64(f, tid);
	ob_lit(f, ",\"name\":\"");
	ob_puts(f, what);
	ob_lit(f, "\",\"args\":{\"");
	ob_puts(f, key);
	ob_lit(f, "\":");
	if (sval)
		ob_json_string(f, sval);
	else
		ob_i64(f, ival);
	ob_lit(f, "},\"ts\":");
	ob_us(f, ts);
	ob_char(f, '}');
}


static void slice_span(struct obuf *f, int64_t pid, uint64_t tid, uint64_t start, uint64_t end)
{
	trace_where_when(f, pid, tid, start);
	ob_lit(f, ",\"dur\":");
	ob_us(f, span_u64(start, end));
}

/* Thread tracks of the segment: its threads, sorted, the main thread first. */
static void thread_metadata(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint32_t *tids;
	long i, n = seg_tids(s, &tids);
	long sort;

	for (i = 0; i < n; i++) {
		meta_event(f, meta_ts_of(s), s->pid, tids[i], "thread_name", "name",
			   proc_thread_name(c->proc, tids[i]), 0);
		sort = tids[i] == (uint32_t)s->pid ? 0 : (long)tids[i];
		meta_event(f, meta_ts_of(s), s->pid, tids[i], "thread_sort_index", "sort_index", NULL, sort);
	}
	free(tids);
}

/* A slice's opening up to its depth, the name escaped each time (the
 * fallback of slice_heads.h). */
static void slice_head_slow(struct obuf *f, const struct seg_output_ctx *c, const struct seg_slice *sl)
{
	const char *name = c->reg->defs[sl->region].name;

	ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"fvbpf.region::");
	ob_json_chars(f, name);
	ob_char(f, '"');
	slice_span(f, c->seg->pid, sl->tid, sl->start_ns, sl->end_ns);
	ob_lit(f, ",\"args\":{\"region\":");
	ob_json_string(f, name);
	ob_lit(f, ",\"depth\":");
}

static void region_slices(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	const struct seg_slice *sl;
	const struct slice_head *sh;
	struct slice_heads heads;
	size_t i;

	slice_heads_init(&heads, c->reg, s->pid);
	for (i = 0; i < s->nslices; i++) {
		sl = &s->slices[i];
		sh = slice_heads_get(&heads, sl->region);
		if (sh) {
			ob_write(f, sh->head, sh->nhead);
			ob_u64(f, sl->tid);
			ob_lit(f, ",\"ts\":");
			ob_us(f, sl->start_ns);
			ob_lit(f, ",\"dur\":");
			ob_us(f, span_u64(sl->start_ns, sl->end_ns));
			ob_write(f, sh->args, sh->nargs);
		} else {
			slice_head_slow(f, c, sl);
		}
		ob_u64(f, sl->depth);
		if (sl->flags & SLICE_OPEN_AT_END)
			ob_lit(f, ",\"incomplete\":true");
		if (sl->flags & SLICE_BEFORE_ATTACH)
			ob_lit(f, ",\"started_before_attach\":true");
		if (sl->flags & SLICE_FORCED_CLOSE)
			ob_lit(f, ",\"closed_by_enclosing_end\":true");
		pystack_trace_args(f, c, sl->stack); /* --with-stack */
		ob_lit(f, "}}");
	}
	slice_heads_free(&heads);
}

/* --record-shapes, --with-flops: what the op's shapes record holds, as
 * Kineto's args (the record's JSON fields are fvbpf's own digits and names). */
static void shape_args(struct obuf *f, const struct seg_output_ctx *c, const struct torch_call *op)
{
	struct torch_shapes_view v;
	char *rec;

	if (op->flags & TORCH_CALL_SHAPES_UNKNOWN) {
		ob_lit(f, ",\"shapes_unknown\":true");
		return;
	}
	if (!op->shapes || !(rec = malloc(TORCH_SHAPES_MAX)))
		return;
	name_table_get(c->knames, op->shapes, rec, TORCH_SHAPES_MAX);
	if (!torch_shapes_split(rec, &v)) {
		if (c->record_shapes) {
			ob_lit(f, ",\"Input Dims\":");
			ob_write(f, v.dims, v.dims_len);
			ob_lit(f, ",\"Input type\":");
			ob_write(f, v.types, v.types_len);
		}
		if (c->with_flops && v.flops) {
			ob_lit(f, ",\"flops\":");
			ob_u64(f, v.flops);
		}
		if (c->with_flops && v.extra) {
			ob_lit(f, ",\"extra_flops\":");
			ob_u64(f, v.extra);
		}
	}
	free(rec);
}

/* Torch operators and nodes (cpu_op) and scopes (user_annotation), as
 * Kineto writes them; CUDA calls made inside nest under them by time. */
static void torch_slices(struct obuf *f, const struct seg_output_ctx *c, struct kineto_ids *k)
{
	const struct segment *s = c->seg;
	const struct torch_call *op;
	char name[TORCH_NAME_MAX + 32];
	uint64_t end;
	size_t i;

	for (i = 0; i < s->nops; i++) {
		op = &s->ops[i];
		end = op->end_ns ? op->end_ns : (s->end_ns > op->start_ns ? s->end_ns : op->start_ns);
		name_table_get(c->knames, op->name, name, sizeof(name));
		if (op->kind == TORCH_SCOPE)
			ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
		else
			ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":");
		ob_json_string(f, name);
		slice_span(f, s->pid, op->tid, op->start_ns, end);
		ob_lit(f, ",\"args\":{");
		if (op->overload) {
			name_table_get(c->knames, op->overload, name, sizeof(name));
			ob_lit(f, "\"overload\":");
			ob_json_string(f, name);
			ob_char(f, ',');
		}
		ob_lit(f, "\"torch_depth\":");
		ob_u64(f, op->depth);
		if (!op->end_ns)
			ob_lit(f, ",\"incomplete\":true");
		else if (op->flags & TORCH_CALL_NO_RETURN)
			ob_lit(f, ",\"did_not_return\":true");
		if (op->flags & TORCH_CALL_NAME_CUT)
			ob_lit(f, ",\"name_cut\":true"); /* the scope's name is longer */
		kineto_op_args(f, k, i);
		shape_args(f, c, op);
		pystack_trace_op_args(f, c, op); /* sequence numbers, --with-stack */
		ob_lit(f, "}}");
	}
}

/* Kineto's fwdbwd flows: from a forward operator to the backward node of
 * its sequence number (fwdbwd.h), numbered from 1 in each segment. */
static void fwdbwd_flows(struct obuf *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	struct fwdbwd_pair *p;
	long n = fwdbwd_pairs(s, &p), i;

	for (i = 0; i < n; i++) {
		ob_lit(f, ",\n{\"ph\":\"s\",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\",\"id\":");
		ob_u64(f, (uint64_t)i + 1);
		trace_where_when(f, s->pid, s->ops[p[i].fwd].tid, s->ops[p[i].fwd].start_ns);
		ob_lit(f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\",\"id\":");
		ob_u64(f, (uint64_t)i + 1);
		trace_where_when(f, s->pid, s->ops[p[i].bwd].tid, s->ops[p[i].bwd].start_ns);
		ob_char(f, '}');
	}
	free(p);
}

static void api_slices(struct obuf *f, const struct seg_output_ctx *c, struct kineto_ids *k)
{
	const struct segment *s = c->seg;
	const struct api_call *call;
	const struct api_row *r;
	char kernel[512], ret[32];
	size_t i;

	for (i = 0; i < s->ncalls; i++) {
		call = &s->calls[i];
		r = cuda_api_row(call->api_id);
		if (!r)
			continue;
		ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"");
		ob_puts(f, cuda_api_layer_cat(r->layer));
		ob_lit(f, "\",\"name\":\"");
		ob_puts(f, cuda_api_symbol(call->api_id));
		ob_char(f, '"');
		slice_span(f, s->pid, call->tid, call->start_ns, call->end_ns);
		ob_lit(f, ",\"args\":{\"return\":");
		ob_json_string(f, call->no_return ? "(did not return)" :
			       cuda_api_ret_name(call, ret, sizeof(ret)));
		if (call->kernel) {
			name_table_get(c->knames, call->kernel, kernel, sizeof(kernel));
			ob_lit(f, ",\"kernel\":");
			ob_json_string(f, kernel);
		}
		cuda_api_write_args(f, call);
		if (call->depth)
			ob_lit(f, ",\"nested_in_call\":true");
		if (call->correlation) {
			ob_lit(f, ",\"correlation\":");
			ob_u64(f, call->correlation);
		}
		kineto_call_args(f, k, i);
		pystack_trace_args(f, c, call->stack); /* --with-stack */
		ob_lit(f, "}}");
		/* The launch end of its launch -> GPU arrows. */
		if (call->correlation && call->gpu_records) {
			ob_lit(f, ",\n{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
			ob_u64(f, call->correlation);
			trace_where_when(f, s->pid, call->tid, call->start_ns);
			ob_char(f, '}');
		}
	}
}

const char *trace_gpu_cat(uint16_t kind)
{
	switch (kind) {
	case FVBPF_GPU_KERNEL: return "kernel";
	case FVBPF_GPU_MEMCPY: return "gpu_memcpy";
	case FVBPF_GPU_MEMSET: return "gpu_memset";
	default: return "cuda_sync"; /* Kineto's name: HTA looks for it */
	}
}

void trace_gpu_name(const struct seg_output_ctx *c, const struct gpu_activity *a, char *name,
		    size_t len)
{
	if (a->kind == FVBPF_GPU_KERNEL)
		name_table_get(c->knames, a->name, name, len);
	else if (a->kind == FVBPF_GPU_MEMCPY)
		snprintf(name, len, "Memcpy %s", trace_copy_kind(a->copy_kind));
	else
		snprintf(name, len, "%s",
			 a->kind == FVBPF_GPU_MEMSET ? "Memset" : kineto_sync_name(a->copy_kind));
}

const char *trace_copy_kind(uint8_t kind)
{
	static const char *const names[] = {
		"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "Unknown";
}

/* Synchronisation records get a track of their own per stream: they span
 * the waiting, not the stream's work, and would break its nesting. */
#define SYNC_TRACK(stream) (0x40000000u | (stream))

static uint32_t gpu_tid(const struct gpu_activity *a)
{
	return a->kind == FVBPF_GPU_SYNC ? SYNC_TRACK(a->stream) : a->stream;
}

struct gpu_track {
	uint64_t key;           /* device << 32 | track tid */
	uint32_t stream;
	bool sync;
};

static int cmp_track(const void *a, const void *b)
{
	uint64_t x = ((const struct gpu_track *)a)->key, y = ((const struct gpu_track *)b)->key;

	return x < y ? -1 : x > y;
}

/*
 * GPU tracks: one process per device ("GPU 0"), one thread per stream.
 * Devices and streams are the target's numbers, as many as it likes: the
 * tracks are found by sorting, not by a search per record.
 */
static void gpu_metadata(struct obuf *f, const struct segment *s)
{
	struct gpu_track *t;
	uint32_t dev, prev_dev = 0;
	size_t i, n;
	char name[48];

	t = malloc((s->ngpu ? s->ngpu : 1) * sizeof(*t));
	if (!t)
		return;
	for (i = 0; i < s->ngpu; i++) {
		t[i].key = (uint64_t)s->gpu[i].device << 32 | gpu_tid(&s->gpu[i]);
		t[i].stream = s->gpu[i].stream;
		t[i].sync = s->gpu[i].kind == FVBPF_GPU_SYNC;
	}
	qsort(t, s->ngpu, sizeof(*t), cmp_track);
	for (i = n = 0; i < s->ngpu; i++) {
		if (n && t[i].key == t[i - 1].key)
			continue;
		dev = (uint32_t)(t[i].key >> 32);
		if (!n++ || dev != prev_dev) {
			snprintf(name, sizeof(name), "GPU %u", dev);
			meta_event(f, meta_ts_of(s), dev, 0, "process_name", "name", name, 0);
			meta_event(f, meta_ts_of(s), dev, 0, "process_sort_index", "sort_index", NULL,
				   1000000 + (long)dev);
		}
		prev_dev = dev;
		snprintf(name, sizeof(name), t[i].sync ? "sync (stream %u)" : "stream %u", t[i].stream);
		meta_event(f, meta_ts_of(s), dev, (uint32_t)t[i].key, "thread_name", "name", name, 0);
	}
	free(t);
}

static void gpu_slices(struct obuf *f, const struct seg_output_ctx *c, struct kineto_ids *k)
{
	const struct segment *s = c->seg;
	char name[1024];
	size_t i;

	for (i = 0; i < s->ngpu; i++) {
		const struct gpu_activity *a = &s->gpu[i];
		uint64_t dur = span_u64(a->start, a->end);

		trace_gpu_name(c, a, name, sizeof(name));
		ob_lit(f, ",\n{\"ph\":\"X\",\"cat\":\"");
		ob_puts(f, trace_gpu_cat(a->kind));
		ob_lit(f, "\",\"name\":");
		ob_json_string(f, name);
		slice_span(f, a->device, gpu_tid(a), a->start, a->end);
		ob_lit(f, ",\"args\":{\"correlation\":");
		ob_u64(f, a->correlation);
		ob_lit(f, ",\"device\":");
		ob_u64(f, a->device);
		ob_lit(f, ",\"stream\":");
		ob_u64(f, a->stream);
		if (a->kind == FVBPF_GPU_KERNEL)
			ob_printf(f, ",\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"registers_per_thread\":%u,"
				"\"shared_memory\":%" PRId64 ",\"static_shared_memory\":%d,"
				"\"dynamic_shared_memory\":%d",
				a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1], a->block[2],
				/* The agent's numbers: two int32 can overflow an int. */
				a->registers, (int64_t)a->static_smem + a->dynamic_smem, a->static_smem,
				a->dynamic_smem);
		if (a->kind == FVBPF_GPU_MEMCPY || a->kind == FVBPF_GPU_MEMSET)
			ob_printf(f, ",\"bytes\":%" PRIu64 ",\"memory_bandwidth_GBps\":%.3f", a->bytes,
				dur ? (double)a->bytes / (double)dur : 0.0);
		kineto_gpu_args(f, k, c, a);
		ob_lit(f, "}}");
		if (a->call >= 0 && a->correlation) {
			ob_lit(f, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
			ob_u64(f, a->correlation);
			trace_where_when(f, a->device, gpu_tid(a), a->start);
			ob_char(f, '}');
		}
	}
}

struct meta_out {
	struct obuf *f;
	size_t n;
};

/* One "key":value of otherData (seg_meta.h); the first without a comma. */
static void meta_field(void *out, const struct seg_meta_field *m, const union seg_meta_value *v)
{
	struct meta_out *mo = out;
	struct obuf *f = mo->f;
	size_t i;

	if (mo->n++)
		ob_char(f, ',');
	ob_char(f, '"');
	ob_puts(f, m->key);
	ob_lit(f, "\":");
	switch (m->kind) {
	case SM_STR: ob_json_string(f, v->s); break;
	case SM_INT: ob_i64(f, v->i); break;
	case SM_UINT: ob_u64(f, v->u); break;
	case SM_BOOL: ob_puts(f, v->b ? "true" : "false"); break;
	case SM_US: ob_us(f, v->u); break;
	case SM_COUNTS:
		for (i = 0; i < 3; i++) {
			ob_puts(f, i ? ",\"" : "{\"");
			ob_puts(f, seg_meta_count_keys[i]);
			ob_lit(f, "\":");
			ob_u64(f, seg_meta_count(&v->n, i));
		}
		ob_char(f, '}');
		break;
	}
}

static void segment_metadata(struct obuf *f, const struct seg_output_ctx *c)
{
	struct meta_out mo = { f, 0 };

	ob_lit(f, "\"otherData\":{");
	seg_meta_each(c, seg_meta_trace_order, SMG_COUNT, meta_field, &mo);
	ob_lit(f, "},\n");
}

int trace_write(FILE *out, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	struct kineto_ids k;
	struct obuf *f;
	char label[160];
	int ret;

	f = malloc(sizeof(*f));
	if (!f || kineto_ids_init(&k, c)) {
		free(f);
		return -ENOMEM;
	}
	ob_init(f, out);

	ob_lit(f, "{\n\"schemaVersion\":1,\n\"displayTimeUnit\":\"ns\",\n");
	kineto_header(f, c);
	segment_metadata(f, c);
	ob_lit(f, "\"traceEvents\":[\n");
	seg_output_proc_label(c->proc, s->pid, label, sizeof(label));
	ob_printf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
		s->pid);
	ob_json_string(f, label);
	ob_lit(f, "},\"ts\":");
	ob_us(f, meta_ts_of(s));
	ob_char(f, '}');
	snprintf(label, sizeof(label), "segment %04u: %s%s%s", s->seq, c->reg->defs[s->region].name,
		 s->started_before_attach ? " (started before attach)" : "",
		 s->incomplete ? " (incomplete)" : "");
	meta_event(f, meta_ts_of(s), s->pid, 0, "process_labels", "labels", label, 0);
	meta_event(f, meta_ts_of(s), s->pid, 0, "process_sort_index", "sort_index", NULL, c->proc->rank);
	thread_metadata(f, c);
	region_slices(f, c);
	kineto_step_slice(f, c);
	torch_slices(f, c, &k);
	fwdbwd_flows(f, c);
	mem_trace_events(f, c);
	pystack_trace_slices(f, c);
	api_slices(f, c, &k);
	trace_coll_slices(f, c);
	trace_dl_events(f, c);
	gpu_metadata(f, c->seg);
	gpu_slices(f, c, &k);
	kineto_gpu_annotations(f, c);
	kineto_ids_free(&k);
	ob_lit(f, "\n]");
	pystack_trace_table(f, c);
	ob_lit(f, "\n}\n");
	ret = ob_flush(f);
	free(f);
	if (!ret && ferror(out))
		ret = -(errno ? errno : EIO);
	return ret;
}
