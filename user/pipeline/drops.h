/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Ring-buffer drops: charged to the segment they hit, resync after a gap. */
#ifndef FVBPF_DROPS_H
#define FVBPF_DROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "fvbpf_events.h"
#include "pipeline/segment.h"

/* Drop recovery's state for one process (a session target's `loss`):
 * drops.c alone writes it; the manifest and exit report read the counts. */
struct drop_state {
	uint64_t drops_seen;    /* BPF's count for this process, as far as charged */
	uint64_t drops_outside; /* of those, charged to no written segment */
	uint64_t last_ts;       /* latest record of this process, GPU batches aside */
	bool suspect;           /* records lost since the depths last agreed */
	uint32_t steps_seen;    /* number of the latest --step-by scope end */
	bool resyncing;         /* inside regions whose outermost begin was lost */
	bool cut_after;         /* cut the segment after this region record */
	bool outer_known;       /* BPF's invocation number of the open segment: */
	uint32_t outer;         /* ... this, */
	uint32_t outer_seg;     /* ... if the open segment is still this one */
	uint64_t lost_ends;     /* segments cut because drops lost their end */
	uint64_t lost_begins;   /* segments never seen: drops lost their begin */
	uint64_t loss_warned_ns;
	uint64_t loss_warn_suppressed;
};

/* The process had lost @drops records by now: charge the new ones to the
 * open segment of @tr, else to the time between segments.  True when there
 * were new ones. */
bool drops_charge(struct drop_state *d, struct seg_tracker *tr, uint64_t drops);
/* The same from the low 32 bits of the count (torch operator records,
 * which stay small): extended from the count charged so far; an older
 * count behind it adds nothing.  Marks the process suspect. */
bool drops_charge_low32(struct drop_state *d, struct seg_tracker *tr, uint32_t drops);
/* A --step-by scope end numbered @step: after a gap in the numbers (a
 * step end lost to a drop) the open step segment is cut where its last
 * record was, written as incomplete.  True when it cut. */
bool drops_step_end(struct drop_state *d, struct seg_tracker *tr, uint32_t step);
/*
 * The one way a region boundary reaches the segment tracker, for region
 * records and for gated torch scopes alike (@re: region_id, depth, outer,
 * drops; hdr's type BEGIN or END, tid and ts): charge its drops, cut a
 * segment whose end was lost, skip records that belong to no segment the
 * loader can see, else seg_on_begin()/seg_on_end().  0 or -errno.
 */
int drops_region(struct drop_state *d, struct seg_tracker *tr, const struct fvbpf_region_event *re);
/*
 * At the end, before the open segment is cut: BPF's state @st for the
 * process says whether its end came and was lost to drops no later record
 * could tell of (a later step end for a --step-by segment, @step_segment;
 * else a later outermost invocation, or BPF outside every region).  Then
 * it is cut at its last record, lost_end, counted; true.  Not for time
 * windows, whose ends are the loader's.
 */
bool drops_finish(struct drop_state *d, struct seg_tracker *tr, const struct fvbpf_proc_state *st,
		  bool step_segment);
/* A record at @ts (GPU batches aside): where a segment that lost its end
 * is cut. */
void drops_saw(struct drop_state *d, uint64_t ts);
/* At the end: BPF's final count, the rest charged between segments. */
void drops_settle(struct drop_state *d, struct seg_tracker *tr, uint64_t bpf_drops);

/* A target's drop recovery, zeroed (NULL: out of memory); drop_state__free()
 * ends it (NULL is fine). */
struct drop_state *drop_state__new(void);
void drop_state__free(struct drop_state *p);

#endif /* FVBPF_DROPS_H */
