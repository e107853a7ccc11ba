/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What the files of `fvbpf merge` (merge_plan.c, merge_events.c,
 * trace_merge.c) share and nobody else needs.
 */
#ifndef FVBPF_MERGE_INTERNAL_H
#define FVBPF_MERGE_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "offline/manifest/manifest_read.h"

/* "rank 3 restart 1 pid 42 (host)": a segment's key in messages and names. */
void tm_key_label(const struct manifest *m, const struct mf_file *f, char *buf, size_t len);
/* The "," between JSON members or elements written one at a time. */
void tm_sep(FILE *out, int *first);

#endif /* FVBPF_MERGE_INTERNAL_H */
