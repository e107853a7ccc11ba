/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A segment's collectives in its Chrome trace: each run as a slice on the
 * backend's thread with Kineto's argument names, and a flow from the
 * rank's arrival on its calling thread to the run. */
#ifndef FVBPF_TRACE_COLLS_H
#define FVBPF_TRACE_COLLS_H

#include "output/seg_output.h"
#include "util/text_out.h"

void trace_coll_slices(struct obuf *f, const struct seg_output_ctx *c);
/* `,"pg_count":N,"pg_config":[...]` of distributedInfo, as torch writes
 * them, for the groups the segment's collectives name (nothing if none). */
void trace_coll_pg_config(struct obuf *f, const struct seg_output_ctx *c);

#endif /* FVBPF_TRACE_COLLS_H */
