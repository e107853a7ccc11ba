/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Forward-to-backward links, as torch's profiler makes them (Kineto's
 * "fwdbwd" flows): a backward node (forwardThreadId() F, sequence number S)
 * is linked to the forward operator that ran on RecordFunction thread F
 * with sequence number S, the one of those that began last; each forward
 * operator once, to the first node that ends.  Only where the sequence
 * numbers are known (operators through PyTorch's callbacks).
 */
#ifndef FVBPF_FWDBWD_H
#define FVBPF_FWDBWD_H

#include <stddef.h>

#include "pipeline/segment.h"

struct fwdbwd_pair {
	size_t fwd, bwd;        /* indexes into seg->ops */
};

/* The links of @seg's operators, in the order torch numbers its flows (id
 * = index + 1): *@pairs (malloc'd, NULL when none) and their count, or
 * -ENOMEM. */
long fwdbwd_pairs(const struct segment *seg, struct fwdbwd_pair **pairs);

#endif /* FVBPF_FWDBWD_H */
