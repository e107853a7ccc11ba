/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * "Inside a segment" for the operator fast path (fast_segments.c): the
 * library follows it in the process by BPF's rules, from the tables fvbpf
 * wrote into the control page.  Internal to libfvbpf.so.
 */
#ifndef FVBPF_LIB_FAST_SEGMENTS_H
#define FVBPF_LIB_FAST_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "fvbpf_events.h"

/* A new attach: nothing is open. */
void fast_seg_reset(void);
bool fast_seg_open(const struct fvbpf_control *c);
/* A marker's begin or end of the region of @hash. */
void fast_seg_region(const struct fvbpf_control *c, uint64_t hash, bool begin);
/* A thread's regions open before the attach (its first marker after it). */
void fast_seg_sync(const struct fvbpf_control *c, const uint64_t *hashes, uint32_t n);
/* A torch scope of @hash begins: true when it opened (counts towards) a
 * segment, which its end must then close. */
bool fast_seg_scope_begin(const struct fvbpf_control *c, uint64_t hash);
void fast_seg_scope_end(const struct fvbpf_control *c, uint64_t hash, bool counted);

#endif /* FVBPF_LIB_FAST_SEGMENTS_H */
