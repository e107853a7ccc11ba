// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The per-process segment state machine (user/pipeline/segment.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/registry.h"
#include "pipeline/segment.h"
#include "unit.h"

#define PID 4242
#define MAXSEG 16

static struct region_registry reg;
static uint32_t STEP, FWD, BWD, OPT, LOAD, TRAIN;

/* Takes the closed segments, as the writer would. */
struct sink {
	struct segment *segs[MAXSEG];
	int n;
};

static void on_close(struct segment *seg, void *ctx)
{
	struct sink *k = ctx;

	if (k->n < MAXSEG)
		k->segs[k->n++] = seg;
	else
		segment_free(seg);
}

static void sink_free(struct sink *k)
{
	int i;

	for (i = 0; i < k->n; i++)
		segment_free(k->segs[i]);
	k->n = 0;
}

static uint32_t idx(const char *name)
{
	int i = registry_find(&reg, name);

	CHECK(i >= 0);
	return i < 0 ? 0 : (uint32_t)i;
}

/* A registry where @enabled (comma list) are enabled. */
static void setup(const char *enabled)
{
	registry_init(&reg);
	CHECK(registry_enable_list(&reg, enabled, NULL, NULL) > 0);
	STEP = idx("training_train_one_step");
	FWD = idx("training_forward");
	BWD = idx("training_backward");
	OPT = idx("training_optimizer");
	LOAD = idx("training_dataloader");
	TRAIN = idx("training_train");
}

#define ALL "training_train_one_step,training_forward,training_backward,training_optimizer,training_dataloader"

static int check_slice(const struct seg_slice *s, uint32_t tid, uint32_t region,
		       uint64_t start, uint64_t end, uint32_t depth, uint32_t flags, int line)
{
	if (s->tid == tid && s->region == region && s->start_ns == start &&
	    s->end_ns == end && s->depth == depth && s->flags == flags)
		return 1;
	printf("# line %d: slice {tid %u region %u %llu-%llu depth %u flags %#x}, want "
	       "{tid %u region %u %llu-%llu depth %u flags %#x}\n", line,
	       s->tid, s->region, (unsigned long long)s->start_ns, (unsigned long long)s->end_ns,
	       s->depth, s->flags, tid, region, (unsigned long long)start,
	       (unsigned long long)end, depth, flags);
	return 0;
}

#define CHECK_SLICE(seg, i, tid, region, start, end, depth, flags)                     \
	do {                                                                           \
		CHECK((seg)->nslices > (size_t)(i));                                   \
		if ((seg)->nslices > (size_t)(i))                                      \
			CHECK(check_slice(&(seg)->slices[i], tid, region, start, end,  \
					  depth, flags, __LINE__));                    \
	} while (0)

