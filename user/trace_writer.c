// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"
#include "trace_writer.h"

#define FVBPF_VERSION_STR "0.1.0"

static void meta_event(FILE *f, int pid, uint32_t tid, const char *what, const char *key,
		       const char *sval, long ival)
{
	fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"%s\",\"args\":{\"%s\":",
		pid, tid, what, key);
	if (sval)
		json_write_string(f, sval);
	else
		fprintf(f, "%ld", ival);
	fputs("}}", f);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Thread tracks of the segment: its threads, sorted, the main thread first. */
static void thread_metadata(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint32_t *tids;
	size_t i, n = 0;
	long sort;

	tids = malloc((s->nslices + s->ncalls + 1) * sizeof(*tids));
	if (!tids)
		return;
	for (i = 0; i < s->nslices; i++)
		tids[n++] = s->slices[i].tid;
	for (i = 0; i < s->ncalls; i++)
		tids[n++] = s->calls[i].tid;
	qsort(tids, n, sizeof(*tids), cmp_u32);
	for (i = 0; i < n; i++) {
		if (i && tids[i] == tids[i - 1])
			continue;
		meta_event(f, s->pid, tids[i], "thread_name", "name",
			   proc_thread_name(c->proc, tids[i]), 0);
		sort = tids[i] == (uint32_t)s->pid ? 0 : (long)tids[i];
		meta_event(f, s->pid, tids[i], "thread_sort_index", "sort_index", NULL, sort);
	}
	free(tids);
}

static void region_slices(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	const struct seg_slice *sl;
	char name[128];
	size_t i;

	for (i = 0; i < s->nslices; i++) {
		sl = &s->slices[i];
		snprintf(name, sizeof(name), "fvbpf.region::%s", c->reg->defs[sl->region].name);
		fputs(",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":", f);
		json_write_string(f, name);
		fprintf(f, ",\"pid\":%d,\"tid\":%u,\"ts\":", s->pid, sl->tid);
		json_write_us(f, sl->start_ns);
		fputs(",\"dur\":", f);
		json_write_us(f, sl->end_ns - sl->start_ns);
		fputs(",\"args\":{\"region\":", f);
		json_write_string(f, c->reg->defs[sl->region].name);
		fprintf(f, ",\"depth\":%u", sl->depth);
		if (sl->flags & SLICE_OPEN_AT_END)
			fputs(",\"incomplete\":true", f);
		if (sl->flags & SLICE_BEFORE_ATTACH)
			fputs(",\"started_before_attach\":true", f);
		if (sl->flags & SLICE_FORCED_CLOSE)
			fputs(",\"closed_by_enclosing_end\":true", f);
		fputs("}}", f);
	}
}

static void api_slices(FILE *f, const struct seg_output_ctx *c)
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
		fprintf(f, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,\"ts\":",
			cuda_api_layer_cat(r->layer), cuda_api_symbol(call->api_id), s->pid, call->tid);
		json_write_us(f, call->start_ns);
		fputs(",\"dur\":", f);
		json_write_us(f, call->end_ns - call->start_ns);
		fputs(",\"args\":{\"return\":", f);
		json_write_string(f, call->no_return ? "(did not return)" :
				  cuda_api_ret_name(call, ret, sizeof(ret)));
		if (call->kernel) {
			name_table_get(c->knames, call->kernel, kernel, sizeof(kernel));
			fputs(",\"kernel\":", f);
			json_write_string(f, kernel);
		}
		cuda_api_write_args(f, call);
		if (call->depth)
			fprintf(f, ",\"nested_in_call\":true");
		fputs("}}", f);
	}
}

static void segment_metadata(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	const struct proc_target *p = c->proc;
	char when[48];

	seg_output_wallclock(c->meta, s->start_ns, when, sizeof(when));
	fprintf(f, "\"otherData\":{\"tool\":\"fvbpf\",\"version\":\"%s\",\"rank\":%d,"
		"\"rank_from_env\":%s,\"pid\":%d,\"hostname\":",
		FVBPF_VERSION_STR, p->rank, p->rank_from_env ? "true" : "false", p->pid);
	json_write_string(f, c->meta->hostname);
	fputs(",\"command\":", f);
	json_write_string(f, p->cmdline);
	fputs(",\"marker_library\":", f);
	json_write_string(f, p->marker.path);
	fputs(",\"region\":", f);
	json_write_string(f, c->reg->defs[s->region].name);
	fprintf(f, ",\"segment\":%u,\"start_us\":", s->seq);
	json_write_us(f, s->start_ns);
	fputs(",\"end_us\":", f);
	json_write_us(f, s->end_ns);
	fputs(",\"duration_us\":", f);
	json_write_us(f, s->end_ns - s->start_ns);
	fprintf(f, ",\"start_wallclock\":\"%s\",\"incomplete\":%s,\"started_before_attach\":%s,"
		"\"clock\":\"CLOCK_MONOTONIC\","
		"\"ringbuf_drops\":%" PRIu64 ",\"unbalanced_region_ends\":%" PRIu64
		",\"forced_region_closes\":%" PRIu64 ",\"cuda_calls\":%zu},\n",
		when, s->incomplete ? "true" : "false", s->started_before_attach ? "true" : "false",
		s->drops, s->unbalanced, s->forced, s->ncalls);
}

int trace_write(FILE *f, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	char label[160];

	fputs("{\n\"schemaVersion\":1,\n\"displayTimeUnit\":\"ns\",\n", f);
	segment_metadata(f, c);
	fputs("\"traceEvents\":[\n", f);
	snprintf(label, sizeof(label), "rank %d: %s (pid %d)", c->proc->rank, c->proc->comm, s->pid);
	fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":",
		s->pid);
	json_write_string(f, label);
	fputs("}}", f);
	snprintf(label, sizeof(label), "segment %04u: %s%s%s", s->seq, c->reg->defs[s->region].name,
		 s->started_before_attach ? " (started before attach)" : "",
		 s->incomplete ? " (incomplete)" : "");
	meta_event(f, s->pid, 0, "process_labels", "labels", label, 0);
	meta_event(f, s->pid, 0, "process_sort_index", "sort_index", NULL, c->proc->rank);
	thread_metadata(f, c);
	region_slices(f, c);
	api_slices(f, c);
	fputs("\n]\n}\n", f);
	return ferror(f) ? -EIO : 0;
}
