/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The dormant CUPTI agent inside libfvbpf.so (internal interface). */
#ifndef FVBPF_AGENT_H
#define FVBPF_AGENT_H

#include <stdint.h>

/* A thread saw a new attach epoch: wake the agent (cheap, may repeat). */
void agent_on_attach(uint32_t epoch);
/* The library was injected (fvbpf attach --inject): no marker will call
 * agent_on_attach(), so a thread polls the epoch four times a second. */
void agent_start_watch(void);
/* The attach epoch the markers would see now, 0 when not attached. */
uint32_t markers_epoch(void);
/* A thread left its outermost region while attached: flush soon. */
void agent_request_flush(void);

/* Not a forked child with a stale probe patch: the probe functions may be
 * called (markers.c).  The semaphore says whether anyone listens. */
int probes_callable(void);

/* Probe functions (nop5, see markers.c) the agent fires. */
void fvbpf_probe_correlation(uint32_t correlation, uint32_t cbid, uint32_t domain);
void fvbpf_probe_gpu_batch(const uint8_t *buf, uint32_t len);
void fvbpf_probe_agent_status(uint32_t code, int32_t detail, int64_t value, const char *msg);

#endif /* FVBPF_AGENT_H */
