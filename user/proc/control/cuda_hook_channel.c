// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The CUDA launch hook's request in a target's control page, written as the
 * operator fast path's is (callback_channel.c): the fields first, the
 * generation last; the answer read back, the generation first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>

#include "fvbpf_events.h"
#include "proc/proc_info.h"
#include "proc/control/cuda_hook_channel.h"

#define FIELD(f) (c->page + offsetof(struct fvbpf_control, f))

int cuda_hook_channel_request(const struct control_page *c, const struct callback_tables *tb,
			      uint32_t *gen)
{
	int err;

	if (!c->page)
		return -ENOENT;
	err = proc_write_u32(c->pid, FIELD(cuda_live), 0);
	if (!err)
		err = callback_channel_tables_put(c, tb);
	return err ? err : channel_gen_next(c, FIELD(cuda_gen), FIELD(cuda_done), gen);
}

int cuda_hook_channel_answered(const struct control_page *c, uint32_t gen,
			       struct cuda_hook_answer *a)
{
	uint32_t done = 0, fd = 0, lo = 0, hi = 0;
	int err;

	err = proc_read_u32(c->pid, FIELD(cuda_done), &done);
	if (err || done != gen)
		return err ? err : 0;
	err = proc_read_u32(c->pid, FIELD(cuda_state), &a->state);
	if (!err)
		err = proc_read_u32(c->pid, FIELD(cuda_err), &a->err);
	if (!err)
		err = proc_read_u32(c->pid, FIELD(cuda_slots), &a->slots);
	if (!err)
		err = proc_read_u32(c->pid, FIELD(cuda_fd), &fd);
	if (!err)
		err = proc_read_u32(c->pid, FIELD(cuda_bytes), &lo);
	if (!err)
		err = proc_read_u32(c->pid, FIELD(cuda_bytes) + 4, &hi);
	if (err)
		return err;
	a->fd = (int32_t)fd;
	a->bytes = (uint64_t)hi << 32 | lo;
	return 1;
}

int cuda_hook_channel_set_live(const struct control_page *c, uint32_t epoch)
{
	return c->page ? proc_write_u32(c->pid, FIELD(cuda_live), epoch) : -ENOENT;
}
