// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The operator fast path's request in a target's control page: the tables
 * first, then its channel's layout and generation (channel_post); its
 * answer is read by channel_answered().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>

#include "fvbpf_events.h"
#include "fvbpf_fast.h"
#include "proc/proc_info.h"
#include "proc/control/callback_channel.h"
#include "proc/control/channel.h"

#define FIELD(f) (c->page + offsetof(struct fvbpf_control, f))

int callback_channel_watched(const struct control_page *c)
{
	uint32_t w;
	int err;

	if (!c->page)
		return 0;
	err = proc_read_u32(c->pid, FIELD(fast_watch), &w);
	return err ? err : w == 1;
}

/* One table: its count to 0 first, so a library reading meanwhile sees
 * fewer entries, never junk; then the entries, then the count. */
static int put_table(const struct control_page *c, uint64_t at, uint64_t count_at,
		     const uint64_t *v, uint32_t n, uint32_t max)
{
	struct iovec local = { (void *)v, n * sizeof(*v) };
	struct iovec remote = { (void *)(uintptr_t)at, local.iov_len };
	int err;

	if (n > max)
		return -E2BIG;
	err = proc_write_u32(c->pid, count_at, 0);
	if (!err && n && process_vm_writev(c->pid, &local, 1, &remote, 1, 0) !=
			  (ssize_t)local.iov_len)
		err = -errno;
	return err ? err : proc_write_u32(c->pid, count_at, n);
}

int callback_channel_scopes(const struct control_page *c, const struct callback_tables *tb)
{
	int err;

	if (!c->page)
		return -ENOENT;
	err = put_table(c, FIELD(fast_gates), FIELD(fast_ngates), tb->gates, tb->ngates,
			FVBPF_FAST_GATES);
	return err ? err : put_table(c, FIELD(fast_steps), FIELD(fast_nsteps), tb->steps,
				     tb->nsteps, FVBPF_FAST_STEPS);
}

int callback_channel_tables_put(const struct control_page *c, const struct callback_tables *tb)
{
	int err;

	err = put_table(c, FIELD(fast_regions), FIELD(fast_nregions), tb->regions, tb->nregions,
			FVBPF_FAST_REGIONS);
	if (!err)
		err = callback_channel_scopes(c, tb);
	return err ? err : proc_write_u32(c->pid, FIELD(fast_window), tb->window ? 1 : 0);
}

int callback_channel_request(const struct control_page *c, uint32_t layout,
			     const struct callback_tables *tb, uint32_t *gen)
{
	int err;

	if (!c->page)
		return -ENOENT;
	/* a cfg of an earlier attach is not this one's */
	err = proc_write_u32(c->pid, FIELD(fast_py_set), 0);
	if (!err)
		err = callback_channel_tables_put(c, tb);
	if (!err)
		err = proc_write_u32(c->pid, FIELD(fast_stacks), tb->stacks ? 1 : 0);
	return err ? err : channel_post(c, CHANNEL_FAST, layout, gen);
}

int callback_channel_py(const struct control_page *c, const void *cfg, size_t len)
{
	struct iovec local = { (void *)cfg, len };
	struct iovec remote = { (void *)(uintptr_t)FIELD(fast_py), len };

	if (!c->page)
		return -ENOENT;
	if (len != sizeof(((struct fvbpf_control *)0)->fast_py))
		return -EINVAL;
	if (process_vm_writev(c->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return -errno;
	return proc_write_u32(c->pid, FIELD(fast_py_set), 1);
}
