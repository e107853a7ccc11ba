// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "pipeline/memory/seg_memory.h"
#include "pipeline/segment.h"
#include "pipeline/slice_spare.h"
#include "util/thread_table.h"

void seg_tracker_init(struct seg_tracker *t, uint32_t pid, const struct region_registry *reg,
		      seg_close_fn on_close, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->reg = reg;
	t->on_close = on_close;
	t->ctx = ctx;
	t->limits = (struct seg_limits){ .slices = SEG_MAX_SLICES, .calls = SEG_MAX_CALLS,
					 .gpu = SEG_MAX_GPU, .threads = SEG_MAX_THREADS };
}

void segment_free(struct segment *seg)
{
	if (!seg)
		return;
	if (seg->mem)
		budget_release(seg->mem, seg->bytes);
	/* Kept for the next segment (slice_spare.h), unless memory is short. */
	if (!seg->slices || (seg->mem && budget_pressure(seg->mem)) ||
	    !slice_spare_put(seg->slices, (seg->room > seg->cap ? seg->room : seg->cap) *
					  sizeof(*seg->slices)))
		free(seg->slices);
	free(seg->calls);
	free(seg->colls);
	dl_seg_free(seg->dl);
	free(seg->gpu);
	free(seg->ops);
	seg_memory_free(seg->memory);
	free(seg);
}

uint64_t segment_bytes(const struct segment *seg)
{
	return sizeof(*seg) + (uint64_t)seg->cap * sizeof(*seg->slices) +
	       (uint64_t)seg->capcalls * sizeof(*seg->calls) +
	       (uint64_t)seg->capcolls * sizeof(*seg->colls) +
	       (uint64_t)seg->capgpu * sizeof(*seg->gpu) + (uint64_t)seg->capops * sizeof(*seg->ops) +
	       (seg->memory ? (uint64_t)seg->memory->cap * sizeof(*seg->memory->recs) : 0);
}

/*
 * grow_one() within the segment's share of --max-memory.  Past it the
 * array stops growing for good (-ENOSPC, the segment marked): a segment
 * that resumed later would hide a hole in the middle of its trace.  The
 * first block of each array is always granted: a segment must be able to
 * hold its outermost slice.
 */
static int seg_grow_in(struct segment *seg, void *v, size_t n, size_t *cap, size_t *room,
		       size_t size, size_t first)
{
	void **p = v, *nv;
	size_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : first;
	if (seg->mem && *cap) {
		ncap = seg->truncated_by_memory ? 0 :
		       budget_grant(seg->mem, seg->bytes, *cap, ncap, size);
		if (!ncap) {
			if (!seg->truncated_by_memory)
				atomic_fetch_add(&seg->mem->segments_truncated, 1);
			seg->truncated_by_memory = true;
			atomic_fetch_add(&seg->mem->events_over_limit, 1);
			return -ENOSPC;
		}
	} else if (seg->mem) {
		budget_charge(seg->mem, (uint64_t)ncap * size);
	}
	/* A kept array (slice_spare.h) may already hold it: grown and charged
	 * as if allocated, so the budget sees what it always saw. */
	if (!room || ncap > *room) {
		nv = realloc(*p, ncap * size);
		if (!nv) {
			if (seg->mem)
				budget_release(seg->mem, (uint64_t)(ncap - *cap) * size);
			return -ENOMEM;
		}
		*p = nv;
		if (room)
			*room = ncap;
	}
	seg->bytes += (uint64_t)(ncap - *cap) * size;
	*cap = ncap;
	return 0;
}

static int seg_grow(struct segment *seg, void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	return seg_grow_in(seg, v, n, cap, NULL, size, first);
}

static bool region_enabled(const struct seg_tracker *t, uint32_t region)
{
	return region < t->reg->count && t->reg->defs[region].enabled;
}

const char *seg_not_counted_why(unsigned int why)
{
	static const char *const words[SEG_WHY_COUNT] = {
		[SEG_COUNTED] = "",
		[SEG_WHY_BEFORE_ATTACH] = "started before attach",
		[SEG_WHY_FRAGMENT] = "a fragment of the step in flight at attach",
		[SEG_WHY_EARLY] = "a step before the other ranks' first",
	};

	return why < SEG_WHY_COUNT ? words[why] : "";
}

bool seg_tracker_done(const struct seg_tracker *t)
{
	return t->max_segments && t->counted >= t->max_segments && !t->cur && !t->held_child;
}

/* The held segment goes on: a fragment (@fragment: not counted) or a
 * whole step of its own region. */
