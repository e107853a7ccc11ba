// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The ranks' first segments compared (attach/cut_gate.c): a rank one step
 * early (the cut fell between the ranks' ends of one step) is told apart
 * from a rank that only began late.
 */
#include <stdlib.h>
#include <string.h>

#include "attach/cut_gate.h"
#include "attach/target.h"
#include "unit.h"
#include "pipeline/segment.h"
#include "proc/proc_info.h"

static struct session s;
static struct session_target targets[3];
static struct segment segs[3];

/* Three ranks whose first segments are [start, end] (ms). */
static void firsts(const unsigned int (*ms)[2])
{
	int i;

	for (i = 0; i < 3; i++)
		target_states_free(&targets[i]);
	memset(&s, 0, sizeof(s));
	memset(targets, 0, sizeof(targets));
	memset(segs, 0, sizeof(segs));
	s.targets = targets;
	s.ntargets = 3;
	s.align_until_ns = 1;
	for (i = 0; i < 3; i++) {
		segs[i].start_ns = ms[i][0] * 1000000ull;
		segs[i].end_ns = ms[i][1] * 1000000ull;
		segs[i].align_pending = true;
		CHECK_EQ(target_states_alloc(&targets[i]), 0);
		targets[i].session = &s;
		targets[i].align_seg = &segs[i];
		targets[i].tracker->counted = 1;
		targets[i].proc->pid = 100 + i;
	}
	cut_gate_end(&s);
}

static void test_one_rank_a_step_early(void)
{
	/* rank 0 ended step n just after the cut; the others just before it */
	static const unsigned int ms[3][2] = { { 1, 50 }, { 49, 98 }, { 49, 99 } };

	firsts(ms);
	CHECK_EQ(segs[0].not_counted, SEG_WHY_EARLY);
	CHECK_EQ(targets[0].tracker->counted, 0);
	CHECK_EQ(segs[1].not_counted, SEG_COUNTED);
	CHECK_EQ(segs[2].not_counted, SEG_COUNTED);
	CHECK(!segs[0].align_pending && !segs[1].align_pending && !segs[2].align_pending);
	CHECK_EQ(s.align_until_ns, 0);
}

static void test_one_rank_late(void)
{
	/* rank 2 began its step late; a barrier made the others wait for it */
	static const unsigned int ms[3][2] = { { 0, 60 }, { 2, 61 }, { 40, 60 } };

	firsts(ms);
	CHECK_EQ(segs[0].not_counted, SEG_COUNTED);
	CHECK_EQ(segs[1].not_counted, SEG_COUNTED);
	CHECK_EQ(segs[2].not_counted, SEG_COUNTED);
	CHECK_EQ(targets[0].tracker->counted, 1);
}

static void test_in_step(void)
{
	static const unsigned int ms[3][2] = { { 10, 60 }, { 11, 61 }, { 9, 59 } };

	firsts(ms);
	CHECK_EQ(segs[0].not_counted + segs[1].not_counted + segs[2].not_counted, 0);
}

int main(void)
{
	RUN(test_one_rank_a_step_early);
	RUN(test_one_rank_late);
	RUN(test_in_step);
	for (int i = 0; i < 3; i++)
		target_states_free(&targets[i]);
	UNIT_DONE();
}
