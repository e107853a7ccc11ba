// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The segment summary's two files, text and JSON, from a built summary
 * (summary.c builds it). */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/json_writer.h"
#include "output/memory/mem_output.h"
#include "output/seg_meta.h"
#include "output/seg_output.h"
#include "output/summary/summary.h"
#include "output/summary/summary_colls.h"
#include "output/summary/summary_dl.h"
#include "util/text_copy.h"
#include "util/text_sanitize.h"
#include "output/summary/torch_summary.h"
#include "output/json/trace_writer.h"

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
	char rank[48];

	seg_output_wallclock(c->meta, seg->start_ns, when, sizeof(when));
	seg_output_rank_text(c->proc, rank, sizeof(rank));
	fprintf(f, "fvbpf segment %04u of %s, pid %d (%s), region %s\n", seg->seq, rank, seg->pid, text_shown(comm, sizeof(comm), c->proc->comm),
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

/* The next of a row's '\n'-separated frames into @frame (cut to fit);
 * false past the last. */
static bool next_frame(const char **p, char *frame, size_t len)
{
	const char *nl;
	size_t n;

	if (!*p || !**p)
		return false;
	nl = strchr(*p, '\n');
	n = nl ? (size_t)(nl - *p) : strlen(*p);
	if (n >= len)
		n = len - 1;
	memcpy(frame, *p, n);
	frame[n] = '\0';
	*p = nl ? nl + 1 : NULL;
	return true;
}

/* --group-by-stack: the row's frames after it, one under the other from
 * column @col, as torch's table shows its "Source Location". */
static void stack_lines(FILE *f, const char *stack, int col)
{
	char frame[4 * 2048], shown[4 * 4 * 2048];
	const char *p = stack;
	bool first = true;

	while (next_frame(&p, frame, sizeof(frame))) {
		if (first)
			fprintf(f, "  at %s", text_shown(shown, sizeof(shown), frame));
		else
			fprintf(f, "\n%*s<- %s", col, "", text_shown(shown, sizeof(shown), frame));
		first = false;
	}
}

static void row_line(FILE *f, const struct summary *s, const struct summary_row *r)
{
	char name[4 * 1024];
	int col = 0;

	col += fprintf(f, "%-44s %8llu %9.3f ms %8.3f ms %8.3f ms %8.3f ms %9.3f ms ",
		       text_shown(name, sizeof(name), r->name),
		       (unsigned long long)(r->count ? r->count : r->dev_count), ms(r->cpu_total_ns),
		       ms(r->count ? r->cpu_total_ns / r->count : 0), ms(r->cpu_min_ns),
		       ms(r->cpu_max_ns), ms(r->cpu_self_ns));
	if (r->dev_count || r->dev_total_ns)
		col += fprintf(f, "%9.3f ms %8.3f ms ", ms(r->dev_total_ns),
			       ms(r->dev_total_ns / (r->dev_count ? r->dev_count : r->count)));
	else
		col += fprintf(f, "%12s %11s ", "-", "-");
	col += fprintf(f, "%8.1f%%  %s", share(s, r), r->kind);
	if (r->parent) /* a region inside another on its thread */
		fprintf(f, "  in %s", text_shown(name, sizeof(name), r->parent));
	/* --record-shapes, --with-flops: fvbpf's own digits, safe to print */
	if (r->shapes)
		fprintf(f, "  shapes %s", r->shapes);
	if (r->flops || r->extra_flops)
		fprintf(f, "  flops %llu extra %llu", (unsigned long long)r->flops,
			(unsigned long long)r->extra_flops);
	if (r->stack)
		stack_lines(f, r->stack, col);
	fputc('\n', f);
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
	if (s->stack_n)
		fprintf(f, "torch rows grouped by name and the innermost %u Python frame(s) "
			"(--group-by-stack), shown after each row: at file(first line): function "
			"<- its caller ...\n", s->stack_n);
	fprintf(f, "%-44s %8s %12s %11s %11s %11s %12s %12s %11s %9s  %s\n", "Name", "Calls",
		"CPU total", "CPU avg", "CPU min", "CPU max", "Self CPU", "Device total",
		"Device avg", "% seg/GPU", "Kind");
	for (i = 0; i < s->n; i++)
		row_line(f, s, &s->rows[i]);
	if (s->has_memory)
		mem_text_table(f, s);
	summary_dl_text(f, c);
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

/*
 * --with-flops: the segment's FLOPs (torch's count and the extra one) and,
 * when the GPU time is known, what they make per second of GPU busy time.
 */
static void flops_json(json_object *m, const struct summary *s)
{
	uint64_t flops = 0, extra = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		flops = sat_add_u64(flops, s->rows[i].flops);
		extra = sat_add_u64(extra, s->rows[i].extra_flops);
	}
	json_object_object_add(m, "flops", json_object_new_uint64(flops));
	json_object_object_add(m, "extra_flops", json_object_new_uint64(extra));
	if (s->has_device_time && s->gpu_busy_ns)
		json_object_object_add(m, "flops_per_gpu_busy_s",
				       json_object_new_double((double)flops * 1e9 / (double)s->gpu_busy_ns));
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

/* --group-by-stack: the row's frames, innermost first, as torch's
 * FunctionEventAvg.stack ("file(first line): function"); [] none. */
static json_object *stack_json(const char *stack)
{
	json_object *a = json_object_new_array();
	char frame[4 * 2048];
	const char *p = stack;

	while (a && next_frame(&p, frame, sizeof(frame)))
		json_object_array_add(a, json_string_obj(frame)); /* the target's bytes, made valid */
	return a;
}

static json_object *row_json(const struct summary *s, const struct summary_row *r,
			     const struct seg_output_ctx *c)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "name", json_string_obj(r->name));
	json_object_object_add(o, "kind", json_string_obj(r->kind));
	json_object_object_add(o, "shapes", json_string_obj(r->shapes ? r->shapes : ""));
	if (!strcmp(r->kind, "region")) /* "": outermost on its thread */
		json_object_object_add(o, "parent", json_string_obj(r->parent ? r->parent : ""));
	if (s->stack_n)
		json_object_object_add(o, "stack", stack_json(r->stack));
	if (c->with_flops) {
		json_object_object_add(o, "flops", json_object_new_uint64(r->flops));
		json_object_object_add(o, "extra_flops", json_object_new_uint64(r->extra_flops));
	}
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
	return o;
}

