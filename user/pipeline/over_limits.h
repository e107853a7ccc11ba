/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What fvbpf counted but did not keep because a target drove it past a
 * bound, and the bounds themselves, for the exit report and the manifest
 * alike (both render from here, so both say the same):
 *   - per process (struct over_limits): what a traced process sent past the
 *     bounds of segment.h, api_pairing.h and gpu_join.h;
 *   - per session (struct bounds): names, symbol files and caches the
 *     target drove past theirs.
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
	uint64_t python_stacks;   /* --with-stack: stacks and code objects not kept
				   * (their bounds or --max-memory's share for tables) */
};

struct bounds {
	uint64_t symbol_files_evicted;   /* the symbolizer's file cache */
	uint64_t symbol_tables_capped;   /* files with symbols skipped or cut */
	uint64_t maps_capped;            /* /proc/PID/maps reads cut */
	uint64_t names_demangle_capped;  /* names too long to demangle, or cut */
	uint64_t names_capped;           /* names past the name table's bounds or its
					  * share of --max-memory */
	uint64_t addresses_not_cached;   /* address caches full */
};

/* The counters of @t, an open segment's included; true when any is set. */
bool over_limits_of(const struct session_target *t, struct over_limits *o);
/* The session's counters; true when any is set. */
bool bounds_collect(const struct session *s, struct bounds *b);

/* Exit report: one line each, only when a bound was hit. */
void over_limits_print(FILE *f, const struct session_target *t);
void over_limits_session_print(FILE *f, const struct session *s);
/* Manifest: processes[].over_limits, loss.over_limits, and "limits" (every bound). */
json_object *over_limits_json(const struct session_target *t);
json_object *over_limits_session_json(const struct session *s);
json_object *over_limits_bounds_json(void);

#endif /* FVBPF_OVER_LIMITS_H */
