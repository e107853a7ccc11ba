// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Ring-record decoding (user/pipeline/events.c) on a session built by hand, without
 * BPF: the way a fuzzer drives it.
 */
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "pipeline/drops.h"
#include "pipeline/events.h"
#include "pipeline/windows.h"
#include "pipeline/seg_close.h"
#include "proc/elf/symbolizer.h"
#include "attach/target.h"
#include "probes/torch_ops.h"
#include "fvbpf_mem.h"
#include "fvbpf_pystack.h"
#include "pipeline/loader/dl_join.h"
#include "unit.h"
#include "pipeline/torch/callback_rings.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/torch_probes.h"
#include "proc/proc_info.h"

#define PID 4242

static struct session s;
static struct session_target *t;
static uint32_t STEP, FWD;

static void session_setup(void)
{
	registry__free(s.reg);
	torch_table__free(s.torch);
	memset(&s, 0, sizeof(s));
	s.epfd = -1;
	s.reg = registry__new();
	s.torch = torch_table__new();
	CHECK(s.reg != NULL && s.torch != NULL);
	registry_init(s.reg);
	registry_enable_list(s.reg, "training_train_one_step,training_forward", NULL, NULL);
	STEP = (uint32_t)registry_find(s.reg, "training_train_one_step");
	FWD = (uint32_t)registry_find(s.reg, "training_forward");
	name_table_init(&s.knames);
	s.sym = symbolizer_new();
	s.targets = calloc(1, sizeof(*s.targets));
	s.ntargets = 1;
	t = &s.targets[0];
	CHECK_EQ(target_states_alloc(t), 0);
	t->session = &s;
	t->pidfd = -1;
	t->proc->pid = PID;
	t->has_markers = true; /* region records come from the marker library */
	target_init(t, 0);
}

static struct fvbpf_region_event region_drops(uint16_t type, uint32_t id, int32_t depth,
					      uint64_t ts, uint64_t drops)
{
	struct fvbpf_region_event e = {
		.hdr = { .type = type, .version = FVBPF_EVENT_VERSION, .size = sizeof(e),
			 .tgid = PID, .tid = PID, .ts_ns = ts },
		.region_id = id, .depth = depth, .drops = drops,
	};
	return e;
}

static struct fvbpf_region_event region(uint16_t type, uint32_t id, int32_t depth, uint64_t ts)
{
	return region_drops(type, id, depth, ts, 0);
}

static void feed(const void *rec, size_t size)
{
	CHECK_EQ(events_handle(&s, rec, size), 0);
}

/* One region record: BEGIN/END, region, BPF's depth after it, time, the
 * process's drops before it, its outermost invocation. */
static void reg(uint16_t type, uint32_t id, int32_t depth, uint64_t ts, uint64_t drops,
		uint32_t outer)
{
	struct fvbpf_region_event e = region_drops(type, id, depth, ts, drops);

	e.outer = outer;
	feed(&e, sizeof(e));
}

#define B FVBPF_EV_REGION_BEGIN
#define E FVBPF_EV_REGION_END

/* Drops charged to written segments plus those between them. */
static uint64_t drops_accounted(void)
{
	uint64_t n = t->loss->drops_outside;
	size_t i;

	for (i = 0; i < t->held->n; i++)
		n += t->held->segs[i].seg->drops;
	if (t->tracker->cur)
		n += t->tracker->cur->drops;
	return n;
}

static void test_region_records_make_a_segment(void)
{
	struct fvbpf_region_event e;

	session_setup();
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1000);
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, FWD, 2, 2000);
	feed(&e, sizeof(e));
	CHECK(t->tracker->cur != NULL);
	e = region(FVBPF_EV_REGION_END, FWD, 1, 3000);
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_END, STEP, 0, 4000);
	feed(&e, sizeof(e));
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->segments, 1);
	/* The agent has not spoken yet: the segment waits for its GPU records. */
	CHECK_EQ(t->held->n, 1);
	CHECK_EQ(t->held->segs[0].seg->start_ns, 1000);
	CHECK_EQ(t->held->segs[0].seg->end_ns, 4000);
	CHECK_EQ(s.bad_records, 0);
	CHECK_EQ(s.reg->defs[STEP].entered, 1);
	session_free(&s);
}

