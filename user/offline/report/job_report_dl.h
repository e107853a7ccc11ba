/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The DataLoader across ranks: per rank, what its trainer waited for
 * batches from its DataLoader workers (its summaries' "dataloader": the
 * wait in __next__ and the batches received), summed over its complete
 * segments of the region, and that wait's share of their time: the rank
 * whose loader holds it back is the one with the biggest share.
 */
#ifndef FVBPF_JOB_REPORT_DL_H
#define FVBPF_JOB_REPORT_DL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#include "offline/report/job_report.h"

/* Segment @f of rank @k (complete, counted as the report counts). */
void jr_dl_add(struct jr_rank *k, const struct mf_file *f);
/* Whether a rank of @g had a DataLoader in one of its segments. */
bool jr_dl_any(const struct jr_region *g);
/* Its wait's share of those segments' time, in percent (0 without time). */
double jr_dl_share_pct(const struct jr_rank *k);
/* The text section of @g: a line per rank, nothing when none had one. */
void jr_dl_print(FILE *f, const struct jr_region *g);
/* A rank's "dataloader" object in the JSON report, NULL when it had none. */
json_object *jr_dl_json(const struct jr_rank *k);

#endif /* FVBPF_JOB_REPORT_DL_H */
