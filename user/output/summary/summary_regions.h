/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A segment's region slices as summary rows see them: the time of each
 * outside what it encloses directly on its thread (its self time), and the
 * region slice it lies in.  Self time follows torch's rule for its
 * user_annotation rows (key_averages: a scope's self CPU time is its time
 * less that of its direct children): a slice's direct children are the
 * region slices, torch calls and outermost CUDA calls on its thread whose
 * innermost enclosing event is that slice.  Where a slice and a torch call
 * have the same bounds (a torch scope that opens a segment, -r torch:GLOB)
 * the call is taken as the outer one, so that the region's self time is the
 * scope's own.
 */
#ifndef FVBPF_SUMMARY_REGIONS_H
#define FVBPF_SUMMARY_REGIONS_H

#include <stdint.h>

#include "pipeline/segment.h"

/* How far down the open events of a thread a partly overlapping one looks
 * for its parent (events nest; this bounds a target that makes them not). */
#define SUMMARY_REGIONS_SEARCH 64

struct region_times {
	uint64_t *self_ns;   /* per slice */
	long *parent;        /* per slice: the index of the slice it lies in, -1 none */
};

/* 0, or -ENOMEM (nothing to free).  Both arrays have seg->nslices entries. */
int region_times_build(const struct segment *seg, struct region_times *t);
void region_times_free(struct region_times *t);

#endif /* FVBPF_SUMMARY_REGIONS_H */
