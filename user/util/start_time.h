/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --start-at TIME: when the segments of attaches started apart may begin.
 * TIME is Unix seconds ("1765101600.25"), a wall-clock time of today in
 * local time ("14:05:00", "14:05:00.5"), or a boundary of Unix time ("/10s",
 * "/2m": the next multiple of 10 seconds, of 2 minutes).  Independent of
 * the machine: every node with a synchronised clock computes the same
 * instant from the same text.
 */
#ifndef FVBPF_START_TIME_H
#define FVBPF_START_TIME_H

#include <stdint.h>

#define START_AHEAD_MAX_S 86400ull   /* a TIME further ahead is a mistake */
#define START_EVERY_MAX_S 3600ull    /* the longest boundary period */

/* @s against CLOCK_REALTIME @now_real_ns: 0 with *at_ns (an instant) or
 * *every_ns (a period) set, the other 0; -EINVAL when @s is none of the
 * forms, -ERANGE when it lies more than a day ahead or the period is out
 * of 1 s to an hour. */
int start_time_parse(const char *s, uint64_t now_real_ns, uint64_t *at_ns, uint64_t *every_ns);
/* The instant a parsed TIME names at @now_real_ns: *at_ns, or the next
 * multiple of *every_ns after now. */
uint64_t start_time_instant(uint64_t at_ns, uint64_t every_ns, uint64_t now_real_ns);

#endif /* FVBPF_START_TIME_H */
