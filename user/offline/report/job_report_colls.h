/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Collectives across ranks, per step of a region: each rank's collectives
 * (its summaries' "collectives") matched by process group and sequence
 * number; per collective each rank's arrival and exit on the wall clock,
 * the rank that arrived last, the wait it imposed (the others' time
 * between their arrival and its), and the transfer after it (the first
 * exit after the last arrival); per region the ranks ranked by the wait
 * they caused.  A collective seen by one rank only is counted, not shown.
 */
#ifndef FVBPF_JOB_REPORT_COLLS_H
#define FVBPF_JOB_REPORT_COLLS_H

#include <json-c/json.h>
#include <stdio.h>

#include "offline/report/job_report.h"

struct jr_coll_rank {
	size_t stream;            /* in r->pairs.streams */
	int64_t arrive_ns, end_ns; /* CLOCK_REALTIME */
};

struct jr_coll {
	const char *name, *pg;    /* interned in a manifest */
	const char *dtype;        /* "" not known */
	int64_t bytes;            /* the ranks' own (all agree), -1 not known or not agreed */
	uint64_t seq;
	size_t step;              /* in r->pairs.steps */
	size_t first, n;          /* its ranks: jr_colls.ranks[first .. first + n) */
	size_t last;              /* the rank that arrived last (index into its ranks) */
	int64_t wait_ns;          /* the others' waits for it, summed */
	int64_t transfer_ns;      /* the first exit after the last arrival */
};

struct jr_strag {
	size_t stream;
	size_t times_last;
	int64_t wait_caused_ns;
};

struct jr_colls {
	struct jr_coll *v;        /* by step, then by arrival of the last rank */
	size_t n;
	struct jr_coll_rank *ranks;
	size_t nranks;
	struct jr_strag *strag;   /* by wait caused, most first */
	size_t nstrag;
	uint64_t alone;           /* collectives that one rank only saw */
	uint64_t partial;         /* ... fewer ranks than others of their group */
	uint64_t no_group;        /* ... whose process group could not be read */
};

/* Collectives of @g's steps (its segments' summaries read): 0, -ENOMEM. */
int jr_colls_build(const struct job_report *r, const struct jr_region *g, struct jr_colls *c);
void jr_colls_free(struct jr_colls *c);
/* The text section ("Collectives"): nothing when there are none. */
void jr_colls_print(FILE *f, const struct job_report *r, const struct jr_colls *c);
/* Step @step's collectives as a JSON array; the stragglers list. */
json_object *jr_colls_step_json(const struct job_report *r, const struct jr_colls *c, size_t step);
json_object *jr_colls_stragglers_json(const struct job_report *r, const struct jr_colls *c);
/* Step @step's ranks: their time waiting in its collectives and in
 * transfer after the last arrival, summed. */
json_object *jr_colls_step_ranks_json(const struct job_report *r, const struct jr_colls *c,
				      size_t step);

#endif /* FVBPF_JOB_REPORT_COLLS_H */
