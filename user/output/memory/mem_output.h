/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --profile-memory in a segment's files (records:
 * pipeline/memory/mem_events.h): per-op memory as torch's key_averages
 * computes it, Kineto's [memory] instant events and a counter track per
 * device, peaks per device.
 */
#ifndef FVBPF_MEM_OUTPUT_H
#define FVBPF_MEM_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/name_table.h"
#include "util/text_out.h"
#include "output/seg_output.h"

/* Bytes allocated (frees negative) inside one torch call: total, and self
 * (not in a child call), CPU and device, as FunctionEvent's
 * cpu_memory_usage, self_cpu_memory_usage, device_memory_usage and
 * self_device_memory_usage. */
struct mem_usage {
	int64_t cpu, self_cpu, dev, self_dev;
};

/* Sums of bounded sizes (MEM_BYTES_MAX) over bounded records may still
 * pass 2^63 in a row summed over nested calls: they saturate. */
static inline int64_t mem_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* One torch call as key_averages counts it (the same calls, in the same
 * order, as torch_summary_rows). */
typedef int (*mem_row_fn)(void *ctx, const char *name, const char *kind,
			  const struct mem_usage *u);
/* 0, or @fn's or -ENOMEM's error.  Nothing when @seg has no memory records. */
int mem_summary_rows(const struct segment *seg, struct name_table *names, mem_row_fn fn,
		     void *ctx);

#define MEM_DEVICES_MAX 16
struct mem_peak {
	uint8_t dev_type;
	int8_t dev_index;
	uint64_t events;
	uint64_t allocated, reserved;   /* peaks of the totals (each at its own time) */
	int64_t op_at_peak;             /* the torch call of the allocated peak's record, -1 */
	uint64_t peak_ts;
	uint64_t live_at_end, live_bytes_at_end; /* CPU: allocations not freed in the segment */
};
/* Devices of @seg's records (at most MEM_DEVICES_MAX, the rest counted in
 * *@more): how many were written to @out. */
size_t mem_peaks(const struct segment *seg, struct mem_peak *out, size_t *more);
/* The largest peak of the CPU (@cpu) or of any other device: allocated,
 * or reserved (@reserved). */
uint64_t mem_peak_bytes(const struct segment *seg, bool cpu, bool reserved);
/* "cpu", "cuda:0", "type7:-1" */
void mem_device_name(uint8_t type, int8_t index, char *buf, size_t len);
/* "cpu allocated=N op=NAME; cuda:0 allocated=N reserved=N op=NAME" into @buf. */
void mem_peaks_text(const struct seg_output_ctx *c, char *buf, size_t len);
/* Kineto's [memory] instant events and the counter tracks, each event
 * after a ",\n". */
void mem_trace_events(struct obuf *f, const struct seg_output_ctx *c);

#endif /* FVBPF_MEM_OUTPUT_H */
