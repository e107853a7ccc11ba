/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * CUDA launches through libfvbpf.so's hook at attach (cuda_hook_attach.c;
 * the library's side is user/lib/cuda_hook.c).
 */
#ifndef FVBPF_CUDA_HOOK_ATTACH_H
#define FVBPF_CUDA_HOOK_ATTACH_H

#include "model/session.h"

/* Ask the library for the hook, before the epoch turns odd; where it
 * cannot be had, say why (t->fast->hook_why).  Never fails the attach. */
void cuda_hook_request(struct session *s, struct session_target *t);
/* The run loop's tick: once the library answered, map its rings and let
 * its wrapper record. */
void cuda_hook_check(struct session *s, struct session_target *t);

/* Detach: an unanswered request is said as such. */
void cuda_hook_stop(struct session_target *t);

#endif /* FVBPF_CUDA_HOOK_ATTACH_H */
