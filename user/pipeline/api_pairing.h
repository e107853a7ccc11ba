/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Pairs the entry and return records of probed calls, per thread, into
 * whole calls.  A call entered while another is open on the same thread (a
 * driver call inside a runtime call) is its child: depth 1, counted once.
 */
#ifndef FVBPF_API_PAIRING_H
#define FVBPF_API_PAIRING_H

#include <stddef.h>
#include <stdint.h>

#include "probes/cuda_api.h"
#include "util/thread_table.h"

#define API_STACK_MAX 8
#define API_MAX_THREADS THREAD_TABLE_MAX /* thread entries per process (about 1.6 KiB each) */

struct api_thread {
	uint32_t tid;
	uint32_t depth;
	struct api_call stack[API_STACK_MAX];
};

struct api_pairing {
	struct api_thread *threads;
	size_t n, cap;
	uint64_t unmatched_exits;   /* a return whose entry we never saw */
	uint64_t lost_returns;      /* entries closed without their return */
	uint64_t too_deep;          /* entries past API_STACK_MAX */
	uint64_t threads_dropped;   /* entries of threads past API_MAX_THREADS */
};

/* The call just opened on @tid gets Python stack @stack. */
void api_pairing_set_stack(struct api_pairing *p, uint32_t tid, uint32_t stack);
int api_pairing_enter(struct api_pairing *p, const struct fvbpf_api_enter *e);
/* 1 and @out filled when @x completes a call, 0 otherwise. */
int api_pairing_exit(struct api_pairing *p, const struct fvbpf_api_exit *x, struct api_call *out);
/* Take one call still open (target gone), ended at @ts: 1, or 0 when none. */
int api_pairing_drain(struct api_pairing *p, uint64_t ts, struct api_call *out);
/* The agent's callback named the innermost open call of @tid: 0, or -ENOENT. */
int api_pairing_set_correlation(struct api_pairing *p, uint32_t tid, uint32_t correlation);
/* Forget @tid's open calls that began before @ts (their returns were lost). */
void api_pairing_drop_before(struct api_pairing *p, uint32_t tid, uint64_t ts);
void api_pairing_free(struct api_pairing *p);

/* A target's CUDA call pairing, zeroed (NULL: out of memory); api_pairing__free()
 * ends it (NULL is fine). */
struct api_pairing *api_pairing__new(void);
void api_pairing__free(struct api_pairing *p);

#endif /* FVBPF_API_PAIRING_H */
