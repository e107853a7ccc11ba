// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>

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
