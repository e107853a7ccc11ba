// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The process's "inside a segment", as BPF keeps it (bpf/markers.bpf.c,
 * bpf/torch.bpf.c), followed here so that the operator callbacks know it
 * without asking the kernel: a depth over enabled regions and region
 * scopes (never below 0: an end whose begin came before the attach), a
 * --step-by flag that stays up from the first step scope's end, and time
 * windows, which are always open.  The tables are fvbpf's, in the control
 * page; the target may scribble on them, which costs it only its own
 * records.
 */
#include "fast_segments.h"

static int depth;
static int stepping;

static bool in_table(const volatile __u64 *t, uint32_t n, uint32_t max, uint64_t hash)
{
	uint32_t i;

	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		if (t[i] == hash)
			return true;
	return false;
}

static void down(void)
{
	int d = __atomic_load_n(&depth, __ATOMIC_RELAXED);

	while (d > 0 && !__atomic_compare_exchange_n(&depth, &d, d - 1, false, __ATOMIC_ACQ_REL,
						     __ATOMIC_RELAXED))
		;
}

void fast_seg_reset(void)
{
	__atomic_store_n(&depth, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&stepping, 0, __ATOMIC_RELEASE);
}

bool fast_seg_open(const struct fvbpf_control *c)
{
	return c->fast_window || __atomic_load_n(&stepping, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&depth, __ATOMIC_RELAXED) > 0;
}

void fast_seg_region(const struct fvbpf_control *c, uint64_t hash, bool begin)
{
	if (!in_table(c->fast_regions, c->fast_nregions, FVBPF_FAST_REGIONS, hash))
		return;
	if (begin)
		__atomic_fetch_add(&depth, 1, __ATOMIC_ACQ_REL);
	else
		down();
}

void fast_seg_sync(const struct fvbpf_control *c, const uint64_t *hashes, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (hashes[i] && in_table(c->fast_regions, c->fast_nregions, FVBPF_FAST_REGIONS,
					  hashes[i]))
			__atomic_fetch_add(&depth, 1, __ATOMIC_ACQ_REL);
}

bool fast_seg_scope_begin(const struct fvbpf_control *c, uint64_t hash)
{
	if (!in_table(c->fast_gates, c->fast_ngates, FVBPF_FAST_GATES, hash))
		return false;
	__atomic_fetch_add(&depth, 1, __ATOMIC_ACQ_REL);
	return true;
}

void fast_seg_scope_end(const struct fvbpf_control *c, uint64_t hash, bool counted)
{
	if (counted)
		down();
	if (in_table(c->fast_steps, c->fast_nsteps, FVBPF_FAST_STEPS, hash))
		__atomic_store_n(&stepping, 1, __ATOMIC_RELEASE);
}