static void release_held(struct seg_tracker *t, bool fragment)
{
	struct segment *seg = t->held_child;

	t->held_child = NULL;
	if (fragment) {
		seg->not_counted = SEG_WHY_FRAGMENT;
		if (t->counted)
			t->counted--;
	} else {
		t->child_level_confirmed = true;
	}
	if (t->on_close)
		t->on_close(seg, t->ctx);
	else
		segment_free(seg);
}

/* Held until the next outermost event: a region traced inside another
 * traced one (by FastVideo's loop) opened this segment. */
static bool hold_child(struct seg_tracker *t, struct segment *seg)
{
	if (seg->incomplete || seg->not_counted || t->child_level_confirmed || t->outer_seen ||
	    !registry_enabled_parent(t->reg, seg->region))
		return false;
	if (t->held_child)
		release_held(t, false);
	t->held_child = seg;
	return true;
}

/* An entry that holds nothing: no open slice, no lost begin. */
static bool thread_idle(const void *entry)
{
	const struct seg_thread *th = entry;

	return !th->depth && !th->lost;
}

/* A reused entry keeps its stack's allocation. */
static const struct thread_table_shape seg_threads = {
	.size = sizeof(struct seg_thread), .first = 8, .idle = thread_idle,
};

/*
 * The entry of @tid.  A process may start threads without end: past
 * limits.threads, an idle entry is reused; when every one is busy the
 * event is dropped (-ENOSPC, counted).
 */
static struct seg_thread *thread_get(struct seg_tracker *t, uint32_t tid, bool create, int *err)
{
	struct seg_thread *th;

	*err = 0;
	if (!create)
		return thread_table_find(t->threads, t->nthreads, sizeof(*th), tid);
	th = thread_table_get(&seg_threads, &t->threads, &t->nthreads, &t->capthreads,
			      seg_limit(t->limits.threads, SEG_MAX_THREADS), tid, err);
	if (*err == -ENOSPC)
		t->thread_events_dropped++;
	return th;
}

static int push_index(struct seg_thread *th, size_t idx)
{
	if (grow_one(&th->stack, th->depth, &th->cap, sizeof(*th->stack), 8))
		return -ENOMEM;
	th->stack[th->depth++] = idx;
	return 0;
}

static int add_slice(struct segment *seg, uint32_t tid, uint32_t region, uint64_t ts,
		     uint32_t depth, size_t *idx)
{
	struct seg_slice *s;
	size_t bytes;
	int err;

	if (!seg->slices && !seg->cap) {
		seg->slices = slice_spare_take(&bytes);
		seg->room = bytes / sizeof(*s);
	}
	err = seg_grow_in(seg, &seg->slices, seg->nslices, &seg->cap, &seg->room, sizeof(*s), 16);
	if (err)
		return err;
	s = &seg->slices[seg->nslices];
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->region = region;
	s->start_ns = ts;
	s->depth = depth;
	*idx = seg->nslices++;
	return 0;
}

static void close_segment(struct seg_tracker *t, uint64_t ts, bool incomplete)
{
	struct segment *seg = t->cur;
	size_t i;

	for (i = 0; i < t->nthreads; i++) {
		t->threads[i].depth = 0;
		t->threads[i].lost = 0;
	}
	t->cur = NULL;
	t->slices_dropped += seg->slices_dropped;
	t->calls_dropped += seg->calls_dropped;
	t->depth = 0;
	seg->end_ns = ts;
	seg->incomplete = incomplete;
	for (i = 0; i < seg->nslices; i++) {
		if (!seg->slices[i].end_ns) {
			seg->slices[i].end_ns = ts;
			seg->slices[i].flags |= SLICE_OPEN_AT_END;
		}
	}
	if (hold_child(t, seg))
		return;
	if (t->on_close)
		t->on_close(seg, t->ctx);
	else
		segment_free(seg);
}

static int open_segment(struct seg_tracker *t, uint32_t region, uint64_t ts, bool before_attach)
{
	t->cur = calloc(1, sizeof(*t->cur));
	if (!t->cur)
		return -ENOMEM;
	t->cur->pid = t->pid;
	t->cur->seq = t->next_seq++;
	t->cur->region = region;
	t->cur->start_ns = ts;
	t->cur->started_before_attach = before_attach;
	/* Once a step of the outer region was seen, its regions on their own
	 * are segments of their own again (no step in flight to cut). */
	if (!registry_enabled_parent(t->reg, region))
		t->outer_seen = true;
	if (before_attach)
		t->cur->not_counted = SEG_WHY_BEFORE_ATTACH;
	t->cur->limits = t->limits;
	t->cur->bytes = sizeof(*t->cur);
	t->cur->mem = t->mem;
	if (t->mem)
		budget_charge(t->mem, t->cur->bytes);
	if (!before_attach)
		t->counted++;
	return 0;
}

