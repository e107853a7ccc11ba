/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The CUDA launch hook's fields of a target's control page (the library's
 * side is user/lib/cuda_hook.c; the records include/fvbpf_fast.h): the
 * request, its answer, the epoch from which the wrapper records.
 */
#ifndef FVBPF_CUDA_HOOK_CHANNEL_H
#define FVBPF_CUDA_HOOK_CHANNEL_H

#include <stdint.h>

#include "proc/control/control_page.h"
#include "proc/control/callback_channel.h"

struct cuda_hook_answer {
	uint32_t state;         /* enum fvbpf_cuda_hook_state */
	uint32_t err;           /* errno of a failed step */
	uint32_t slots;         /* PLT slots pointed at the wrapper */
	int32_t fd;             /* the rings' memfd, in the target */
	uint64_t bytes;
};

/* Write the region and window tables, then a generation the library has
 * not served (in @gen). */
int cuda_hook_channel_request(const struct control_page *c, const struct callback_tables *tb,
			      uint32_t *gen);
/* 1 and @a once the library answered @gen, 0 not yet, -errno. */
int cuda_hook_channel_answered(const struct control_page *c, uint32_t gen,
			       struct cuda_hook_answer *a);
/* The wrapper records under attach epoch @epoch (0: never). */
int cuda_hook_channel_set_live(const struct control_page *c, uint32_t epoch);

#endif /* FVBPF_CUDA_HOOK_CHANNEL_H */
