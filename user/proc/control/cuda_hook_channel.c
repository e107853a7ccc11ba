// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The CUDA launch hook's request in a target's control page: the tables
 * first, then its channel's generation (channel_post); the channel's
 * request word is the epoch from which the wrapper records, 0 from the
 * request until fvbpf has mapped the rings.
 */
#define _GNU_SOURCE

#include "proc/control/channel.h"
#include "proc/control/cuda_hook_channel.h"

int cuda_hook_channel_request(const struct control_page *c, const struct callback_tables *tb,
			      uint32_t *gen)
{
	int err;

	/* the wrapper stops recording before the tables change under it */
	err = channel_set_req(c, CHANNEL_CUDA, 0);
	if (!err)
		err = callback_channel_tables_put(c, tb);
	return err ? err : channel_post(c, CHANNEL_CUDA, 0, gen);
}

int cuda_hook_channel_set_live(const struct control_page *c, uint32_t epoch)
{
	return channel_set_req(c, CHANNEL_CUDA, epoch);
}