static void test_simple_nesting(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	CHECK_EQ(seg_on_begin(&t, 1, STEP, 100), 0);
	CHECK(t.cur != NULL);
	CHECK_EQ(seg_on_begin(&t, 1, FWD, 110), 0);
	CHECK_EQ(seg_on_end(&t, 1, FWD, 200), 0);
	CHECK_EQ(seg_on_begin(&t, 1, BWD, 210), 0);
	CHECK_EQ(seg_on_end(&t, 1, BWD, 300), 0);
	CHECK_EQ(k.n, 0); /* still open */
	CHECK_EQ(seg_on_end(&t, 1, STEP, 400), 0);
	CHECK_EQ(k.n, 1);
	CHECK(t.cur == NULL);
	CHECK_EQ(t.depth, 0);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->pid, PID);
		CHECK_EQ(s->seq, 0);
		CHECK_EQ(s->region, STEP);
		CHECK_EQ(s->start_ns, 100);
		CHECK_EQ(s->end_ns, 400);
		CHECK(!s->incomplete);
		CHECK_EQ(s->nslices, 3);
		CHECK_EQ(s->unbalanced, 0);
		CHECK_EQ(s->forced, 0);
		CHECK_EQ(s->drops, 0);
		CHECK_SLICE(s, 0, 1, STEP, 100, 400, 0, 0);
		CHECK_SLICE(s, 1, 1, FWD, 110, 200, 1, 0);
		CHECK_SLICE(s, 2, 1, BWD, 210, 300, 1, 0);
	}
	seg_tracker_finish(&t, 1000); /* nothing open: no segment */
	CHECK_EQ(k.n, 1);
	CHECK(!seg_tracker_done(&t)); /* unlimited */
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_consecutive_steps(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	uint64_t ts = 1000;
	int i;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	for (i = 0; i < 3; i++) {
		seg_on_begin(&t, 7, STEP, ts);
		seg_on_begin(&t, 7, FWD, ts + 10);
		seg_on_end(&t, 7, FWD, ts + 20);
		seg_on_end(&t, 7, STEP, ts + 30);
		CHECK_EQ(k.n, i + 1);
		/* A disabled region between steps opens nothing. */
		seg_on_begin(&t, 7, TRAIN, ts + 40);
		CHECK(t.cur == NULL);
		seg_on_end(&t, 7, TRAIN, ts + 50);
		ts += 100;
	}
	CHECK_EQ(k.n, 3);
	for (i = 0; i < k.n && i < 3; i++) {
		CHECK_EQ(k.segs[i]->seq, i);
		CHECK_EQ(k.segs[i]->pid, PID);
		CHECK_EQ(k.segs[i]->region, STEP);
		CHECK_EQ(k.segs[i]->nslices, 2);
		CHECK_EQ(k.segs[i]->start_ns, 1000 + i * 100);
		CHECK_EQ(k.segs[i]->end_ns, 1030 + i * 100);
		CHECK_SLICE(k.segs[i], 1, 7, FWD, 1010 + i * 100, 1020 + i * 100, 1, 0);
	}
	/* An enabled region on its own between steps is a segment of its own. */
	seg_on_begin(&t, 7, OPT, ts);
	CHECK(t.cur != NULL);
	seg_on_end(&t, 7, OPT, ts + 5);
	CHECK_EQ(k.n, 4);
	if (k.n == 4) {
		CHECK_EQ(k.segs[3]->seq, 3);
		CHECK_EQ(k.segs[3]->region, OPT);
	}
	CHECK_EQ(t.next_seq, 4);
	CHECK_EQ(t.unbalanced, 0);
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_disabled_inside(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup("training_train_one_step,training_forward");
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 1, BWD, 110);   /* disabled */
	seg_on_begin(&t, 1, FWD, 120);
	seg_on_end(&t, 1, FWD, 130);
	seg_on_end(&t, 1, BWD, 140);     /* disabled: not unbalanced either */
	seg_on_end(&t, 1, OPT, 150);     /* disabled, never begun */
	seg_on_begin(&t, 1, 9999, 155);  /* not a region index */
	seg_on_end(&t, 1, 9999, 156);
	CHECK_EQ(k.n, 0);
	seg_on_end(&t, 1, STEP, 160);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->nslices, 2);
		CHECK_EQ(s->unbalanced, 0);
		CHECK_SLICE(s, 0, 1, STEP, 100, 160, 0, 0);
		/* The disabled region does not count as a nesting level. */
		CHECK_SLICE(s, 1, 1, FWD, 120, 130, 1, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_disabled_outside(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup("training_forward,training_backward");
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, TRAIN, 10);  /* disabled */
	seg_on_begin(&t, 1, STEP, 100);  /* disabled */
	CHECK(t.cur == NULL);
	seg_on_begin(&t, 1, FWD, 110);   /* opens the segment */
	CHECK(t.cur != NULL);
	seg_on_end(&t, 1, FWD, 200);
	CHECK_EQ(k.n, 1);
	seg_on_begin(&t, 1, BWD, 210);   /* and another one */
	seg_on_end(&t, 1, BWD, 300);
	seg_on_end(&t, 1, STEP, 400);
	seg_on_end(&t, 1, TRAIN, 500);
	CHECK_EQ(k.n, 2);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 2) {
		s = k.segs[0];
		CHECK_EQ(s->seq, 0);
		CHECK_EQ(s->region, FWD);
		CHECK_EQ(s->start_ns, 110);
		CHECK_EQ(s->end_ns, 200);
		CHECK_EQ(s->nslices, 1);
		CHECK_SLICE(s, 0, 1, FWD, 110, 200, 0, 0);
		s = k.segs[1];
		CHECK_EQ(s->seq, 1);
		CHECK_EQ(s->region, BWD);
		CHECK_SLICE(s, 0, 1, BWD, 210, 300, 0, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_threads(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 2, LOAD, 105);  /* a loader thread */
	seg_on_begin(&t, 1, FWD, 110);
	seg_on_begin(&t, 2, FWD, 115);   /* same region, other thread */
	seg_on_end(&t, 2, FWD, 120);
	seg_on_end(&t, 2, LOAD, 150);
	seg_on_begin(&t, 3, OPT, 160);
	seg_on_end(&t, 3, OPT, 165);
	seg_on_end(&t, 1, FWD, 170);
	seg_on_end(&t, 1, STEP, 200);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->region, STEP);
		CHECK_EQ(s->start_ns, 100);
		CHECK_EQ(s->end_ns, 200);
		CHECK_EQ(s->nslices, 5);
		CHECK_EQ(s->forced, 0);
		CHECK_SLICE(s, 0, 1, STEP, 100, 200, 0, 0);
		CHECK_SLICE(s, 1, 2, LOAD, 105, 150, 0, 0);
		CHECK_SLICE(s, 2, 1, FWD, 110, 170, 1, 0);
		CHECK_SLICE(s, 3, 2, FWD, 115, 120, 1, 0);
		CHECK_SLICE(s, 4, 3, OPT, 160, 165, 0, 0);
	}
	/* The next segment starts with fresh per-thread depths. */
	seg_on_begin(&t, 2, FWD, 300);
	seg_on_end(&t, 2, FWD, 310);
	CHECK_EQ(k.n, 2);
	if (k.n == 2) {
		CHECK_EQ(k.segs[1]->seq, 1);
		CHECK_SLICE(k.segs[1], 0, 2, FWD, 300, 310, 0, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_open_while_other_thread_holds(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 2, LOAD, 110);
	seg_on_end(&t, 1, STEP, 150);    /* the opener is done ... */
	CHECK_EQ(k.n, 0);                /* ... but thread 2 is still inside */
	CHECK(t.cur != NULL);
	seg_on_begin(&t, 1, FWD, 160);   /* still part of the same segment */
	seg_on_end(&t, 1, FWD, 170);
	CHECK_EQ(k.n, 0);
	seg_on_end(&t, 2, LOAD, 180);
	CHECK_EQ(k.n, 1);
	CHECK(t.cur == NULL);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->region, STEP);
		CHECK_EQ(s->start_ns, 100);
		CHECK_EQ(s->end_ns, 180);
		CHECK(!s->incomplete);
		CHECK_EQ(s->nslices, 3);
		CHECK_SLICE(s, 0, 1, STEP, 100, 150, 0, 0);
		CHECK_SLICE(s, 1, 2, LOAD, 110, 180, 0, 0);
		CHECK_SLICE(s, 2, 1, FWD, 160, 170, 0, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_unbalanced(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	/* Ends before any begin (fvbpf attached in the middle of a region). */
	CHECK_EQ(seg_on_end(&t, 1, FWD, 50), 0);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 60), 0);
	CHECK_EQ(t.unbalanced, 2);
	CHECK(t.cur == NULL);
	CHECK_EQ(k.n, 0);
	/* Inside a segment. */
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_end(&t, 1, FWD, 110);
	CHECK_EQ(t.unbalanced, 3);
	CHECK(t.cur != NULL);
	seg_on_end(&t, 1, STEP, 200);
	CHECK_EQ(k.n, 1);
	if (k.n == 1) {
		CHECK_EQ(k.segs[0]->unbalanced, 1);
		CHECK_EQ(k.segs[0]->nslices, 1);
		CHECK_SLICE(k.segs[0], 0, 1, STEP, 100, 200, 0, 0);
		CHECK(!k.segs[0]->incomplete);
	}
	/* The next segment starts with its own count. */
	seg_on_begin(&t, 1, STEP, 300);
	seg_on_end(&t, 1, STEP, 400);
	CHECK_EQ(k.n, 2);
	if (k.n == 2)
		CHECK_EQ(k.segs[1]->unbalanced, 0);
	CHECK_EQ(t.unbalanced, 3);
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_end_other_region_or_thread(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 1, FWD, 110);
	seg_on_begin(&t, 2, BWD, 115);
	seg_on_end(&t, 1, OPT, 120);     /* never begun anywhere */
	seg_on_end(&t, 1, BWD, 125);     /* open, but on thread 2 only */
	seg_on_end(&t, 3, STEP, 127);    /* a thread never seen */
	CHECK_EQ(t.unbalanced, 3);
	CHECK_EQ(t.depth, 3);            /* nothing was closed */
	seg_on_end(&t, 2, BWD, 130);
	seg_on_end(&t, 1, FWD, 140);
	seg_on_end(&t, 1, STEP, 150);
	CHECK_EQ(k.n, 1);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->unbalanced, 3);
		CHECK_EQ(s->forced, 0);
		CHECK_SLICE(s, 0, 1, STEP, 100, 150, 0, 0);
		CHECK_SLICE(s, 1, 1, FWD, 110, 140, 1, 0);
		CHECK_SLICE(s, 2, 2, BWD, 115, 130, 0, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_misnested_end(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	/* step > fwd > bwd; fwd ends while bwd is open. */
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 1, FWD, 110);
	seg_on_begin(&t, 1, BWD, 120);
	seg_on_end(&t, 1, FWD, 130);
	CHECK_EQ(t.depth, 1);
	CHECK(t.cur != NULL);
	seg_on_end(&t, 1, BWD, 135);     /* already force-closed: unbalanced */
	CHECK_EQ(t.unbalanced, 1);
	/* A region open twice: an end closes the innermost one. */
	seg_on_begin(&t, 1, OPT, 140);
	seg_on_begin(&t, 1, OPT, 145);
	seg_on_end(&t, 1, OPT, 150);
	CHECK_EQ(t.depth, 2);
	/* The outer region ends while OPT (outer instance) is open. */
	seg_on_end(&t, 1, STEP, 160);
	CHECK_EQ(k.n, 1);
	CHECK(t.cur == NULL);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK(!s->incomplete);
		CHECK_EQ(s->end_ns, 160);
		CHECK_EQ(s->forced, 2);
		CHECK_EQ(s->unbalanced, 1);
		CHECK_EQ(s->nslices, 5);
		CHECK_SLICE(s, 0, 1, STEP, 100, 160, 0, 0);
		CHECK_SLICE(s, 1, 1, FWD, 110, 130, 1, 0);
		CHECK_SLICE(s, 2, 1, BWD, 120, 130, 2, SLICE_FORCED_CLOSE);
		CHECK_SLICE(s, 3, 1, OPT, 140, 160, 1, SLICE_FORCED_CLOSE);
		CHECK_SLICE(s, 4, 1, OPT, 145, 150, 2, 0);
	}
	/* The late end of the force-closed OPT: outside any segment now. */
	seg_on_end(&t, 1, OPT, 170);
	CHECK_EQ(t.unbalanced, 2);
	CHECK_EQ(k.n, 1);
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_misnested_other_thread_untouched(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 1, FWD, 110);
	seg_on_begin(&t, 2, BWD, 115);
	seg_on_end(&t, 1, STEP, 120);    /* forces FWD on thread 1 only */
	CHECK_EQ(k.n, 0);                /* thread 2 still inside */
	seg_on_end(&t, 2, BWD, 130);
	CHECK_EQ(k.n, 1);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->forced, 1);
		CHECK_EQ(s->end_ns, 130);
		CHECK_SLICE(s, 0, 1, STEP, 100, 120, 0, 0);
		CHECK_SLICE(s, 1, 1, FWD, 110, 120, 1, SLICE_FORCED_CLOSE);
		CHECK_SLICE(s, 2, 2, BWD, 115, 130, 0, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_finish_incomplete(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 1, FWD, 110);
	seg_on_end(&t, 1, FWD, 120);
	seg_on_begin(&t, 1, BWD, 130);
	seg_on_begin(&t, 2, LOAD, 140);
	seg_tracker_finish(&t, 500);
	CHECK_EQ(k.n, 1);
	CHECK(t.cur == NULL);
	CHECK_EQ(t.depth, 0);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK(s->incomplete);
		CHECK_EQ(s->start_ns, 100);
		CHECK_EQ(s->end_ns, 500);
		CHECK_EQ(s->forced, 0);
		CHECK_EQ(s->nslices, 4);
		CHECK_SLICE(s, 0, 1, STEP, 100, 500, 0, SLICE_OPEN_AT_END);
		CHECK_SLICE(s, 1, 1, FWD, 110, 120, 1, 0);
		CHECK_SLICE(s, 2, 1, BWD, 130, 500, 1, SLICE_OPEN_AT_END);
		CHECK_SLICE(s, 3, 2, LOAD, 140, 500, 0, SLICE_OPEN_AT_END);
	}
	/* A second finish, and ends arriving after it, change nothing but counters. */
	seg_tracker_finish(&t, 600);
	CHECK_EQ(k.n, 1);
	seg_on_end(&t, 1, BWD, 610);
	CHECK_EQ(t.unbalanced, 1);
	/* The tracker can go on: the next segment is complete and numbered 1. */
	seg_on_begin(&t, 1, STEP, 700);
	seg_on_end(&t, 1, STEP, 800);
	CHECK_EQ(k.n, 2);
	if (k.n == 2) {
		CHECK_EQ(k.segs[1]->seq, 1);
		CHECK(!k.segs[1]->incomplete);
		CHECK_SLICE(k.segs[1], 0, 1, STEP, 700, 800, 0, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_max_segments(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	int i;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.max_segments = 2;
	CHECK(!seg_tracker_done(&t));
	for (i = 0; i < 3; i++) {
		seg_on_begin(&t, 1, STEP, 100 * (i + 1));
		if (i == 1)
			CHECK(!seg_tracker_done(&t)); /* the last one is still open */
		seg_on_end(&t, 1, STEP, 100 * (i + 1) + 50);
		if (i == 0)
			CHECK(!seg_tracker_done(&t));
	}
	CHECK_EQ(k.n, 2);
	CHECK_EQ(t.ignored_after_limit, 1);
	CHECK(seg_tracker_done(&t));
	CHECK(t.cur == NULL);
	if (k.n == 2) {
		CHECK_EQ(k.segs[0]->seq, 0);
		CHECK_EQ(k.segs[1]->seq, 1);
		CHECK_EQ(k.segs[1]->start_ns, 200);
	}
	seg_tracker_finish(&t, 1000);
	CHECK_EQ(k.n, 2);
	seg_tracker_free(&t);
	sink_free(&k);
}

/*
 * After the limit, an outermost begin is ignored together with what it
 * encloses: one ignored invocation, and its own ends are not "unbalanced".
 */
static void test_max_segments_nested_ignored(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.max_segments = 1;
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 1, FWD, 110);
	seg_on_end(&t, 1, FWD, 120);
	seg_on_end(&t, 1, STEP, 130);
	CHECK_EQ(k.n, 1);
	CHECK(seg_tracker_done(&t));
	/* The second step, past the limit. */
	seg_on_begin(&t, 1, STEP, 200);
	seg_on_begin(&t, 1, FWD, 210);
	seg_on_end(&t, 1, FWD, 220);
	seg_on_end(&t, 1, STEP, 230);
	CHECK_EQ(k.n, 1);
	CHECK(t.cur == NULL);
	CHECK(seg_tracker_done(&t));
	CHECK_EQ(t.ignored_after_limit, 1);
	CHECK_EQ(t.unbalanced, 0);
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_many_slices_and_deep_nesting(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct segment *s;
	int i, ok = 1;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 1);
	/* 40 levels of FWD on thread 1: the thread stack must grow. */
	for (i = 0; i < 40; i++)
		CHECK_EQ(seg_on_begin(&t, 1, FWD, 10 + i), 0);
	CHECK_EQ(t.depth, 41);
	for (i = 39; i >= 0; i--)
		seg_on_end(&t, 1, FWD, 100 + (39 - i));
	/* 100 slices on 20 threads: the slice array and the thread table grow. */
	for (i = 0; i < 100; i++) {
		seg_on_begin(&t, 100 + i % 20, BWD, 1000 + 2 * i);
		seg_on_end(&t, 100 + i % 20, BWD, 1001 + 2 * i);
	}
	seg_on_end(&t, 1, STEP, 5000);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 1) {
		s = k.segs[0];
		CHECK_EQ(s->nslices, 141);
		CHECK_EQ(s->forced, 0);
		for (i = 0; i < 40 && s->nslices == 141; i++)
			ok &= check_slice(&s->slices[1 + i], 1, FWD, 10 + i, 100 + (39 - i),
					  (uint32_t)(i + 1), 0, __LINE__);
		for (i = 0; i < 100 && s->nslices == 141; i++)
			ok &= check_slice(&s->slices[41 + i], 100 + i % 20, BWD, 1000 + 2 * i,
					  1001 + 2 * i, 0, 0, __LINE__);
		CHECK(ok);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

/* A segment's slice array is kept for the next one (slice_spare.h): the
 * next segment's slices are its own, its capacity and charged bytes are
 * what a fresh array gives. */
static void test_slice_array_kept(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct seg_slice *big;
	int i, seg;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 1);
	for (i = 0; i < 4000; i++) {
		seg_on_begin(&t, 2, FWD, 10 + 2 * (uint64_t)i);
		seg_on_end(&t, 2, FWD, 11 + 2 * (uint64_t)i);
	}
	seg_on_end(&t, 1, STEP, 100000);
	CHECK_EQ(k.n, 1);
	if (k.n != 1)
		return;
	big = k.segs[0]->slices;
	sink_free(&k); /* the writer is done with it: kept */
	/* two short segments: the first takes the kept array, the second a fresh one */
	for (seg = 0; seg < 2; seg++) {
		seg_on_begin(&t, 1, STEP, 200000 + 1000 * (uint64_t)seg);
		seg_on_begin(&t, 3, BWD, 200010 + 1000 * (uint64_t)seg);
		seg_on_end(&t, 3, BWD, 200020 + 1000 * (uint64_t)seg);
		seg_on_end(&t, 1, STEP, 200030 + 1000 * (uint64_t)seg);
	}
	CHECK_EQ(k.n, 2);
	if (k.n == 2) {
		CHECK(k.segs[0]->slices == big);
		CHECK(k.segs[1]->slices != big);
		CHECK_EQ(k.segs[0]->cap, k.segs[1]->cap);
		CHECK_EQ(k.segs[0]->bytes, k.segs[1]->bytes);
		for (seg = 0; seg < 2; seg++) {
			CHECK_EQ(k.segs[seg]->nslices, 2);
			CHECK_SLICE(k.segs[seg], 0, 1, STEP, 200000 + 1000 * (uint64_t)seg,
				    200030 + 1000 * (uint64_t)seg, 0, 0);
			CHECK_SLICE(k.segs[seg], 1, 3, BWD, 200010 + 1000 * (uint64_t)seg,
				    200020 + 1000 * (uint64_t)seg, 0, 0);
		}
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_free_open_and_no_callback(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup(ALL);
	/* An open segment is freed by seg_tracker_free, never handed out. */
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_begin(&t, 2, FWD, 110);
	seg_tracker_free(&t);
	CHECK_EQ(k.n, 0);
	CHECK(t.cur == NULL);
	seg_tracker_free(&t); /* twice is harmless */

	/* Without a callback the tracker frees closed segments itself. */
	seg_tracker_init(&t, PID, &reg, NULL, NULL);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_end(&t, 1, STEP, 200);
	seg_on_begin(&t, 1, STEP, 300);
	seg_tracker_finish(&t, 400);
	CHECK_EQ(t.next_seq, 2);
	seg_tracker_free(&t);
	segment_free(NULL);
}

/* Attached while a step and its forward were open on thread 1. */
static void test_open_before_attach(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup("training_train_one_step,training_forward");
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.max_segments = 1;
	CHECK_EQ(seg_on_open_before_attach(&t, 1, STEP, 100), 0);
	CHECK_EQ(seg_on_open_before_attach(&t, 1, FWD, 100), 0);
	CHECK_EQ(seg_on_end(&t, 1, FWD, 150), 0);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 200), 0);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 1) {
		CHECK(k.segs[0]->started_before_attach);
		CHECK(!k.segs[0]->incomplete);
		CHECK_EQ(k.segs[0]->region, STEP);
		CHECK_EQ(k.segs[0]->start_ns, 100);
		CHECK_EQ(k.segs[0]->nslices, 2);
		CHECK_SLICE(k.segs[0], 0, 1, STEP, 100, 200, 0, SLICE_BEFORE_ATTACH);
		CHECK_SLICE(k.segs[0], 1, 1, FWD, 100, 150, 1, SLICE_BEFORE_ATTACH);
	}
	/* it does not count towards -n: the next whole step still opens */
	CHECK(!seg_tracker_done(&t));
	CHECK_EQ(seg_on_begin(&t, 1, STEP, 300), 0);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 400), 0);
	CHECK_EQ(k.n, 2);
	if (k.n == 2) {
		CHECK(!k.segs[1]->started_before_attach);
		CHECK_EQ(k.segs[1]->seq, 1);
		CHECK_SLICE(k.segs[1], 0, 1, STEP, 300, 400, 0, 0);
	}
	CHECK(seg_tracker_done(&t));
	seg_tracker_free(&t);
	sink_free(&k);
}

