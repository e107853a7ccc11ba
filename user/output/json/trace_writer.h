/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_TRACE_WRITER_H
#define FVBPF_TRACE_WRITER_H

#include <stdio.h>

#include "output/seg_output.h"

/*
 * One segment as a Chrome Trace Event Format object (Perfetto UI,
 * chrome://tracing), following Kineto's conventions.
 */
int trace_write(FILE *f, const struct seg_output_ctx *c);
/* "HtoD", "DtoH", ... for a CUPTI memcpy kind. */
const char *trace_copy_kind(uint8_t kind);
/* A GPU record's slice name and category, shared by the JSON and
 * Perfetto writers ("Memcpy HtoD", "kernel", "gpu_memcpy"...). */
void trace_gpu_name(const struct seg_output_ctx *c, const struct gpu_activity *a, char *name,
		    size_t len);
const char *trace_gpu_cat(uint16_t kind);

#endif /* FVBPF_TRACE_WRITER_H */
