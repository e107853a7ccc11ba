/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Hosts' clocks against each other, from the collectives their ranks took
 * part in together: the ranks of a collective leave it within its last
 * message's flight, so the difference of two ranks' exit times on their
 * own hosts' wall clocks is the hosts' skew, to that flight.  For each
 * directory of another host than the first directory's, the median over
 * the collectives (matched by process group and sequence number) it
 * shares with the first is its skew, applied to every time of its
 * segments (struct manifest's skew_ns) by report, export and merge.  A
 * directory of the first's host, or with fewer than CLOCK_ALIGN_MIN exits
 * in common, is left as it is.
 */
#ifndef FVBPF_CLOCK_ALIGN_H
#define FVBPF_CLOCK_ALIGN_H

#include <stddef.h>

#include "offline/manifest/manifest_read.h"

#define CLOCK_ALIGN_MIN 3

/* @ms's summaries read (their collectives kept): 0 or -ENOMEM. */
int clock_align_collectives(struct manifest *ms, size_t n);

#endif /* FVBPF_CLOCK_ALIGN_H */