static void test_malformed_records_are_counted(void)
{
	struct fvbpf_region_event e;
	unsigned char junk[8] = { 0 };

	session_setup();
	feed(junk, sizeof(junk));                      /* shorter than a header */
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1);
	e.hdr.version = FVBPF_EVENT_VERSION + 1;
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1);
	e.hdr.tgid = PID + 1;                          /* no such target */
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, s.reg->count, 1, 1); /* no such region */
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1);
	e.hdr.size = sizeof(e) + 1;                    /* claims more than it has */
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1);
	feed(&e, sizeof(e.hdr));                       /* header only */
	e = region(99, STEP, 1, 1);                    /* unknown type */
	feed(&e, sizeof(e));
	CHECK_EQ(s.bad_records, 7);
	CHECK(t->tracker->cur == NULL);
	session_free(&s);
}

/* Every record kind events.c knows: one a byte short of its row's size is
 * counted bad once and changes nothing; the kinds are the ones BPF and the
 * library send. */
static void test_every_short_kind_is_counted(void)
{
	static const uint16_t known[] = {
		FVBPF_EV_REGION_BEGIN, FVBPF_EV_REGION_END, FVBPF_EV_THREAD_SYNC,
		FVBPF_EV_API_ENTER, FVBPF_EV_API_EXIT, FVBPF_EV_CORRELATION,
		FVBPF_EV_GPU_CHUNK, FVBPF_EV_AGENT_STATUS, FVBPF_EV_TORCH_ENTER,
		FVBPF_EV_TORCH_EXIT, FVBPF_EV_SCOPE_BEGIN, FVBPF_EV_SCOPE_END, FVBPF_EV_PROC,
		FVBPF_EV_TORCH_ENTER_SHAPES, FVBPF_EV_PYSTACK, FVBPF_EV_MEM, FVBPF_EV_DL,
	};
	static unsigned char buf[4096];
	struct fvbpf_event_hdr *h = (struct fvbpf_event_hdr *)buf;
	unsigned int type, nknown = 0, nchecked = 0;
	uint64_t bad;
	size_t min, i;
	bool listed;

	session_setup();
	for (type = 0; type < 256; type++) {
		listed = false;
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			listed |= known[i] == type;
		CHECK_EQ(events_kind((uint16_t)type, &min), listed);
		if (!listed)
			continue;
		nknown++;
		CHECK(min < sizeof(buf));
		if (min <= sizeof(*h))
			continue; /* its handler checks (a stack record's frames) */
		memset(buf, 0, sizeof(buf));
		*h = (struct fvbpf_event_hdr){ .type = (uint16_t)type, .version = FVBPF_EVENT_VERSION,
					       .size = (uint32_t)(min - 1), .tgid = PID, .tid = PID,
					       .ts_ns = 1000 };
		bad = s.bad_records;
		feed(buf, min - 1);
		if (s.bad_records != bad + 1)
			printf("# type %u: a record of %zu bytes, one short\n", type, min - 1);
		CHECK_EQ(s.bad_records, bad + 1);
		nchecked++;
	}
	CHECK_EQ(nknown, sizeof(known) / sizeof(known[0]));
	CHECK_EQ(nchecked, nknown - 1);
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->calls, 0);
	CHECK_EQ(s.reg->defs[STEP].entered, 0);
	session_free(&s);
}

static void dl(uint8_t kind, uint32_t worker, uint32_t tid, int64_t idx, uint64_t ts)
{
	struct fvbpf_dl_event e = {
		.hdr = { .type = FVBPF_EV_DL, .version = FVBPF_EVENT_VERSION, .size = sizeof(e),
			 .tgid = PID, .tid = tid, .ts_ns = ts },
		.worker = worker, .kind = kind, .idx = idx, .samples = 4,
	};

	feed(&e, sizeof(e));
}

/* DataLoader records (issue 38) reach the trainer's join: a worker's
 * batch and the trainer's receipt; a record no message makes is bad. */
