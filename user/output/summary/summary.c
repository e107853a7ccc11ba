// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked_math.h"
#include "util/json_writer.h"
#include "util/pair_index.h"
#include "util/row_table.h"
#include "output/memory/mem_output.h"
#include "output/stacks/pystack_lines.h"
#include "pipeline/pystack.h"
#include "output/seg_meta.h"
#include "output/seg_output.h"
#include "output/summary/summary.h"
#include "output/summary/summary_regions.h"
#include "util/text_copy.h"
#include "util/text_sanitize.h"
#include "output/summary/torch_summary.h"
#include "output/json/trace_writer.h"

#define SUMMARY_STACK_MAX 8192 /* a row's frames, at most (16 of them, cut past this) */

static void row_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct summary_row *r = arr;

	*name = r[i].key ? r[i].key : r[i].name;
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
	if (strcmp(x->name, y->name))
		return strcmp(x->name, y->name);
	return strcmp(x->key ? x->key : "", y->key ? y->key : ""); /* shapes, stacks: a fixed order */
}

/* The row of region @name inside region @parent (NULL: none): keyed by
 * both, so that a region under two others has a row under each. */
static struct summary_row *region_row(struct summary *s, const char *name, const char *parent)
{
	struct summary_row *r;
	char *key;
	size_t kl;

	if (!parent)
		return row_get(s, name, "region");
	kl = strlen(name) + strlen(parent) + 2;
	key = malloc(kl);
	if (!key)
		return NULL;
	snprintf(key, kl, "%s%c%s", name, '\x1f', parent);
	r = row_get(s, key, "region");
	free(key);
	if (r && !r->key) { /* new: named by the name alone, the key kept beside */
		r->key = r->name;
		r->name = strdup(name);
		r->parent = strdup(parent);
		if (!r->name || !r->parent)
			return NULL;
	}
	return r;
}

/* A slice's row: looked up by name once per (region, parent region), not
 * once per slice (the name's hash and compare were a tenth of the writer
 * at 20,000 slices a segment).  @seen[region] holds the row's index + 1
 * and its parent region + 1 for the @nseen regions there were when it was
 * made (the consumer may register more meanwhile). */
struct seen_row {
	size_t row;
	uint32_t parent;
};

static struct summary_row *slice_row(struct summary *s, const struct seg_output_ctx *c,
				     uint32_t region, long parent, struct seen_row *seen, size_t nseen)
{
	uint32_t pr = parent >= 0 ? c->seg->slices[parent].region + 1 : 0;
	struct summary_row *r;

	if (seen && region < nseen && seen[region].row && seen[region].parent == pr)
		return &s->rows[seen[region].row - 1];
	r = region_row(s, c->reg->defs[region].name, pr ? c->reg->defs[pr - 1].name : NULL);
	if (r && seen && region < nseen)
		seen[region] = (struct seen_row){ (size_t)(r - s->rows) + 1, pr };
	return r;
}

/* Each slice: its time, and its self time as torch counts a scope's
 * (summary_regions.h: less the regions, operators and calls directly in it). */
