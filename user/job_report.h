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

#include "manifest_read.h"
#include "pair_index.h"

#define JR_TOP_DEFAULT 10
#define JR_TOP_MAX     100000

struct jr_rank {
	char *host;
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
	size_t ndirs, nhosts, nranks;
};

/* Aggregate the summaries of @n manifests (mf_read_summaries(.., true)
 * done).  0 or -ENOMEM. */
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
json_object *job_report_json(const struct job_report *r, unsigned int top);

#endif /* FVBPF_JOB_REPORT_H */
