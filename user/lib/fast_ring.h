/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The operator fast path's shared rings (fast_ring.c), as torch_fast.c
 * writes them: reserve a record on the calling thread's ring, fill it,
 * commit it.
 */
#ifndef FVBPF_LIB_FAST_RING_H
#define FVBPF_LIB_FAST_RING_H

#include <stddef.h>
#include <stdint.h>

#include "fvbpf_fast.h"

/* The memfd and its size, made at the first call: 0 or -errno. */
int fast_ring_setup(int *fd, uint64_t *bytes);
/* @size bytes (a multiple of 8) on this thread's ring, or NULL (counted:
 * the ring is full, or no ring was free). */
void *fast_ring_reserve(uint32_t size, struct fvbpf_fast_ring **ring);
/* fast_ring_reserve() for a record with another way out: a full ring or
 * pool is not counted as a loss. */
void *fast_ring_try(uint32_t size, struct fvbpf_fast_ring **ring);
void fast_ring_commit(struct fvbpf_fast_ring *ring, uint32_t size);
/* The calling thread's id, cached. */
uint32_t fast_ring_tid(void);
/* A counter in the header (offsetof(struct fvbpf_fast_hdr, x)), NULL
 * before setup. */
uint64_t *fast_ring_counter(size_t off);
/* In a forked child: forget the parent's memfd. */
void fast_ring_atfork_child(void);

#endif /* FVBPF_LIB_FAST_RING_H */
