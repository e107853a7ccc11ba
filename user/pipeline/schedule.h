/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --schedule: torch.profiler's schedule over a process's segments (its
 * steps).  Segment k (from 0, in close order) is written when, past
 * skip_first, its place in the cycle wait + warmup + active is among the
 * last `active`; after `repeat` cycles (0: forever) the process is done.
 */
#ifndef FVBPF_SCHEDULE_H
#define FVBPF_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/options.h"

#define SCHEDULE_VALUE_MAX 1000000u

/* "wait=1,warmup=1,active=3,repeat=2[,skip_first=N]" (any order, each at
 * most once; active at least 1): 0, or -EINVAL with the reason in @err. */
int schedule_parse(const char *text, struct step_schedule *s, char *err, size_t errlen);
/* Whether segment @k is written. */
bool schedule_keep(const struct step_schedule *s, uint64_t k);
/* Segments after which the schedule is over; 0: never (repeat 0). */
uint64_t schedule_total(const struct step_schedule *s);

#endif /* FVBPF_SCHEDULE_H */
