// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Bounded passes over the ring buffer (see ring_consume.h). */
#include <bpf/libbpf.h>
#include <time.h>

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
