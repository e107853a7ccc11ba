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
#include <stdlib.h>

#include "pipeline/drops.h"
#include "util/log.h"

enum drops_verdict { DROPS_APPLY, DROPS_SKIP };

/* One warning at once, then at most one every WARN_EVERY_NS, with a count. */
#define WARN_EVERY_NS 10000000000ULL

static void warn_loss(struct drop_state *d, const struct seg_tracker *tr, uint64_t ts,
		      const char *what)
{
	if (d->loss_warned_ns && ts - d->loss_warned_ns < WARN_EVERY_NS) {
		d->loss_warn_suppressed++;
		return;
	}
	log_warn("PID %d: the ring buffer overflowed (%llu records lost so far): %s%s "
		 "(raise --ringbuf-size)", (int)tr->pid, (unsigned long long)d->drops_seen, what,
		 d->loss_warn_suppressed ? "; and more like it" : "");
	d->loss_warned_ns = ts ? ts : 1;
	d->loss_warn_suppressed = 0;
}

bool drops_charge(struct drop_state *d, struct seg_tracker *tr, uint64_t drops)
{
	uint64_t n;

	/* Threads read the count racing with each other: an older count
	 * behind a newer one adds nothing. */
	if (drops <= d->drops_seen)
		return false;
	n = drops - d->drops_seen;
	if (!seg_tracker_charge_drops(tr, n))
		d->drops_outside += n;
	d->drops_seen = drops;
	return true;
}

bool drops_charge_low32(struct drop_state *d, struct seg_tracker *tr, uint32_t drops)
{
	uint32_t delta = drops - (uint32_t)d->drops_seen;

	/* Signed: a count from a racing thread just behind is no wrap. */
	if ((int32_t)delta <= 0)
		return false;
	drops_charge(d, tr, d->drops_seen + delta);
	d->suspect = true;
	return true;
}

/* Close the open segment at @ts as incomplete; @lost_end: its end is not
 * known, @ts is its last record.  BPF is outside every region after it:
 * nothing past -n is ignored any longer. */
static void cut_segment(struct drop_state *d, struct seg_tracker *tr, uint64_t ts, bool lost_end)
{
	const struct segment *seg = tr->cur;

	if (seg && ts < seg->start_ns)
		ts = seg->start_ns;
	if (seg && lost_end) {
		d->lost_ends++;
		warn_loss(d, tr, ts, "a segment lost its end; it is cut at its last record and written "
			  "as incomplete");
	} else if (seg) {
		warn_loss(d, tr, ts, "a segment lost region ends; the regions still open at its end are "
			  "cut there and it is written as incomplete");
	}
	seg_tracker_cut(tr, ts, lost_end);
}

/* BPF's invocation number of the open segment, where known. */
static bool outer_known(const struct drop_state *d, const struct seg_tracker *tr)
{
	return tr->cur && d->outer_known && tr->cur->seq == d->outer_seg;
}

/* In the middle of an invocation whose outermost begin was lost. */
static enum drops_verdict lost_begin(struct drop_state *d, const struct seg_tracker *tr,
				     const struct fvbpf_region_event *re)
{
	d->lost_begins++;
	d->resyncing = true;
	warn_loss(d, tr, re->hdr.ts_ns, "a segment lost its start and is not written");
	return DROPS_SKIP;
}

/* Before a region record goes to the segment tracker: charge its drops,
 * cut a segment whose end was lost; DROPS_SKIP for records that belong to
 * no segment the loader can see. */
