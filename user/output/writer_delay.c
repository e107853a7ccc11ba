// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>
#include <unistd.h>

#include "output/writer_delay.h"

#define WRITER_DELAY_MAX_MS 10000u

unsigned int writer_delay_ms(void)
{
#ifdef FVBPF_TEST_HOOKS
	const char *e = getenv("FVBPF_TEST_WRITER_DELAY_MS");
	unsigned long v = e ? strtoul(e, NULL, 10) : 0;

	return v > WRITER_DELAY_MAX_MS ? WRITER_DELAY_MAX_MS : (unsigned int)v;
#else
	return 0;
#endif
}

void writer_hold_wait(void)
{
#ifdef FVBPF_TEST_HOOKS
	const char *f = getenv("FVBPF_TEST_WRITER_HOLD");
	unsigned int i;

	/* bounded: a test that forgets the file costs two minutes, not a hang */
	for (i = 0; f && *f && i < 12000 && access(f, F_OK) == 0; i++)
		usleep(10000);
#endif
}