/* Another thread's pre-attach region pulls an open segment's start back. */
static void test_open_before_attach_other_thread(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup("training_train_one_step,training_dataloader");
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	CHECK_EQ(seg_on_begin(&t, 1, STEP, 500), 0);
	CHECK_EQ(seg_on_open_before_attach(&t, 2, LOAD, 100), 0);
	CHECK_EQ(seg_on_end(&t, 2, LOAD, 600), 0);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 700), 0);
	CHECK_EQ(k.n, 1);
	if (k.n == 1) {
		CHECK_EQ(k.segs[0]->start_ns, 100);
		CHECK(!k.segs[0]->started_before_attach);
		CHECK_EQ(k.segs[0]->nslices, 2);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}


/* Past limits.slices a segment counts begins instead of storing them; their
 * ends are absorbed, so nesting and closing stay right. */
static void test_slice_limit(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.limits.slices = 3;
	CHECK_EQ(seg_on_begin(&t, 1, STEP, 100), 0);
	CHECK_EQ(seg_on_begin(&t, 1, FWD, 110), 0);
	CHECK_EQ(seg_on_begin(&t, 2, LOAD, 115), 0);
	/* The bound: a nested FWD and a BWD on thread 1 are only counted. */
	CHECK_EQ(seg_on_begin(&t, 1, FWD, 120), 0);
	CHECK_EQ(seg_on_begin(&t, 1, BWD, 125), 0);
	CHECK_EQ(seg_on_end(&t, 1, BWD, 126), 0);
	CHECK_EQ(seg_on_end(&t, 1, FWD, 130), 0);
	/* Thread 2's next begin too; its end as well. */
	CHECK_EQ(seg_on_begin(&t, 2, OPT, 131), 0);
	CHECK_EQ(seg_on_end(&t, 2, OPT, 132), 0);
	CHECK_EQ(seg_on_end(&t, 2, LOAD, 135), 0);
	CHECK_EQ(seg_on_end(&t, 1, FWD, 140), 0);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 200), 0);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.unbalanced, 0);
	if (k.n == 1) {
		CHECK_EQ(k.segs[0]->nslices, 3);
		CHECK_EQ(k.segs[0]->slices_dropped, 3);
		CHECK_EQ(k.segs[0]->forced, 0);
		CHECK(!k.segs[0]->incomplete);
		CHECK_SLICE(k.segs[0], 1, 1, FWD, 110, 140, 1, 0);
		CHECK_SLICE(k.segs[0], 2, 2, LOAD, 115, 135, 0, 0);
	}
	CHECK_EQ(t.slices_dropped, 3);
	/* The next segment starts with a fresh budget. */
	CHECK_EQ(seg_on_begin(&t, 1, STEP, 300), 0);
	CHECK_EQ(seg_on_begin(&t, 1, FWD, 310), 0);
	CHECK_EQ(seg_on_end(&t, 1, FWD, 320), 0);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 400), 0);
	CHECK_EQ(k.n, 2);
	if (k.n == 2) {
		CHECK_EQ(k.segs[1]->nslices, 2);
		CHECK_EQ(k.segs[1]->slices_dropped, 0);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

/* The default bound, reached for real: a target that never ends a step. */
static void test_slice_limit_default(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	uint32_t i;
	int err = 0;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	err |= seg_on_begin(&t, 1, STEP, 1);
	for (i = 0; i < SEG_MAX_SLICES + 1000; i++) {
		err |= seg_on_begin(&t, 2 + i % 4, FWD, 10 + i);
		err |= seg_on_end(&t, 2 + i % 4, FWD, 11 + i);
	}
	CHECK_EQ(err, 0);
	CHECK(t.cur != NULL);
	if (t.cur) {
		CHECK_EQ(t.cur->nslices, SEG_MAX_SLICES);
		CHECK_EQ(t.cur->slices_dropped, 1001);
		CHECK(t.cur->cap <= 2 * (size_t)SEG_MAX_SLICES);
	}
	CHECK_EQ(t.unbalanced, 0);
	seg_tracker_finish(&t, 1u << 30);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.slices_dropped, 1001);
	seg_tracker_free(&t);
	sink_free(&k);
}

