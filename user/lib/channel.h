/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The library's side of a control-page channel (struct fvbpf_channel,
 * include/fvbpf_events.h; fvbpf's side is user/proc/control/channel.c):
 * a request read under its generation, an answer published with its
 * generation last.  The Python shim (pyshim.c), the operator callbacks
 * (torch_fast.c) and the CUDA hook (cuda_hook.c) each serve one.
 */
#ifndef FVBPF_LIB_CHANNEL_H
#define FVBPF_LIB_CHANNEL_H

#include <stdint.h>

#include "fvbpf_events.h"

struct channel_reply {
	uint32_t state;         /* enum fvbpf_fast_state / fvbpf_cuda_hook_state */
	int err;                /* errno of a failed step, 0 */
	int fd;                 /* the rings' memfd, -1: none */
	uint64_t bytes;         /* its size (FVBPF_FAST_BYTES fits 32 bits) */
	uint32_t slots;         /* cuda: PLT slots pointed at the wrapper */
};

/* The generation asked (0: nothing) and, with @req, the request word:
 * acquire, so that what fvbpf wrote before the generation is seen. */
static inline uint32_t channel_request(const struct fvbpf_channel *ch, uint32_t *req)
{
	uint32_t gen = __atomic_load_n(&ch->asked, __ATOMIC_ACQUIRE);

	if (req)
		*req = __atomic_load_n(&ch->req, __ATOMIC_RELAXED);
	return gen;
}

/* Whether @gen is new: asked and not yet answered. */
static inline int channel_pending(const struct fvbpf_channel *ch, uint32_t gen)
{
	return gen && gen != __atomic_load_n(&ch->answered, __ATOMIC_ACQUIRE);
}

/* The answer to @gen: its fields, then the generation (release), so that
 * fvbpf, seeing the generation, sees them. */
static inline void channel_answer(struct fvbpf_channel *ch, uint32_t gen,
				  const struct channel_reply *r)
{
	ch->state = (uint16_t)r->state;
	ch->err = (uint16_t)(r->err < 0 || r->err > 0xffff ? 0xffff : r->err);
	ch->fd = r->fd;
	ch->bytes = r->bytes > UINT32_MAX ? 0 : (uint32_t)r->bytes;
	ch->slots = r->slots;
	__atomic_store_n(&ch->answered, gen, __ATOMIC_RELEASE);
}

#endif /* FVBPF_LIB_CHANNEL_H */
