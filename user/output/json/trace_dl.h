/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A segment's DataLoader batches in its Chrome trace: each on its
 * worker's own process track ("rank R worker W"), a flow from it to the
 * trainer's receipt (issue 38). */
#ifndef FVBPF_TRACE_DL_H
#define FVBPF_TRACE_DL_H

#include "output/seg_output.h"
#include "util/text_out.h"

void trace_dl_events(struct obuf *f, const struct seg_output_ctx *c);
/* "rank 0 worker 1", "PID 1234 worker 1", "rank 0 worker (PID 77)". */
void trace_dl_worker_label(const struct seg_output_ctx *c, int32_t worker_id, int pid, char *buf,
			   size_t len);

#endif /* FVBPF_TRACE_DL_H */