static int begin_slice(struct seg_tracker *t, uint32_t tid, uint32_t region, uint64_t ts,
		       bool before_attach)
{
	struct seg_thread *th;
	size_t idx;
	int err;

	if (!region_enabled(t, region))
		return 0;
	/* Inside an ignored outermost region (past -n, before the cut): its
	 * regions are ignored with it, whenever they begin. */
	if (!t->cur && t->ignored_depth) {
		t->ignored_depth++;
		return 0;
	}
	/* An outermost begin decides a held segment: it was a step. */
	if (!t->cur && t->held_child)
		release_held(t, false);
	if (!t->cur && t->max_segments && t->counted >= t->max_segments) {
		if (!t->ignored_depth++)
			t->ignored_after_limit++;
		return 0;
	}
	if (!t->cur && !before_attach && ts < t->cut_from_ns) {
		if (!t->ignored_depth++)
			t->ignored_before_cut++;
		return 0;
	}
	/* The thread first: a segment must never open without its slice. */
	th = thread_get(t, tid, true, &err);
	if (!th)
		return err == -ENOSPC ? 0 : err;
	if (!t->cur && (err = open_segment(t, region, ts, before_attach)))
		return err;
	if (t->cur->nslices >= seg_limit(t->limits.slices, SEG_MAX_SLICES))
		err = -ENOSPC;
	else
		err = add_slice(t->cur, tid, region, ts, (uint32_t)th->depth, &idx);
	if (err == -ENOSPC) { /* the slice limit, or --max-memory */
		th->lost++;
		t->cur->slices_dropped++;
		return 0;
	}
	if (!err)
		err = push_index(th, idx);
	if (err)
		return err;
	if (ts < t->cur->start_ns)
		t->cur->start_ns = ts; /* another thread's region predates it */
	if (before_attach)
		t->cur->slices[idx].flags |= SLICE_BEFORE_ATTACH;
	t->depth++;
	return 0;
}

int seg_on_begin(struct seg_tracker *t, uint32_t tid, uint32_t region, uint64_t ts)
{
	return begin_slice(t, tid, region, ts, false);
}

int seg_on_open_before_attach(struct seg_tracker *t, uint32_t tid, uint32_t region,
			      uint64_t attach_ts)
{
	return begin_slice(t, tid, region, attach_ts, true);
}

int seg_on_end(struct seg_tracker *t, uint32_t tid, uint32_t region, uint64_t ts)
{
	struct seg_thread *th;
	struct seg_slice *s;
	size_t level;
	int err;

	if (!region_enabled(t, region))
		return 0;
	if (!t->cur && t->ignored_depth > 0) {
		t->ignored_depth--;
		return 0;
	}
	/* The end of a region that encloses the held one's: it was a piece
	 * of the step in flight when the regions were connected. */
	if (!t->cur && t->held_child && registry_encloses(t->reg, region, t->held_child->region)) {
		release_held(t, true);
		t->unbalanced++;
		return 0;
	}
	th = t->cur ? thread_get(t, tid, false, &err) : NULL;
	/* Begins past the slice limit are the innermost: their ends come first. */
	if (th && th->lost) {
		th->lost--;
		return 0;
	}
	/* The innermost open slice of this region on this thread. */
	for (level = th ? th->depth : 0; level > 0; level--)
		if (t->cur->slices[th->stack[level - 1]].region == region)
			break;
	if (!level) {
		t->unbalanced++;
		if (t->cur)
			t->cur->unbalanced++;
		return 0;
	}
	/* Close it and, to keep the thread's track strictly nested, anything
	 * still open inside it. */
	while (th->depth >= level) {
		s = &t->cur->slices[th->stack[--th->depth]];
		s->end_ns = ts;
		if (th->depth >= level) {
			s->flags |= SLICE_FORCED_CLOSE;
			t->cur->forced++;
		}
		t->depth--;
	}
	if (t->depth == 0)
		close_segment(t, ts, false);
	return 0;
}

void seg_tracker_finish(struct seg_tracker *t, uint64_t ts)
{
	if (t->held_child)
		release_held(t, false); /* nothing came to say otherwise */
	if (t->cur)
		close_segment(t, ts, true);
}

