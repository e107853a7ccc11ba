/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * `fvbpf report`: segment times per rank and the heaviest operators and
 * kernels across the ranks of a job, from the output directories of one or
 * more `fvbpf attach` runs (one per node, typically).
 *
 * A rank is hostname + rank + restart (+ pid when two processes of one
 * directory share a rank).  Incomplete segments are counted apart and left
 * out of every timing and operator figure; so are segments that do not
 * count (counted false: begun before the attach, ...) unless asked for.
 * Operators are the rows of kind cpu_op, user_annotation and the CUDA/NCCL
 * call kinds; kernels the GPU activity kinds (kernel, gpu_memcpy,
 * gpu_memset); region rows give the split of a region into the regions
 * inside it (its sub-regions, per rank), the region's own row being the
 * segment time.
 *
 * Steps: each region's segments of every rank paired by training step
 * (step_pairs.h), so that a step's segments are compared side by side and a
 * rank without a segment at a step is named.
 *
 * The slowest rank is flagged as a straggler only when its mean is at least
 * JR_STRAGGLER_PCT % over the median rank mean and the difference is more
 * than the ranks' own step-to-step spread (the median over ranks of max -
 * min of their segment times): a difference within either is noise.
 */
#ifndef FVBPF_JOB_REPORT_H
#define FVBPF_JOB_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "offline/manifest/manifest_read.h"
#include "offline/step_pairs.h"
#include "util/pair_index.h"

#define JR_TOP_DEFAULT 10
#define JR_TOP_MAX     100000
#define JR_STRAGGLER_PCT 5.0
/* Sub-regions kept per region (more are counted in subs_dropped), and how
 * deep the split goes below the region. */
#define JR_SUBS_MAX    64
#define JR_SPLIT_DEPTH 8
/* Listed in text (the JSON and the page have all of them, the page up to
 * its own bounds): steps, ranks of the split, ranks without a segment. */
#define JR_TEXT_STEPS  50
#define JR_TEXT_SPLIT_RANKS 16
#define JR_TEXT_MISSING 32
/* The text's clock lines: one per directory up to this many. */
#define JR_TEXT_CLOCKS 16
/* Labels of the ranks missing from one step in the JSON (all are counted). */
#define JR_JSON_MISSING 64

struct jr_colls;

struct jr_rank {
	char *host;
	char key[40];             /* "rank restart pid": its index key with host */
	int rank, restart;
	int pid;                  /* > 0 only when files were named by pid */
	size_t segments, incomplete, complete, uncounted;
	size_t steps_missing;     /* steps of its region without a segment of it */
	int64_t sum_ns, min_ns, max_ns;
	double mean_ms;           /* of the complete segments */
	int64_t *sub_ns;          /* per sub-region of the region: its time summed */
	uint64_t *sub_calls;      /* ... its count summed */
	size_t nsub;              /* entries of both (grown as sub-regions come) */
	/* Of its complete segments whose summary has a "dataloader": how many,
	 * their time, the trainer's wait for batches and the batches. */
	size_t dl_segments;
	int64_t dl_seg_ns, dl_wait_ns;
	uint64_t dl_batches;
};

/* A region inside the region: a region row of its summaries (name, parent). */
struct jr_sub {
	char *name;
	char *parent;             /* "" outermost on its thread */
	bool parent_known;        /* the summaries said (older ones did not: flat) */
	size_t depth;             /* 1: directly in the region, ...; 0: not in it */
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
	bool straggler;           /* the slowest rank is flagged (see above) */
	double spread_ms;         /* the ranks' own spread: median of max - min */
	size_t uncounted;         /* segments that do not count (left out unless asked for) */
	struct { const char *why; size_t n; } whys[4]; /* ... why, the first reasons */
	size_t whys_other;        /* ... with other reasons */
	struct jr_sub *subs;      /* as they came (ranks' arrays index them) */
	size_t nsubs, subcap;
	struct pair_index sub_index; /* name and parent -> subs, until sorted */
	size_t *sub_order;        /* subs in tree order: the region's own first, the
				   * biggest first among siblings, those not in it last */
	uint64_t subs_dropped;    /* rows past JR_SUBS_MAX distinct sub-regions */
	const struct sp_region *pairs; /* its steps (NULL: none placed) */
	struct jr_colls *colls;   /* its collectives across ranks (job_report_colls.h) */
};

struct job_report {
	struct jr_region *regions; /* most segments first, then by name */
	size_t nregions, cap;
	struct pair_index region_index; /* name -> regions, until sorted */
	size_t ndirs, nhosts, nranks;
	struct mf_budget *budget;  /* the tables are charged to it (NULL: not limited) */
	bool with_uncounted;       /* counted-false segments in the figures too */
	struct step_pairs pairs;   /* every region's steps */
	const struct manifest *ms; /* what the steps point into (job_report_finish()) */
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
/* The label of stream @i of the steps (its rank, as jr_rank_label()). */
void jr_stream_label(const struct job_report *r, size_t i, char *buf, size_t len);
/* A directory's clock was moved by the collectives it shares with the first. */
bool jr_any_skew(const struct job_report *r);
/* The rank number of stream @i of the steps. */
int jr_stream_rank_number(const struct job_report *r, size_t i);
/* Segment @i of the steps (its rank's member of a step). */
const struct mf_file *jr_step_file(const struct job_report *r, size_t i);
/* The rank of @g a stream belongs to (NULL: none, cannot happen). */
const struct jr_rank *jr_stream_rank(const struct job_report *r, const struct jr_region *g,
				     size_t stream);
/* Rank @k's time in sub-region @i of @g (summed), its calls. */
int64_t jr_sub_ns(const struct jr_region *g, const struct jr_rank *k, size_t i, uint64_t *calls);
/* Rank @k's time in @g outside its direct sub-regions (summed, >= 0). */
int64_t jr_outside_ns(const struct jr_region *g, const struct jr_rank *k);
/* What a step's segments say side by side. */
struct jr_step_stats {
	size_t members, complete; /* segments at the step, complete ones */
	size_t streams;           /* ranks of the region (streams) */
	int64_t min_ns, max_ns;   /* of the complete ones */
	size_t slowest;           /* the complete one with max_ns: an index into pairs.segs */
	bool have;                /* at least one complete */
};
void jr_step_stats(const struct job_report *r, size_t step, struct jr_step_stats *st);
/* Microseconds from ns as a JSON number, exactly (3 decimals, any sign). */
json_object *jr_json_us(int64_t ns);
/* "2026-01-01T00:00:00.000000Z" for CLOCK_REALTIME ns. */
void jr_wallclock(int64_t ns, char *buf, size_t len);
/* The steps and the split of @g as text (job_report_steps.c). */
int jr_print_steps(FILE *f, const struct job_report *r, const struct jr_region *g);
int jr_print_split(FILE *f, const struct job_report *r, const struct jr_region *g);
/* @s for a terminal, malloc()ed (NULL: no memory). */
char *jr_tty(const char *s);
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
