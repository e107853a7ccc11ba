/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack on the operator fast path: a backward node gets the Python
 * stack of its forward op, matched as torch matches them (Kineto's
 * forward-backward flows): the forward op's (torch thread id, sequence
 * number) is the node's (forward thread id, sequence number), and of the
 * forward ops with one key the last begun is the one.
 *
 * Bounded: one direct-mapped table of FWD_LINK_SLOTS keys; a thread's
 * sequence numbers are consecutive, so each thread keeps roughly its last
 * FWD_LINK_SLOTS forward ops (fewer when threads share the table).  A
 * node whose forward op was overwritten, or began before the attach, is
 * counted and left without one.
 */
#ifndef FVBPF_FWD_LINK_H
#define FVBPF_FWD_LINK_H

#include <stdint.h>

#define FWD_LINK_SLOTS (1u << 16)

struct fwd_link_slot {
	uint64_t tid;               /* torch's thread id of the forward op */
	int64_t seq;                /* its sequence number; -1: empty */
	uint32_t stack;             /* its Python stack, 0 none */
	uint32_t pad;
};

struct fwd_link {
	struct fwd_link_slot *slots; /* allocated at the first forward op */
	uint64_t linked;            /* nodes that got their forward op's stack */
	uint64_t unlinked;          /* nodes whose forward op was not (or no longer) there */
	uint64_t no_memory;         /* forward ops not kept: the table could not be made */
};

/* One operator or node begin with a sequence number (@seq >= 0):
 * @fwd_tid 0, a forward op on torch thread @rf_tid with stack @stack,
 * kept; else a node, whose forward op's stack is returned (0 none). */
uint32_t fwd_link_op(struct fwd_link *l, int64_t seq, uint64_t rf_tid, uint64_t fwd_tid,
		     uint32_t stack);
void fwd_link_free(struct fwd_link *l);

#endif /* FVBPF_FWD_LINK_H */
