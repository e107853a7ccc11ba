/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Closed segments held until their GPU records came. */
#ifndef FVBPF_SEG_CLOSE_H
#define FVBPF_SEG_CLOSE_H

#include <stddef.h>
#include <stdint.h>

#include "model/session.h"

/* A target's closed segments waiting for their GPU records (t->held). */
struct held_segment {
	struct segment *seg;
	uint64_t until;             /* CLOCK_MONOTONIC end of its wait */
};

struct held_queue {
	struct held_segment *segs;
	size_t n, cap;
};

/* An empty queue (NULL: out of memory); held_queue__free() frees it and the
 * segments still in it, never written (NULL is fine). */
struct held_queue *held_queue__new(void);
void held_queue__free(struct held_queue *q);

/* The segment tracker's close callback (@ctx the target): count, charge
 * drops, then hold the segment or hand it to the writer. */
void seg_close_segment(struct segment *seg, void *ctx);
/* Segment @seq of target @ctx, open or held; NULL when gone. */
struct segment *seg_close_find(void *ctx, uint32_t seq);
/* Write held segments that are whole, or whose wait is over (@force: all). */
void seg_close_release(struct session_target *t, bool force);
/* Consume and release until nothing is held or the GPU wait is over. */
void seg_close_wait(struct session *s);

#endif /* FVBPF_SEG_CLOSE_H */
