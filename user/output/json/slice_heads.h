/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The constant text of a region's trace slices, escaped once per segment:
 * `,\n{"ph":"X","cat":"user_annotation","name":"fvbpf.region::NAME","pid":P,"tid":`
 * before its thread, and `,"args":{"region":"NAME","depth":` before its depth.
 * Escaping the name twice per slice was a sixth of the writer's time with
 * 20,000 slices a segment (perf, tests/bench/replay_bench.c).
 */
#ifndef FVBPF_SLICE_HEADS_H
#define FVBPF_SLICE_HEADS_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/registry.h"

struct slice_head {
	char *head, *args;       /* NULL: not made yet (or no memory: the slow path) */
	size_t nhead, nargs;
};

struct slice_heads {
	const struct region_registry *reg;
	int64_t pid;
	struct slice_head *v;    /* per region id; NULL when out of memory */
	size_t n;
};

void slice_heads_init(struct slice_heads *h, const struct region_registry *reg, int64_t pid);
/* @region's texts, made on first use; NULL: write them the slow way. */
const struct slice_head *slice_heads_get(struct slice_heads *h, uint32_t region);
void slice_heads_free(struct slice_heads *h);

#endif /* FVBPF_SLICE_HEADS_H */
