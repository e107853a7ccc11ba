/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The CUDA launch hook's fields of a target's control page (the library's
 * side is user/lib/cuda_hook.c; the records include/fvbpf_fast.h): the
 * request's tables, the epoch from which the wrapper records.
 */
#ifndef FVBPF_CUDA_HOOK_CHANNEL_H
#define FVBPF_CUDA_HOOK_CHANNEL_H

#include <stdint.h>

#include "proc/control/control_page.h"
#include "proc/control/callback_channel.h"

/* Write the region and window tables, then post on the CUDA channel (its
 * generation in @gen; the answer through channel_answered()). */
int cuda_hook_channel_request(const struct control_page *c, const struct callback_tables *tb,
			      uint32_t *gen);
/* The wrapper records under attach epoch @epoch (0: never). */
int cuda_hook_channel_set_live(const struct control_page *c, uint32_t epoch);

#endif /* FVBPF_CUDA_HOOK_CHANNEL_H */
