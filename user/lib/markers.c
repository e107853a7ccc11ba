// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * In-process region markers (libfvbpf.so).
 *
 * fvbpf_semaphore lives in a file-backed ".probes" section so that the kernel
 * can raise it through the uprobe's ref_ctr_offset while a loader is attached
 * (USDT style).  Not attached, a marker costs a load, a branch and a push or
 * pop on the thread's own name stack.
 *
 * Attached, the markers also need an odd epoch in the control page, an
 * anonymous page the kernel wipes in every forked child (MADV_WIPEONFORK).
 * That is what keeps forked children alive: kernel 6.18 turns a uprobe on
 * our nop5 probe functions into a call to a per-process trampoline that a
 * child does not inherit, while it does inherit the patched call (and a
 * raised semaphore).  A child sees a zero page, so it never calls a probe
 * function, whatever the semaphore says, through fork(), clone() or vfork()
 * followed by anything but exec.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent.h"
#include "control.h"
#include "cuda_hook.h"
#include "pyshim.h"
#include "torch_fast.h"
#include "util/clock.h"
#include "fvbpf/fvbpf.h"
#include "fvbpf_canon.h"
#include "fvbpf_events.h"

static __attribute__((noinline)) int loaded_by_inject(void)
{
	const char *base;
	Dl_info di;

	if (!dladdr((void *)(uintptr_t)loaded_by_inject, &di) || !di.dli_fname)
		return 0;
	base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	return !strncmp(base, FVBPF_INJECT_PREFIX, sizeof(FVBPF_INJECT_PREFIX) - 1);
}

/*
 * A constructor only maps one page: nothing starts until fvbpf attaches.
 * Without MADV_WIPEONFORK (Linux < 4.14) the page is not kept: a loader then
 * finds no control page and refuses, since the markers could not tell a
 * forked child from its parent.
 */
static __attribute__((constructor)) void control_init(void)
{
	long page = sysconf(_SC_PAGESIZE);
	struct fvbpf_control *c;

	if (page < (long)sizeof(*c))
		return;
	c = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		return;
	if (madvise(c, (size_t)page, MADV_WIPEONFORK)) {
		munmap(c, (size_t)page);
		return;
	}
	c->magic = FVBPF_CONTROL_MAGIC;
	control = c;
	pyshim_probe();
	/* Loaded by `fvbpf attach --inject` (fvbpf names its copy so): the
	 * job calls no marker that would wake the agent, so a thread of ours
	 * watches for an attach.  So in a CPython process (preloaded, imported):
	 * its FastVideo regions call no marker before the Python shim ran. */
	if (loaded_by_inject() || c->python)
		agent_start_watch();
}

/*
 * TLS descriptors (-mtls-dialect=gnu2): as fast as initial-exec while static
 * TLS has room, and still loadable by dlopen() when it has not (a process
 * that imported torch first).
 */
static __thread struct fvbpf_thread_stack thread_stack;

FVBPF_EXPORT void fvbpf_probe_region_begin(const char *name, uint64_t hash);
FVBPF_EXPORT void fvbpf_probe_region_end(const char *name, uint64_t hash);
/* What this library calls: the same with its CLOCK_MONOTONIC reading, which
 * costs less here (vDSO) than BPF's clock helper; the plain pair stays for
 * older loaders, which attach only to it. */
FVBPF_EXPORT void fvbpf_probe_region_begin_ts(const char *name, uint64_t hash, uint64_t ts);
FVBPF_EXPORT void fvbpf_probe_region_end_ts(const char *name, uint64_t hash, uint64_t ts);
FVBPF_EXPORT void fvbpf_probe_thread_sync(const struct fvbpf_thread_stack *st, uint32_t depth,
					  const uint64_t *hashes);

/* Rare (once per thread per attach): hash the open names so that BPF knows
 * whether the process is already inside a segment. */
static __attribute__((noinline)) void report_stack(void)
{
	uint64_t hashes[FVBPF_SYNC_NAMES] = { 0 };
	uint32_t i, n = thread_stack.depth;

	for (i = 0; i < n && i < FVBPF_SYNC_NAMES; i++)
		if (thread_stack.names[i])
			hashes[i] = fvbpf_region_hash((const char *)(uintptr_t)thread_stack.names[i]);
	fvbpf_probe_thread_sync(&thread_stack, n, hashes);
	torch_fast_stack(hashes, n < FVBPF_SYNC_NAMES ? n : FVBPF_SYNC_NAMES);
}

/* The attach epoch when the probes may be called (else 0); syncs the
 * thread first if needed. */
static inline uint32_t probes_ready(void)
{
	uint32_t epoch = live_epoch();

	if (!epoch)
		return 0;
	if (__builtin_expect(thread_stack.epoch != epoch, 0)) {
		thread_stack.epoch = epoch;
		cuda_hook_poll(); /* before report_stack: a new attach starts at depth 0 */
		report_stack();
		agent_on_attach(epoch);
		pyshim_poll();
		torch_fast_poll(false);
	}
	return epoch;
}

#ifdef FVBPF_TEST_OLD_MARKERS /* a library from before the _ts pair, for a test (Makefile: old-lib) */
#define fvbpf_probe_region_begin_ts(name, h, ts) fvbpf_probe_region_begin(name, h)
#define fvbpf_probe_region_end_ts(name, h, ts) fvbpf_probe_region_end(name, h)
#endif

/* The _ts pair where this attach's loader asked for it (struct fvbpf_control's
 * marker_ts_epoch), else the plain pair, which a loader from before the
 * _ts probes attaches to. */
static inline void region_probe(const char *name, uint64_t h, uint32_t epoch, bool begin)
{
	if (__atomic_load_n(&control->marker_ts_epoch, __ATOMIC_RELAXED) != epoch) {
		if (begin)
			fvbpf_probe_region_begin(name, h);
		else
			fvbpf_probe_region_end(name, h);
	} else if (begin) {
		fvbpf_probe_region_begin_ts(name, h, clock_ns(CLOCK_MONOTONIC));
	} else {
		fvbpf_probe_region_end_ts(name, h, clock_ns(CLOCK_MONOTONIC));
	}
}

FVBPF_EXPORT void fvbpf_region_begin(const char *name)
{
	uint32_t d, e;

	if (!name)
		return;
	if ((e = probes_ready())) {
		uint64_t h = fvbpf_region_hash(name);

		region_probe(name, h, e, true);
		torch_fast_marker(h, true); /* the operator callbacks follow */
	}
	d = thread_stack.depth;
	if (d < FVBPF_STACK_MAX)
		thread_stack.names[d] = (uint64_t)(uintptr_t)name;
	thread_stack.depth = d + 1;
}

FVBPF_EXPORT void fvbpf_region_end(const char *name)
{
	uint32_t e;

	if (!name)
		return;
	if ((e = probes_ready())) {
		uint64_t h = fvbpf_region_hash(name);

		region_probe(name, h, e, false);
		torch_fast_marker(h, false);
		/* Leaving the thread's outermost region: GPU records, come. */
		if (thread_stack.depth == 1)
			agent_request_flush();
	}
	if (thread_stack.depth)
		thread_stack.depth--;
}

/* 1 once every probe is live (odd epoch), 0 from the moment detach begins,
 * and always 0 in a forked child. */
FVBPF_EXPORT int fvbpf_attached(void)
{
	return live_epoch() != 0;
}
