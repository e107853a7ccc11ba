// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fvbpf_gpu.h"
#include "proc/inject/inject.h"
#include "util/checked_math.h"
#include "util/json_writer.h"
#include "util/text_sanitize.h"
#include "output/memory/mem_output.h"
#include "output/seg_meta.h"
#include "pipeline/memory/mem_events.h"

#define FVBPF_VERSION_STR "0.1.0"

/* Getters: one line each, named after their key. */
#define GET(name) static void get_##name(const struct seg_output_ctx *c, union seg_meta_value *v, \
					  char *buf, size_t len)
#define UNUSED_BUF ((void)buf, (void)len)

GET(tool) { (void)c; UNUSED_BUF; v->s = "fvbpf"; }
GET(version) { (void)c; UNUSED_BUF; v->s = FVBPF_VERSION_STR; }
GET(rank) { UNUSED_BUF; v->i = c->proc->rank; }
GET(restart) { UNUSED_BUF; v->u = c->proc->restart; }
GET(rank_from_env) { UNUSED_BUF; v->b = c->proc->rank_from_env; }
GET(pid) { UNUSED_BUF; v->i = c->proc->pid; }
GET(hostname) { UNUSED_BUF; v->s = c->meta->hostname; }
GET(command) { UNUSED_BUF; v->s = c->proc->cmdline; }
GET(marker_library) { UNUSED_BUF; v->s = c->proc->marker.path; }
GET(agent_library)
{
	UNUSED_BUF;
	v->s = inject_origin(&c->proc->inject, c->proc->marker.path[0]);
}
GET(agent_injected_at)
{
	inject_wallclock(&c->proc->inject, buf, len);
	v->s = buf;
}
GET(agent_inject_stopped_us) { UNUSED_BUF; v->u = c->proc->inject.stopped_ns / 1000; }
GET(region) { UNUSED_BUF; v->s = c->reg->defs[c->seg->region].name; }
GET(segment) { UNUSED_BUF; v->u = c->seg->seq; }
GET(start_us) { UNUSED_BUF; v->u = c->seg->start_ns; }
GET(end_us) { UNUSED_BUF; v->u = c->seg->end_ns; }
GET(duration_us) { UNUSED_BUF; v->u = span_u64(c->seg->start_ns, c->seg->end_ns); }
GET(start_wallclock)
{
	seg_output_wallclock(c->meta, c->seg->start_ns, buf, len);
	v->s = buf;
}
/* The bounds on CLOCK_REALTIME, so that ranks of several hosts (each its
 * own CLOCK_MONOTONIC) can be put on one axis. */
GET(start_unix_us) { UNUSED_BUF; v->u = seg_output_realtime_ns(c->meta, c->seg->start_ns); }
GET(end_unix_us) { UNUSED_BUF; v->u = seg_output_realtime_ns(c->meta, c->seg->end_ns); }
/* Equal on every rank for the same training step; "" where the job gives
 * none (the offline commands then pair ranks by time overlap). */
/*
 * The step's identity, equal on every rank: the default process group's
 * sequence number of the first collective that arrived in it ("pg0:53";
 * collectives.h).  Every rank takes part in each of the default group's
 * collectives in the same order, so the k-th step's first is the same
 * collective everywhere; "" where none arrived inside the segment.
 */
static bool default_group(const struct seg_output_ctx *c, const struct collective *k)
{
	char name[64];

	if (k->pg_desc) {
		name_table_get(c->knames, k->pg_desc, name, sizeof(name));
		return !strcmp(name, "default_pg");
	}
	return false;
}

