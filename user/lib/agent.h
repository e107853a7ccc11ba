/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The dormant CUPTI agent inside libfvbpf.so (internal interface): what the
 * markers call.  The agent itself builds on control.h, never on the markers. */
#ifndef FVBPF_AGENT_H
#define FVBPF_AGENT_H

#include <stdint.h>

/* A thread saw a new attach epoch: wake the agent (cheap, may repeat). */
void agent_on_attach(uint32_t epoch);
/* The library was injected (fvbpf attach --inject): no marker will call
 * agent_on_attach(), so a thread polls the epoch four times a second. */
void agent_start_watch(void);
/* A thread left its outermost region while attached: flush soon. */
void agent_request_flush(void);

#endif /* FVBPF_AGENT_H */
