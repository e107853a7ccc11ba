// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/json_writer.h"
#include "util/pair_index.h"
#include "util/row_table.h"
#include "output/mem_output.h"
#include "output/seg_meta.h"
#include "output/summary.h"
#include "util/text_copy.h"
#include "util/text_sanitize.h"
#include "output/torch_summary.h"
#include "output/trace_writer.h"

static void row_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct summary_row *r = arr;

	*name = r[i].name;
	*kind = r[i].kind;
}

/* A new row: its name copied (kernel names can be long; rows must not merge),
 * its kind one of this file's constants. */
static int row_init(void *row, const char *name, const char *kind, void *ctx)
{
	struct summary_row *r = row;

	(void)ctx;
	r->name = strdup(name);
	if (!r->name)
		return -ENOMEM;
	r->kind = kind;
	r->cpu_min_ns = UINT64_MAX;
	r->dev_min_ns = UINT64_MAX;
	return 0;
}

/* Rows are indexed by a hash table: a segment may hold as many distinct
 * kernel names as the target sends.  No budget hook: the summary's
 * table has never been charged to --max-memory. */
static struct summary_row *row_get(struct summary *s, const char *name, const char *kind)
{
	struct row_table t = { &s->rows, &s->n, &s->cap, sizeof(*s->rows), 16, &s->index, row_key,
			       row_init, NULL, NULL };
	void *r;

	return row_table_get(&t, name, kind, &r) ? NULL : r;
}

/* Totals saturate: durations come from the target's own GPU records. */
static void row_add_cpu(struct summary_row *r, uint64_t dur, uint64_t self)
{
	r->count++;
	r->cpu_total_ns = sat_add_u64(r->cpu_total_ns, dur);
	r->cpu_self_ns = sat_add_u64(r->cpu_self_ns, self);
	if (dur < r->cpu_min_ns)
		r->cpu_min_ns = dur;
	if (dur > r->cpu_max_ns)
		r->cpu_max_ns = dur;
}

/* Time of @i's direct children: later slices on its thread, one level deeper,
 * up to the next slice at @i's level or above. */
static uint64_t children_ns(const struct segment *seg, size_t i)
{
	const struct seg_slice *p = &seg->slices[i], *q;
	uint64_t sum = 0;
	size_t j;

	for (j = i + 1; j < seg->nslices; j++) {
		q = &seg->slices[j];
		if (q->tid != p->tid)
			continue;
		if (q->depth <= p->depth)
			break;
		if (q->depth == p->depth + 1)
			sum = sat_add_u64(sum, span_u64(q->start_ns, q->end_ns));
	}
	return sum;
}

static void row_add_dev(struct summary_row *r, uint64_t dur)
{
	r->dev_count++;
	r->dev_total_ns = sat_add_u64(r->dev_total_ns, dur);
	r->dev_self_ns = sat_add_u64(r->dev_self_ns, dur);
	if (dur < r->dev_min_ns)
		r->dev_min_ns = dur;
	if (dur > r->dev_max_ns)
		r->dev_max_ns = dur;
}