GET(step_key)
{
	const struct segment *s = c->seg;
	uint64_t first = UINT64_MAX;
	size_t i;

	v->s = "";
	for (i = 0; c->knames && i < s->ncolls; i++)
		if (s->colls[i].seq < first && s->colls[i].arrive_ns >= s->start_ns &&
		    s->colls[i].arrive_ns <= s->end_ns && default_group(c, &s->colls[i]))
			first = s->colls[i].seq;
	if (first == UINT64_MAX)
		return;
	snprintf(buf, len, "pg0:%llu", (unsigned long long)first);
	v->s = buf;
}
/* Whether it counts toward -n and is shown by report and export by default. */
GET(counted) { UNUSED_BUF; v->b = !c->seg->not_counted; }
GET(not_counted_why) { UNUSED_BUF; v->s = seg_not_counted_why(c->seg->not_counted); }
GET(incomplete) { UNUSED_BUF; v->b = c->seg->incomplete; }
GET(lost_end) { UNUSED_BUF; v->b = c->seg->lost_end; }
GET(started_before_attach) { UNUSED_BUF; v->b = c->seg->started_before_attach; }
GET(clock) { (void)c; UNUSED_BUF; v->s = "CLOCK_MONOTONIC"; }
GET(ringbuf_drops) { UNUSED_BUF; v->u = c->seg->drops; }
GET(unbalanced_region_ends) { UNUSED_BUF; v->u = c->seg->unbalanced; }
GET(forced_region_closes) { UNUSED_BUF; v->u = c->seg->forced; }
GET(cuda_calls) { UNUSED_BUF; v->u = c->seg->ncalls; }
GET(gpu_records) { UNUSED_BUF; v->u = c->seg->ngpu; }
GET(gpu_records_missing) { UNUSED_BUF; v->u = c->seg->gpu_missing; }
GET(cupti_dropped) { UNUSED_BUF; v->u = c->seg->cupti_dropped; }
GET(gpu_clock) { UNUSED_BUF; v->s = fvbpf_gpu_clock_name(c->seg->gpu_clock); }
GET(gpu_activity) { UNUSED_BUF; v->s = c->seg->gpu_status; }
GET(over_limits)
{
	UNUSED_BUF;
	v->n.slices = c->seg->slices_dropped;
	v->n.cuda_calls = c->seg->calls_dropped;
	v->n.gpu_records = c->seg->gpu_dropped;
}
/* The bounds the segment was held to: its own, or the defaults. */
GET(limits)
{
	UNUSED_BUF;
	v->n.slices = seg_limit(c->seg->limits.slices, SEG_MAX_SLICES);
	v->n.cuda_calls = seg_limit(c->seg->limits.calls, SEG_MAX_CALLS);
	v->n.gpu_records = seg_limit(c->seg->limits.gpu, SEG_MAX_GPU);
}
GET(torch_calls) { UNUSED_BUF; v->u = c->seg->nops; }
GET(op_source) { UNUSED_BUF; v->s = c->seg->ops_by_callbacks ? "callbacks" : "uprobes"; }
/* autograd sequence numbers come from the RecordFunction the callbacks
 * get; the uprobes have none to read them from */
GET(sequence_numbers) { UNUSED_BUF; v->b = c->seg->ops_by_callbacks; }
GET(callback_records_lost) { UNUSED_BUF; v->u = c->seg->callback_lost; }
GET(torch_calls_over_limit) { UNUSED_BUF; v->u = c->seg->ops_dropped; }
GET(torch_scope_names_cut) { UNUSED_BUF; v->u = seg_scopes_cut(c->seg); }
GET(torch_shapes_unknown) { UNUSED_BUF; v->u = seg_shapes_unknown(c->seg); }
/* --profile-memory (output/memory/mem_output.c): records, losses, peaks */
GET(memory_events) { UNUSED_BUF; v->u = c->seg->memory ? c->seg->memory->n : 0; }
GET(memory_events_lost)
{
	const struct seg_memory *m = c->seg->memory;

	UNUSED_BUF;
	v->u = m ? sat_add_u64(sat_add_u64(m->over_limit, m->bad), m->table_full) : 0;
}
GET(memory_frees_unknown) { UNUSED_BUF; v->u = c->seg->memory ? c->seg->memory->unknown_frees : 0; }
GET(memory_peak_cpu_bytes) { UNUSED_BUF; v->u = mem_peak_bytes(c->seg, true, false); }
GET(memory_peak_device_allocated_bytes) { UNUSED_BUF; v->u = mem_peak_bytes(c->seg, false, false); }
GET(memory_peak_device_reserved_bytes) { UNUSED_BUF; v->u = mem_peak_bytes(c->seg, false, true); }
GET(memory_peaks)
{
	mem_peaks_text(c, buf, len);
	v->s = buf;
}
/* --max-memory: the segment stopped storing events at its share. */
GET(truncated_by_memory) { UNUSED_BUF; v->b = c->seg->truncated_by_memory; }