static void test_call_and_gpu_limits(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	struct api_call c;
	struct gpu_activity a;
	struct segment *zeroed;
	int i;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.limits.calls = 3;
	t.limits.gpu = 2;
	memset(&c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	CHECK_EQ(seg_add_call(&t, &c), -ENOENT);
	seg_on_begin(&t, 1, STEP, 100);
	for (i = 0; i < 3; i++)
		CHECK_EQ(seg_add_call(&t, &c), 0);
	CHECK_EQ(seg_add_call(&t, &c), -ENOSPC);
	CHECK_EQ(seg_add_call(&t, &c), -ENOSPC);
	seg_on_end(&t, 1, STEP, 200);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.calls_dropped, 2);
	if (k.n == 1) {
		CHECK_EQ(k.segs[0]->ncalls, 3);
		CHECK_EQ(k.segs[0]->calls_dropped, 2);
		/* GPU records arrive after the close: the segment's own bound. */
		CHECK_EQ(seg_add_gpu(k.segs[0], &a), 0);
		CHECK_EQ(seg_add_gpu(k.segs[0], &a), 0);
		CHECK_EQ(seg_add_gpu(k.segs[0], &a), -ENOSPC);
		CHECK_EQ(k.segs[0]->ngpu, 2);
		CHECK_EQ(k.segs[0]->gpu_dropped, 1);
	}
	/* A zeroed segment has the defaults, not a bound of 0. */
	zeroed = calloc(1, sizeof(*zeroed));
	CHECK(zeroed != NULL);
	if (zeroed) {
		CHECK_EQ(seg_add_gpu(zeroed, &a), 0);
		CHECK_EQ(zeroed->gpu_dropped, 0);
		segment_free(zeroed);
	}
	seg_tracker_free(&t);
	sink_free(&k);
}

