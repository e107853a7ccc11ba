// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Bounded passes over the ring buffer (see ring_consume.h). */
#include <bpf/libbpf.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/ring_consume.h"
#include "util/clock.h"

bool ring_pass(struct session *s)
{
	bool empty;

	s->ring_left = RING_PASS_MAX;
	ring_buffer__consume(s->rb);
	/* events_ring_cb() stops the pass when the count reaches 0 */
	empty = s->ring_left > 0;
	s->ring_left = 0;
	return empty;
}

bool ring_drain(struct session *s, uint64_t max_ns)
{
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + max_ns;

	while (!ring_pass(s))
		if (clock_ns(CLOCK_MONOTONIC) >= until)
			return false;
	return true;
}

/* The most a test may slow each record by. */
#define RING_DELAY_MAX_US 10000L

void ring_record_delay(void)
{
#ifdef FVBPF_TEST_HOOKS
	static long delay_us = -1;
	const char *e;

	if (delay_us < 0) {
		e = getenv("FVBPF_TEST_RING_DELAY_US");
		delay_us = e ? strtol(e, NULL, 10) : 0;
		if (delay_us < 0 || delay_us > RING_DELAY_MAX_US)
			delay_us = 0;
		/* the default 50 us of timer slack would be most of a short delay */
		if (delay_us)
			prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	}
	if (delay_us)
		usleep((useconds_t)delay_us);
#endif
}
