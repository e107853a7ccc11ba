// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The table of a segment's output files.  Each row is one kind: how its
 * name begins and ends, where struct written_segment keeps the name (and
 * the manifest's key for it), when it is written, and its writer.  Every
 * file goes through out_open()/out_commit(): a temporary file renamed into
 * place, so a reader never sees half a file and a failed write leaves
 * none.  Rows are written in order and the first failure stops the rest,
 * as the writer always did.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "util/gz_stream.h"
#include "util/file/output_files.h"
#include "output/memory/mem_snapshot.h"
#include "output/memory/mem_svg.h"
#include "output/pftrace/pftrace_writer.h"
#include "output/stacks/pystack_files.h"
#include "output/seg_files.h"
#include "output/summary/summary.h"
#include "output/json/trace_writer.h"

typedef int (*seg_file_write_fn)(FILE *f, const struct seg_output_ctx *c,
				 const struct summary *sum);

struct seg_file_kind {
	const char *prefix;   /* the name's first word: "trace" -> trace_rank0_segment0000_step.json */
	const char *ext;      /* NULL: the trace format's (--format) */
	size_t name;          /* offsetof the name's field in struct written_segment */
	const char *key;      /* the manifest record's key for that name */
	bool (*wanted)(const struct seg_output_ctx *c); /* NULL: every segment */
	seg_file_write_fn write;
	/* Or a family of files that names its own (several, some optional),
	 * none listed in the manifest: then only @wanted and this are set. */
	int (*write_family)(const char *outdir, const struct seg_output_ctx *c);
};

/* The trace in the session's --format: pftrace, Chrome JSON, or that gzipped. */
static int write_trace(FILE *f, const struct seg_output_ctx *c, const struct summary *sum)
{
	FILE *gz;
	int ret, cr;

	(void)sum;
	if (c->format == TRACE_PFTRACE)
		return pftrace_write(f, c);
	if (c->format != TRACE_JSON_GZ)
		return trace_write(f, c);
	gz = gz_stream_open(f);
	if (!gz)
		return -(errno ? errno : ENOMEM);
	ret = trace_write(gz, c);
	cr = gz_stream_close(gz);
	return ret ? ret : cr;
}

static int write_summary_txt(FILE *f, const struct seg_output_ctx *c, const struct summary *sum)
{
	return summary_write_text(f, sum, c);
}

static int write_summary_json(FILE *f, const struct seg_output_ctx *c, const struct summary *sum)
{
	return summary_write_json(f, sum, c);
}

static int write_memory_svg(FILE *f, const struct seg_output_ctx *c, const struct summary *sum)
{
	(void)sum;
	return mem_svg_write(f, c);
}

static int write_memory_snapshot(FILE *f, const struct seg_output_ctx *c,
				 const struct summary *sum)
{
	(void)sum;
	return mem_snapshot_write(f, c);
}

static bool stacks_wanted(const struct seg_output_ctx *c)
{
	return c->pystacks != NULL;
}

#define NAME(field) offsetof(struct written_segment, field)

static const struct seg_file_kind seg_files[] = {
	{ "trace", NULL, NAME(trace), "trace", NULL, write_trace, NULL },
	{ "summary", "txt", NAME(summary_txt), "summary_txt", NULL, write_summary_txt, NULL },
	{ "summary", "json", NAME(summary_json), "summary_json", NULL, write_summary_json, NULL },
	/* --with-stack: stacks_*.folded, flame_*.svg, device_*, pylines_*.txt */
	{ NULL, NULL, 0, NULL, stacks_wanted, NULL, pystack_write_files },
	/* --profile-memory, when the segment has memory records */
	{ "memory", "svg", NAME(memory_svg), "memory_svg", mem_svg_wanted, write_memory_svg, NULL },
	{ "memory_snapshot", "json", NAME(memory_snapshot), "memory_snapshot", mem_svg_wanted,
	  write_memory_snapshot, NULL },
};

#define SEG_FILES_N (sizeof(seg_files) / sizeof(seg_files[0]))

static char *name_of(const struct seg_file_kind *k, struct written_segment *ws)
{
	return (char *)ws + k->name;
}

static bool row_wanted(const struct seg_file_kind *k, const struct seg_output_ctx *c)
{
	return !k->wanted || k->wanted(c);
}

/* Every wanted row's name, before anything is written: a name that does
 * not fit stops the segment before its first file. */
static int name_files(const struct seg_output_ctx *c, struct written_segment *out)
{
	char region[FVBPF_REGION_NAME_MAX + 1];
	const struct seg_file_kind *k;
	int ret;

	out_sanitize_name(region, sizeof(region), c->reg->defs[c->seg->region].name);
	for (k = seg_files; k < seg_files + SEG_FILES_N; k++) {
		if (!k->prefix || !row_wanted(k, c))
			continue;
		ret = seg_output_file_name(name_of(k, out), SEG_FILE_NAME_MAX, k->prefix, c->proc,
					   c->seg->seq, region,
					   k->ext ? k->ext : trace_format_name(c->format));
		if (ret)
			return ret;
	}
	return 0;
}

static int write_file(const char *outdir, const char *name, seg_file_write_fn fn,
		      const struct seg_output_ctx *c, const struct summary *sum)
{
	struct out_file of;
	int ret;

	ret = out_open(&of, outdir, name);
	if (ret)
		return ret;
	ret = fn(of.f, c, sum);
	if (ret) {
		out_abort(&of);
		return ret;
	}
	return out_commit(&of);
}

int seg_write_files(const char *outdir, const struct seg_output_ctx *c, struct written_segment *out)
{
	const struct seg_file_kind *k;
	struct summary sum;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = name_files(c, out);
	if (ret)
		return ret;
	ret = summary_build(&sum, c);
	if (ret)
		return ret;
	for (k = seg_files; k < seg_files + SEG_FILES_N && !ret; k++) {
		if (!row_wanted(k, c))
			continue;
		if (k->write_family)
			ret = k->write_family(outdir, c);
		else
			ret = write_file(outdir, name_of(k, out), k->write, c, &sum);
	}
	summary_free(&sum);
	return ret;
}

void seg_files_listed(const struct written_segment *ws, seg_file_listed_fn fn, void *ctx)
{
	const struct seg_file_kind *k;
	const char *name;

	for (k = seg_files; k < seg_files + SEG_FILES_N; k++) {
		if (!k->key)
			continue;
		name = (const char *)ws + k->name;
		if (!k->wanted || *name)
			fn(k->key, name, ctx);
	}
}