static enum drops_verdict before_region(struct drop_state *d, struct seg_tracker *tr,
					const struct fvbpf_region_event *re)
{
	bool begin = re->hdr.type == FVBPF_EV_REGION_BEGIN, outermost = begin && re->depth == 1;

	if (drops_charge(d, tr, re->drops))
		d->suspect = true;
	if (d->resyncing) {
		/* Nothing to attach these to before the next outermost begin. */
		if (!outermost)
			return DROPS_SKIP;
		d->resyncing = false;
	}
	/*
	 * Only after drops: without them the ring may hold two threads'
	 * records out of order (a new outermost begin before the end that
	 * let it be outermost), which is no loss.
	 */
	if (!d->suspect)
		return DROPS_APPLY;
	if (outer_known(d, tr) && re->outer != d->outer) {
		/* A later invocation: the open segment's end was lost. */
		cut_segment(d, tr, d->last_ts, true);
	}
	if (!tr->cur) {
		if (outermost) {
			d->suspect = false; /* a fresh start, in step with BPF */
			return DROPS_APPLY;
		}
		if (tr->ignored_depth > 0)
			return DROPS_APPLY; /* past -n, nothing is recorded anyway */
		if (!begin && re->depth <= 0)
			return DROPS_SKIP; /* the end of an invocation never seen */
		return lost_begin(d, tr, re);
	}
	if (!begin && re->depth <= 0)
		d->cut_after = true; /* the segment's end */
	return DROPS_APPLY;
}

/* After it (@before: the segment open before it): note which invocation
 * the open segment is, cut what a segment-ending record left open. */
static void after_region(struct drop_state *d, struct seg_tracker *tr,
			 const struct fvbpf_region_event *re, const struct segment *before)
{
	if (tr->cur && (tr->cur != before || !outer_known(d, tr))) {
		/* Opened by this record (or known from its first record). */
		d->outer = re->outer;
		d->outer_seg = tr->cur->seq;
		d->outer_known = true;
	}
	if (!d->cut_after)
		return;
	d->cut_after = false;
	/* BPF is outside every region: what the segment still holds open
	 * lost its end, the segment itself ends here. */
	cut_segment(d, tr, re->hdr.ts_ns, false);
	d->suspect = false;
}

int drops_region(struct drop_state *d, struct seg_tracker *tr, const struct fvbpf_region_event *re)
{
	const struct fvbpf_event_hdr *h = &re->hdr;
	const struct segment *before;
	int err;

	if (before_region(d, tr, re) == DROPS_SKIP)
		return 0;
	before = tr->cur;
	if (h->type == FVBPF_EV_REGION_BEGIN)
		err = seg_on_begin(tr, h->tid, re->region_id, h->ts_ns);
	else
		err = seg_on_end(tr, h->tid, re->region_id, h->ts_ns);
	after_region(d, tr, re, before);
	return err;
}

bool drops_step_end(struct drop_state *d, struct seg_tracker *tr, uint32_t step)
{
	bool gap = d->steps_seen && step > d->steps_seen + 1;

	if (step > d->steps_seen)
		d->steps_seen = step;
	if (!gap || !tr->cur)
		return false;
	cut_segment(d, tr, d->last_ts, true);
	return true;
}

bool drops_finish(struct drop_state *d, struct seg_tracker *tr, const struct fvbpf_proc_state *st,
		  bool step_segment)
{
	bool ended;

	/* Without drops no record has told of yet, its end may still be on
	 * its way in the ring: no loss. */
	if (!tr->cur || st->drops <= d->drops_seen)
		return false;
	if (step_segment)
		ended = st->steps > d->steps_seen; /* the next step end came */
	else
		ended = (outer_known(d, tr) && st->outer != d->outer) || st->depth <= 0;
	if (!ended)
		return false;
	drops_charge(d, tr, st->drops);
	cut_segment(d, tr, d->last_ts, true);
	return true;
}

void drops_saw(struct drop_state *d, uint64_t ts)
{
	if (ts > d->last_ts)
		d->last_ts = ts;
}

void drops_settle(struct drop_state *d, struct seg_tracker *tr, uint64_t bpf_drops)
{
	drops_charge(d, tr, bpf_drops);
}

struct drop_state *drop_state__new(void)
{
	return calloc(1, sizeof(struct drop_state));
}

void drop_state__free(struct drop_state *p)
{
	free(p);
}
