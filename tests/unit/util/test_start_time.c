// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* --start-at's TIME (util/start_time.c): its three forms, and what it refuses. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "util/start_time.h"
#include "unit.h"

#define NS 1000000000ull
/* 2026-12-07 10:00:00.25 UTC */
#define NOW (1796637600ull * NS + 250000000ull)

static void test_unix_seconds(void)
{
	uint64_t at, every;

	CHECK_EQ(start_time_parse("1796637610.5", NOW, &at, &every), 0);
	CHECK_EQ(at, 1796637610ull * NS + 500000000ull);
	CHECK_EQ(every, 0);
	CHECK_EQ(start_time_parse("1796637610.123456789123", NOW, &at, &every), 0);
	CHECK_EQ(at, 1796637610ull * NS + 123456789ull);
	/* the past is taken (cut at once, said by the caller) */
	CHECK_EQ(start_time_parse("5", NOW, &at, &every), 0);
	CHECK_EQ(at, 5 * NS);
	/* more than a day ahead */
	CHECK_EQ(start_time_parse("1796737600", NOW, &at, &every), -ERANGE);
	CHECK_EQ(at, 0);
	CHECK_EQ(start_time_parse("99999999999999999999", NOW, &at, &every), -EINVAL);
}

static void test_boundaries(void)
{
	uint64_t at, every;

	CHECK_EQ(start_time_parse("/10s", NOW, &at, &every), 0);
	CHECK_EQ(every, 10 * NS);
	CHECK_EQ(at, 0);
	CHECK_EQ(start_time_instant(at, every, NOW), 1796637610ull * NS);
	CHECK_EQ(start_time_parse("/2m", NOW, &at, &every), 0);
	CHECK_EQ(every, 120 * NS);
	CHECK_EQ(start_time_instant(at, every, NOW), 1796637720ull * NS);
	CHECK_EQ(start_time_instant(5 * NS, 0, NOW), 5 * NS);
	CHECK_EQ(start_time_parse("/0s", NOW, &at, &every), -ERANGE);
	CHECK_EQ(start_time_parse("/61m", NOW, &at, &every), -ERANGE);
	CHECK_EQ(start_time_parse("/1.5s", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("/10h", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("/s", NOW, &at, &every), -EINVAL);
}

static void test_clock_time(void)
{
	uint64_t at, every;

	setenv("TZ", "UTC", 1);
	tzset();
	CHECK_EQ(start_time_parse("10:00:30", NOW, &at, &every), 0);
	CHECK_EQ(at, 1796637630ull * NS);
	CHECK_EQ(start_time_parse("10:00:30.75", NOW, &at, &every), 0);
	CHECK_EQ(at, 1796637630ull * NS + 750000000ull);
	CHECK_EQ(start_time_parse("09:59:00", NOW, &at, &every), 0); /* past: today's */
	CHECK_EQ(at, 1796637540ull * NS);
	CHECK_EQ(start_time_parse("24:00:00", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("10:60:00", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("1:00:00", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("10:00", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("-1", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse(" 5", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("", NOW, &at, &every), -EINVAL);
	CHECK_EQ(start_time_parse("1e9", NOW, &at, &every), -EINVAL);
}

int main(void)
{
	RUN(test_unix_seconds);
	RUN(test_boundaries);
	RUN(test_clock_time);
	UNIT_DONE();
}
