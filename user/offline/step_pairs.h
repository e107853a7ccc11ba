/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The segments of a region on every rank of a job, grouped by training
 * step, for `fvbpf report`, `merge` and `export` (never by segment number:
 * ranks armed one after the other number the same step differently).
 *
 * A rank here is a stream: one process's segments in one directory
 * (directory, rank, restart, and pid where files are named by pid).
 *
 * By key: when every segment of the region has a step_key, the segments
 * with the same key are one step (the live side makes the key equal on
 * every rank for the same step).  A stream's second segment of a key
 * (never written by fvbpf) starts a step of its own.
 *
 * By time: else each segment, in order of its wall-clock start (each
 * directory's own clock offset applied: mf_file_wallclock()), joins the
 * step it overlaps most, measured against the step's first segment (its
 * anchor), among the steps begun after the stream's previous one, so that
 * a rank's steps stay in its own order and a step holds at most one
 * segment of a rank; a segment that overlaps none begins a step.  At most
 * SP_ACTIVE_MAX steps are candidates at a time (the latest: a bound on
 * time for segments that all overlap, which no job writes).
 *
 * Steps are numbered from 0 in the order of their earliest start.  A step
 * lacking a stream is a segment without counterpart on that rank.
 * Segments with counted false are left out unless asked for (counted in
 * uncounted); segments without wall-clock times cannot be placed (counted
 * in no_times).  Everything is charged to the budget.
 */
#ifndef FVBPF_STEP_PAIRS_H
#define FVBPF_STEP_PAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "offline/manifest_read.h"

#define SP_ACTIVE_MAX 256

struct sp_seg {
	size_t m, f;              /* ms[m].files[f] */
	size_t stream;
	size_t step;
	int64_t start, end;       /* CLOCK_REALTIME ns */
};

struct sp_stream {
	size_t m, f;              /* its first segment: who it is */
	size_t nsegs;
};

struct sp_step {
	size_t first, n;          /* segs[first .. first + n), by stream */
	int64_t start, end;       /* the earliest start, the latest end */
	bool disjoint;            /* some member overlaps no other member's time
				   * (by key only: by time each joined an overlap) */
};

struct step_pairs {
	bool by_key;
	struct sp_seg *segs;      /* by step, then stream */
	size_t nsegs;
	struct sp_stream *streams; /* by host, rank, restart, pid, directory */
	size_t nstreams;
	struct sp_step *steps;
	size_t nsteps;
	size_t uncounted;         /* counted false: left out (or in, when asked) */
	size_t no_times;          /* no wall-clock times: not placed */
	uint64_t charged;
};

/*
 * Pair the segments of @region (complete and incomplete) in the @n
 * manifests @ms (summaries read).  @with_uncounted: counted-false segments
 * take part too.  0, -ENOSPC (past @b) or -ENOMEM; step_pairs_free() either way.
 */
int step_pairs_build(struct step_pairs *p, const struct manifest *ms, size_t n, const char *region,
		     bool with_uncounted, struct mf_budget *b);
void step_pairs_free(struct step_pairs *p, struct mf_budget *b);
/* The file of segment @i. */
static inline const struct mf_file *sp_file(const struct step_pairs *p, const struct manifest *ms,
					    size_t i)
{
	return &ms[p->segs[i].m].files[p->segs[i].f];
}
/* Streams missing from step @s: the count, and (@out, at most @max) their indexes. */
size_t sp_missing(const struct step_pairs *p, size_t s, size_t *out, size_t max);
/* The overlap of two segments' wall-clock times (0 when none). */
int64_t sp_overlap(const struct sp_seg *a, const struct sp_seg *b);

#endif /* FVBPF_STEP_PAIRS_H */
