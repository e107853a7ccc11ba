/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * `fvbpf report`: segment times per rank and the heaviest operators and
 * kernels across the ranks of a job, from the output directories of one or
 * more `fvbpf attach` runs (one per node, typically).
 *
 * A rank is hostname + rank + restart (+ pid when two processes of one
 * directory share a rank).  Incomplete segments are counted apart and left
 * out of every timing and operator figure.  Operators are the rows of kind
 * cpu_op, user_annotation and the CUDA/NCCL call kinds; kernels the GPU
 * activity kinds (kernel, gpu_memcpy, gpu_memset); region rows are the
 * segment times themselves and are not listed.
 */
#ifndef FVBPF_JOB_REPORT_H
#define FVBPF_JOB_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "offline/manifest_read.h"
#include "util/pair_index.h"

#define JR_TOP_DEFAULT 10
#define JR_TOP_MAX     100000

struct jr_rank {
	char *host;
	char key[40];             /* "rank restart pid": its index key with host */
	int rank, restart;
	int pid;                  /* > 0 only when files were named by pid */
	size_t segments, incomplete, complete;
	int64_t sum_ns, min_ns, max_ns;
	double mean_ms;           /* of the complete segments */
};

struct jr_op {
	char *name, *kind;
	int64_t device_ns, cpu_ns, self_cpu_ns, self_device_ns;
	uint64_t count;
};

struct jr_region {
	char *name;
	size_t segments, incomplete;
	struct jr_rank *ranks;    /* sorted: host, rank, restart, pid */
	size_t nranks, cap;
	struct pair_index rank_index; /* host and key -> ranks, until sorted */
	struct jr_op *ops;
	size_t nops, opcap;
	struct pair_index index;  /* name and kind -> ops */
	bool have_slowest;        /* at least one rank with a complete segment */
	size_t slowest;           /* index into ranks */
	double median_ms, over_ms, over_pct;
};

struct job_report {
	struct jr_region *regions; /* most segments first, then by name */
	size_t nregions, cap;
	struct pair_index region_index; /* name -> regions, until sorted */
	size_t ndirs, nhosts, nranks;
	struct mf_budget *budget;  /* the tables are charged to it (NULL: not limited) */
};

/*
 * Streaming, as `fvbpf report` does: job_report_init(), then per manifest
 * mf_read_summaries_each(m, NULL, jr_row, r) and job_report_add(r, m), then
 * job_report_finish().  Only the tables (ranks, operators) are held, never
 * a summary.  Each returns 0, -ENOMEM or -ENOSPC (past @budget).
 */
void job_report_init(struct job_report *r, struct mf_budget *budget);
/* An mf_row_fn: one summary row of @f into the report (@ctx). */
int jr_row(void *ctx, const struct manifest *m, const struct mf_file *f, json_object *row);
/* @m's segments (and the rows it kept, mf_read_summaries(.., true)). */
int job_report_add(struct job_report *r, const struct manifest *m);
/* Ranks sorted, slowest ranks, regions sorted; @n manifests were added. */
int job_report_finish(struct job_report *r, const struct manifest *ms, size_t n);
/* All of it at once, from manifests whose rows were kept
 * (mf_read_summaries(.., true)).  0 or -ENOMEM. */
int job_report_build(const struct manifest *ms, size_t n, struct job_report *r);
void job_report_free(struct job_report *r);
/* "node1 rank 3", "node1 rank 3 restart 1", "... pid 1234" (raw bytes). */
void jr_rank_label(const struct jr_rank *k, char *buf, size_t len);
/* True for the GPU activity kinds (the kernel table). */
bool jr_kind_is_device(const char *kind);
/* The @top heaviest operators (@device false) or kernels of @g, by device
 * time, or by CPU time when none has device time (*@by_cpu).  Returns the
 * count; *@out is malloc()ed (free it). */
size_t jr_top(const struct jr_region *g, bool device, unsigned int top, const struct jr_op ***out,
	      bool *by_cpu);
int job_report_print(FILE *f, const struct job_report *r, unsigned int top);
/* The report as one JSON object, all in memory (tests, small reports). */
json_object *job_report_json(const struct job_report *r, unsigned int top);
/* The same object written to @f a rank at a time (a region may have
 * 100,000 ranks: json-c would spend a kilobyte on each). */
int job_report_print_json(FILE *f, const struct job_report *r, unsigned int top);

/*
 * The report as one self-contained HTML page written to @path (atomically:
 * a temporary name, then renamed; the sudo user's), with charts, tables and
 * links to the files of @ms relative to @path's directory.  0, or a
 * negative errno with a one-line message in @err.
 */
int job_report_html(const char *path, const struct job_report *r, const struct manifest *ms,
		    size_t n, unsigned int top, char *err, size_t errlen);

#endif /* FVBPF_JOB_REPORT_H */
