/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What the agent's two halves share and nothing else in the library needs:
 * agent.c (its thread, states and the record path to BPF) and
 * agent_cupti.c (CUPTI itself).
 */
#ifndef FVBPF_AGENT_INTERNAL_H
#define FVBPF_AGENT_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cupti_decode.h"

#define ACTIVATE_LATER 1 /* agent_cupti_activate(): no CUDA yet */

/* One batch in flight to BPF at a time (agent.c): the decoder feeds it. */
extern pthread_mutex_t agent_batch_lock;
extern struct cupti_decoder agent_decoder;
void agent_batch_emit(const void *rec, size_t size, void *ctx);
/* Decode one completed activity buffer and send it. */
void agent_deliver_buffer(uint8_t *buf, size_t valid);
/* A status record to fvbpf (FVBPF_AGENT_*), when the probes may be called. */
void agent_status(uint32_t code, int32_t detail, int64_t value, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* agent_cupti.c: a CUDA runtime or driver is mapped. */
int agent_cuda_mapped(void);
/* Load and enable CUPTI: 0, ACTIVATE_LATER (no CUDA yet), or -1 (reported). */
int agent_cupti_activate(void);
void agent_cupti_deactivate(void);
void agent_cupti_flush(void);

#endif /* FVBPF_AGENT_INTERNAL_H */