static void test_dataloader_records(void)
{
	const struct dl_batch *b;

	session_setup();
	dl(FVBPF_DL_START, 9001, 9001, 3, 1000);
	dl(FVBPF_DL_COLLATE, 9001, 9001, 0, 5000);
	dl(FVBPF_DL_END, 9001, 9002, 3, 6000);
	dl(FVBPF_DL_RECV, 0, PID, 3, 7000);
	CHECK_EQ(s.bad_records, 0);
	CHECK_EQ(dl_nbatches(t->dl), 1);
	b = dl_batch_at(t->dl, 0);
	CHECK(b && b->pid == 9001 && b->recv_ns == 7000 && dl_fetch_ns(b) == 4000 &&
	      dl_collate_ns(b) == 1000 && b->recv_tid == PID);
	dl(FVBPF_DL_START, 0, PID, 4, 8000);       /* the trainer is no worker */
	dl(FVBPF_DL_END, PID, PID, 4, 8000);
	dl(FVBPF_DL_COLLATE, 0, PID, 0, 8000);
	dl(FVBPF_DL_RECV, 9001, 9001, 4, 8000);    /* receipts are the trainer's */
	dl(0, 9001, 9001, 4, 8000);
	dl(99, 9001, 9001, 4, 8000);
	CHECK_EQ(s.bad_records, 6);
	CHECK_EQ(dl_nbatches(t->dl), 1);
	session_free(&s);
}

static void test_drops_go_where_they_happened(void)
{
	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	reg(E, STEP, 0, 200, 2, 1);     /* 2 lost inside segment 0 */
	reg(B, STEP, 1, 300, 5, 2);     /* 3 lost between segments */
	reg(B, FWD, 2, 400, 5, 2);
	reg(E, FWD, 1, 500, 5, 2);
	reg(E, STEP, 0, 600, 9, 2);     /* 4 lost inside segment 1 */
	drops_settle(t->loss, t->tracker, 10);            /* 1 more after the last record */
	CHECK_EQ(t->held->n, 2);
	CHECK_EQ(t->held->segs[0].seg->drops, 2);
	CHECK_EQ(t->held->segs[1].seg->drops, 4);
	CHECK_EQ(t->loss->drops_outside, 4);
	CHECK_EQ(t->loss->drops_seen, 10);
	CHECK_EQ(drops_accounted(), 10);
	CHECK(!t->held->segs[0].seg->incomplete && !t->held->segs[1].seg->incomplete);
	CHECK_EQ(t->loss->lost_ends, 0);
	session_free(&s);
}

/* The seen bug: the end of a step and whole steps after it were lost; the
 * next step must not nest inside the open one. */
static void test_lost_end_is_cut_at_its_last_record(void)
{
	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	reg(B, FWD, 2, 150, 0, 1);
	/* lost: FWD end, STEP end, and steps 2..9 */
	reg(B, STEP, 1, 10000, 3500, 10);
	CHECK_EQ(t->loss->lost_ends, 1);
	CHECK_EQ(t->held->n, 1);
	CHECK(t->held->segs[0].seg->incomplete);
	CHECK(t->held->segs[0].seg->lost_end);
	CHECK_EQ(t->held->segs[0].seg->end_ns, 150);     /* not the next step's start */
	CHECK_EQ(t->held->segs[0].seg->drops, 3500);
	/* the new step is a segment of its own, at depth 1 */
	CHECK(t->tracker->cur != NULL);
	CHECK_EQ(t->tracker->cur->start_ns, 10000);
	CHECK_EQ(t->tracker->depth, 1);
	reg(E, STEP, 0, 10100, 3500, 10);
	CHECK_EQ(t->held->n, 2);
	CHECK(!t->held->segs[1].seg->incomplete);
	CHECK_EQ(t->held->segs[1].seg->drops, 0);
	CHECK_EQ(drops_accounted(), 3500);
	session_free(&s);
}

/* Depth alone cannot tell: the first record after the gap is a forward at
 * the depth the loader expects, but of a later step. */
static void test_later_invocation_at_a_plausible_depth(void)
{
	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	reg(B, FWD, 2, 150, 0, 1);
	reg(E, FWD, 1, 160, 0, 1);
	/* lost: the end of step 1, the begin of step 2 */
	reg(B, FWD, 2, 5000, 2, 2);
	reg(E, FWD, 1, 5100, 2, 2);
	reg(E, STEP, 0, 5200, 2, 2);
	CHECK_EQ(t->held->n, 1);
	CHECK(t->held->segs[0].seg->lost_end);
	CHECK_EQ(t->held->segs[0].seg->end_ns, 160);
	CHECK_EQ(t->held->segs[0].seg->nslices, 2);
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->loss->lost_begins, 1);
	CHECK_EQ(t->tracker->unbalanced, 0);
	session_free(&s);
}

