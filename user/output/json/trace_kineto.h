/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What a JSON trace carries so that tools made for Kineto's traces
 * (HolisticTraceAnalysis, TensorBoard's profiler plugin) read it as one:
 * distributedInfo, baseTimeNanoseconds, a ProfilerStep#N span, External id
 * and Ev Idx, Kineto's argument names beside fvbpf's own, cuda_sync events
 * and gpu_user_annotation spans (docs/formats.md, "Kineto compatibility").
 */
#ifndef FVBPF_TRACE_KINETO_H
#define FVBPF_TRACE_KINETO_H

#include <stddef.h>
#include <stdint.h>

struct obuf;
struct seg_output_ctx;
struct gpu_activity;

struct kineto_ids {
	uint32_t *call_op;      /* per CUDA call: External id of its op, 0 none */
	uint64_t ev_idx;        /* the next "Ev Idx" */
};

/* Which op (External id = index + 1) each CUDA call of the segment was
 * made inside: 0, or -ENOMEM (then no call gets one). */
int kineto_ids_init(struct kineto_ids *k, const struct seg_output_ctx *c);
void kineto_ids_free(struct kineto_ids *k);
/* Top-level members before "traceEvents": distributedInfo (its "rank"
 * written so HTA's `"rank":\s+(\d+)` finds it), baseTimeNanoseconds. */
void kineto_header(struct obuf *f, const struct seg_output_ctx *c);
/* Members appended to an op's, a call's, a GPU record's args. */
void kineto_op_args(struct obuf *f, struct kineto_ids *k, size_t op);
void kineto_call_args(struct obuf *f, struct kineto_ids *k, size_t call);
void kineto_gpu_args(struct obuf *f, struct kineto_ids *k, const struct seg_output_ctx *c,
		     const struct gpu_activity *a);
/* A synchronisation record's name, as Kineto's ("Stream Sync", ...). */
const char *kineto_sync_name(uint8_t type);
/* Events of their own: the ProfilerStep#N span on the thread that opened
 * the segment, and each region's span over the GPU work it launched. */
void kineto_step_slice(struct obuf *f, const struct seg_output_ctx *c);
void kineto_gpu_annotations(struct obuf *f, const struct seg_output_ctx *c);

#endif /* FVBPF_TRACE_KINETO_H */