void seg_tracker_free(struct seg_tracker *t)
{
	size_t i;

	if (t->cur) {
		segment_free(t->cur);
		t->cur = NULL;
	}
	segment_free(t->held_child);
	t->held_child = NULL;
	for (i = 0; i < t->nthreads; i++)
		free(t->threads[i].stack);
	free(t->threads);
	t->threads = NULL;
	t->nthreads = t->capthreads = 0;
}

/* @elem appended to one of @seg's arrays (*@v, @n, @cap) while it holds
 * fewer than @max and memory grants it; past either, counted in @dropped. */
static int seg_append(struct segment *seg, void *v, size_t *n, size_t *cap, size_t max,
		      uint64_t *dropped, const void *elem, size_t size, size_t first)
{
	int err;

	if (*n >= max) {
		(*dropped)++;
		return -ENOSPC;
	}
	err = seg_grow(seg, v, *n, cap, size, first);
	if (err == -ENOSPC)
		(*dropped)++;
	if (err)
		return err;
	memcpy((char *)*(void **)v + *n * size, elem, size);
	(*n)++;
	return 0;
}

int seg_add_call(struct seg_tracker *t, const struct api_call *c)
{
	struct segment *seg = t->cur;

	if (!seg)
		return -ENOENT;
	return seg_append(seg, &seg->calls, &seg->ncalls, &seg->capcalls,
			  seg_limit(seg->limits.calls, SEG_MAX_CALLS), &seg->calls_dropped, c,
			  sizeof(*c), 64);
}

int seg_add_collective(struct seg_tracker *t, const struct collective *c)
{
	struct segment *seg = t->cur;

	if (!seg)
		return -ENOENT;
	return seg_append(seg, &seg->colls, &seg->ncolls, &seg->capcolls, SEG_MAX_COLLS,
			  &seg->colls_dropped, c, sizeof(*c), 16);
}


int seg_grow_array(struct segment *seg, void *v, size_t n, size_t *cap, size_t size, size_t first)
{
	return seg_grow(seg, v, n, cap, size, first);
}

long seg_add_op(struct segment *seg, const struct torch_call *op)
{
	int err;

	if (seg->nops >= SEG_MAX_OPS) {
		seg->ops_dropped++;
		return -ENOSPC;
	}
	err = seg_grow(seg, &seg->ops, seg->nops, &seg->capops, sizeof(*op), 256);

	if (err == -ENOSPC)
		seg->ops_dropped++;
	if (err)
		return err;
	seg->ops[seg->nops] = *op;
	return (long)seg->nops++;
}

int seg_add_gpu(struct segment *seg, const struct gpu_activity *a)
{
	int err;

	if (seg->ngpu >= seg_limit(seg->limits.gpu, SEG_MAX_GPU)) {
		seg->gpu_dropped++;
		return -ENOSPC;
	}
	err = seg_grow(seg, &seg->gpu, seg->ngpu, &seg->capgpu, sizeof(*a), 64);

	if (err == -ENOSPC)
		seg->gpu_dropped++;
	if (err)
		return err;
	seg->gpu[seg->ngpu++] = *a;
	return 0;
}

size_t seg_shapes_unknown(const struct segment *seg)
{
	size_t i, n = 0;

	for (i = 0; i < seg->nops; i++)
		n += (seg->ops[i].flags & TORCH_CALL_SHAPES_UNKNOWN) != 0;
	return n;
}

size_t seg_scopes_cut(const struct segment *seg)
{
	size_t i, n = 0;

	for (i = 0; i < seg->nops; i++)
		n += (seg->ops[i].flags & TORCH_CALL_NAME_CUT) != 0;
	return n;
}

bool seg_tracker_charge_drops(struct seg_tracker *t, uint64_t n)
{
	if (!t->cur)
		return false;
	t->cur->drops += n;
	return true;
}

void seg_tracker_cut(struct seg_tracker *t, uint64_t ts, bool lost_end)
{
	if (t->cur) {
		if (ts < t->cur->start_ns)
			ts = t->cur->start_ns;
		if (lost_end)
			t->cur->lost_end = true;
		seg_tracker_finish(t, ts);
	}
	t->ignored_depth = 0;
}

struct seg_tracker *seg_tracker__new(void)
{
	return calloc(1, sizeof(struct seg_tracker));
}

void seg_tracker__free(struct seg_tracker *p)
{
	if (!p)
		return;
	seg_tracker_free(p);
	free(p);
}
