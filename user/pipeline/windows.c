// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --window: a target's time windows cut one after another, by its records'
 * times or, when none come, by the clock.
 */
#include "model/session.h"
#include "pipeline/segment.h"
#include "pipeline/windows.h"
#include "util/clock.h"
#include "util/log.h"
#include "proc/proc_info.h"

void window_cut_until(struct session *s, struct session_target *t, uint64_t ts)
{
	uint32_t r = (uint32_t)s->window_region;
	uint64_t now;

	/* A time from the target (the fast path's rings) may lie far ahead:
	 * windows are cut up to the clock at most. */
	if (t->next_cut && ts >= t->next_cut) {
		now = clock_ns(CLOCK_MONOTONIC);
		if (ts > now)
			ts = now;
	}
	while (t->next_cut && ts >= t->next_cut && !t->finished) {
		/* consecutive: one window's end is the next one's start */
		if (seg_on_end(t->tracker, (uint32_t)t->proc->pid, r, t->next_cut) ||
		    seg_on_begin(t->tracker, (uint32_t)t->proc->pid, r, t->next_cut))
			log_warn("pid %d: cannot cut a time window", t->proc->pid);
		s->reg->defs[r].entered++;
		t->next_cut += s->window_ns;
	}
}

void window_idle_cut(struct session *s, struct session_target *t)
{
	/* Records are drained every 20 ms: a window is cut by the clock only
	 * once its late records must have come, so none lands after its end. */
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (t->next_cut && now > t->next_cut + 200000000ull)
		window_cut_until(s, t, now - 200000000ull);
}
