// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <pthread.h>

#include "pipeline/slice_spare.h"

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static void *spare;          /* a global root: not a leak at exit */
static size_t spare_bytes;

void *slice_spare_take(size_t *bytes)
{
	void *p;

	pthread_mutex_lock(&spare_lock);
	p = spare;
	*bytes = p ? spare_bytes : 0;
	spare = NULL;
	spare_bytes = 0;
	pthread_mutex_unlock(&spare_lock);
	return p;
}

bool slice_spare_put(void *p, size_t bytes)
{
	bool kept = false;

	if (!p || bytes < SLICE_SPARE_MIN || bytes > SLICE_SPARE_MAX)
		return false;
	pthread_mutex_lock(&spare_lock);
	if (!spare) {
		spare = p;
		spare_bytes = bytes;
		kept = true;
	}
	pthread_mutex_unlock(&spare_lock);
	return kept;
}