#define ROW(key, kind, group) { #key, kind, group, get_##key }

/* In the JSON trace's order, which is the oldest. */
const struct seg_meta_field seg_meta_fields[] = {
	ROW(tool, SM_STR, SMG_ID),
	ROW(version, SM_STR, SMG_ID),
	ROW(rank, SM_INT, SMG_ID),
	ROW(restart, SM_UINT, SMG_ID),
	ROW(rank_from_env, SM_BOOL, SMG_ID),
	ROW(pid, SM_INT, SMG_ID),
	ROW(hostname, SM_STR, SMG_ID),
	ROW(command, SM_STR, SMG_ID),
	ROW(marker_library, SM_STR, SMG_ID),
	ROW(agent_library, SM_STR, SMG_ID),
	ROW(agent_injected_at, SM_STR, SMG_ID),
	ROW(agent_inject_stopped_us, SM_UINT, SMG_ID),
	ROW(region, SM_STR, SMG_ID),
	ROW(segment, SM_UINT, SMG_ID),
	ROW(start_us, SM_US, SMG_ID),
	ROW(end_us, SM_US, SMG_ID),
	ROW(duration_us, SM_US, SMG_ID),
	ROW(start_wallclock, SM_STR, SMG_ID),
	ROW(start_unix_us, SM_US, SMG_ID),
	ROW(end_unix_us, SM_US, SMG_ID),
	ROW(step_key, SM_STR, SMG_ID),
	ROW(counted, SM_BOOL, SMG_ID),
	ROW(not_counted_why, SM_STR, SMG_ID),
	ROW(incomplete, SM_BOOL, SMG_ID),
	ROW(lost_end, SM_BOOL, SMG_ID),
	ROW(started_before_attach, SM_BOOL, SMG_ID),
	ROW(clock, SM_STR, SMG_ID),
	ROW(ringbuf_drops, SM_UINT, SMG_LOSS),
	ROW(unbalanced_region_ends, SM_UINT, SMG_LOSS),
	ROW(forced_region_closes, SM_UINT, SMG_LOSS),
	ROW(cuda_calls, SM_UINT, SMG_GPU),
	ROW(gpu_records, SM_UINT, SMG_GPU),
	ROW(gpu_records_missing, SM_UINT, SMG_GPU),
	ROW(cupti_dropped, SM_UINT, SMG_GPU),
	ROW(gpu_clock, SM_STR, SMG_GPU),
	ROW(gpu_activity, SM_STR, SMG_GPU),
	ROW(over_limits, SM_COUNTS, SMG_LIMITS),
	ROW(limits, SM_COUNTS, SMG_LIMITS),
	ROW(torch_calls, SM_UINT, SMG_TORCH),
	ROW(op_source, SM_STR, SMG_TORCH),
	ROW(sequence_numbers, SM_BOOL, SMG_TORCH),
	ROW(callback_records_lost, SM_UINT, SMG_TORCH),
	ROW(torch_calls_over_limit, SM_UINT, SMG_TORCH),
	ROW(torch_scope_names_cut, SM_UINT, SMG_TORCH),
	ROW(torch_shapes_unknown, SM_UINT, SMG_TORCH),
	ROW(memory_events, SM_UINT, SMG_TORCH),
	ROW(memory_events_lost, SM_UINT, SMG_TORCH),
	ROW(memory_frees_unknown, SM_UINT, SMG_TORCH),
	ROW(memory_peak_cpu_bytes, SM_UINT, SMG_TORCH),
	ROW(memory_peak_device_allocated_bytes, SM_UINT, SMG_TORCH),
	ROW(memory_peak_device_reserved_bytes, SM_UINT, SMG_TORCH),
	ROW(memory_peaks, SM_STR, SMG_TORCH),
	ROW(truncated_by_memory, SM_BOOL, SMG_MEMORY),
};
const size_t seg_meta_nfields = sizeof(seg_meta_fields) / sizeof(seg_meta_fields[0]);

const char *const seg_meta_count_keys[3] = { "slices", "cuda_calls", "gpu_records" };