/* fvbpf stopped mid-step, and the first record after the gap is the
 * middle of another step: nothing of it may join the open segment. */
static void test_resume_mid_step(void)
{
	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	reg(B, FWD, 2, 150, 0, 1);
	/* lost: the rest of this step, whole steps, and the start of one */
	reg(B, FWD, 2, 9000, 777, 40);
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->held->n, 1);
	CHECK(t->held->segs[0].seg->lost_end);
	CHECK_EQ(t->held->segs[0].seg->end_ns, 150);
	CHECK_EQ(t->held->segs[0].seg->nslices, 2);
	CHECK_EQ(t->held->segs[0].seg->drops, 777);
	CHECK_EQ(t->loss->lost_begins, 1);
	reg(E, FWD, 1, 9100, 777, 40);
	reg(E, STEP, 0, 9200, 777, 40);
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->held->n, 1);
	reg(B, STEP, 1, 9300, 777, 41);
	reg(E, STEP, 0, 9400, 777, 41);
	CHECK_EQ(t->held->n, 2);
	CHECK(!t->held->segs[1].seg->incomplete);
	CHECK_EQ(t->held->segs[1].seg->start_ns, 9300);
	CHECK_EQ(t->tracker->unbalanced, 0);
	CHECK_EQ(drops_accounted(), 777);
	session_free(&s);
}

static void test_lost_begin_skips_to_the_next_segment(void)
{
	session_setup();
	/* lost: STEP begin; inside it the loader sees only FWD */
	reg(B, FWD, 2, 100, 1, 1);
	CHECK(t->tracker->cur == NULL);                 /* no segment named forward */
	reg(E, FWD, 1, 200, 1, 1);
	reg(E, STEP, 0, 300, 1, 1);
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->tracker->unbalanced, 0);            /* lost, not unbalanced */
	CHECK_EQ(t->loss->lost_begins, 1);
	reg(B, STEP, 1, 400, 1, 2);
	reg(B, FWD, 2, 450, 1, 2);
	reg(E, FWD, 1, 480, 1, 2);
	reg(E, STEP, 0, 500, 1, 2);
	CHECK_EQ(t->held->n, 1);
	CHECK_EQ(t->held->segs[0].seg->start_ns, 400);
	CHECK_EQ(t->held->segs[0].seg->nslices, 2);
	CHECK(!t->held->segs[0].seg->incomplete);
	CHECK_EQ(t->loss->drops_outside, 1);
	CHECK_EQ(drops_accounted(), 1);
	session_free(&s);
}

/* A worker thread's region end was lost; BPF reaches depth 0 at the
 * step's end while the loader still holds the worker's slice open. */
static void test_depth_zero_closes_what_lost_an_end(void)
{
	struct fvbpf_region_event e;

	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	e = region_drops(B, FWD, 2, 150, 0);
	e.outer = 1;
	e.hdr.tid = PID + 1;
	feed(&e, sizeof(e));
	/* lost: the worker's FWD end */
	reg(E, STEP, 0, 300, 1, 1);
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->held->n, 1);
	CHECK_EQ(t->held->segs[0].seg->end_ns, 300);
	CHECK(t->held->segs[0].seg->incomplete);
	CHECK(!t->held->segs[0].seg->lost_end);
	CHECK_EQ(t->held->segs[0].seg->drops, 1);
	CHECK(!t->loss->suspect);
	session_free(&s);
}

/* Without drops the ring may hold threads' records out of order: no cut. */
static void test_no_resync_without_drops(void)
{
	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	reg(B, FWD, 1, 150, 0, 2);    /* racing thread: depth and number out of order */
	reg(E, FWD, 2, 200, 0, 2);
	reg(E, STEP, 0, 300, 0, 2);
	CHECK_EQ(t->loss->lost_ends, 0);
	CHECK_EQ(t->held->n, 1);
	CHECK(!t->held->segs[0].seg->incomplete);
	CHECK_EQ(t->held->segs[0].seg->nslices, 2);
	session_free(&s);
}

/* A record whose count is older than one seen before adds nothing. */
static void test_older_drop_count_is_ignored(void)
{
	session_setup();
	reg(B, STEP, 1, 100, 4, 1);
	reg(E, STEP, 0, 300, 3, 1);
	CHECK_EQ(t->loss->drops_seen, 4);
	CHECK_EQ(t->loss->drops_outside, 4);
	CHECK_EQ(t->held->n, 1);
	CHECK_EQ(t->held->segs[0].seg->drops, 0);
	session_free(&s);
}

