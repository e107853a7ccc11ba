/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_PFTRACE_META_H
#define FVBPF_PFTRACE_META_H

#include "output/pftrace/pb_writer.h"
#include "output/seg_output.h"

/* The segment's metadata (seg_meta.h) as debug annotations of the TrackEvent open in @b. */
void pftrace_segment_annotations(struct pb_buf *b, const struct seg_output_ctx *c);

#endif /* FVBPF_PFTRACE_META_H */
