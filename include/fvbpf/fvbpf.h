/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * fvbpf region markers.
 *
 * Call fvbpf_region_begin()/fvbpf_region_end() around the code you want to
 * profile.  While no fvbpf is attached each call is one load and a branch;
 * while `fvbpf attach` traces this process, the call reaches a probe
 * function that the kernel traps with a uprobe.
 *
 * Region names are canonicalised: surrounding white space is ignored, case
 * does not matter, and the prefix "profiler_region_" is optional, so
 * "Training_Forward" and "profiler_region_training_forward" are the same
 * region.  Begin and end must be called on the same thread, properly nested.
 *
 * The name must stay valid until the matching fvbpf_region_end(): the
 * library keeps its address (not a copy) in a small per-thread stack of open
 * regions, which it reads when fvbpf attaches in the middle of a region.
 * String literals are always fine.
 */
#ifndef FVBPF_FVBPF_H
#define FVBPF_FVBPF_H

#ifdef __cplusplus
extern "C" {
#endif

void fvbpf_region_begin(const char *name);
void fvbpf_region_end(const char *name);

/* Non-zero while an fvbpf loader has its probes attached to this process. */
int fvbpf_attached(void);

#ifdef __cplusplus
}
#endif

#endif /* FVBPF_FVBPF_H */
