// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Ring-buffer overflow: which segment each drop hit, and what to do when the
 * dropped records held region boundaries.
 *
 * Every region record carries its process's drop count from just before it
 * was reserved, so the drops between two region records happened while the
 * loader's state was what the first one left: inside a segment or between
 * segments.  Each also carries the number of the outermost invocation it
 * belongs to: after a gap, a record of a later invocation than the open
 * segment's means that segment lost its end (it is cut at its last record),
 * and records of an invocation whose outermost begin was lost are skipped
 * up to the next outermost begin.
 */
#include "pipeline/drops.h"
#include "util/log.h"

/* One warning at once, then at most one every WARN_EVERY_NS, with a count. */
#define WARN_EVERY_NS 10000000000ULL

static void warn_loss(struct session_target *t, uint64_t ts, const char *what)
{
	if (t->loss_warned_ns && ts - t->loss_warned_ns < WARN_EVERY_NS) {
		t->loss_warn_suppressed++;
		return;
	}
	log_warn("PID %d: the ring buffer overflowed (%llu records lost so far): %s%s "
		 "(raise --ringbuf-size)", t->proc.pid, (unsigned long long)t->drops_seen, what,
		 t->loss_warn_suppressed ? "; and more like it" : "");
	t->loss_warned_ns = ts ? ts : 1;
	t->loss_warn_suppressed = 0;
}

bool drops_charge(struct session_target *t, uint64_t drops)
{
	uint64_t n;

	/* Threads read the count racing with each other: an older count
	 * behind a newer one adds nothing. */
	if (drops <= t->drops_seen)
		return false;
	n = drops - t->drops_seen;
	if (t->tracker.cur)
		t->tracker.cur->drops += n;
	else
		t->drops_outside += n;
	t->drops_seen = drops;
	return true;
}

bool drops_charge_low32(struct session_target *t, uint32_t drops)
{
	uint32_t delta = drops - (uint32_t)t->drops_seen;

	/* Signed: a count from a racing thread just behind is no wrap. */
	if ((int32_t)delta <= 0)
		return false;
	drops_charge(t, t->drops_seen + delta);
	t->suspect = true;
	return true;
}

/* Close the open segment at @ts as incomplete; @lost_end: its end is not
 * known, @ts is its last record. */
static void cut_segment(struct session_target *t, uint64_t ts, bool lost_end)
{
	struct segment *seg = t->tracker.cur;

	if (!seg)
		return;
	if (ts < seg->start_ns)
		ts = seg->start_ns;
	if (lost_end) {
		seg->lost_end = true;
		t->lost_ends++;
		warn_loss(t, ts, "a segment lost its end; it is cut at its last record and written "
			  "as incomplete");
	} else {
		warn_loss(t, ts, "a segment lost region ends; the regions still open at its end are "
			  "cut there and it is written as incomplete");
	}
	seg_tracker_finish(&t->tracker, ts);
}

/* BPF's invocation number of the open segment, where known. */
static bool outer_known(const struct session_target *t)
{
	return t->tracker.cur && t->outer_known && t->tracker.cur->seq == t->outer_seg;
}

/* In the middle of an invocation whose outermost begin was lost. */
static enum drops_verdict lost_begin(struct session_target *t, const struct fvbpf_region_event *re)
{
	t->lost_begins++;
	t->resyncing = true;
	warn_loss(t, re->hdr.ts_ns, "a segment lost its start and is not written");
	return DROPS_SKIP;
}

enum drops_verdict drops_before_region(struct session_target *t, const struct fvbpf_region_event *re)
{
	bool begin = re->hdr.type == FVBPF_EV_REGION_BEGIN, outermost = begin && re->depth == 1;

	if (drops_charge(t, re->drops))
		t->suspect = true;
	if (t->resyncing) {
		/* Nothing to attach these to before the next outermost begin. */
		if (!outermost)
			return DROPS_SKIP;
		t->resyncing = false;
	}
	/*
	 * Only after drops: without them the ring may hold two threads'
	 * records out of order (a new outermost begin before the end that
	 * let it be outermost), which is no loss.
	 */
	if (!t->suspect)
		return DROPS_APPLY;
	if (outer_known(t) && re->outer != t->outer) {
		/* A later invocation: the open segment's end was lost. */
		cut_segment(t, t->last_ts, true);
		t->tracker.ignored_depth = 0;
	}
	if (!t->tracker.cur) {
		if (outermost) {
			t->suspect = false; /* a fresh start, in step with BPF */
			return DROPS_APPLY;
		}
		if (t->tracker.ignored_depth > 0)
			return DROPS_APPLY; /* past -n, nothing is recorded anyway */
		if (!begin && re->depth <= 0)
			return DROPS_SKIP; /* the end of an invocation never seen */
		return lost_begin(t, re);
	}
	if (!begin && re->depth <= 0)
		t->cut_after = true; /* the segment's end */
	return DROPS_APPLY;
}

void drops_after_region(struct session_target *t, const struct fvbpf_region_event *re,
			const struct segment *before)
{
	if (t->tracker.cur && (t->tracker.cur != before || !outer_known(t))) {
		/* Opened by this record (or known from its first record). */
		t->outer = re->outer;
		t->outer_seg = t->tracker.cur->seq;
		t->outer_known = true;
	}
	if (!t->cut_after)
		return;
	t->cut_after = false;
	/* BPF is outside every region: what the segment still holds open
	 * lost its end, the segment itself ends here. */
	cut_segment(t, re->hdr.ts_ns, false);
	t->tracker.ignored_depth = 0;
	t->suspect = false;
}

bool drops_step_end(struct session_target *t, uint32_t step)
{
	bool gap = t->steps_seen && step > t->steps_seen + 1;

	if (step > t->steps_seen)
		t->steps_seen = step;
	if (!gap || !t->tracker.cur)
		return false;
	cut_segment(t, t->last_ts, true);
	t->tracker.ignored_depth = 0;
	return true;
}

void drops_settle(struct session_target *t, uint64_t bpf_drops)
{
	drops_charge(t, bpf_drops);
}
