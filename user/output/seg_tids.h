/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The threads of a segment (its slices, calls and torch calls), once each,
 * sorted: the CPU tracks of both trace writers.  A hash set, not a sort of
 * every record's tid: a segment holds millions of records and a few
 * threads.
 */
#ifndef FVBPF_SEG_TIDS_H
#define FVBPF_SEG_TIDS_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/segment.h"

/* *out (caller frees) and its length, or -ENOMEM. */
long seg_tids(const struct segment *s, uint32_t **out);

#endif /* FVBPF_SEG_TIDS_H */
