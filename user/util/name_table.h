/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Interned names (kernel names, torch scope names, shapes strings, Python
 * functions and files), shared by the consumer, which adds them, and the
 * writer thread, which reads them: append-only, ids from 1.
 */
#ifndef FVBPF_NAME_TABLE_H
#define FVBPF_NAME_TABLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "util/row_table.h"

/* A target can make up names without end (each launch of a new address is
 * a name, each record_function scope may have a fresh one): beyond either
 * bound, or once the charge hook refuses (--max-memory's share for
 * tables), new names share one id, counted. */
#define NAME_TABLE_MAX_NAMES (1u << 16)
#define NAME_TABLE_MAX_BYTES (32u << 20)
#define NAME_TABLE_OVERFLOW "(more names than fvbpf keeps)"
/* What a name costs besides its bytes: its pointer and hash slots (the
 * arrays grow by doubling), malloc's header and rounding. */
#define NAME_TABLE_NAME_COST 48u

struct name_table {
	pthread_mutex_t lock;
	char **names;          /* names[id - 1] */
	size_t n, cap;
	uint32_t *slots;       /* open addressing over ids, 0 = empty */
	size_t nslots;
	size_t bytes;          /* of the names kept */
	size_t max_names, max_bytes;  /* the bounds (lower in tests) */
	uint32_t overflow_id;  /* NAME_TABLE_OVERFLOW's, once a bound was hit */
	uint64_t capped;       /* names given overflow_id */
	const struct charge_hook *charge; /* NULL: nothing charged */
	uint64_t charged;      /* bytes taken through @charge */
};

void name_table_init(struct name_table *t);
void name_table_free(struct name_table *t);
/* From now on each new name is charged to @c (its bytes and
 * NAME_TABLE_NAME_COST); a name @c refuses gets the overflow id. */
void name_table_set_charge(struct name_table *t, const struct charge_hook *c);
/* The id of @name, added if new; overflow_id past the bounds; 0 when out
 * of memory. */
uint32_t name_table_intern(struct name_table *t, const char *name);
/* Copy of the name of @id into @buf ("?" if unknown). */
void name_table_get(struct name_table *t, uint32_t id, char *buf, size_t len);

/*
 * A small uint64 -> uint64 map, each used by one thread (no lock): launch
 * function address -> kernel name id, correlation id -> where its call is,
 * a segment's threads (seg_tids.c).  Values must not be 0 (0 means absent).
 */
#define ADDR_CACHE_MAX_ENTRIES (1u << 22)

struct addr_cache {
	uint64_t *keys;
	uint64_t *vals;
	size_t n, cap;
	size_t max;            /* entries kept; 0: ADDR_CACHE_MAX_ENTRIES */
	uint64_t refused;      /* new keys not kept: the bound was reached */
};

uint64_t addr_cache_get(const struct addr_cache *c, uint64_t addr);
/* 0, -ENOSPC (a new key past the bound: counted in refused), -ENOMEM. */
int addr_cache_put(struct addr_cache *c, uint64_t addr, uint64_t val);
/* Remove every entry whose value is @val (rebuilds the table). */
void addr_cache_drop(struct addr_cache *c, uint64_t val);
void addr_cache_free(struct addr_cache *c);

#endif /* FVBPF_NAME_TABLE_H */