/* Threads without end: idle entries are reused, busy ones never dropped;
 * when every entry is busy the new thread's events are counted. */
static void test_thread_limit(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };
	uint32_t tid;

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.limits.threads = 2;
	CHECK_EQ(seg_on_begin(&t, 1, STEP, 100), 0);
	CHECK_EQ(seg_on_begin(&t, 2, FWD, 110), 0);
	CHECK_EQ(seg_on_begin(&t, 3, BWD, 120), 0);   /* no room: counted */
	CHECK_EQ(t.thread_events_dropped, 1);
	CHECK_EQ(seg_on_end(&t, 3, BWD, 121), 0);     /* its end matches nothing */
	CHECK_EQ(seg_on_end(&t, 2, FWD, 130), 0);
	/* Thread 2 is idle now: thousands of short-lived threads fit. */
	for (tid = 1000; tid < 6000; tid++) {
		CHECK_EQ(seg_on_begin(&t, tid, BWD, 200 + tid), 0);
		CHECK_EQ(seg_on_end(&t, tid, BWD, 201 + tid), 0);
	}
	CHECK_EQ(t.nthreads, 2);
	CHECK_EQ(seg_on_end(&t, 1, STEP, 9000), 0);
	CHECK_EQ(k.n, 1);
	if (k.n == 1) {
		CHECK_EQ(k.segs[0]->nslices, 2 + 5000);
		CHECK_EQ(k.segs[0]->unbalanced, 1);
	}
	CHECK_EQ(t.thread_events_dropped, 1);
	seg_tracker_free(&t);
	sink_free(&k);
}