static int add_slice_rows(struct summary *s, const struct seg_output_ctx *c)
{
	const struct segment *seg = c->seg;
	size_t nseen = FVBPF_MAX_REGIONS;
	/* NULL (no memory): every slice looks its row up by name */
	struct seen_row *seen = seg->nslices ? calloc(nseen, sizeof(*seen)) : NULL;
	struct region_times t;
	struct summary_row *r;
	int ret = 0;
	size_t i;

	if (!seg->nslices) /* nothing to time */
		return 0;
	if (region_times_build(seg, &t)) {
		free(seen);
		return -ENOMEM;
	}
	for (i = 0; i < seg->nslices && !ret; i++) {
		r = slice_row(s, c, seg->slices[i].region, t.parent[i], seen, nseen);
		if (!r)
			ret = -ENOMEM;
		else
			row_add_cpu(r, span_u64(seg->slices[i].start_ns, seg->slices[i].end_ns),
				    t.self_ns[i]);
	}
	region_times_free(&t);
	free(seen);
	return ret;
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

/* "name\x1fshapes\x1fstack": the index key of a torch row with shapes or a stack. */
static char *row_key_of(const char *name, const char *shapes, const char *stack)
{
	size_t kl = strlen(name) + strlen(shapes) + strlen(stack) + 3;
	char *key = malloc(kl);

	if (key)
		snprintf(key, kl, "%s%c%s%c%s", name, '\x1f', shapes, '\x1f', stack);
	return key;
}

/* A torch row of (@name, @shapes, @stack): keyed by all three, so that each
 * shape and each stack has its own ("" for none). */
static struct summary_row *row_get_keyed(struct summary *s, const char *name, const char *kind,
					 const char *shapes, const char *stack)
{
	struct summary_row *r;
	char *key;

	if (!shapes[0] && !stack[0])
		return row_get(s, name, kind);
	key = row_key_of(name, shapes, stack);
	if (!key)
		return NULL;
	r = row_get(s, key, kind);
	if (r && !r->key) { /* new: named by the name alone, the key kept beside */
		r->key = r->name;
		r->name = strdup(name);
		r->shapes = shapes[0] ? strdup(shapes) : NULL;
		r->stack = stack[0] ? strdup(stack) : NULL;
		if (!r->name || (shapes[0] && !r->shapes) || (stack[0] && !r->stack))
			r = NULL;
	}
	free(key);
	return r;
}

static int torch_row(void *ctx, const char *name, const char *kind, uint64_t cpu_ns,
		     uint64_t self_ns, uint64_t dev_ns, uint64_t self_dev_ns,
		     const struct torch_row_shapes *sh)
{
	struct summary *s = ctx;
	struct summary_row *r;

	/* calls in a row share their stack (the ones inside an operator its) */
	if (s->stack_buf && sh->stack != s->stack_sid) {
		pystack_source_location(s->pystacks, s->names, sh->stack, s->stack_n, s->stack_buf,
					SUMMARY_STACK_MAX);
		s->stack_sid = sh->stack;
	}
	r = row_get_keyed(s, name, kind, s->record_shapes ? sh->key : "",
			  s->stack_buf ? s->stack_buf : "");
	if (!r)
		return -ENOMEM;
	if (s->call_rows) /* its memory goes to the same row: see mem_row */
		s->call_rows[s->ncall_rows++] = (size_t)(r - s->rows);
	r->flops = sat_add_u64(r->flops, sh->flops);
	r->extra_flops = sat_add_u64(r->extra_flops, sh->extra_flops);
	row_add_cpu(r, cpu_ns, self_ns);
	r->dev_total_ns = sat_add_u64(r->dev_total_ns, dev_ns);
	r->dev_self_ns = sat_add_u64(r->dev_self_ns, self_dev_ns);
	return 0;
}

/* mem_summary_rows gives the calls torch_row had, in its order: each to
 * the row its call went to, whatever shapes or stack keyed that row. */
static int mem_row(void *ctx, const char *name, const char *kind, const struct mem_usage *u)
{
	struct summary *s = ctx;
	struct summary_row *r = NULL;

	if (s->call_rows && s->mem_next < s->ncall_rows)
		r = &s->rows[s->call_rows[s->mem_next++]];
	if (!r || strcmp(r->name, name) || strcmp(r->kind, kind))
		r = row_get(s, name, kind); /* out of step: by name, as without shapes */
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
	s->record_shapes = c->record_shapes;
	if (c->pystacks && c->pystacks->summary_n) {
		s->stack_n = c->pystacks->summary_n;
		s->pystacks = c->pystacks;
		s->names = c->knames;
		s->stack_buf = calloc(1, SUMMARY_STACK_MAX); /* "": stack 0's */
		if (!s->stack_buf)
			return -ENOMEM;
	}
	s->segment_ns = span_u64(c->seg->start_ns, c->seg->end_ns);
	s->has_memory = c->seg->memory != NULL;
	if (s->has_memory && (s->record_shapes || s->stack_n) && c->seg->nops) {
		s->call_rows = calloc(c->seg->nops, sizeof(*s->call_rows));
		if (!s->call_rows) {
			free(s->stack_buf);
			return -ENOMEM;
		}
	}
	err = add_slice_rows(s, c);
	if (!err && c->seg->nops)
		err = torch_summary_rows(c->seg, c->knames, torch_row, s, &s->unattributed_calls);
	if (!err && s->has_memory)
		err = mem_summary_rows(c->seg, c->knames, mem_row, s);
	free(s->call_rows);
	s->call_rows = NULL;
	free(s->stack_buf);
	s->stack_buf = NULL;
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

	for (i = 0; i < s->n; i++) {
		free(s->rows[i].name);
		free(s->rows[i].key);
		free(s->rows[i].shapes);
		free(s->rows[i].stack);
		free(s->rows[i].parent);
	}
	free(s->rows);
	pair_index_free(&s->index);
	memset(s, 0, sizeof(*s));
}
