/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Where and when an event of the Chrome JSON trace happened: shared by the
 * trace's writers (trace_writer.c, trace_colls.c). */
#ifndef FVBPF_TRACE_WHERE_H
#define FVBPF_TRACE_WHERE_H

#include <stdint.h>

#include "util/text_out.h"

/* `,"pid":P,"tid":T,"ts":TS` of an event (ts: CLOCK_MONOTONIC ns, written in µs). */
void trace_where_when(struct obuf *f, int64_t pid, uint64_t tid, uint64_t ts);

#endif /* FVBPF_TRACE_WHERE_H */