#define JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)

/*
 * The metadata, then one row at a time: a segment may hold as many rows as
 * the target made up names, and json-c's tree of them all cost several KB
 * a row (9,000 rows: 70 MB at once), past --max-memory.  Only one row's
 * objects are alive at a time.
 */
int summary_put_item(FILE *f, json_object *o, size_t i)
{
	const char *txt = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;

	if (txt)
		fprintf(f, "%s%s", i ? ",\n    " : "\n    ", txt);
	json_object_put(o);
	return txt ? 0 : -ENOMEM;
}

int summary_write_json(FILE *f, const struct summary *s, const struct seg_output_ctx *c)
{
	json_object *meta = metadata_json(s, c);
	const char *txt;
	size_t i;
	int ret = 0;

	if (!meta)
		return -ENOMEM;
	if (c->with_flops)
		flops_json(meta, s);
	txt = json_object_to_json_string_ext(meta, JSON_FLAGS);
	if (txt)
		fprintf(f, "{\n  \"metadata\": %s,\n  \"rows\": [", txt);
	else
		ret = -ENOMEM;
	json_object_put(meta);
	for (i = 0; i < s->n && !ret; i++)
		ret = summary_put_item(f, row_json(s, &s->rows[i], c), i);
	if (ret)
		return ret;
	fputs(s->n ? "\n  ]" : "]", f);
	ret = summary_colls_json(f, c);
	if (!ret)
		ret = summary_dl_json(f, c);
	if (ret)
		return ret;
	fputs("\n}\n", f);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}
