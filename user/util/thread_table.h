/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A per-thread table, as call pairing (CUDA and torch) and segment tracking
 * each keep one: an array of entries, one per thread id, found by a linear
 * scan.  The owner keeps the array, its count and capacity in its own
 * struct and counts the events it drops; the table only finds and adds.
 *
 * A long job starts threads without end: past @max entries an idle one
 * (what "idle" means is the owner's: nothing open) is reused for the new
 * thread, and when every entry is busy the event is dropped (-ENOSPC).
 */
#ifndef FVBPF_THREAD_TABLE_H
#define FVBPF_THREAD_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define THREAD_TABLE_MAX 4096u   /* entries per process unless the owner says otherwise */

struct thread_table_shape {
	size_t size;        /* bytes of an entry; it begins with its uint32_t tid */
	size_t first;       /* entries of the first allocation */
	/* Reuse an idle entry before growing the array, not only past @max:
	 * for entries large enough that a short-lived thread should not cost
	 * one of its own (torch's 128-deep stacks). */
	bool reuse_first;
	bool (*idle)(const void *entry);
};

/* The entry of @tid among the @n at @entries, or NULL. */
void *thread_table_find(void *entries, size_t n, size_t size, uint32_t tid);

/*
 * The entry of @tid in the array *@entries (*@n used of *@cap): found, or
 * made for it (a new entry zeroed, a reused one keeps all but its tid).
 * NULL with *@err -ENOMEM, or -ENOSPC when @max entries are all busy.
 */
void *thread_table_get(const struct thread_table_shape *sh, void *entries, size_t *n, size_t *cap,
		       size_t max, uint32_t tid, int *err);

#endif /* FVBPF_THREAD_TABLE_H */
