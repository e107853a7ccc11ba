// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * What the loader and BPF find in libfvbpf.so: the semaphore, the control
 * page's pointer and the probe functions (see control.h).  Calls nobody:
 * the markers and the agent both build on it.
 */
#define _GNU_SOURCE
#include <stdint.h>

#include "control.h"
#include "fvbpf_events.h"

/*
 * The markers read hidden names, so their accesses are PC-relative and
 * always hit the library's own copy, which is the one the kernel and the
 * loader write; the exported aliases are what fvbpf finds in .dynsym.  (An
 * executable that names fvbpf_semaphore itself gets a copy relocation:
 * fvbpf_attached() is the way to ask.)
 */
__attribute__((section(".probes"), used, visibility("hidden")))
volatile uint16_t semaphore;  /* also read by the agent */
__attribute__((section(".probes"), used, visibility("hidden")))
volatile uint32_t attach_epoch;

extern volatile uint16_t fvbpf_semaphore
	__attribute__((alias("semaphore"), visibility("default")));

/*
 * Where the control page is.  The loader reads this pointer (its address is
 * the exported symbol), checks the page's magic and writes the epoch: even
 * while it attaches or detaches, a fresh odd value once every probe is in
 * place.  Markers call the probes only under an odd epoch, and a thread's
 * first marker under a new one first reports the regions it already has
 * open.
 */
__attribute__((section(".probes"), used, visibility("hidden")))
struct fvbpf_control *volatile control;
extern struct fvbpf_control *volatile fvbpf_control
	__attribute__((alias("control"), visibility("default")));

int probes_callable(void)
{
	const struct fvbpf_control *c = control;

	return c && c->magic == FVBPF_CONTROL_MAGIC;
}

/*
 * The probe functions start with the 5-byte NOP 0f 1f 44 00 00: kernel 6.18
 * turns a uprobe on that NOP into a call to a trampoline (about 0.3 us per
 * hit instead of about 0.9 us for an emulated push).  Written in assembly so
 * that no compiler flag (endbr64, frame pointers, profiling hooks) can put
 * another instruction first.  BPF reads their arguments from registers:
 * region probes get (name, fvbpf_region_hash(name)) and, the _ts pair, the
 * CLOCK_MONOTONIC time the library read just before; the sync probe gets
 * (&thread_stack, depth, hashes of the outer FVBPF_SYNC_NAMES names).
 */
#define FVBPF_PROBE_FN(name)                                   \
	"	.globl " #name "\n"                            \
	"	.type " #name ", @function\n"                  \
	"	.p2align 4\n"                                  \
	#name ":\n"                                            \
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"          \
	"	ret\n"                                         \
	"	.size " #name ", .-" #name "\n"

/* Absent from the test build of a library from before them (Makefile: old-lib). */
#ifdef FVBPF_TEST_OLD_MARKERS
#define FVBPF_PROBE_TS_FNS
#else
#define FVBPF_PROBE_TS_FNS                                     \
	FVBPF_PROBE_FN(fvbpf_probe_region_begin_ts)            \
	FVBPF_PROBE_FN(fvbpf_probe_region_end_ts)
#endif

__asm__("	.text\n"
	FVBPF_PROBE_FN(fvbpf_probe_region_begin)
	FVBPF_PROBE_FN(fvbpf_probe_region_end)
	FVBPF_PROBE_TS_FNS
	FVBPF_PROBE_FN(fvbpf_probe_thread_sync)
	FVBPF_PROBE_FN(fvbpf_probe_correlation)
	FVBPF_PROBE_FN(fvbpf_probe_gpu_batch)
	FVBPF_PROBE_FN(fvbpf_probe_agent_status)
	FVBPF_PROBE_FN(fvbpf_probe_scope_end)
	FVBPF_PROBE_FN(fvbpf_probe_py_stack));

uint32_t markers_epoch(void)
{
	return live_epoch();
}
