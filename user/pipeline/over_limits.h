/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What a traced process sent past fvbpf's bounds (segment.h, api_pairing.h,
 * gpu_join.h): counted, never stored.  One place adds the counters up for
 * the exit report and the manifest, so that both say the same.
 *
 * And what fvbpf stopped keeping because a target drove it past a bound of
 * the session (names, symbol files, caches): struct bounds, below.
 */
#ifndef FVBPF_OVER_LIMITS_H
#define FVBPF_OVER_LIMITS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/session.h"

struct over_limits {
	uint64_t slices;          /* region slices past a segment's bound */
	uint64_t calls;           /* CUDA/NCCL calls past a segment's bound */
	uint64_t gpu;             /* GPU records past a segment's bound */
	uint64_t kernel_names;    /* agent kernel names past the process's bound */
	uint64_t region_threads;  /* region events of threads past the bound */
	uint64_t cuda_threads;    /* call events of threads past the bound */
};

/* The counters of @t, an open segment's included; true when any is set. */
bool over_limits_of(const struct session_target *t, struct over_limits *o);
/* One report line ("    over limits: ...") when any bound was hit. */
void over_limits_print(FILE *f, const struct session_target *t);
json_object *over_limits_json(const struct session_target *t);
/* The bounds themselves. */
json_object *over_limits_bounds_json(void);

/* The session's bounds (moved in from bounds.h). */
struct bounds {
	uint64_t symbol_files_evicted;   /* the symbolizer's file cache */
	uint64_t symbol_tables_capped;   /* files with symbols skipped or cut */
	uint64_t maps_capped;            /* /proc/PID/maps reads cut */
	uint64_t names_demangle_capped;  /* names too long to demangle, or cut */
	uint64_t kernel_names_capped;    /* names past the name table's bounds */
	uint64_t addresses_not_cached;   /* address caches full */
};

void bounds_collect(const struct session *s, struct bounds *b);
bool bounds_any(const struct bounds *b);
/* Add these bounds themselves to the manifest's "limits" object. */
void bounds_limits_json(json_object *limits);
/* The exit report's line and the manifest's object of the session's counters. */
void over_limits_session_print(FILE *f, const struct session *s);
json_object *over_limits_session_json(const struct session *s);

#endif /* FVBPF_OVER_LIMITS_H */
