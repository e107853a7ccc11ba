/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What a traced process sent past fvbpf's bounds (segment.h, api_pairing.h,
 * gpu_join.h): counted, never stored.  One place adds the counters up for
 * the exit report and the manifest, so that both say the same.
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

#endif /* FVBPF_OVER_LIMITS_H */
