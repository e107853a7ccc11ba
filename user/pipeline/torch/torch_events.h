/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Torch records: operators and nodes into the open segment, scopes into
 * segments (-r torch:GLOB, --step-by GLOB) and into BPF's gate table. */
#ifndef FVBPF_TORCH_EVENTS_H
#define FVBPF_TORCH_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct session;
struct session_target;

/* A record of type FVBPF_EV_TORCH_* or FVBPF_EV_SCOPE_*: 0, or -errno. */
int torch_events_handle(struct session *s, struct session_target *t, const void *data, size_t size);

/* What a begin from PyTorch's callbacks adds (fvbpf_fast.h): torch's
 * correlation of a backward node with its forward op. */
struct torch_seq {
	int64_t seq_nr;             /* seqNr(), -1 none */
	uint64_t rf_tid;            /* threadId() */
	uint64_t fwd_tid;           /* forwardThreadId(), 0 on a forward op */
	bool node;                  /* RecordScope BACKWARD_FUNCTION */
};
struct fvbpf_torch_event;
/* An FVBPF_EV_TORCH_ENTER or _EXIT from the callbacks; @sq for an entry. */
int torch_events_fast(struct session *s, struct session_target *t,
		      const struct fvbpf_torch_event *ev, const struct torch_seq *sq);
/* Install the hashes of exact (glob-free) scope names up front. */
int torch_gates_preload(struct session *s);
/* --step-by matched no scope: say so, with the scope names seen instead. */
void torch_step_glob_report(struct session *s);
/* At exit: each -r torch: glob that matched no scope, said with the
 * names seen. */
void torch_globs_report(struct session *s);

#endif /* FVBPF_TORCH_EVENTS_H */
