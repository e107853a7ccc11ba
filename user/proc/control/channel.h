/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * One request and its answer through a target's control page (struct
 * fvbpf_channel, include/fvbpf_events.h): the Python shim's, the operator
 * callbacks' and the CUDA hook's are each one of these, with what their
 * request needs beside it (shim_channel.c, callback_channel.c,
 * cuda_hook_channel.c).  The library's side is user/lib/channel.h.
 */
#ifndef FVBPF_CHANNEL_H
#define FVBPF_CHANNEL_H

#include <stdint.h>

#include "proc/control/control_page.h"

enum channel_id {
	CHANNEL_PY,
	CHANNEL_FAST,
	CHANNEL_CUDA,
};

/* An answer as the library wrote it: the target's values, for the caller
 * to check before use. */
struct channel_answer {
	uint32_t state;         /* enum fvbpf_fast_state / fvbpf_cuda_hook_state */
	uint32_t err;           /* errno of a failed step */
	uint32_t slots;         /* cuda: PLT slots pointed at the wrapper */
	int32_t fd;             /* the rings' memfd, in the target */
	uint64_t bytes;
};

/* Post a request: @req into the channel's request word, then a generation
 * the library has neither asked nor answered, never 0, written last (in
 * @gen).  What else the request needs is written before.  0 or -errno. */
int channel_post(const struct control_page *c, enum channel_id ch, uint32_t req, uint32_t *gen);
/* The channel and the page's magic in one read: 1 and @a once the
 * library answered @gen, 0 not yet, -EPROTO where the page is no longer
 * ours (its magic or the asked generation changed), -errno. */
int channel_answered(const struct control_page *c, enum channel_id ch, uint32_t gen,
		     struct channel_answer *a);
/* The channel's request word alone (the CUDA hook's live epoch). */
int channel_set_req(const struct control_page *c, enum channel_id ch, uint32_t req);
/* Where the channel is in the target (exposed for tests). */
uint64_t channel_addr(const struct control_page *c, enum channel_id ch);

#endif /* FVBPF_CHANNEL_H */
