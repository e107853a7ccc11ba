/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * `fvbpf merge`: one Chrome trace with one step of every rank side by side.
 *
 * Step choice: the region's segments of every rank are paired by training
 * step (step_pairs.h: the step key, else wall-clock overlap; never the
 * segment number alone); --step N takes the region's step N (numbered from
 * 0 in time order, as `fvbpf report` and `fvbpf export` number them),
 * --segment N the step of the reference (lowest) rank's segment N, and by
 * default the first step that every rank has complete (else the first with
 * the most ranks).  The step's segments are merged, the lowest rank's the
 * reference; a rank without a segment at that step is named, and segments
 * placed that do not overlap the reference's in time are warned about (a
 * step key that the clocks contradict).
 *
 * Clock alignment: a source timestamp t (CLOCK_MONOTONIC, µs) becomes
 * t + offset(node) - base, offset = CLOCK_REALTIME - CLOCK_MONOTONIC of the
 * node (mean of the pairs read at attach start and end; without them, the
 * summary's start_wallclock, to 1 µs), base = the earliest aligned segment
 * start.  Arithmetic is in integer nanoseconds, checked: a segment whose
 * aligned times do not fit in int64 is refused, an event whose shifted ts
 * does not fit is dropped (counted).
 *
 * Rewriting: source pids map to (rank index + 1) * TM_PID_STRIDE + k in the
 * order they appear, process names get "rank R (host): " in front,
 * process_sort_index follows rank order, and numeric event ids (flows)
 * become (rank index + 1) << 32 | id.  Sources are streamed one event at a
 * time (at most TM_EVENT_MAX bytes each, json_stream.h); nothing holds a
 * whole trace, and the merged file's metadata is written a rank at a time.
 */
#ifndef FVBPF_TRACE_MERGE_H
#define FVBPF_TRACE_MERGE_H

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>

#include "offline/manifest/manifest_read.h"

#define TM_PID_STRIDE  1000                 /* distinct pids per source, at most */
#define TM_EVENT_MAX   (1u << 20)           /* bytes of one event */
#define TM_TRACE_MAX   (4ULL << 30)         /* bytes of one source trace file */
#define TM_SOURCES_MAX 100000
#define TM_MISSING_SHOWN 16                 /* ranks without a segment named on stderr */

struct tm_pid_map {
	int64_t from, to;
	int named;                 /* a process_name event was seen */
};

/* One rank's source: what tm_rewrite_event() needs. */
struct tm_src {
	unsigned int index;        /* rank order, 0 = reference */
	int64_t shift_ns;          /* offset - base */
	char prefix[320];          /* "rank 3 (node1)" */
	struct tm_pid_map *pids;
	size_t npids, pidcap;
	uint64_t events, dropped;  /* dropped: no pid to keep apart, or ts out of range */
	struct mf_budget *budget;  /* the pid map is charged to it (NULL: not limited) */
};

struct tm_pick {
	const struct manifest *m;
	const struct mf_file *f;
	const char *how;           /* "reference", "same step (time overlap)", "same step (step key)" */
	int64_t overlap_ns;        /* with the reference, on the wall clock (its own span for it) */
	int64_t shift_ns;
};

struct tm_plan {
	char *region;
	size_t step;               /* the region's step merged */
	bool by_key;               /* paired by step key (else by time overlap) */
	const char *chosen;        /* how the step was chosen, for the output */
	struct tm_pick *picks;     /* rank order */
	size_t n;
	int64_t base_ns;           /* realtime ns of the merged trace's 0 */
	char **missing;            /* labels of ranks without a segment at the step */
	size_t nmissing;
	size_t apart;              /* picks that do not overlap the reference */
	size_t uncounted;          /* segments of the region left out (counted false) */
};

struct tm_opts {
	const char *output;
	const char *region;        /* NULL: the most common */
	long long segment;         /* >= 0: the step of the reference rank's segment N */
	long long step;            /* >= 0: the region's step N */
	bool with_uncounted;       /* counted-false segments take part */
	FILE *info;                /* where to say what was merged (NULL: nowhere) */
};

/* Pick the segments to merge from @n manifests (summaries read); the
 * tables are charged to ms->budget. */
int tm_plan_build(struct manifest *ms, size_t n, const struct tm_opts *o, struct tm_plan *p,
		  char *err, size_t errlen);
void tm_plan_free(struct tm_plan *p);
/* Set up @s for pick @i of @p. */
void tm_src_init(struct tm_src *s, const struct tm_plan *p, size_t i);
void tm_src_free(struct tm_src *s);
/* Rewrite one event in place: 0 keep, 1 drop, negative errno. */
int tm_rewrite_event(json_object *ev, struct tm_src *s);
/* Metadata events for @s's processes: names not seen, sort indexes. */
void tm_write_process_meta(FILE *out, const struct tm_src *s, int *first);
/*
 * Stream the events of @name, a regular file beneath the directory @dirfd
 * (no link, see open_regular_at()), rewritten, into @out; @path names it in
 * messages.
 */
int tm_stream_at(FILE *out, int dirfd, const char *name, const char *path, struct tm_src *s,
		 int *first, char *err, size_t errlen);
/* The same for @path (a regular file, its last component not a link). */
int tm_stream_file(FILE *out, const char *path, struct tm_src *s, int *first, char *err,
		   size_t errlen);
/* `fvbpf merge`: the whole job.  0 or negative errno, message in @err. */
int trace_merge(struct manifest *ms, size_t n, const struct tm_opts *o, char *err, size_t errlen);
/* ns as µs with three decimals, signed ("-1.500"). */
void tm_format_us(char *buf, size_t len, int64_t ns);

#endif /* FVBPF_TRACE_MERGE_H */
