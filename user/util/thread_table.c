// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <string.h>

#include "util/grow.h"
#include "util/thread_table.h"

static uint32_t entry_tid(const char *e)
{
	uint32_t tid;

	memcpy(&tid, e, sizeof(tid));
	return tid;
}

static void set_tid(char *e, uint32_t tid)
{
	memcpy(e, &tid, sizeof(tid));
}

void *thread_table_find(void *entries, size_t n, size_t size, uint32_t tid)
{
	char *e = entries;
	size_t i;

	for (i = 0; i < n; i++, e += size)
		if (entry_tid(e) == tid)
			return e;
	return NULL;
}

/* The first entry that holds nothing, in array order. */
static char *idle_entry(const struct thread_table_shape *sh, char *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++, e += sh->size)
		if (sh->idle(e))
			return e;
	return NULL;
}

void *thread_table_get(const struct thread_table_shape *sh, void *entries, size_t *n, size_t *cap,
		       size_t max, uint32_t tid, int *err)
{
	char **arr = entries, *e;

	*err = 0;
	e = thread_table_find(*arr, *n, sh->size, tid);
	if (e)
		return e;
	if (sh->reuse_first || *n >= max) {
		e = idle_entry(sh, *arr, *n);
		if (e) {
			set_tid(e, tid);
			return e;
		}
		if (*n >= max) {
			*err = -ENOSPC;
			return NULL;
		}
	}
	if (grow_one(arr, *n, cap, sh->size, sh->first)) {
		*err = -ENOMEM;
		return NULL;
	}
	e = *arr + *n * sh->size;
	(*n)++;
	memset(e, 0, sh->size);
	set_tid(e, tid);
	return e;
}
