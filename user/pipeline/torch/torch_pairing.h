/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Pairs torch entries and returns per thread into the open segment's torch
 * calls, as api_pairing does for CUDA calls.  An op that throws never
 * returns: a return closes the innermost open call of the same id, and the
 * calls opened above it are closed there too, marked as without return.
 */
#ifndef FVBPF_TORCH_PAIRING_H
#define FVBPF_TORCH_PAIRING_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline/segment.h"
#include "util/thread_table.h"

/* A target's scope state beside its pairing: owned by
 * pipeline/torch/torch_events.c. */
struct torch_state {
	bool stepping;              /* --step-by: a step segment is open */
	uint64_t scopes_untracked;  /* scopes whose end BPF could not watch */
	uint64_t scopes_cut;        /* scope names cut at FVBPF_SCOPE_NAME bytes */
};

#define TORCH_STACK_MAX 128
#define TORCH_MAX_THREADS THREAD_TABLE_MAX
#define TORCH_SCOPE_ID UINT32_MAX   /* the id of a scope on a stack */

struct torch_open {
	uint32_t id;
	uint32_t seq;           /* segment it was stored in (+1), 0: not stored */
	size_t idx;             /* its index there */
	uint64_t handle;        /* scopes: RecordFunction address */
	int region;             /* scopes that are regions: registry index, else -1 */
};

struct torch_thread {
	uint32_t tid;
	uint32_t depth;
	struct torch_open stack[TORCH_STACK_MAX];
};

struct torch_pairing {
	struct torch_thread *threads;
	size_t n, cap;
	uint64_t lost_returns;      /* calls closed by an outer return (exceptions) */
	uint64_t unmatched;         /* returns of nothing open */
	uint64_t too_deep;          /* entries past TORCH_STACK_MAX */
	uint64_t threads_dropped;
	uint64_t scope_ends_lost;   /* scopes closed when their address began another */
};

/* Open a call on @tid; stored in @seg (may be NULL) with @op's fields. */
int torch_pairing_enter(struct torch_pairing *p, struct segment *seg, uint32_t id,
			struct torch_call *op, uint64_t handle, int region);
/* Close the innermost open @id on @tid at @ts: 1 closed, 0 none. */
int torch_pairing_exit(struct torch_pairing *p, struct segment *seg, uint32_t tid, uint32_t id,
		       uint64_t ts);
/* Close the scope of @handle, on whichever thread it began: 1 and its
 * region in *@region, or 0 when unknown. */
int torch_pairing_scope_end(struct torch_pairing *p, struct segment *seg, uint64_t handle,
			    uint64_t ts, int *region, uint32_t *tid);
/* A scope begins at the address of @handle: no scope still open there can
 * be live (one at::RecordFunction per address), so each is closed where
 * it lies, without a return, and counted (its end was not seen).  The
 * number closed. */
int torch_pairing_forget_scope(struct torch_pairing *p, struct segment *seg, uint64_t handle,
			       uint64_t ts);
/* The index in @seg of the innermost call open on @tid that @seg holds, -1. */
long torch_pairing_innermost(const struct torch_pairing *p, const struct segment *seg,
			     uint32_t tid);
/* The id of the innermost operator or node open on @tid (scopes
 * skipped), TORCH_SCOPE_ID when none: whom an end without a name ends. */
uint32_t torch_pairing_top_op(struct torch_pairing *p, uint32_t tid);
void torch_pairing_free(struct torch_pairing *p);

/* A target's torch call pairing, zeroed (NULL: out of memory); torch_pairing__free()
 * ends it (NULL is fine). */
struct torch_pairing *torch_pairing__new(void);
void torch_pairing__free(struct torch_pairing *p);

/* A target's torch scope state, zeroed (NULL: out of memory); torch_state__free()
 * ends it (NULL is fine). */
struct torch_state *torch_state__new(void);
void torch_state__free(struct torch_state *p);

#endif /* FVBPF_TORCH_PAIRING_H */
