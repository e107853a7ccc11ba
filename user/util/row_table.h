/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Find a row of an array by (name, kind), or add it: the one shape of the
 * summary's rows (output/summary/summary.c) and the report's operators
 * (offline/report/job_report.c).  The owner keeps its array, count,
 * capacity and pair_index; this names them.  Growth (the array's and the
 * index's) may be charged to a budget through a charge_hook (`fvbpf
 * report --max-memory`); without one nothing is charged.
 */
#ifndef FVBPF_ROW_TABLE_H
#define FVBPF_ROW_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/pair_index.h"

/* What growth is charged to: @charge returns 0 or -ENOSPC (over the budget);
 * @uncharge gives bytes back. */
struct charge_hook {
	int (*charge)(void *ctx, uint64_t bytes);
	void (*uncharge)(void *ctx, uint64_t bytes);
	void *ctx;
};

/* 0, or -ENOSPC from @c; a NULL @c charges nothing. */
int charge_hook_take(const struct charge_hook *c, uint64_t bytes);
void charge_hook_give(const struct charge_hook *c, uint64_t bytes);
/* grow_one() charging what the array gains: 0, -ENOSPC or -ENOMEM, the array untouched. */
int grow_one_charged(const struct charge_hook *c, void *v, size_t n, size_t *cap, size_t size,
		     size_t first);
/* pair_index_find() charging the index's growth: 1, 0, -ENOSPC or -ENOMEM. */
int pair_index_find_charged(const struct charge_hook *c, struct pair_index *x, const void *arr,
			    size_t count, pair_key_fn key, const char *name, const char *kind,
			    size_t *pos);

struct row_table {
	void *rows;                /* the address of the owner's array pointer */
	size_t *n, *cap;
	size_t size;               /* bytes a row */
	size_t first;              /* rows of the first allocation */
	struct pair_index *index;  /* (name, kind) -> position */
	pair_key_fn key;           /* a row's name and kind */
	/* Gives a new row, zeroed, its name and kind (copies, or what outlives
	 * the table) and its starting values: 0, or -errno and the row is not
	 * added (@init frees what it took). */
	int (*init)(void *row, const char *name, const char *kind, void *ctx);
	void *ctx;                 /* @init's */
	const struct charge_hook *charge; /* NULL: nothing charged */
};

/* The row of (@name, @kind) in *@row, added when absent: 0, -ENOSPC (the
 * charge refused) or -ENOMEM, or @init's error; on error nothing is added. */
int row_table_get(const struct row_table *t, const char *name, const char *kind, void **row);

#endif /* FVBPF_ROW_TABLE_H */