/* ---- torch records ---- */

/* The session as --step-by 'Optimizer.step*' makes it, one operator id. */
static void torch_setup(void)
{
	struct torch_id *id;

	session_setup();
	s.step_by = "Optimizer.step*";
	s.step_region = registry_add(s.reg, "step", "--step-by");
	CHECK(s.step_region >= 0);
	s.reg->defs[s.step_region].enabled = true;
	torch_table_init(s.torch, &s.knames);
	s.torch->ids = calloc(1, sizeof(*s.torch->ids));
	CHECK(s.torch->ids != NULL);
	id = &s.torch->ids[0];
	s.torch->n = s.torch->cap = 1;
	id->name = name_table_intern(&s.knames, "aten::mm");
	id->kind = TORCH_OP;
}

static void op(uint16_t type, uint64_t ts, uint32_t drops)
{
	struct fvbpf_torch_event e = {
		.hdr = { .type = type, .version = FVBPF_EVENT_VERSION, .size = sizeof(e),
			 .tgid = PID, .tid = PID, .ts_ns = ts },
		.id = 0, .drops = drops,
	};

	feed(&e, sizeof(e));
}

static struct fvbpf_scope_event scope(uint16_t type, uint64_t ts, uint64_t handle, uint32_t flags,
				      const char *name, uint64_t drops)
{
	struct fvbpf_scope_event e = {
		.hdr = { .type = type, .version = FVBPF_EVENT_VERSION, .size = sizeof(e),
			 .tgid = PID, .tid = PID, .ts_ns = ts },
		.handle = handle, .flags = flags, .drops = drops,
	};

	e.name_len = (uint32_t)strnlen(name, FVBPF_SCOPE_NAME);
	memcpy(e.name, name, e.name_len);
	return e;
}

/* The end of step scope number @n (BPF numbers them). */
static void step_end(uint64_t ts, uint32_t n, uint64_t drops)
{
	struct fvbpf_scope_event e = scope(FVBPF_EV_SCOPE_END, ts, 0x1000 + n,
					   FVBPF_SCOPE_STEP, "", drops);

	e.outer = n;
	feed(&e, sizeof(e));
}

/* Operator records carry the drops too: charged to the step they hit. */
static void test_torch_op_records_charge_drops(void)
{
	torch_setup();
	step_end(100, 1, 0);
	CHECK(t->tracker->cur != NULL);
	op(FVBPF_EV_TORCH_ENTER, 110, 0);
	op(FVBPF_EV_TORCH_EXIT, 120, 3);     /* 3 lost between them */
	CHECK_EQ(t->tracker->cur->drops, 3);
	CHECK(t->loss->suspect);
	step_end(200, 2, 5);                 /* 2 more before the step's end */
	op(FVBPF_EV_TORCH_ENTER, 210, 5);
	CHECK_EQ(t->held->n, 1);
	CHECK_EQ(t->held->segs[0].seg->drops, 5);
	CHECK(!t->held->segs[0].seg->incomplete);
	CHECK_EQ(drops_accounted(), 5);
	session_free(&s);
}

/* 32 bits of count: extended across the wrap, an older one adds nothing. */
static void test_torch_drop_count_wraps(void)
{
	torch_setup();
	step_end(100, 1, 0xfffffff0ull);
	CHECK_EQ(t->loss->drops_seen, 0xfffffff0ull);
	op(FVBPF_EV_TORCH_ENTER, 110, 0x00000004u);
	CHECK_EQ(t->loss->drops_seen, 0x100000004ull);
	op(FVBPF_EV_TORCH_EXIT, 120, 0xfffffff8u); /* a racing thread's older count */
	CHECK_EQ(t->loss->drops_seen, 0x100000004ull);
	CHECK_EQ(t->tracker->cur->drops, 0x14);
	session_free(&s);
}

/* A step end lost to a drop: the merged step is cut and written incomplete,
 * the steps after it are whole again. */
