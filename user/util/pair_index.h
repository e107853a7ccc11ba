/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A hash index of (name, kind) pairs into an array its owner keeps (the
 * summary's rows, the report's operators): as many distinct names as a
 * target sends stay one lookup each.  Open addressing, doubled when half
 * full, rebuilt from the array itself.
 */
#ifndef FVBPF_PAIR_INDEX_H
#define FVBPF_PAIR_INDEX_H

#include <stddef.h>

struct pair_index {
	size_t *slots;  /* array position + 1; 0 empty */
	size_t n;       /* a power of two, or 0 */
};

/* The name and kind of the owner's entry @i. */
typedef void (*pair_key_fn)(const void *arr, size_t i, const char **name, const char **kind);

/*
 * Where (@name, @kind) is among the @count entries of @arr: 1 and its
 * position in *@pos, or 0 when absent, *@pos then the slot that
 * pair_index_set() takes once the caller has added it; -ENOMEM.
 */
int pair_index_find(struct pair_index *x, const void *arr, size_t count, pair_key_fn key,
		    const char *name, const char *kind, size_t *pos);
/* Entry @i (the one just added) is at @slot, from pair_index_find(). */
void pair_index_set(struct pair_index *x, size_t slot, size_t i);
/* Forget every position (the array was reordered). */
void pair_index_free(struct pair_index *x);

#endif /* FVBPF_PAIR_INDEX_H */
