// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Interned kernel names and the per-process address cache. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/name_table.h"
#include "unit.h"

static void test_intern(void)
{
	struct name_table t;
	char buf[64], name[32];
	uint32_t a, b, ids[500];
	int i;

	name_table_init(&t);
	a = name_table_intern(&t, "scale(float*, float, int)");
	b = name_table_intern(&t, "void fv::tmpl<7>(int*)");
	CHECK(a && b && a != b);
	CHECK_EQ(name_table_intern(&t, "scale(float*, float, int)"), a);
	name_table_get(&t, b, buf, sizeof(buf));
	CHECK_STR(buf, "void fv::tmpl<7>(int*)");
	name_table_get(&t, 0, buf, sizeof(buf));
	CHECK_STR(buf, "?");
	name_table_get(&t, 999, buf, sizeof(buf));
	CHECK_STR(buf, "?");
	/* growth keeps every id stable */
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		ids[i] = name_table_intern(&t, name);
	}
	for (i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		CHECK_EQ(name_table_intern(&t, name), ids[i]);
		name_table_get(&t, ids[i], buf, sizeof(buf));
		CHECK_STR(buf, name);
	}
	CHECK_EQ(name_table_intern(&t, "scale(float*, float, int)"), a);
	name_table_get(&t, a, buf, 6);
	CHECK_STR(buf, "scale");
	name_table_free(&t);
}

static void test_addr_cache(void)
{
	struct addr_cache c = { 0 };
	uint64_t i;

	CHECK_EQ(addr_cache_get(&c, 0x401000), 0);
	CHECK_EQ(addr_cache_put(&c, 0x401000, 7), 0);
	CHECK_EQ(addr_cache_get(&c, 0x401000), 7);
	CHECK_EQ(addr_cache_put(&c, 0x401000, 9), 0); /* a handle re-mapped */
	CHECK_EQ(addr_cache_get(&c, 0x401000), 9);
	for (i = 1; i <= 5000; i++)
		CHECK_EQ(addr_cache_put(&c, (i << 12) | 8, (uint32_t)i), 0);
	for (i = 1; i <= 5000; i++)
		if (addr_cache_get(&c, (i << 12) | 8) != (uint32_t)i)
			CHECK_EQ(addr_cache_get(&c, (i << 12) | 8), i);
	CHECK_EQ(addr_cache_get(&c, 0x401000), 9);
	CHECK_EQ(addr_cache_get(&c, (5001ull << 12) | 8), 0);
	CHECK_EQ(c.n, 5001);
	addr_cache_free(&c);
}

static void test_addr_cache_drop(void)
{
	struct addr_cache c = { 0 };
	uint64_t i;

	for (i = 1; i <= 1000; i++)
		CHECK_EQ(addr_cache_put(&c, i, i % 3 ? i : UINT64_MAX), 0);
	addr_cache_drop(&c, UINT64_MAX);
	CHECK_EQ(c.n, 667);
	for (i = 1; i <= 1000; i++)
		CHECK_EQ(addr_cache_get(&c, i), i % 3 ? i : 0);
	addr_cache_free(&c);
}

/* A target can invent names without end: past the bounds they share one
 * id, counted, and known names keep theirs. */
static void test_intern_bounds(void)
{
	struct name_table t;
	char buf[64], name[32];
	uint32_t a, over;
	int i;

	name_table_init(&t);
	t.max_names = 10;
	a = name_table_intern(&t, "kernel_a");
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "made_up_%d", i);
		name_table_intern(&t, name);
	}
	CHECK_EQ(t.n, 11); /* 10 names and the overflow name */
	CHECK_EQ(t.capped, 11);
	over = name_table_intern(&t, "yet_another");
	CHECK(over && over == t.overflow_id && over != a);
	name_table_get(&t, over, buf, sizeof(buf));
	CHECK_STR(buf, NAME_TABLE_OVERFLOW);
	CHECK_EQ(name_table_intern(&t, "kernel_a"), a);
	CHECK_EQ(name_table_intern(&t, "made_up_3"), 5);
	name_table_free(&t);

	/* The byte bound. */
	name_table_init(&t);
	t.max_bytes = 30;
	CHECK_EQ(name_table_intern(&t, "0123456789"), 1);
	CHECK_EQ(name_table_intern(&t, "abcdefghij"), 2);
	CHECK_EQ(name_table_intern(&t, "ABCDEFGHIJ"), 3); /* the overflow name */
	CHECK_EQ(name_table_intern(&t, "x"), 3);
	CHECK_EQ(t.capped, 2);
	name_table_free(&t);
}

static void test_addr_cache_bound(void)
{
	struct addr_cache c = { .max = 100 };
	uint64_t i;

	for (i = 1; i <= 150; i++)
		addr_cache_put(&c, i, i);
	CHECK_EQ(c.n, 100);
	CHECK_EQ(c.refused, 50);
	CHECK_EQ(addr_cache_put(&c, 1000, 1), -ENOSPC);
	CHECK_EQ(addr_cache_put(&c, 7, 700), 0); /* a known key still changes */
	CHECK_EQ(addr_cache_get(&c, 7), 700);
	CHECK_EQ(addr_cache_get(&c, 120), 0);
	addr_cache_drop(&c, 700);
	CHECK_EQ(c.n, 99);
	CHECK_EQ(c.max, 100);
	CHECK_EQ(c.refused, 51);
	addr_cache_free(&c);
}

int main(void)
{
	RUN(test_intern);
	RUN(test_addr_cache);
	RUN(test_addr_cache_drop);
	RUN(test_intern_bounds);
	RUN(test_addr_cache_bound);
	UNIT_DONE();
}
