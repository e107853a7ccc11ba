// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Output file names (user/output/seg_output.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/seg_output.h"
#include "unit.h"

static void test_name_four_digits(void)
{
	struct proc_target p = { .pid = 77, .rank = 3 };
	char buf[256];

	CHECK_EQ(seg_output_file_name(buf, sizeof(buf), "trace", &p, 12, "training_forward", "json"), 0);
	CHECK_STR(buf, "trace_rank3_segment0012_training_forward.json");
	CHECK_EQ(seg_output_file_name(buf, sizeof(buf), "summary", &p, 9999, "x", "txt"), 0);
	CHECK_STR(buf, "summary_rank3_segment9999_x.txt");
}

static void test_name_past_9999(void)
{
	struct proc_target p = { .pid = 77, .rank = 0, .name_by_pid = true };
	char buf[256];

	CHECK_EQ(seg_output_file_name(buf, sizeof(buf), "trace", &p, 10000, "step", "json"), 0);
	CHECK_STR(buf, "trace_pid77_segment10000_step.json");
	CHECK_EQ(seg_output_file_name(buf, sizeof(buf), "trace", &p, UINT32_MAX, "step", "json"), 0);
	CHECK_STR(buf, "trace_pid77_segment4294967295_step.json");
}

static void test_name_too_long(void)
{
	struct proc_target p = { .rank = 0 };
	char buf[32];

	CHECK_EQ(seg_output_file_name(buf, sizeof(buf), "trace", &p, 10000, "a_rather_long_region",
				      "json"), -ENAMETOOLONG);
}

/* A launcher traced beside ranks: named by PID, labelled without a rank. */
static void test_no_rank(void)
{
	struct proc_target p = { .pid = 42, .rank = PROC_NO_RANK, .name_by_pid = true };
	struct proc_target r = { .pid = 43, .rank = 0 };
	char buf[256];

	snprintf(p.comm, sizeof(p.comm), "torchrun");
	CHECK_EQ(seg_output_file_name(buf, sizeof(buf), "trace", &p, 1, "step", "json"), 0);
	CHECK_STR(buf, "trace_pid42_segment0001_step.json");
	seg_output_proc_label(&p, 42, buf, sizeof(buf));
	CHECK_STR(buf, "no rank: torchrun (pid 42)");
	seg_output_rank_text(&p, buf, sizeof(buf));
	CHECK_STR(buf, "no rank: named by PID");
	seg_output_rank_text(&r, buf, sizeof(buf));
	CHECK_STR(buf, "rank 0 by default");
	r.rank_from_env = true;
	seg_output_rank_text(&r, buf, sizeof(buf));
	CHECK_STR(buf, "rank 0");
}

int main(void)
{
	RUN(test_no_rank);
	RUN(test_name_four_digits);
	RUN(test_name_past_9999);
	RUN(test_name_too_long);
	UNIT_DONE();
}