static void test_lost_step_end_cuts_the_step(void)
{
	torch_setup();
	step_end(100, 1, 0);
	op(FVBPF_EV_TORCH_ENTER, 110, 0);
	op(FVBPF_EV_TORCH_EXIT, 120, 0);
	step_end(200, 2, 0);
	op(FVBPF_EV_TORCH_ENTER, 210, 0);
	op(FVBPF_EV_TORCH_EXIT, 220, 1);     /* step end 3 was the one lost */
	step_end(400, 4, 1);
	step_end(500, 5, 1);
	CHECK_EQ(t->loss->lost_ends, 1);
	CHECK_EQ(t->held->n, 3);
	CHECK(!t->held->segs[0].seg->incomplete);
	CHECK(t->held->segs[1].seg->incomplete && t->held->segs[1].seg->lost_end);
	CHECK_EQ(t->held->segs[1].seg->end_ns, 220); /* its last record */
	CHECK_EQ(t->held->segs[1].seg->drops, 1);
	CHECK(!t->held->segs[2].seg->incomplete);
	CHECK_EQ(t->held->segs[2].seg->start_ns, 400);
	session_free(&s);
}

/* At the end, BPF's state tells of a step end that no record brought:
 * the open step lost it, and is cut at its last record. */
static void test_step_end_lost_after_the_last_record(void)
{
	struct fvbpf_proc_state st = { .drops = 9, .steps = 3, .depth = 1 };

	torch_setup();
	step_end(100, 1, 0);
	step_end(200, 2, 0);
	op(FVBPF_EV_TORCH_ENTER, 210, 0);
	op(FVBPF_EV_TORCH_EXIT, 220, 0);
	/* in flight, no drop since: not lost */
	st.drops = 0;
	CHECK(!drops_finish(t->loss, t->tracker, &st, true));
	CHECK(t->tracker->cur != NULL);
	/* step end 3 came, and 9 records were lost after the last one */
	st.drops = 9;
	CHECK(drops_finish(t->loss, t->tracker, &st, true));
	CHECK(t->tracker->cur == NULL);
	CHECK_EQ(t->loss->lost_ends, 1);
	CHECK_EQ(t->held->n, 2);
	CHECK(t->held->segs[1].seg->incomplete && t->held->segs[1].seg->lost_end);
	CHECK_EQ(t->held->segs[1].seg->end_ns, 220);
	CHECK_EQ(t->held->segs[1].seg->drops, 9);
	CHECK_EQ(drops_accounted(), 9);
	session_free(&s);
}

/* The same for a region segment: BPF outside every region, or in a later
 * invocation; still inside the same one, nothing was lost. */
static void test_region_end_lost_after_the_last_record(void)
{
	struct fvbpf_proc_state st = { .drops = 4, .depth = 1, .outer = 1 };

	session_setup();
	reg(B, STEP, 1, 100, 0, 1);
	reg(B, FWD, 2, 110, 0, 1);
	reg(E, FWD, 1, 120, 0, 1);
	CHECK(!drops_finish(t->loss, t->tracker, &st, false));
	st.outer = 2; /* the next step began (and this one ended) */
	CHECK(drops_finish(t->loss, t->tracker, &st, false));
	CHECK_EQ(t->loss->lost_ends, 1);
	CHECK(t->held->segs[0].seg->lost_end);
	CHECK_EQ(t->held->segs[0].seg->end_ns, 120);
	reg(B, STEP, 1, 200, 4, 3);
	st.drops = 6;
	st.depth = 0; /* it ended, nothing after */
	st.outer = 3;
	CHECK(drops_finish(t->loss, t->tracker, &st, false));
	CHECK_EQ(t->loss->lost_ends, 2);
	CHECK_EQ(drops_accounted(), 6);
	session_free(&s);
}

