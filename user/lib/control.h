/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * libfvbpf.so's side of the attach (internal interface): the semaphore the
 * kernel raises, the control page whose odd epoch says the probes are live
 * (wiped in a forked child), and the nop5 probe functions BPF attaches to.
 * The markers (markers.c) and the CUPTI agent (agent.c) both use it; it
 * uses neither.
 */
#ifndef FVBPF_LIB_CONTROL_H
#define FVBPF_LIB_CONTROL_H

#include <stdint.h>

#include "fvbpf_events.h"

/* What fvbpf and the job see in .dynsym (the library builds with
 * -fvisibility=hidden). */
#define FVBPF_EXPORT __attribute__((visibility("default")))

/* Hidden: PC-relative loads of the library's own copy (see control.c). */
extern volatile uint16_t semaphore __attribute__((visibility("hidden")));
extern struct fvbpf_control *volatile control __attribute__((visibility("hidden")));

/* The current epoch, or 0 where the markers must not call the probes: no
 * loader, or a forked child (its control page reads all zero). */
static inline uint32_t live_epoch(void)
{
	const struct fvbpf_control *c;
	uint32_t epoch;

	if (__builtin_expect(semaphore == 0, 1))
		return 0;
	c = control;
	if (!c)
		return 0;
	epoch = c->epoch;
	return epoch & 1 ? epoch : 0;
}

/* live_epoch() for the agent: the attach epoch the markers would see now. */
uint32_t markers_epoch(void);

/* Not a forked child with a stale probe patch: the probe functions may be
 * called.  The semaphore says whether anyone listens. */
int probes_callable(void);

/* Probe functions (nop5, see control.c) the agent fires. */
void fvbpf_probe_correlation(uint32_t correlation, uint32_t cbid, uint32_t domain);
void fvbpf_probe_gpu_batch(const uint8_t *buf, uint32_t len);
void fvbpf_probe_agent_status(uint32_t code, int32_t detail, int64_t value, const char *msg);
/* The operator fast path's end of a torch scope (its at::RecordFunction in
 * rdi, as RecordFunction::end() has it): BPF's scope_end program. */
void fvbpf_probe_scope_end(const void *rf);
/* --with-stack through the fast path: BPF walks this thread's Python
 * frames into a stack record of timestamp @ts (the operator's). */
void fvbpf_probe_py_stack(uint64_t ts);

#endif /* FVBPF_LIB_CONTROL_H */