static int cmp_span(const void *a, const void *b)
{
	const struct gpu_activity *x = *(const struct gpu_activity *const *)a;
	const struct gpu_activity *y = *(const struct gpu_activity *const *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Time at least one GPU activity of the segment was running. */
static uint64_t busy_ns(const struct segment *seg)
{
	const struct gpu_activity **v;
	uint64_t busy = 0, cur_s = 0, cur_e = 0, end;
	size_t i;

	if (!seg->ngpu)
		return 0;
	v = malloc(seg->ngpu * sizeof(*v));
	if (!v)
		return 0;
	for (i = 0; i < seg->ngpu; i++)
		v[i] = &seg->gpu[i];
	qsort(v, seg->ngpu, sizeof(*v), cmp_span);
	for (i = 0; i < seg->ngpu; i++) {
		if (v[i]->kind == FVBPF_GPU_SYNC)
			continue;
		/* A record that ends before it starts is empty, not 2^64 ns. */
		end = v[i]->end > v[i]->start ? v[i]->end : v[i]->start;
		if (v[i]->start > cur_e) {
			busy = sat_add_u64(busy, cur_e - cur_s);
			cur_s = v[i]->start;
			cur_e = end;
		} else if (end > cur_e) {
			cur_e = end;
		}
	}
	busy = sat_add_u64(busy, cur_e - cur_s);
	free(v);
	return busy;
}

static int add_gpu_rows(struct summary *s, const struct seg_output_ctx *c)
{
	const struct segment *seg = c->seg;
	struct summary_row *r;
	char name[1024];
	uint64_t dur;
	size_t i;

	for (i = 0; i < seg->ngpu; i++) {
		const struct gpu_activity *a = &seg->gpu[i];

		if (a->kind == FVBPF_GPU_SYNC)
			continue;
		dur = span_u64(a->start, a->end);
		if (a->kind == FVBPF_GPU_KERNEL) {
			name_table_get(c->knames, a->name, name, sizeof(name));
			r = row_get(s, name, "kernel");
		} else if (a->kind == FVBPF_GPU_MEMCPY) {
			snprintf(name, sizeof(name), "Memcpy %s", trace_copy_kind(a->copy_kind));
			r = row_get(s, name, "gpu_memcpy");
		} else {
			r = row_get(s, "Memset", "gpu_memset");
		}
		if (!r)
			return -ENOMEM;
		row_add_dev(r, dur);
		s->gpu_total_ns = sat_add_u64(s->gpu_total_ns, dur);
	}
	s->gpu_busy_ns = busy_ns(seg);
	s->has_device_time = seg->ngpu > 0;
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct summary_row *x = a, *y = b;

	if (x->dev_total_ns != y->dev_total_ns)
		return x->dev_total_ns > y->dev_total_ns ? -1 : 1;
	if (x->cpu_total_ns != y->cpu_total_ns)
		return x->cpu_total_ns > y->cpu_total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int add_slice_rows(struct summary *s, const struct seg_output_ctx *c)
{
	const struct segment *seg = c->seg;
	struct summary_row *r;
	uint64_t dur, kids;
	size_t i;

	for (i = 0; i < seg->nslices; i++) {
		r = row_get(s, c->reg->defs[seg->slices[i].region].name, "region");
		if (!r)
			return -ENOMEM;
		dur = span_u64(seg->slices[i].start_ns, seg->slices[i].end_ns);
		kids = children_ns(seg, i);
		row_add_cpu(r, dur, kids < dur ? dur - kids : 0);
	}
	return 0;
}

static int add_call_rows(struct summary *s, const struct seg_output_ctx *c)
{
	const struct segment *seg = c->seg;
	struct summary_row *r;
	char kernel[1024];
	uint64_t dur;
	size_t i;

	for (i = 0; i < seg->ncalls; i++) {
		const struct api_call *call = &seg->calls[i];
		const struct api_row *ar = cuda_api_row(call->api_id);

		/* A driver call inside a runtime call is in its parent's time. */
		if (!ar || call->depth)
			continue;
		dur = span_u64(call->start_ns, call->end_ns);
		r = row_get(s, cuda_api_symbol(call->api_id), cuda_api_layer_cat(ar->layer));
		if (!r)
			return -ENOMEM;
		row_add_cpu(r, dur, dur);
		if (call->kernel && c->knames) {
			name_table_get(c->knames, call->kernel, kernel, sizeof(kernel));
			r = row_get(s, kernel, "kernel");
			if (!r)
				return -ENOMEM;
			row_add_cpu(r, dur, dur);
		}
	}
	return 0;
}

static int torch_row(void *ctx, const char *name, const char *kind, uint64_t cpu_ns,
		     uint64_t self_ns, uint64_t dev_ns, uint64_t self_dev_ns)
{
	struct summary_row *r = row_get(ctx, name, kind);

	if (!r)
		return -ENOMEM;
	row_add_cpu(r, cpu_ns, self_ns);
	r->dev_total_ns = sat_add_u64(r->dev_total_ns, dev_ns);
	r->dev_self_ns = sat_add_u64(r->dev_self_ns, self_dev_ns);
	return 0;
}

static int mem_row(void *ctx, const char *name, const char *kind, const struct mem_usage *u)
{
	struct summary_row *r = row_get(ctx, name, kind);

	if (!r)
		return -ENOMEM;
	r->cpu_mem = mem_sat_add(r->cpu_mem, u->cpu);
	r->self_cpu_mem = mem_sat_add(r->self_cpu_mem, u->self_cpu);
	r->dev_mem = mem_sat_add(r->dev_mem, u->dev);
	r->self_dev_mem = mem_sat_add(r->self_dev_mem, u->self_dev);
	return 0;
}

int summary_build(struct summary *s, const struct seg_output_ctx *c)
{
	size_t i;
	int err;

	memset(s, 0, sizeof(*s));
	s->segment_ns = span_u64(c->seg->start_ns, c->seg->end_ns);
	err = add_slice_rows(s, c);
	if (!err && c->seg->nops)
		err = torch_summary_rows(c->seg, c->knames, torch_row, s, &s->unattributed_calls);
	s->has_memory = c->seg->memory != NULL;
	if (!err && s->has_memory)
		err = mem_summary_rows(c->seg, c->knames, mem_row, s);
	if (!err)
		err = add_call_rows(s, c);
	if (!err)
		err = add_gpu_rows(s, c);
	if (err) {
		summary_free(s);
		return err;
	}
	for (i = 0; i < s->n; i++) {
		if (s->rows[i].cpu_min_ns == UINT64_MAX)
			s->rows[i].cpu_min_ns = 0;
		if (s->rows[i].dev_min_ns == UINT64_MAX)
			s->rows[i].dev_min_ns = 0;
	}
	qsort(s->rows, s->n, sizeof(*s->rows), cmp_rows);
	/* Sorting moved the rows: the index no longer points at them. */
	pair_index_free(&s->index);
	return 0;
}

void summary_free(struct summary *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->rows[i].name);
	free(s->rows);
	pair_index_free(&s->index);
	memset(s, 0, sizeof(*s));
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Device rows: share of the segment's GPU time; CPU rows: of its wall time. */
static double share(const struct summary *s, const struct summary_row *r)
{
	if (r->dev_count)
		return s->gpu_total_ns ? 100.0 * (double)r->dev_total_ns / (double)s->gpu_total_ns : 0.0;
	return s->segment_ns ? 100.0 * (double)r->cpu_total_ns / (double)s->segment_ns : 0.0;
}

static void header_lines(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *seg = c->seg;
	char when[48], comm[4 * sizeof(c->proc->comm)], region[4 * FVBPF_REGION_NAME_MAX + 4];

	seg_output_wallclock(c->meta, seg->start_ns, when, sizeof(when));
	fprintf(f, "fvbpf segment %04u of rank %d, pid %d (%s), region %s\n", seg->seq,
		c->proc->rank, seg->pid, text_shown(comm, sizeof(comm), c->proc->comm),
		text_shown(region, sizeof(region), c->reg->defs[seg->region].name));
	fprintf(f, "start %s, duration %.3f ms, %s%s, ring-buffer drops %llu, unbalanced region ends %llu\n",
		when, ms(span_u64(seg->start_ns, seg->end_ns)),
		seg->started_before_attach ? "STARTED BEFORE ATTACH (start cut), " : "",
		seg->incomplete ? "INCOMPLETE (cut off by exit or stop)" : "complete",
		(unsigned long long)seg->drops, (unsigned long long)seg->unbalanced);
	if (seg->slices_dropped || seg->calls_dropped || seg->gpu_dropped)
		fprintf(f, "OVER LIMITS, not recorded: %llu region slices (limit %zu), %llu CUDA calls "
			"(limit %zu), %llu GPU records (limit %zu)\n",
			(unsigned long long)seg->slices_dropped, seg->limits.slices,
			(unsigned long long)seg->calls_dropped, seg->limits.calls,
			(unsigned long long)seg->gpu_dropped, seg->limits.gpu);
	if (seg->truncated_by_memory)
		fprintf(f, "TRUNCATED BY --max-memory: the segment reached its share of the memory "
			"budget; later events are counted above, not recorded\n");
}

static void row_line(FILE *f, const struct summary *s, const struct summary_row *r)
{
	char name[4 * 1024];

	fprintf(f, "%-44s %8llu %9.3f ms %8.3f ms %8.3f ms %8.3f ms %9.3f ms ",
		text_shown(name, sizeof(name), r->name),
		(unsigned long long)(r->count ? r->count : r->dev_count), ms(r->cpu_total_ns),
		ms(r->count ? r->cpu_total_ns / r->count : 0), ms(r->cpu_min_ns),
		ms(r->cpu_max_ns), ms(r->cpu_self_ns));
	if (r->dev_count || r->dev_total_ns)
		fprintf(f, "%9.3f ms %8.3f ms ", ms(r->dev_total_ns),
			ms(r->dev_total_ns / (r->dev_count ? r->dev_count : r->count)));
	else
		fprintf(f, "%12s %11s ", "-", "-");
	fprintf(f, "%8.1f%%  %s\n", share(s, r), r->kind);
}

static void meta_line(void *out, const struct seg_meta_field *f, const union seg_meta_value *v)
{
	seg_meta_text_line(out, f, v);
}

static void mem_text_table(FILE *f, const struct summary *s)
{
	char name[4 * 1024];
	size_t i;

	fprintf(f, "\n%-44s %14s %14s %14s %14s\n", "Memory (bytes, frees negative)", "CPU Mem",
		"Self CPU Mem", "Device Mem", "Self Device Mem");
	for (i = 0; i < s->n; i++) {
		const struct summary_row *r = &s->rows[i];

		if (!r->cpu_mem && !r->self_cpu_mem && !r->dev_mem && !r->self_dev_mem)
			continue;
		fprintf(f, "%-44s %14lld %14lld %14lld %14lld\n",
			text_shown(name, sizeof(name), r->name), (long long)r->cpu_mem,
			(long long)r->self_cpu_mem, (long long)r->dev_mem, (long long)r->self_dev_mem);
	}
}

int summary_write_text(FILE *f, const struct summary *s, const struct seg_output_ctx *c)
{
	char status[4 * sizeof(c->seg->gpu_status)];
	size_t i;

	header_lines(f, c);
	if (s->has_device_time)
		fprintf(f, "GPU busy %.3f ms of %.3f ms segment wall time (%.1f%%); GPU records missing %llu\n",
			ms(s->gpu_busy_ns), ms(s->segment_ns),
			s->segment_ns ? 100.0 * (double)s->gpu_busy_ns / (double)s->segment_ns : 0.0,
			(unsigned long long)c->seg->gpu_missing);
	else
		fprintf(f, "device time: not collected (%s); kernel rows give the CPU time of their "
			"launching calls\n", c->seg->gpu_status[0] ?
			text_shown(status, sizeof(status), c->seg->gpu_status) : "needs the CUPTI agent");
	if (s->unattributed_calls)
		fprintf(f, "CUDA calls not attributed to torch operators (too many to match): %llu\n",
			(unsigned long long)s->unattributed_calls);
	fputc('\n', f);
	fprintf(f, "%-44s %8s %12s %11s %11s %11s %12s %12s %11s %9s  %s\n", "Name", "Calls",
		"CPU total", "CPU avg", "CPU min", "CPU max", "Self CPU", "Device total",
		"Device avg", "% seg/GPU", "Kind");
	for (i = 0; i < s->n; i++)
		row_line(f, s, &s->rows[i]);
	if (s->has_memory)
		mem_text_table(f, s);
	/* The same keys as the trace and the summary JSON, from seg_meta's table. */
	fputs("\nsegment metadata:\n", f);
	seg_meta_each(c, seg_meta_trace_order, SMG_COUNT, meta_line, f);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}

/* One metadata key (seg_meta.h) into the summary's object. */
static void meta_field(void *out, const struct seg_meta_field *f, const union seg_meta_value *v)
{
	json_object_object_add(out, f->key, seg_meta_json_value(f, v));
}

/*
 * The segment's metadata in the summary's own order of the groups (it
 * predates the table), with the summary's figures between: where the
 * device time came from and how much, and the calls no operator took.
 */
static json_object *metadata_json(const struct summary *s, const struct seg_output_ctx *c)
{
	static const enum seg_meta_group head[] = { SMG_ID };
	static const enum seg_meta_group tail[] = { SMG_GPU, SMG_LOSS, SMG_LIMITS, SMG_MEMORY,
						    SMG_TORCH };
	const struct segment *seg = c->seg;
	json_object *m = json_object_new_object();

	seg_meta_each(c, head, 1, meta_field, m);
	json_object_object_add(m, "device_time", json_string_obj(
		s->has_device_time ? "cupti" : seg->gpu_status[0] ? seg->gpu_status :
		"not collected (needs the CUPTI agent)"));
	json_object_object_add(m, "gpu_busy_us", seg_meta_us_json(s->gpu_busy_ns));
	json_object_object_add(m, "gpu_total_us", seg_meta_us_json(s->gpu_total_ns));
	seg_meta_each(c, tail, sizeof(tail) / sizeof(tail[0]), meta_field, m);
	json_object_object_add(m, "cuda_calls_not_attributed_to_ops",
			       json_object_new_uint64(s->unattributed_calls));
	return m;
}

/* torch's names for them (FunctionEventAvg), in bytes. */
static void mem_json_columns(json_object *o, const struct summary_row *r)
{
	json_object_object_add(o, "cpu_memory_usage", json_object_new_int64(r->cpu_mem));
	json_object_object_add(o, "self_cpu_memory_usage", json_object_new_int64(r->self_cpu_mem));
	json_object_object_add(o, "device_memory_usage", json_object_new_int64(r->dev_mem));
	json_object_object_add(o, "self_device_memory_usage",
			       json_object_new_int64(r->self_dev_mem));
}

int summary_write_json(FILE *f, const struct summary *s, const struct seg_output_ctx *c)
{
	json_object *root = json_object_new_object(), *rows = json_object_new_array(), *o;
	const struct summary_row *r;
	size_t i;
	int ret;

	if (!root || !rows) {
		json_object_put(root);
		json_object_put(rows);
		return -ENOMEM;
	}
	json_object_object_add(root, "metadata", metadata_json(s, c));
	for (i = 0; i < s->n; i++) {
		r = &s->rows[i];
		o = json_object_new_object();
		json_object_object_add(o, "name", json_string_obj(r->name));
		json_object_object_add(o, "kind", json_string_obj(r->kind));
		json_object_object_add(o, "shapes", json_string_obj(""));
		json_object_object_add(o, "self_cpu_us", seg_meta_us_json(r->cpu_self_ns));
		json_object_object_add(o, "cpu_us", seg_meta_us_json(r->cpu_total_ns));
		json_object_object_add(o, "self_device_us", seg_meta_us_json(r->dev_self_ns));
		json_object_object_add(o, "device_us", seg_meta_us_json(r->dev_total_ns));
		json_object_object_add(o, "count", json_object_new_uint64(r->count));
		json_object_object_add(o, "cpu_avg_us",
				       seg_meta_us_json(r->count ? r->cpu_total_ns / r->count : 0));
		json_object_object_add(o, "cpu_min_us", seg_meta_us_json(r->cpu_min_ns));
		json_object_object_add(o, "cpu_max_us", seg_meta_us_json(r->cpu_max_ns));
		json_object_object_add(o, "device_count", json_object_new_uint64(r->dev_count));
		json_object_object_add(o, "device_avg_us", seg_meta_us_json(
			r->dev_count ? r->dev_total_ns / r->dev_count : 0));
		json_object_object_add(o, "device_min_us", seg_meta_us_json(r->dev_min_ns));
		json_object_object_add(o, "device_max_us", seg_meta_us_json(r->dev_max_ns));
		json_object_object_add(o, "share", json_object_new_double(share(s, r) / 100.0));
		json_object_object_add(o, "share_of", json_string_obj(
			r->dev_count ? "segment_gpu_time" : "segment_wall_time"));
		if (s->has_memory)
			mem_json_columns(o, r);
		json_object_array_add(rows, o);
	}
	json_object_object_add(root, "rows", rows);
	fputs(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), f);
	fputc('\n', f);
	json_object_put(root);
	ret = ferror(f) ? -(errno ? errno : EIO) : 0;
	return ret;
}