/* The step in flight when FastVideo's regions were connected (the Python
 * shim lands mid-step): its backward opens a segment of its own, then the
 * step's end comes unmatched.  That segment is a fragment, written but not
 * counted; the next step is the first counted. */
static void test_fragment_of_step_in_flight(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup("training_train_one_step,training_forward,training_backward");
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.max_segments = 1;
	seg_on_begin(&t, 1, BWD, 100);
	seg_on_end(&t, 1, BWD, 150);
	CHECK_EQ(k.n, 0);                 /* held: the next outermost event decides */
	CHECK(!seg_tracker_done(&t));
	seg_on_end(&t, 1, STEP, 160);     /* the step's end, its begin never seen */
	CHECK_EQ(k.n, 1);
	if (k.n == 1) {
		CHECK_EQ(k.segs[0]->region, BWD);
		CHECK_EQ(k.segs[0]->not_counted, SEG_WHY_FRAGMENT);
	}
	CHECK_EQ(t.counted, 0);
	seg_on_begin(&t, 1, STEP, 200);
	seg_on_begin(&t, 1, FWD, 210);
	seg_on_end(&t, 1, FWD, 220);
	seg_on_end(&t, 1, STEP, 300);
	CHECK_EQ(k.n, 2);
	if (k.n == 2) {
		CHECK_EQ(k.segs[1]->region, STEP);
		CHECK_EQ(k.segs[1]->not_counted, SEG_COUNTED);
	}
	CHECK(seg_tracker_done(&t));
	/* after a step was seen, a region on its own is a segment at once */
	t.max_segments = 0;
	seg_on_begin(&t, 1, FWD, 400);
	seg_on_end(&t, 1, FWD, 410);
	CHECK_EQ(k.n, 3);
	if (k.n == 3)
		CHECK_EQ(k.segs[2]->not_counted, SEG_COUNTED);
	seg_tracker_free(&t);
	sink_free(&k);
}

