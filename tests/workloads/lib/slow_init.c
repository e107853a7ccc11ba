// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A library whose constructor takes 500 ms and runs before libfvbpf's
 * (build/tests/slow_start links -lfvbpf first, this second, so the loader
 * initialises this one first): for that long libfvbpf is mapped but has no
 * control page yet, which a process tree's new process goes through too.
 */
#include <time.h>

static __attribute__((constructor)) void slow_init(void)
{
	struct timespec ts = { 0, 500000000 };

	while (nanosleep(&ts, &ts))
		;
}

int slow_init_linked(void)
{
	return 1;
}
