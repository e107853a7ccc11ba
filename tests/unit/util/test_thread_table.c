// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The per-thread table call pairing and segment tracking share. */
#include <errno.h>
#include <stdlib.h>

#include "util/thread_table.h"
#include "unit.h"

struct entry {
	uint32_t tid;
	uint32_t open;
};

static bool entry_idle(const void *e)
{
	return !((const struct entry *)e)->open;
}

static const struct thread_table_shape grow_first = {
	.size = sizeof(struct entry), .first = 2, .idle = entry_idle,
};
static const struct thread_table_shape reuse_first = {
	.size = sizeof(struct entry), .first = 2, .reuse_first = true, .idle = entry_idle,
};

/* Below the cap the table grows; at it an idle entry is reused, the first
 * in array order, and with every entry busy -ENOSPC. */
static void test_grow_then_reuse(void)
{
	struct entry *t = NULL, *e;
	size_t n = 0, cap = 0;
	int err;

	e = thread_table_get(&grow_first, &t, &n, &cap, 3, 10, &err);
	CHECK(e && !err && e->tid == 10 && !e->open);
	e->open = 1;
	e = thread_table_get(&grow_first, &t, &n, &cap, 3, 11, &err);
	CHECK(e && e->tid == 11);
	/* idle, but the table is below its cap: a new entry */
	e = thread_table_get(&grow_first, &t, &n, &cap, 3, 12, &err);
	CHECK(e && e->tid == 12);
	CHECK_EQ(n, 3);
	CHECK_EQ(cap, 4);
	t[2].open = 1;
	CHECK(thread_table_get(&grow_first, &t, &n, &cap, 3, 10, &err) == &t[0]);
	e = thread_table_get(&grow_first, &t, &n, &cap, 3, 13, &err);
	CHECK(e == &t[1] && e->tid == 13 && !err);
	e->open = 1;
	CHECK(!thread_table_get(&grow_first, &t, &n, &cap, 3, 14, &err));
	CHECK_EQ(err, -ENOSPC);
	CHECK(!thread_table_find(t, n, sizeof(*t), 11));
	CHECK(thread_table_find(t, n, sizeof(*t), 13) == &t[1]);
	CHECK_EQ(n, 3);
	free(t);
}

/* reuse_first: an idle entry is taken before the array grows. */
static void test_reuse_first(void)
{
	struct entry *t = NULL, *e;
	size_t n = 0, cap = 0;
	int err;

	e = thread_table_get(&reuse_first, &t, &n, &cap, 2, 1, &err);
	CHECK(e && e->tid == 1);
	e = thread_table_get(&reuse_first, &t, &n, &cap, 2, 2, &err);
	CHECK(e == &t[0] && e->tid == 2 && n == 1);
	e->open = 1;
	e = thread_table_get(&reuse_first, &t, &n, &cap, 2, 3, &err);
	CHECK(e == &t[1] && n == 2);
	e->open = 1;
	CHECK(!thread_table_get(&reuse_first, &t, &n, &cap, 2, 4, &err));
	CHECK_EQ(err, -ENOSPC);
	free(t);
}

int main(void)
{
	RUN(test_grow_then_reuse);
	RUN(test_reuse_first);
	UNIT_DONE();
}
