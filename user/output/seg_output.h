/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Everything the trace and summary writers need to describe one segment. */
#ifndef FVBPF_SEG_OUTPUT_H
#define FVBPF_SEG_OUTPUT_H

#include <stdint.h>

#include "model/options.h"
#include "model/session_meta.h"
#include "util/name_table.h"
#include "proc/proc_info.h"
#include "pipeline/registry.h"
#include "pipeline/segment.h"

/* "json", "json.gz", "pftrace" (enum trace_format, model/options.h): the
 * file extension and the --format word. */
const char *trace_format_name(enum trace_format f);
/* 0 and *out, or -EINVAL for an unknown word. */
int trace_format_parse(const char *s, enum trace_format *out);

struct seg_output_ctx {
	const struct segment *seg;
	struct proc_target *proc;
	const struct region_registry *reg;
	const struct session_meta *meta;
	struct name_table *knames;  /* kernel names of the calls */
	enum trace_format format;
	bool record_shapes;         /* summary rows per (name, shapes) */
	bool with_flops;            /* flops on slices and rows */
	struct pystack_table *pystacks; /* --with-stack: the stacks ops refer to, else NULL */
};

/* The process's track name: "rank 0: python3 (pid 1234)", "rank 3 restart 1: ..." */
void seg_output_proc_label(const struct proc_target *p, int pid, char *buf, size_t len);
/* "rank0", "rank3_restart1" or "pid1234" */
void seg_output_who(const struct proc_target *p, char *buf, size_t len);
/* "rank 3", "rank 0 by default", "no rank: named by PID" (PROC_NO_RANK). */
void seg_output_rank_text(const struct proc_target *p, char *buf, size_t len);
/*
 * "trace_rank0_segment0012_training_forward.json": @kind "trace" or
 * "summary", the segment number in four digits at least (segment10000 past
 * 9999), @region already sanitised.  0, or -ENAMETOOLONG when cut short.
 */
int seg_output_file_name(char *buf, size_t len, const char *kind, const struct proc_target *p,
			 uint32_t seq, const char *region, const char *ext);
/* CLOCK_REALTIME ns of a CLOCK_MONOTONIC time, from the session's clock
 * pair read at start (0 when the session has none: tests). */
uint64_t seg_output_realtime_ns(const struct session_meta *m, uint64_t mono_ns);
/* "2026-11-30T08:48:13.123456Z" for a CLOCK_MONOTONIC time */
void seg_output_wallclock(const struct session_meta *m, uint64_t mono_ns, char *buf, size_t len);

#endif /* FVBPF_SEG_OUTPUT_H */
