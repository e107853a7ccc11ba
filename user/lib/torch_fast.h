/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The operator fast path (torch_fast.c): PyTorch RecordFunction callbacks
 * writing operator begins and ends into shared rings while the process is
 * inside a segment.  Internal to libfvbpf.so.
 */
#ifndef FVBPF_LIB_TORCH_FAST_H
#define FVBPF_LIB_TORCH_FAST_H

#include <stdbool.h>
#include <stdint.h>

/* Serve a new request of fvbpf's, follow the segment state, or let go
 * after a detach.  @late: the watch thread's periodic call. */
void torch_fast_poll(bool late);
/* The operator callbacks are in (they follow segments, reset per attach). */
bool torch_fast_active(void);
/* A marker of the region of @hash begins or ends (after its probe). */
void torch_fast_marker(uint64_t hash, bool begin);
/* A thread's first marker after an attach: its open regions' hashes. */
void torch_fast_stack(const uint64_t *hashes, uint32_t n);

#endif /* FVBPF_LIB_TORCH_FAST_H */
