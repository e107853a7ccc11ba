// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The threads of a segment (user/output/seg_tids.c): each once, sorted, whatever
 * order and runs the records give, tid 0 and UINT32_MAX included. */
#include <stdlib.h>
#include <string.h>

#include "output/seg_tids.h"
#include "unit.h"

static void test_runs_and_kinds(void)
{
	struct seg_slice sl[5] = { { .tid = 7 }, { .tid = 7 }, { .tid = 3 }, { .tid = 7 }, { .tid = 9 } };
	struct api_call calls[2];
	struct torch_call ops[1] = { { .tid = 1 } };
	struct segment s = { .slices = sl, .nslices = 5, .calls = calls, .ncalls = 2,
			     .ops = ops, .nops = 1 };
	uint32_t *v;
	long n;

	memset(calls, 0, sizeof(calls));
	calls[0].tid = 9;
	calls[1].tid = 4;
	n = seg_tids(&s, &v);
	CHECK_EQ(n, 5);
	CHECK(v[0] == 1 && v[1] == 3 && v[2] == 4 && v[3] == 7 && v[4] == 9);
	free(v);
}

static void test_zero_first_and_extremes(void)
{
	struct seg_slice sl[4] = { { .tid = 0 }, { .tid = 0 }, { .tid = UINT32_MAX }, { .tid = 5 } };
	struct segment s = { .slices = sl, .nslices = 4 };
	uint32_t *v;
	long n;

	n = seg_tids(&s, &v);
	CHECK_EQ(n, 3);
	CHECK(v[0] == 0 && v[1] == 5 && v[2] == UINT32_MAX);
	free(v);
}

static void test_empty(void)
{
	struct segment s = { 0 };
	uint32_t *v;

	CHECK_EQ(seg_tids(&s, &v), 0);
	free(v);
}

/* Many threads: the set grows past its first size; each kept once. */
static void test_many(void)
{
	enum { N = 50000 };
	struct seg_slice *sl = calloc(2 * N, sizeof(*sl));
	struct segment s = { .slices = sl, .nslices = 2 * N };
	uint32_t *v;
	long n, i;

	CHECK(sl != NULL);
	for (i = 0; i < 2 * N; i++)
		sl[i].tid = (uint32_t)((i * 7919) % N) * 3 + 1; /* each tid twice, scattered */
	n = seg_tids(&s, &v);
	CHECK_EQ(n, N);
	for (i = 0; i < n; i++)
		CHECK_EQ(v[i], (uint32_t)i * 3 + 1);
	free(v);
	free(sl);
}

int main(void)
{
	RUN(test_runs_and_kinds);
	RUN(test_zero_first_and_extremes);
	RUN(test_empty);
	RUN(test_many);
	UNIT_DONE();
}