const enum seg_meta_group seg_meta_trace_order[SMG_COUNT] = {
	SMG_ID, SMG_LOSS, SMG_GPU, SMG_LIMITS, SMG_TORCH, SMG_MEMORY,
};

uint64_t seg_meta_count(const struct seg_meta_counts *n, size_t i)
{
	return i == 0 ? n->slices : i == 1 ? n->cuda_calls : n->gpu_records;
}

void seg_meta_each(const struct seg_output_ctx *c, const enum seg_meta_group *order,
		   size_t ngroups, seg_meta_fn fn, void *out)
{
	union seg_meta_value v;
	char buf[SEG_META_BUF];
	size_t g, i;

	for (g = 0; g < ngroups; g++)
		for (i = 0; i < seg_meta_nfields; i++) {
			if (seg_meta_fields[i].group != order[g])
				continue;
			memset(&v, 0, sizeof(v));
			seg_meta_fields[i].get(c, &v, buf, sizeof(buf));
			fn(out, &seg_meta_fields[i], &v);
		}
}

const struct seg_meta_field *seg_meta_find(const char *key)
{
	size_t i;

	for (i = 0; i < seg_meta_nfields; i++)
		if (!strcmp(seg_meta_fields[i].key, key))
			return &seg_meta_fields[i];
	return NULL;
}

/* A target's string (a command line, a path) for a terminal: its whole
 * length when memory allows, else cut to a kilobyte between characters. */
static void text_value(FILE *out, const char *s)
{
	size_t need = text_clean_bound(s);
	char small[1024], *buf = need > sizeof(small) ? malloc(need) : NULL;

	if (!buf) {
		text_clean_terminal(small, sizeof(small), s);
		fputs(small, out);
		return;
	}
	text_clean_terminal(buf, need, s);
	fputs(buf, out);
	free(buf);
}

void seg_meta_text_line(FILE *out, const struct seg_meta_field *f, const union seg_meta_value *v)
{
	size_t i;

	fprintf(out, "%s:", f->key);
	switch (f->kind) {
	case SM_STR:
		if (v->s && v->s[0]) {
			fputc(' ', out);
			text_value(out, v->s);
		}
		break;
	case SM_INT: fprintf(out, " %lld", (long long)v->i); break;
	case SM_UINT: fprintf(out, " %llu", (unsigned long long)v->u); break;
	case SM_BOOL: fputs(v->b ? " true" : " false", out); break;
	case SM_US:
		fprintf(out, " %llu.%03llu", (unsigned long long)(v->u / 1000),
			(unsigned long long)(v->u % 1000));
		break;
	case SM_COUNTS:
		for (i = 0; i < 3; i++)
			fprintf(out, " %s=%llu", seg_meta_count_keys[i],
				(unsigned long long)seg_meta_count(&v->n, i));
		break;
	}
	fputc('\n', out);
}

json_object *seg_meta_us_json(uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu.%03llu", (unsigned long long)(ns / 1000),
		 (unsigned long long)(ns % 1000));
	return json_object_new_double_s((double)ns / 1000.0, text);
}

json_object *seg_meta_json_value(const struct seg_meta_field *f, const union seg_meta_value *v)
{
	json_object *o = NULL;
	size_t i;

	switch (f->kind) {
	case SM_STR: return json_string_obj(v->s);
	case SM_INT: return json_object_new_int64(v->i);
	case SM_UINT: return json_object_new_uint64(v->u);
	case SM_BOOL: return json_object_new_boolean(v->b);
	case SM_US: return seg_meta_us_json(v->u);
	case SM_COUNTS:
		o = json_object_new_object();
		for (i = 0; i < 3; i++)
			json_object_object_add(o, seg_meta_count_keys[i],
					       json_object_new_uint64(seg_meta_count(&v->n, i)));
		break;
	}
	return o;
}

json_object *seg_meta_json(const struct seg_output_ctx *c, const char *key)
{
	const struct seg_meta_field *f = seg_meta_find(key);
	union seg_meta_value v;
	char buf[SEG_META_BUF];

	if (!f)
		return NULL;
	memset(&v, 0, sizeof(v));
	f->get(c, &v, buf, sizeof(buf));
	return seg_meta_json_value(f, &v);
}
