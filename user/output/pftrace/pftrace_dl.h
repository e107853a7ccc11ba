/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * DataLoader workers in the pftrace (issue 38), as trace_dl.c writes them
 * in the JSON: a process track per worker with one thread track, a slice
 * per batch on it, and a flow from the batch to the trainer's slice that
 * held its receipt (the JSON's "f" bound to the enclosing slice).
 */
#ifndef FVBPF_PFTRACE_DL_H
#define FVBPF_PFTRACE_DL_H

#include "output/pftrace/pftrace_priv.h"

/* The batch slices and flows, after every other slice was collected. */
void pf_dl_collect(struct pf *p, const struct seg_output_ctx *c);
/* The workers' process and thread descriptors. */
void pf_dl_descriptors(struct pf *p, const struct seg_output_ctx *c);

#endif /* FVBPF_PFTRACE_DL_H */
