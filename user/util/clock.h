/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The one clock reader: nanoseconds of @clk (CLOCK_MONOTONIC for the trace's
 * times and for deadlines, CLOCK_REALTIME for wall clock, a CPU clock for
 * the benchmark).  Header only and libc only, so that lib/ may use it too.
 */
#ifndef FVBPF_CLOCK_H
#define FVBPF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* FVBPF_CLOCK_H */
