// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "util/file/cache_drop.h"

/*
 * A dirty page cannot be dropped: each file's writeback starts when it is
 * complete, and its pages go a few files later, when they are clean,
 * without the writer ever waiting for the disk.  Pages still dirty then
 * stay (the kernel writes them back as usual).  On tmpfs both calls do
 * nothing.
 */
#define CACHE_DROP_LAG 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int held[CACHE_DROP_LAG];
static unsigned nheld, next;

static void drop(int fd)
{
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

void cache_drop_add(int fd)
{
	int old = -1;

	if (fd < 0)
		return;
	/* Errors here change nothing written: the kernel's own writeback
	 * reports them as before. */
	sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	pthread_mutex_lock(&lock);
	if (nheld == CACHE_DROP_LAG)
		old = held[next];
	else
		nheld++;
	held[next] = fd;
	next = (next + 1) % CACHE_DROP_LAG;
	pthread_mutex_unlock(&lock);
	if (old >= 0)
		drop(old);
}

void cache_drop_flush(void)
{
	unsigned i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nheld; i++) {
		sync_file_range(held[i], 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						       SYNC_FILE_RANGE_WAIT_AFTER);
		drop(held[i]);
	}
	nheld = next = 0;
	pthread_mutex_unlock(&lock);
}
