/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --profile-memory: a segment's records in the format of
 * torch.cuda.memory._snapshot() (the "device_traces" of its allocator
 * trace), so that PyTorch's memory tools read what fvbpf saw.
 */
#ifndef FVBPF_MEM_SNAPSHOT_H
#define FVBPF_MEM_SNAPSHOT_H

#include <stdio.h>

#include "output/seg_output.h"

/* {"segments": [], "device_traces": [[...], ...]}: one list per CUDA device
 * index up to the highest seen, then the CPU's (as torch's
 * _profile_to_snapshot places it); an allocation is an "alloc" entry, a
 * free a "free_requested" and a "free_completed" entry, each with addr,
 * size, stream 0, time_us (CLOCK_MONOTONIC) and one frame naming the
 * torch op open around it.  0 or -errno. */
int mem_snapshot_write(FILE *f, const struct seg_output_ctx *c);

#endif /* FVBPF_MEM_SNAPSHOT_H */