/* A scope name longer than BPF copies: marked and counted. */
static void test_cut_scope_name_is_marked(void)
{
	struct fvbpf_scope_event e;

	torch_setup();
	step_end(100, 1, 0);
	e = scope(FVBPF_EV_SCOPE_BEGIN, 110, 0x5000, FVBPF_SCOPE_CUT, "a_very_long_user_scope", 0);
	feed(&e, sizeof(e));
	e = scope(FVBPF_EV_SCOPE_BEGIN, 120, 0x6000, 0, "short", 0);
	feed(&e, sizeof(e));
	CHECK_EQ(t->torch->scopes_cut, 1);
	CHECK_EQ(t->tracker->cur->nops, 2);
	CHECK(t->tracker->cur->ops[0].flags & TORCH_CALL_NAME_CUT);
	CHECK(!(t->tracker->cur->ops[1].flags & TORCH_CALL_NAME_CUT));
	CHECK_EQ(seg_scopes_cut(t->tracker->cur), 1);
	session_free(&s);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Region times come from the target's library: one more than a second
 * before the attach or after the clock is pulled in and counted; those
 * in range stay as they are. */
static void test_region_times_out_of_range_are_pulled_in(void)
{
	uint64_t now = mono_ns(), attach = now - 10000000000ull;

	session_setup();
	t->attach_ns = attach;
	reg(B, STEP, 1, 1000, 0, 1);                   /* long before the attach */
	reg(B, FWD, 2, attach + 5000, 0, 1);           /* in range */
	reg(E, FWD, 1, UINT64_MAX / 2, 0, 1);          /* far ahead of the clock */
	reg(E, STEP, 0, attach - 500000000ull, 0, 1);  /* half a second early: kept */
	CHECK_EQ(t->marker_ts_fixed, 2);
	CHECK_EQ(t->held->n, 1);
	CHECK_EQ(t->held->segs[0].seg->start_ns, attach);
	CHECK(t->held->segs[0].seg->nslices >= 1);
	CHECK_EQ(s.bad_records, 0);
	session_free(&s);
}

/* --window cuts windows up to a record's time: a time far ahead (a lying
 * target's) cuts them up to the clock only, not for ever. */
static void test_windows_are_cut_up_to_the_clock_at_most(void)
{
	uint64_t now = mono_ns();

	session_setup();
	s.window_ns = 1000000; /* 1 ms */
	s.window_region = (int)STEP;
	CHECK_EQ(seg_on_begin(t->tracker, PID, STEP, now - 5000000), 0);
	t->next_cut = now - 4000000;
	window_cut_until(&s, t, UINT64_MAX / 2);
	CHECK(t->next_cut > now && t->next_cut < mono_ns() + 2000000);
	CHECK(s.reg->defs[STEP].entered < 1000);
	session_free(&s);
}

/* The callbacks' rings' losses go to the segment they happened in: what
 * was lost since the last segment closed, never the running total. */
static void test_callback_losses_per_segment(void)
{
	session_setup();
	t->fast->ring_drops = 5; /* no rings mapped: the counts as they stand */
	reg(B, STEP, 1, 1000, 0, 1);
	reg(E, STEP, 0, 2000, 0, 1);
	t->fast->ring_drops = 8;
	reg(B, STEP, 1, 3000, 0, 2);
	reg(E, STEP, 0, 4000, 0, 2);
	reg(B, STEP, 1, 5000, 0, 3);
	reg(E, STEP, 0, 6000, 0, 3);
	t->fast->ring_drops = 20; /* after the last segment: no segment's */
	CHECK_EQ(t->held->n, 3);
	if (t->held->n == 3) {
		CHECK_EQ(t->held->segs[0].seg->callback_lost, 5);
		CHECK_EQ(t->held->segs[1].seg->callback_lost, 3);
		CHECK_EQ(t->held->segs[2].seg->callback_lost, 0);
	}
	session_free(&s);
}

int main(void)
{
	RUN(test_region_records_make_a_segment);
	RUN(test_malformed_records_are_counted);
	RUN(test_every_short_kind_is_counted);
	RUN(test_drops_go_where_they_happened);
	RUN(test_lost_end_is_cut_at_its_last_record);
	RUN(test_later_invocation_at_a_plausible_depth);
	RUN(test_lost_begin_skips_to_the_next_segment);
	RUN(test_resume_mid_step);
	RUN(test_depth_zero_closes_what_lost_an_end);
	RUN(test_no_resync_without_drops);
	RUN(test_older_drop_count_is_ignored);
	RUN(test_torch_op_records_charge_drops);
	RUN(test_torch_drop_count_wraps);
	RUN(test_lost_step_end_cuts_the_step);
	RUN(test_step_end_lost_after_the_last_record);
	RUN(test_region_end_lost_after_the_last_record);
	RUN(test_cut_scope_name_is_marked);
	RUN(test_region_times_out_of_range_are_pulled_in);
	RUN(test_windows_are_cut_up_to_the_clock_at_most);
	RUN(test_callback_losses_per_segment);
	RUN(test_dataloader_records);
	UNIT_DONE();
}
