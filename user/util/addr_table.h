/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Address -> (size, tag): the live allocations --profile-memory saw, so a
 * free that gives only the address gets its size.  Open addressing with
 * linear probing and backward-shift deletion; grows by doubling up to a
 * cap the caller sets, past which inserts fail (counted by the caller).
 */
#ifndef FVBPF_ADDR_TABLE_H
#define FVBPF_ADDR_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct addr_entry {
	uint64_t addr;          /* 0: empty */
	uint64_t size;
	uint64_t tag;           /* the caller's (e.g. the index of the allocating record) */
};

struct addr_table {
	struct addr_entry *e;
	size_t cap, n, max;     /* max: most entries held, 0 for the default */
};

#define ADDR_TABLE_DEFAULT_MAX (1u << 20)

/* Put @addr (replacing an entry for it): 0, -EINVAL for address 0,
 * -ENOSPC when the table holds its max, -ENOMEM. */
int addr_table_put(struct addr_table *t, uint64_t addr, uint64_t size, uint64_t tag);
/* Copy @addr's entry into *@out: 1, or 0 when it is not there. */
int addr_table_get(const struct addr_table *t, uint64_t addr, struct addr_entry *out);
/* Take @addr's entry out into *@out: 1, or 0 when it is not there. */
int addr_table_take(struct addr_table *t, uint64_t addr, struct addr_entry *out);
/* Call @fn for every entry (in no order). */
void addr_table_each(const struct addr_table *t, void (*fn)(const struct addr_entry *e, void *ctx),
		     void *ctx);
void addr_table_clear(struct addr_table *t);
void addr_table_free(struct addr_table *t);

#endif /* FVBPF_ADDR_TABLE_H */
