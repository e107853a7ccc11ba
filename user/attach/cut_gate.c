// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "attach/cut_gate.h"
#include "attach/target.h"
#include "util/checked_math.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/start_time.h"
#include "pipeline/segment.h"
#include "probes/torch_probes.h"
#include "proc/proc_info.h"

/* How long ranks' first segments wait for each other at most. */
#define ALIGN_WAIT_NS (30ull * 1000000000ull)

/* "14:05:10.000" in local time, for the log line. */
static void local_hms(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf + 8, len > 8 ? len - 8 : 0, ".%03u",
			 (unsigned int)(real_ns % 1000000000ull / 1000000ull));
}

/* --start-at's instant on CLOCK_MONOTONIC, or @mono when none or past. */
static uint64_t start_at_mono(const struct attach_opts *o, uint64_t mono, uint64_t real)
{
	uint64_t at;
	char hms[32];

	if (!o->start_at_real_ns && !o->start_every_ns)
		return mono;
	at = start_time_instant(o->start_at_real_ns, o->start_every_ns, real);
	local_hms(at, hms, sizeof(hms));
	if (at <= real) {
		log_warn("--start-at %s is past: segments are cut from now", hms);
		return mono;
	}
	log_info("segments wait for --start-at %s (in %.1f s)", hms, (double)(at - real) / 1e9);
	return mono + (at - real);
}

/* Ranks armed together whose firsts are compared: rank, not finished. */
static bool aligns(const struct session_target *t)
{
	return t->proc->rank_from_env && t->armed && !t->finished;
}

/* Marks @s's ranks' first segments when there are two or more of them. */
static void align_start(struct session *s)
{
	int i, n = 0;

	for (i = 0; i < s->ntargets; i++)
		n += aligns(&s->targets[i]);
	if (n < 2)
		return;
	for (i = 0; i < s->ntargets; i++)
		s->targets[i].align_first = aligns(&s->targets[i]);
	s->align_until_ns = s->cut_from_ns + ALIGN_WAIT_NS;
}

/*
 * Every rank's first segment is here (or the wait is over).  The one that
 * began last is the common first step; a rank whose first segment shares
 * less than half of the shorter of the two with it ran the step before
 * (the cut fell between the ranks' ends of one step: the two only touch
 * at that end) and that segment does not count.  A rank that merely began
 * late shares all of its step with the others.
 */
static void align_decide(struct session *s)
{
	const struct segment *last = NULL;
	uint64_t lo, hi, shared, shorter;
	struct segment *seg;
	int i;

	for (i = 0; i < s->ntargets; i++)
		if (s->targets[i].align_seg &&
		    (!last || s->targets[i].align_seg->start_ns > last->start_ns))
			last = s->targets[i].align_seg;
	for (i = 0; i < s->ntargets; i++) {
		struct session_target *t = &s->targets[i];

		t->align_first = false;
		seg = t->align_seg;
		if (!seg)
			continue;
		seg->align_pending = false;
		lo = seg->start_ns > last->start_ns ? seg->start_ns : last->start_ns;
		hi = seg->end_ns < last->end_ns ? seg->end_ns : last->end_ns;
		shared = hi > lo ? hi - lo : 0;
		shorter = span_u64(seg->start_ns, seg->end_ns);
		if (span_u64(last->start_ns, last->end_ns) < shorter)
			shorter = span_u64(last->start_ns, last->end_ns);
		if (seg != last && 2 * shared < shorter) {
			seg->not_counted = SEG_WHY_EARLY;
			if (t->tracker->counted)
				t->tracker->counted--;
			log_info("PID %d: its first step began a step before the other ranks' first; "
				 "that segment is not counted", t->proc->pid);
		}
	}
	s->align_until_ns = 0;
}

static void align_tick(struct session *s)
{
	int i;

	if (!s->align_until_ns)
		return;
	for (i = 0; i < s->ntargets && clock_ns(CLOCK_MONOTONIC) < s->align_until_ns; i++)
		if (s->targets[i].align_first && !s->targets[i].finished)
			return;
	align_decide(s);
}

/* --record-shapes: a torch build measured for the first time (6-7 s)
 * would leave the first segments without shapes: they wait for it. */
static bool shapes_pending(const struct session *s)
{
	int i;

	for (i = 0; i < s->ntargets; i++)
		if (s->targets[i].torchp->plans_job && !s->targets[i].finished)
			return true;
	return false;
}

/* The cut has come: every armed process goes live, windows start, the
 * ranks' first segments will be compared. */
static void open_now(struct session *s)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	int i;

	if (now > s->cut_from_ns)
		s->cut_from_ns = now;
	s->meta.cut_from_ns = s->cut_from_ns;
	s->cut_waiting = false;
	for (i = 0; i < s->ntargets; i++) {
		struct session_target *t = &s->targets[i];

		t->tracker->cut_from_ns = s->cut_from_ns;
		if (target_go_live(s, t))
			log_warn("PID %d: cannot turn its markers on: %s", t->proc->pid, strerror(errno));
		if (t->window_pending && target_window_start(s, t, s->cut_from_ns))
			log_warn("pid %d: cannot start its time windows", t->proc->pid);
	}
	align_start(s);
	/* the user was told segments wait: say when they no longer do (last:
	 * what follows the line is live) */
	if (s->cut_shapes_said)
		log_info("the layout measurement is in: segments begin");
}

void cut_gate_open(struct session *s, const struct attach_opts *o, uint64_t arming_began_ns)
{
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME);
	unsigned int armed = 0;
	int i;

	s->cut_from_ns = start_at_mono(o, mono, real);
	s->meta.start_at = s->cut_from_ns != mono;
	s->meta.armed_in_ns = mono - arming_began_ns;
	for (i = 0; i < s->ntargets; i++)
		armed += s->targets[i].armed;
	s->meta.armed_processes = armed;
	if (armed > 1)
		log_info("%u processes armed in %.2f s; their segments begin together", armed,
			 (double)s->meta.armed_in_ns / 1e9);
	s->cut_shapes_said = shapes_pending(s);
	if (s->cut_shapes_said)
		log_info("segments wait for the torch build's layout measurement (--record-shapes, "
			 "once per build and user, cached), so that the first one has shapes");
	cut_gate_tick(s);
}

void cut_gate_tick(struct session *s)
{
	if (s->cut_waiting && clock_ns(CLOCK_MONOTONIC) >= s->cut_from_ns && !shapes_pending(s))
		open_now(s);
	align_tick(s);
}

bool cut_gate_waiting(const struct session *s)
{
	return s->cut_waiting;
}

void cut_gate_end(struct session *s)
{
	if (s->align_until_ns)
		align_decide(s);
}

bool cut_gate_target_done(const struct session_target *t)
{
	return seg_tracker_done(t->tracker) && !t->align_seg;
}
