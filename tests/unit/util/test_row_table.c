// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * util/row_table: find-or-add by (name, kind), as the summary's rows and
 * the report's operators use it, against a linear search of the same
 * inputs (the oracle), and its charge hook against a budget that counts
 * what it was given: what is held equals the bytes the array and the
 * index occupy, and a refusal adds nothing and keeps nothing charged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/row_table.h"
#include "unit.h"

struct row {
	char *name;
	const char *kind;
	uint64_t count;
};

struct table {
	struct row *rows;
	size_t n, cap;
	struct pair_index index;
};

static void row_key(const void *arr, size_t i, const char **name, const char **kind)
{
	const struct row *r = arr;

	*name = r[i].name;
	*kind = r[i].kind;
}

static const char *fail_name; /* init refuses this name */

static int row_init(void *p, const char *name, const char *kind, void *ctx)
{
	struct row *r = p;

	(void)ctx;
	if (fail_name && !strcmp(name, fail_name))
		return -EIO;
	r->name = strdup(name);
	r->kind = kind;
	return r->name ? 0 : -ENOMEM;
}

static void table_free(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	pair_index_free(&t->index);
	memset(t, 0, sizeof(*t));
}

static int get(struct table *t, const struct charge_hook *c, const char *name, const char *kind,
	       struct row **out)
{
	struct row_table rt = { &t->rows, &t->n, &t->cap, sizeof(struct row), 4, &t->index,
				row_key, row_init, NULL, c };
	void *r = NULL;
	int ret = row_table_get(&rt, name, kind, &r);

	*out = r;
	return ret;
}

static const char *const kinds[] = { "kernel", "cuda_runtime" };

/* 20,000 lookups of 3,000 (name, kind) pairs: each row is the one a linear
 * search of the same inputs, in first-seen order, gives. */
static void test_plain_against_linear(void)
{
	enum { LOOKUPS = 20000, NAMES = 1500 };
	static char oracle_name[2 * NAMES][32];
	static const char *oracle_kind[2 * NAMES];
	static uint64_t oracle_count[2 * NAMES];
	struct table t = { 0 };
	size_t i, j, no = 0;
	uint32_t x = 12345;
	char name[32];
	struct row *r;

	for (i = 0; i < LOOKUPS; i++) {
		x = x * 1103515245u + 12345u;
		snprintf(name, sizeof(name), "name%u", (x >> 8) % NAMES);
		const char *kind = kinds[(x >> 4) & 1];

		for (j = 0; j < no && (strcmp(oracle_name[j], name) || oracle_kind[j] != kind); j++)
			;
		if (j == no) {
			snprintf(oracle_name[no], sizeof(oracle_name[no]), "%s", name);
			oracle_kind[no++] = kind;
		}
		oracle_count[j]++;
		CHECK_EQ(get(&t, NULL, name, kind, &r), 0);
		if (!r)
			break;
		CHECK_EQ(r - t.rows, j);
		r->count++;
	}
	CHECK_EQ(t.n, no);
	for (j = 0; j < no && j < t.n; j++) {
		CHECK_STR(t.rows[j].name, oracle_name[j]);
		CHECK(t.rows[j].kind == oracle_kind[j]);
		CHECK_EQ(t.rows[j].count, oracle_count[j]);
	}
	/* The same name with another kind is another row. */
	CHECK_EQ(get(&t, NULL, "name0", "gpu_memset", &r), 0);
	CHECK_EQ(t.n, no + 1);
	table_free(&t);
}

/* An init that fails adds nothing; the name can be added later. */
static void test_init_error(void)
{
	struct table t = { 0 };
	struct row *r;

	CHECK_EQ(get(&t, NULL, "a", "k", &r), 0);
	fail_name = "b";
	CHECK_EQ(get(&t, NULL, "b", "k", &r), -EIO);
	CHECK(r == NULL);
	CHECK_EQ(t.n, 1);
	fail_name = NULL;
	CHECK_EQ(get(&t, NULL, "b", "k", &r), 0);
	CHECK(r != NULL && r == &t.rows[1]);
	CHECK_EQ(get(&t, NULL, "a", "k", &r), 0);
	CHECK(r == &t.rows[0]);
	CHECK_EQ(t.n, 2);
	table_free(&t);
}

struct budget {
	uint64_t limit, held;
	unsigned int refusals;
};

static int charge(void *ctx, uint64_t bytes)
{
	struct budget *b = ctx;

	if (bytes > b->limit - b->held) {
		b->refusals++;
		return -ENOSPC;
	}
	b->held += bytes;
	return 0;
}

static void uncharge(void *ctx, uint64_t bytes)
{
	struct budget *b = ctx;

	b->held -= bytes;
}

/* What the table's memory is: the array's capacity and the index's slots. */
static uint64_t occupied(const struct table *t)
{
	return (uint64_t)t->cap * sizeof(struct row) + (uint64_t)t->index.n * sizeof(size_t);
}

static void test_charged(void)
{
	struct budget b = { 4096, 0, 0 };
	struct charge_hook c = { charge, uncharge, &b };
	struct table t = { 0 };
	uint64_t before;
	size_t i, n;
	char name[32];
	struct row *r;
	int ret = 0;

	/* Until the budget refuses, held is what the table occupies. */
	for (i = 0; i < 1000 && !ret; i++) {
		snprintf(name, sizeof(name), "op%zu", i);
		ret = get(&t, &c, name, "kernel", &r);
		CHECK(ret == 0 || ret == -ENOSPC);
		CHECK_EQ(b.held, occupied(&t));
	}
	CHECK_EQ(ret, -ENOSPC);
	CHECK_EQ(b.refusals, 1);
	CHECK(b.held <= b.limit);
	/* The refused name was not added, and nothing stays charged for it
	 * (a lookup that would grow the index is refused too, found or not). */
	n = t.n;
	before = b.held;
	CHECK_EQ(get(&t, &c, name, "kernel", &r), -ENOSPC);
	CHECK_EQ(t.n, n);
	CHECK_EQ(b.held, before);
	/* A larger budget: it goes on, still charged exactly. */
	b.limit = 1 << 20;
	CHECK_EQ(get(&t, &c, name, "kernel", &r), 0);
	CHECK_EQ(t.n, n + 1);
	CHECK_EQ(b.held, occupied(&t));
	table_free(&t);
}

int main(void)
{
	RUN(test_plain_against_linear);
	RUN(test_init_error);
	RUN(test_charged);
	UNIT_DONE();
}
