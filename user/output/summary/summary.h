/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Per-segment operator table: one row per name, sorted by device time, then
 * CPU time, like FastVideo's profiler summaries.
 */
#ifndef FVBPF_SUMMARY_H
#define FVBPF_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "util/pair_index.h"

#include "output/seg_output.h"

struct summary_row {
	char *name;              /* whole: kernel names can be long; rows must not merge */
	const char *kind;        /* "region", ... */
	uint64_t count;
	uint64_t cpu_total_ns, cpu_self_ns, cpu_min_ns, cpu_max_ns;
	uint64_t dev_total_ns, dev_self_ns, dev_min_ns, dev_max_ns;
	uint64_t dev_count;      /* GPU executions (a graph launch makes many) */
	/* torch rows: --record-shapes, --with-flops */
	char *shapes;            /* torch's str(input_shapes), NULL: none */
	char *stack;             /* --group-by-stack: the row's frames (pystack_source_location), NULL none */
	char *key;               /* name, shapes and stack, the index key; NULL: the name */
	char *parent;            /* region rows: the region they lie in on their thread, NULL none */
	uint64_t flops, extra_flops;
	int64_t cpu_mem, self_cpu_mem, dev_mem, self_dev_mem; /* --profile-memory, bytes */
};

struct summary {
	struct summary_row *rows;
	size_t n, cap;
	struct pair_index index; /* name and kind -> row, while building */
	uint64_t segment_ns;
	int has_device_time;
	uint64_t gpu_busy_ns;    /* union of the segment's GPU activity */
	uint64_t gpu_total_ns;   /* sum of it, the base of the GPU shares */
	uint64_t unattributed_calls; /* CUDA calls not attributed to torch calls (too many) */
	bool record_shapes;      /* torch rows per (name, shapes) */
	bool has_memory;         /* --profile-memory records: the rows' memory columns */
	unsigned int stack_n;    /* --with-stack --group-by-stack N: torch rows per (name, N frames) */
	struct pystack_table *pystacks; /* ... their stacks, while building */
	struct name_table *names;
	char *stack_buf;         /* ... the last call's frames (pystack_source_location) */
	uint32_t stack_sid;      /* ... of this stack id */
	size_t *call_rows;       /* --profile-memory with shapes or stacks: each torch call's row */
	size_t ncall_rows, mem_next;
};

/* 0, or -ENOMEM with nothing left to free. */
int summary_build(struct summary *s, const struct seg_output_ctx *c);
void summary_free(struct summary *s);
int summary_write_text(FILE *f, const struct summary *s, const struct seg_output_ctx *c);
int summary_write_json(FILE *f, const struct summary *s, const struct seg_output_ctx *c);

/* @o (consumed) written as element @i of a JSON array, one a line: 0, or
 * -ENOMEM when it could not be made or written as text. */
int summary_put_item(FILE *f, json_object *o, size_t i);

#endif /* FVBPF_SUMMARY_H */
