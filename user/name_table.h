/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Interned names (kernel names), shared by the consumer, which adds them,
 * and the writer thread, which reads them: append-only, ids from 1.
 */
#ifndef FVBPF_NAME_TABLE_H
#define FVBPF_NAME_TABLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct name_table {
	pthread_mutex_t lock;
	char **names;          /* names[id - 1] */
	size_t n, cap;
	uint32_t *slots;       /* open addressing over ids, 0 = empty */
	size_t nslots;
};

void name_table_init(struct name_table *t);
void name_table_free(struct name_table *t);
/* The id of @name, added if new; 0 when out of memory. */
uint32_t name_table_intern(struct name_table *t, const char *name);
/* Copy of the name of @id into @buf ("?" if unknown). */
void name_table_get(struct name_table *t, uint32_t id, char *buf, size_t len);

/*
 * A small uint64 -> uint64 map, used by the consumer alone: launch function
 * address -> kernel name id, correlation id -> where its call is.  Values
 * must not be 0 (0 means absent).
 */
struct addr_cache {
	uint64_t *keys;
	uint64_t *vals;
	size_t n, cap;
};

uint64_t addr_cache_get(const struct addr_cache *c, uint64_t addr);
int addr_cache_put(struct addr_cache *c, uint64_t addr, uint64_t val);
/* Remove every entry whose value is @val (rebuilds the table). */
void addr_cache_drop(struct addr_cache *c, uint64_t val);
void addr_cache_free(struct addr_cache *c);

#endif /* FVBPF_NAME_TABLE_H */
