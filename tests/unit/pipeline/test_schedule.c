// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * --schedule (user/pipeline/schedule.c) against torch.profiler.schedule()'s
 * own rule, computed here the way torch's code reads (skip_first, then
 * cycles of wait, warmup, active; repeat 0 forever), and its parser.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "pipeline/schedule.h"
#include "unit.h"

/* torch/profiler/profiler.py schedule(): the action of step k is RECORD
 * (or RECORD_AND_SAVE) when mod_step >= wait + warmup. */
static bool torch_records(unsigned int skip_first, unsigned int wait, unsigned int warmup,
			  unsigned int active, unsigned int repeat, uint64_t step)
{
	uint64_t num_steps = (uint64_t)wait + warmup + active, mod_step;

	if (step < skip_first)
		return false;
	step -= skip_first;
	if (repeat > 0 && step / num_steps >= repeat)
		return false;
	mod_step = step % num_steps;
	return mod_step >= (uint64_t)wait + warmup;
}

static void test_against_torch(void)
{
	unsigned int sf, w, u, a, r;
	struct step_schedule s;
	char spec[128], err[160];
	uint64_t k;

	for (sf = 0; sf < 3; sf++)
		for (w = 0; w < 3; w++)
			for (u = 0; u < 3; u++)
				for (a = 1; a < 4; a++)
					for (r = 0; r < 3; r++) {
						snprintf(spec, sizeof(spec),
							 "repeat=%u,active=%u,warmup=%u,wait=%u,skip_first=%u",
							 r, a, u, w, sf);
						CHECK_EQ(schedule_parse(spec, &s, err, sizeof(err)), 0);
						for (k = 0; k < 60; k++)
							CHECK_EQ(schedule_keep(&s, k),
								 torch_records(sf, w, u, a, r, k));
						CHECK_EQ(schedule_total(&s),
							 r ? sf + (uint64_t)(w + u + a) * r : 0);
					}
}

static void test_parse_errors(void)
{
	static const char *const bad[] = {
		"", "active=0", "wait=1", "active", "active=", "active=-1", "active=1x",
		"active=1000001", "active=1,active=2", "bogus=1", "active=1,", ",active=1",
		"active=99999999999999999999999",
	};
	struct step_schedule s;
	char err[160];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (schedule_parse(bad[i], &s, err, sizeof(err)) != -EINVAL)
			printf("# accepted: '%s'\n", bad[i]);
		CHECK_EQ(schedule_parse(bad[i], &s, err, sizeof(err)), -EINVAL);
		CHECK(!s.set);
	}
	CHECK_EQ(schedule_parse("active=1000000,repeat=1000000", &s, err, sizeof(err)), 0);
	CHECK(schedule_total(&s) == 1000000ull * 1000000ull);
	/* not set: every segment */
	s.set = false;
	CHECK(schedule_keep(&s, 0) && schedule_keep(&s, UINT64_MAX));
}

int main(void)
{
	RUN(test_against_torch);
	RUN(test_parse_errors);
	UNIT_DONE();
}
