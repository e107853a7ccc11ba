// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Ring-record decoding (user/events.c) on a session built by hand, without
 * BPF: the way a fuzzer drives it.
 */
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "symbolizer.h"
#include "target.h"
#include "unit.h"

#define PID 4242

static struct session s;
static struct session_target *t;
static uint32_t STEP, FWD;

static void session_setup(void)
{
	memset(&s, 0, sizeof(s));
	s.epfd = -1;
	registry_init(&s.reg);
	registry_enable_list(&s.reg, "training_train_one_step,training_forward", NULL, NULL);
	STEP = (uint32_t)registry_find(&s.reg, "training_train_one_step");
	FWD = (uint32_t)registry_find(&s.reg, "training_forward");
	name_table_init(&s.knames);
	s.sym = symbolizer_new();
	s.targets = calloc(1, sizeof(*s.targets));
	s.ntargets = 1;
	t = &s.targets[0];
	t->session = &s;
	t->pidfd = -1;
	t->proc.pid = PID;
	target_init(t, 0);
}

static struct fvbpf_region_event region(uint16_t type, uint32_t id, int32_t depth, uint64_t ts)
{
	struct fvbpf_region_event e = {
		.hdr = { .type = type, .version = FVBPF_EVENT_VERSION, .size = sizeof(e),
			 .tgid = PID, .tid = PID, .ts_ns = ts },
		.region_id = id, .depth = depth,
	};
	return e;
}

static void feed(const void *rec, size_t size)
{
	CHECK_EQ(events_handle(&s, rec, size), 0);
}

static void test_region_records_make_a_segment(void)
{
	struct fvbpf_region_event e;

	session_setup();
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1000);
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, FWD, 2, 2000);
	feed(&e, sizeof(e));
	CHECK(t->tracker.cur != NULL);
	e = region(FVBPF_EV_REGION_END, FWD, 1, 3000);
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_END, STEP, 0, 4000);
	feed(&e, sizeof(e));
	CHECK(t->tracker.cur == NULL);
	CHECK_EQ(t->segments, 1);
	/* The agent has not spoken yet: the segment waits for its GPU records. */
	CHECK_EQ(t->npending, 1);
	CHECK_EQ(t->pending[0].seg->start_ns, 1000);
	CHECK_EQ(t->pending[0].seg->end_ns, 4000);
	CHECK_EQ(s.bad_records, 0);
	CHECK_EQ(s.reg.defs[STEP].entered, 1);
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
	e = region(FVBPF_EV_REGION_BEGIN, s.reg.count, 1, 1); /* no such region */
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1);
	e.hdr.size = sizeof(e) + 1;                    /* claims more than it has */
	feed(&e, sizeof(e));
	e = region(FVBPF_EV_REGION_BEGIN, STEP, 1, 1);
	feed(&e, sizeof(e.hdr));                       /* header only */
	e = region(99, STEP, 1, 1);                    /* unknown type */
	feed(&e, sizeof(e));
	CHECK_EQ(s.bad_records, 7);
	CHECK(t->tracker.cur == NULL);
	session_free(&s);
}

int main(void)
{
	RUN(test_region_records_make_a_segment);
	RUN(test_malformed_records_are_counted);
	UNIT_DONE();
}