/* training_train traced too but entered long before the attach: the steps
 * are held only until the next step's begin confirms them. */
static void test_child_level_confirmed(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup("training_train,training_train_one_step");
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	seg_on_begin(&t, 1, STEP, 100);
	seg_on_end(&t, 1, STEP, 150);
	CHECK_EQ(k.n, 0);
	seg_on_begin(&t, 1, STEP, 200);
	CHECK_EQ(k.n, 1);
	if (k.n == 1)
		CHECK_EQ(k.segs[0]->not_counted, SEG_COUNTED);
	seg_on_end(&t, 1, STEP, 250);
	CHECK_EQ(k.n, 2);                 /* confirmed: no longer held */
	seg_tracker_finish(&t, 300);
	CHECK_EQ(t.counted, 2);
	seg_tracker_free(&t);
	sink_free(&k);
}

/* Before the cut (all processes armed, --start-at) no segment opens: a
 * begin before it is ignored with everything inside it; the first one at
 * or after it opens the first segment. */
static void test_cut_gate(void)
{
	struct seg_tracker t;
	struct sink k = { 0 };

	setup(ALL);
	seg_tracker_init(&t, PID, &reg, on_close, &k);
	t.cut_from_ns = 1000;
	seg_on_begin(&t, 1, STEP, 900);
	seg_on_begin(&t, 1, FWD, 1100);   /* inside the ignored step */
	seg_on_end(&t, 1, FWD, 1200);
	seg_on_end(&t, 1, STEP, 1300);
	CHECK_EQ(k.n, 0);
	CHECK(t.cur == NULL);
	CHECK_EQ(t.ignored_before_cut, 1);
	CHECK_EQ(t.unbalanced, 0);
	seg_on_begin(&t, 1, STEP, 1400);
	seg_on_end(&t, 1, STEP, 1500);
	CHECK_EQ(k.n, 1);
	CHECK_EQ(t.counted, 1);
	if (k.n == 1)
		CHECK_EQ(k.segs[0]->start_ns, 1400);
	/* a region open at attach is written, marked, uncounted, cut or not */
	seg_on_open_before_attach(&t, 2, STEP, 1600);
	seg_on_end(&t, 2, STEP, 1700);
	CHECK_EQ(k.n, 2);
	if (k.n == 2)
		CHECK_EQ(k.segs[1]->not_counted, SEG_WHY_BEFORE_ATTACH);
	CHECK_EQ(t.counted, 1);
	CHECK(!strcmp(seg_not_counted_why(SEG_WHY_EARLY), "a step before the other ranks' first"));
	CHECK(!strcmp(seg_not_counted_why(200), ""));
	seg_tracker_free(&t);
	sink_free(&k);
}

int main(void)
{
	RUN(test_simple_nesting);
	RUN(test_consecutive_steps);
	RUN(test_disabled_inside);
	RUN(test_disabled_outside);
	RUN(test_threads);
	RUN(test_open_while_other_thread_holds);
	RUN(test_unbalanced);
	RUN(test_end_other_region_or_thread);
	RUN(test_misnested_end);
	RUN(test_misnested_other_thread_untouched);
	RUN(test_finish_incomplete);
	RUN(test_max_segments);
	RUN(test_max_segments_nested_ignored);
	RUN(test_many_slices_and_deep_nesting);
	RUN(test_slice_array_kept);
	RUN(test_free_open_and_no_callback);
	RUN(test_open_before_attach);
	RUN(test_open_before_attach_other_thread);
	RUN(test_slice_limit);
	RUN(test_slice_limit_default);
	RUN(test_call_and_gpu_limits);
	RUN(test_thread_limit);
	RUN(test_fragment_of_step_in_flight);
	RUN(test_child_level_confirmed);
	RUN(test_cut_gate);
	UNIT_DONE();
}
