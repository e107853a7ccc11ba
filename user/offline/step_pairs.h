/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The segments of each region on every rank of a job, grouped by training
 * step, for `fvbpf report`, `merge` and `export` (never by segment number:
 * ranks armed one after the other number the same step differently).
 * Regions are paired apart (a step holds segments of one region).
 *
 * A rank here is a stream: one process's segments of a region in one
 * directory (directory, rank, restart, and pid where files are named by
 * pid).
 *
 * By key: when every segment of a region has a step_key, the segments
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
 * Steps are numbered from 0 (each region's its own) in the order of their
 * earliest start.  A step
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

#include "offline/manifest/manifest_read.h"

#define SP_ACTIVE_MAX 256

struct sp_seg {
	size_t m, f;              /* ms[m].files[f] */
	size_t stream;
	size_t step;              /* in steps[] (all regions') */
	int64_t start, end;       /* CLOCK_REALTIME ns */
};

struct sp_stream {
	size_t m, f;              /* its first segment: who it is, its region */
	size_t nsegs;
};

struct sp_step {
	size_t first, n;          /* segs[first .. first + n), by stream */
	size_t region;            /* in regions[] */
	size_t number;            /* within its region: 0, 1, ... by start */
	int64_t start, end;       /* the earliest start, the latest end */
	bool disjoint;            /* a member overlaps no other member's time
				   * (by key only: by time each joined an overlap) */
};

struct sp_region {
	const char *name;         /* a manifest's */
	bool by_key;
	size_t first_step, nsteps;
	size_t first_stream, nstreams;
	size_t uncounted;         /* counted false: left out (or in, when asked) */
	size_t no_times;          /* no wall-clock times: not placed */
};

struct step_pairs {
	struct sp_seg *segs;      /* by region, step, stream */
	size_t nsegs;
	struct sp_stream *streams; /* by region, host, rank, restart, pid, directory */
	size_t nstreams;
	struct sp_step *steps;    /* by region, then number */
	size_t nsteps;
	struct sp_region *regions; /* by name */
	size_t nregions;
	size_t uncounted, no_times; /* the regions' summed */
	uint64_t charged;
};

struct sp_opts {
	const char *region;       /* NULL: every region */
	bool with_uncounted;      /* counted-false segments take part too */
	/* NULL, or false for a segment to leave out (not counted anywhere) */
	bool (*keep)(const struct manifest *m, const struct mf_file *f);
};

/*
 * Pair the segments (complete and incomplete) of the @n manifests @ms
 * (summaries read).  0, -ENOSPC (past @b) or -ENOMEM; step_pairs_free()
 * either way.
 */
int step_pairs_build(struct step_pairs *p, const struct manifest *ms, size_t n,
		     const struct sp_opts *o, struct mf_budget *b);
void step_pairs_free(struct step_pairs *p, struct mf_budget *b);
/* The region named @name, or NULL. */
const struct sp_region *sp_region_find(const struct step_pairs *p, const char *name);
/* The file of segment @i. */
static inline const struct mf_file *sp_file(const struct step_pairs *p, const struct manifest *ms,
					    size_t i)
{
	return &ms[p->segs[i].m].files[p->segs[i].f];
}
/* Streams of its region missing from step @s: the count, and (@out, at
 * most @max) their indexes. */
size_t sp_missing(const struct step_pairs *p, size_t s, size_t *out, size_t max);
/* Whether step @s holds a segment of @stream. */
bool sp_has_stream(const struct step_pairs *p, size_t s, size_t stream);
/* The overlap of two segments' wall-clock times (0 when none). */
int64_t sp_overlap(const struct sp_seg *a, const struct sp_seg *b);

#endif /* FVBPF_STEP_PAIRS_H */
