// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* --max-memory (user/util/budget.c): the size parser, the budget rule and
 * the shares a segment may grow into; segments charge and release it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/budget.h"
#include "util/name_table.h"
#include "pipeline/segment.h"
#include "unit.h"

#define MiB (1ULL << 20)

static void test_parse_size(void)
{
	uint64_t v = 0;

	CHECK_EQ(budget_parse_size("256M", &v), 0);
	CHECK_EQ(v, 256 * MiB);
	CHECK_EQ(budget_parse_size("1g", &v), 0);
	CHECK_EQ(v, 1ULL << 30);
	CHECK_EQ(budget_parse_size("512K", &v), 0);
	CHECK_EQ(v, 512ULL << 10);
	CHECK_EQ(budget_parse_size("65536", &v), 0);
	CHECK_EQ(v, 65536);
	CHECK_EQ(budget_parse_size("1024G", &v), 0);
	CHECK_EQ(v, 1ULL << 40);
	v = 7;
	CHECK_EQ(budget_parse_size("1025G", &v), -ERANGE);
	CHECK_EQ(budget_parse_size("0", &v), -ERANGE);
	CHECK_EQ(budget_parse_size("0M", &v), -ERANGE);
	CHECK_EQ(budget_parse_size("99999999999999999999999", &v), -ERANGE);
	CHECK_EQ(budget_parse_size("18014398509481984K", &v), -ERANGE); /* would wrap */
	CHECK_EQ(budget_parse_size("", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("M", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("-1", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("+1", &v), -EINVAL);
	CHECK_EQ(budget_parse_size(" 1", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("1.5G", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("12X", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("5MB", &v), -EINVAL);
	CHECK_EQ(budget_parse_size("0x10", &v), -EINVAL);
	CHECK_EQ(v, 7); /* untouched on error */
}

static void test_budget_rule(void)
{
	struct budget m;

	memset(&m, 0, sizeof(m));
	CHECK(budget_rss_now() > 0);
	CHECK_EQ(budget_setup(&m, 1 * MiB, 8 * MiB), -ENOSPC);
	CHECK_EQ(m.budget, 0);
	memset(&m, 0, sizeof(m));
	CHECK_EQ(budget_setup(&m, 4096 * MiB, 8 * MiB), 0);
	CHECK_EQ(m.slack, BUDGET_SLACK + 16 * MiB);
	/* a quarter of the room to the tables, the rest to segments */
	CHECK_EQ(m.tables, (4096 * MiB - m.rss_setup - m.slack) / 4);
	CHECK_EQ(m.budget + m.tables, 4096 * MiB - m.rss_setup - m.slack);
	/* the least --max-memory leaves segments BUDGET_MIN, one byte less not */
	memset(&m, 0, sizeof(m));
	CHECK_EQ(budget_setup(&m, 4096 * MiB, 8 * MiB), 0);
	{
		uint64_t least = budget_least(&m), rss = m.rss_setup;

		memset(&m, 0, sizeof(m));
		budget_setup(&m, least + 1 * MiB, 8 * MiB);
		/* the RSS moved by less than a MiB between the calls */
		CHECK(m.rss_setup - rss < 1 * MiB || rss - m.rss_setup < 1 * MiB);
		CHECK(m.budget >= BUDGET_MIN);
	}
}

/* The tables' share: charged up to it, refused past it, given back. */
static void test_tables_share(void)
{
	struct budget m;
	struct name_table names;
	char name[64], got[64];
	uint32_t id, overflow = 0;
	int i, kept = 0;

	memset(&m, 0, sizeof(m));
	CHECK_EQ(budget_setup(&m, 4096 * MiB, 8 * MiB), 0);
	m.tables = 10000; /* a small share */
	CHECK_EQ(charge_hook_take(&m.tables_charge, 6000), 0);
	CHECK_EQ(charge_hook_take(&m.tables_charge, 5000), -ENOSPC);
	CHECK_EQ(charge_hook_take(&m.tables_charge, UINT64_MAX), -ENOSPC);
	CHECK_EQ(m.tables_held, 6000);
	charge_hook_give(&m.tables_charge, 6000);
	CHECK_EQ(m.tables_held, 0);
	CHECK_EQ(m.tables_peak, 6000);
	/* the name table within it: 100 names of 60 bytes, about 90 fit */
	name_table_init(&names);
	name_table_set_charge(&names, &m.tables_charge);
	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "scope%04d-%050d", i, 0);
		id = name_table_intern(&names, name);
		if (name_table_intern(&names, name) != id)
			break; /* the same id again */
		name_table_get(&names, id, got, sizeof(got));
		if (!strcmp(got, NAME_TABLE_OVERFLOW))
			overflow = id;
		else
			kept++;
	}
	CHECK_EQ(i, 100);
	CHECK(kept > 0 && kept < 100 && overflow);
	CHECK_EQ(names.capped, 2 * (100 - kept)); /* each refused lookup counts */
	CHECK(m.tables_held <= m.tables);
	CHECK_EQ(m.tables_held, names.charged);
	name_table_free(&names);
	CHECK_EQ(m.tables_held, 0);
}

static void test_grant(void)
{
	struct budget m;

	memset(&m, 0, sizeof(m));
	m.budget = 30 * MiB; /* a third: 10 MiB */
	CHECK_EQ(budget_grant(&m, 0, 0, 1024, 1024), 1024);           /* 1 MiB */
	CHECK_EQ(m.held, 1 * MiB);
	/* a segment of 9 MiB may take 1 MiB more, not the 8 it asks */
	CHECK_EQ(budget_grant(&m, 9 * MiB, 1024, 9 * 1024, 1024), 2048);
	CHECK_EQ(m.held, 2 * MiB);
	CHECK_EQ(budget_grant(&m, 10 * MiB, 1024, 2048, 1024), 0);    /* its share is full */
	/* the whole budget: nothing more for anyone */
	budget_charge(&m, 28 * MiB);
	CHECK_EQ(m.peak, 30 * MiB);
	CHECK_EQ(budget_grant(&m, 0, 16, 32, 1024), 0);
	budget_release(&m, 30 * MiB);
	CHECK_EQ(m.held, 0);
	CHECK_EQ(m.peak, 30 * MiB);
	CHECK(!budget_pressure(&m));
	budget_charge(&m, 11 * MiB);
	CHECK(budget_pressure(&m));
}

static void on_close(struct segment *seg, void *ctx)
{
	*(struct segment **)ctx = seg;
}

/* A segment past its share stops storing, counts, is marked; freeing it
 * gives back every byte it was charged. */
static void test_segment_truncated(void)
{
	struct region_registry reg;
	struct seg_tracker t;
	struct segment *closed = NULL;
	struct budget m;
	uint32_t i, n = 100000;

	memset(&m, 0, sizeof(m));
	m.budget = 3 * MiB; /* one segment: 1 MiB, 32 768 slices of 32 bytes */
	registry_init(&reg);
	reg.defs[0].enabled = reg.defs[1].enabled = true;
	seg_tracker_init(&t, 1, &reg, on_close, &closed);
	t.mem = &m;
	CHECK_EQ(seg_on_begin(&t, 1, 0, 1), 0);
	for (i = 0; i < n; i++) {
		CHECK_EQ(seg_on_begin(&t, 1, 1, 2 + 2 * i), 0);
		CHECK_EQ(seg_on_end(&t, 1, 1, 3 + 2 * i), 0);
	}
	CHECK_EQ(seg_on_end(&t, 1, 0, 3 * n), 0);
	CHECK(closed != NULL);
	if (closed) {
		CHECK(closed->truncated_by_memory);
		CHECK_EQ(closed->nslices + closed->slices_dropped, n + 1);
		CHECK(closed->bytes <= MiB + sizeof(*closed));
		CHECK_EQ(m.held, closed->bytes);
		CHECK_EQ(m.segments_truncated, 1);
		CHECK(m.events_over_limit > 0);
		segment_free(closed);
	}
	CHECK_EQ(m.held, 0);
	seg_tracker_free(&t);
}

int main(void)
{
	RUN(test_parse_size);
	RUN(test_budget_rule);
	RUN(test_tables_share);
	RUN(test_grant);
	RUN(test_segment_truncated);
	UNIT_DONE();
}
