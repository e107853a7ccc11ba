/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A trainer segment's DataLoader part in its summary (issue 38): the
 * trainer's wait for its batches, in total and per batch, each worker's
 * batches, fetch, collate and idle time, and one sentence when the loader
 * held the trainer up.
 */
#ifndef FVBPF_SUMMARY_DL_H
#define FVBPF_SUMMARY_DL_H

#include <stdio.h>

#include "output/seg_output.h"

/* `,\n  "dataloader": {...}` when the segment has batches: 0 or -ENOMEM. */
int summary_dl_json(FILE *f, const struct seg_output_ctx *c);
/* Its lines in the text summary (nothing without batches). */
void summary_dl_text(FILE *f, const struct seg_output_ctx *c);

#endif /* FVBPF_SUMMARY_DL_H */
