// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A control-page channel seen from fvbpf: the request posted fields first
 * and generation last, the answer copied whole in one read and taken only
 * under the generation asked.  The page is the target's memory: whatever
 * it holds is checked here (magic, generations) or by the caller (the
 * answer's fields).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>

#include "fvbpf_events.h"
#include "proc/proc_info.h"
#include "proc/control/channel.h"

static const size_t channel_off[] = {
	[CHANNEL_PY] = offsetof(struct fvbpf_control, py),
	[CHANNEL_FAST] = offsetof(struct fvbpf_control, fast),
	[CHANNEL_CUDA] = offsetof(struct fvbpf_control, cuda),
};

uint64_t channel_addr(const struct control_page *c, enum channel_id ch)
{
	return c->page + channel_off[ch];
}

/* The page's magic and the channel, in one process_vm_readv. */
static int channel_read(const struct control_page *c, enum channel_id ch, uint32_t *magic,
			struct fvbpf_channel *out)
{
	struct iovec local[2] = { { magic, sizeof(*magic) }, { out, sizeof(*out) } };
	struct iovec remote[2] = {
		{ (void *)(uintptr_t)(c->page + offsetof(struct fvbpf_control, magic)), sizeof(*magic) },
		{ (void *)(uintptr_t)channel_addr(c, ch), sizeof(*out) },
	};
	ssize_t n;

	if (!c->page)
		return -ENOENT;
	n = process_vm_readv(c->pid, local, 2, remote, 2, 0);
	if (n == (ssize_t)(sizeof(*magic) + sizeof(*out)))
		return 0;
	return n < 0 ? -errno : -EFAULT;
}

int channel_set_req(const struct control_page *c, enum channel_id ch, uint32_t req)
{
	if (!c->page)
		return -ENOENT;
	return proc_write_u32(c->pid, channel_addr(c, ch) + offsetof(struct fvbpf_channel, req),
			      req);
}

int channel_post(const struct control_page *c, enum channel_id ch, uint32_t req, uint32_t *gen)
{
	uint64_t at = channel_addr(c, ch);
	struct fvbpf_channel cur;
	uint32_t magic, next;
	int err;

	err = channel_read(c, ch, &magic, &cur);
	if (err)
		return err;
	/* never 0 (nothing asked) nor what the library last answered */
	next = cur.asked + 1;
	while (next == 0 || next == cur.answered)
		next++;
	err = proc_write_u32(c->pid, at + offsetof(struct fvbpf_channel, req), req);
	if (!err)
		err = proc_write_u32(c->pid, at + offsetof(struct fvbpf_channel, asked), next);
	if (!err)
		*gen = next;
	return err;
}

int channel_answered(const struct control_page *c, enum channel_id ch, uint32_t gen,
		     struct channel_answer *a)
{
	struct fvbpf_channel cur;
	uint32_t magic;
	int err;

	err = channel_read(c, ch, &magic, &cur);
	if (err)
		return err;
	if (magic != FVBPF_CONTROL_MAGIC)
		return -EPROTO;
	if (cur.answered != gen)
		return 0;
	if (cur.asked != gen)
		return -EPROTO; /* our request was overwritten: its answer is not ours */
	a->state = cur.state;
	a->err = cur.err;
	a->slots = cur.slots;
	a->fd = cur.fd;
	a->bytes = cur.bytes;
	return 1;
}
