/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * CUDA launches through the library's hook on the callers' PLT slots
 * (cuda_hook.c), recorded into the fast path's rings inside segments.
 * Internal to libfvbpf.so.
 */
#ifndef FVBPF_LIB_CUDA_HOOK_H
#define FVBPF_LIB_CUDA_HOOK_H

#include <stdbool.h>

/* Serve a new request of fvbpf's, or let go once fvbpf is gone. */
void cuda_hook_poll(void);
/* The hook is in: the library follows "inside a segment" for it. */
bool cuda_hook_following(void);

#endif /* FVBPF_LIB_CUDA_HOOK_H */
