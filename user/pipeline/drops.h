/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Ring-buffer drops: charged to the segment they hit, resync after a gap. */
#ifndef FVBPF_DROPS_H
#define FVBPF_DROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/session.h"

enum drops_verdict { DROPS_APPLY, DROPS_SKIP };

/* The process had lost @drops records by now: charge the new ones to the
 * open segment, else to the time between segments.  True when there were
 * new ones. */
bool drops_charge(struct session_target *t, uint64_t drops);
/* The same from the low 32 bits of the count (torch operator records,
 * which stay small): extended from the count charged so far; an older
 * count behind it adds nothing.  Marks the process suspect. */
bool drops_charge_low32(struct session_target *t, uint32_t drops);
/* A --step-by scope end numbered @step: after a gap in the numbers (a
 * step end lost to a drop) the open step segment is cut where its last
 * record was, written as incomplete.  True when it cut. */
bool drops_step_end(struct session_target *t, uint32_t step);
/* Before a region record goes to the segment tracker: charge its drops,
 * cut a segment whose end was lost; DROPS_SKIP for records that belong to
 * no segment the loader can see. */
enum drops_verdict drops_before_region(struct session_target *t,
				       const struct fvbpf_region_event *re);
/* After it (@before: the segment open before it): note which invocation
 * the open segment is, cut what a segment-ending record left open. */
void drops_after_region(struct session_target *t, const struct fvbpf_region_event *re,
			const struct segment *before);
/* At the end: BPF's final count, the rest charged between segments. */
void drops_settle(struct session_target *t, uint64_t bpf_drops);

#endif /* FVBPF_DROPS_H */
