/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * One segment as Perfetto's native protobuf trace (--format pftrace): a
 * TracePacket stream with track descriptors, TrackEvent begin/end pairs,
 * interned names and categories and delta-encoded timestamps.
 */
#ifndef FVBPF_PFTRACE_WRITER_H
#define FVBPF_PFTRACE_WRITER_H

#include <stdio.h>

#include "output/seg_output.h"

int pftrace_write(FILE *f, const struct seg_output_ctx *c);

#endif /* FVBPF_PFTRACE_WRITER_H */
