/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A segment's collectives in its summary JSON ("collectives": one object
 * per collective this rank took part in, times in CLOCK_MONOTONIC
 * microseconds like start_us), for `fvbpf report` to match across ranks.
 */
#ifndef FVBPF_SUMMARY_COLLS_H
#define FVBPF_SUMMARY_COLLS_H

#include <stdio.h>

#include "output/seg_output.h"

/* `,\n  "collectives": [...]` when the segment has any: 0 or -ENOMEM. */
int summary_colls_json(FILE *f, const struct seg_output_ctx *c);

#endif /* FVBPF_SUMMARY_COLLS_H */
