// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Output file names (user/output/seg_output.c). */
#include <errno.h>
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

int main(void)
{
	RUN(test_name_four_digits);
	RUN(test_name_past_9999);
	RUN(test_name_too_long);
	UNIT_DONE();
}
