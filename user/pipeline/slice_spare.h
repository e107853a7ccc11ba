/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * One slice array kept from a written segment for the next segment.  A
 * segment's slice array is big enough to live in its own mapping (see
 * budget_tune_malloc()), so a fresh one per segment costs a page fault and a
 * zeroed page per 4 KiB (about 1.7 us each on the 2-vCPU VM: 200 pages,
 * a third of a millisecond, for 20,000 slices) and freeing it unmaps them
 * again.  The writer thread puts the array back, the consumer takes it.
 *
 * The kept array is not charged to --max-memory; it is bounded by
 * SLICE_SPARE_MAX and not kept under memory pressure.
 */
#ifndef FVBPF_SLICE_SPARE_H
#define FVBPF_SLICE_SPARE_H

#include <stdbool.h>
#include <stddef.h>

#define SLICE_SPARE_MIN (64u << 10) /* smaller ones are the heap's, no faults to save */
#define SLICE_SPARE_MAX (4u << 20)

/* The kept array and its size in bytes (@bytes), or NULL. */
void *slice_spare_take(size_t *bytes);
/* Keep @p (@bytes big) if none is kept and its size fits: true, then the
 * caller must not free it. */
bool slice_spare_put(void *p, size_t bytes);

#endif /* FVBPF_SLICE_SPARE_H */
