/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Turns a completed CUPTI activity buffer into fvbpf's compact GPU records
 * (include/fvbpf_gpu.h), walking it with CUPTI's own
 * cuptiActivityGetNextRecord so that record layouts stay CUPTI's business.
 */
#ifndef FVBPF_CUPTI_DECODE_H
#define FVBPF_CUPTI_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "fvbpf_gpu.h"

/* cuptiActivityGetNextRecord, as dlsym() gives it. */
typedef int (*cupti_next_record_fn)(uint8_t *buffer, size_t valid, void **record);

/* Receives each finished record (kernel names come first, once each). */
typedef void (*gpu_emit_fn)(const void *rec, size_t size, void *ctx);

struct gpu_names {
	char **names;        /* names[id - 1] */
	size_t n, cap;
};

struct cupti_decoder {
	cupti_next_record_fn next;
	int64_t clock_offset;    /* added to CUPTI timestamps (0 with the clock callback) */
	struct gpu_names names;
	gpu_emit_fn emit;
	void *ctx;
	uint64_t records, skipped;  /* decoded; of kinds fvbpf does not use */
};

/* Returns the number of records decoded, or -1 when the buffer is corrupt. */
long cupti_decode_buffer(struct cupti_decoder *d, uint8_t *buf, size_t valid);
void cupti_decoder_reset_names(struct cupti_decoder *d);

/*
 * Min-gap calibration: of @n samples (CLOCK_MONOTONIC before, CUPTI's
 * timestamp, CLOCK_MONOTONIC after), trust the one whose two monotonic
 * reads are closest, and return monotonic - cupti at its midpoint.
 */
int64_t cupti_clock_offset(const uint64_t *before, const uint64_t *cupti, const uint64_t *after,
			   size_t n);

#endif /* FVBPF_CUPTI_DECODE_H */
