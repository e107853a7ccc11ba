// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/file/file_memo.h"
#include "util/serial_arm.h"

struct memo_key {
	uint64_t dev, ino, size, mtime_s, mtime_ns;
	uint32_t kind;
};

struct memo_entry {
	struct memo_key key;
	void *val;
	size_t len;
};

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memo_entry *memo;
static size_t memo_n, memo_cap, memo_bytes;
static unsigned long memo_lookups, memo_hits;

static void key_of(enum file_memo_kind kind, const struct stat *st, struct memo_key *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = (uint64_t)st->st_dev;
	k->ino = (uint64_t)st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_s = (uint64_t)st->st_mtim.tv_sec;
	k->mtime_ns = (uint64_t)st->st_mtim.tv_nsec;
	k->kind = (uint32_t)kind;
}

/* A few hundred files a job: a linear search costs nothing beside one read. */
static struct memo_entry *find(const struct memo_key *k)
{
	size_t i;

	for (i = 0; i < memo_n; i++)
		if (!memcmp(&memo[i].key, k, sizeof(*k)))
			return &memo[i];
	return NULL;
}

long file_memo_get(enum file_memo_kind kind, const struct stat *st, void *buf, size_t len)
{
	struct memo_entry *e;
	struct memo_key k;
	long ret = -1;

	if (serial_arm())
		return -1;
	key_of(kind, st, &k);
	pthread_mutex_lock(&memo_lock);
	memo_lookups++;
	e = find(&k);
	if (e && e->len <= len) {
		memcpy(buf, e->val, e->len);
		ret = (long)e->len;
		memo_hits++;
	}
	pthread_mutex_unlock(&memo_lock);
	return ret;
}

bool file_memo_put(enum file_memo_kind kind, const struct stat *st, const void *val, size_t len)
{
	struct memo_entry *e;
	struct memo_key k;
	bool kept = false;
	void *copy;

	key_of(kind, st, &k);
	pthread_mutex_lock(&memo_lock);
	if (find(&k) || memo_n >= FILE_MEMO_MAX_ENTRIES || len > FILE_MEMO_MAX_BYTES - memo_bytes)
		goto out;
	if (memo_n == memo_cap) {
		size_t ncap = memo_cap ? memo_cap * 2 : 64;

		e = realloc(memo, ncap * sizeof(*e));
		if (!e)
			goto out;
		memo = e;
		memo_cap = ncap;
	}
	copy = malloc(len ? len : 1);
	if (!copy)
		goto out;
	memcpy(copy, val, len);
	memo[memo_n++] = (struct memo_entry){ .key = k, .val = copy, .len = len };
	memo_bytes += len;
	kept = true;
out:
	pthread_mutex_unlock(&memo_lock);
	return kept;
}

void file_memo_stats(unsigned long *lookups, unsigned long *hits)
{
	pthread_mutex_lock(&memo_lock);
	*lookups = memo_lookups;
	*hits = memo_hits;
	pthread_mutex_unlock(&memo_lock);
}

void file_memo_clear(void)
{
	size_t i;

	pthread_mutex_lock(&memo_lock);
	for (i = 0; i < memo_n; i++)
		free(memo[i].val);
	free(memo);
	memo = NULL;
	memo_n = memo_cap = memo_bytes = 0;
	memo_lookups = memo_hits = 0;
	pthread_mutex_unlock(&memo_lock);
}
