// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Writes the Python shim's request into the target's control page: the
 * text first, then its channel's length and generation (channel_post), so
 * that a library reading the generation sees a whole request (it also
 * re-reads the generation after copying).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>

#include "fvbpf_events.h"
#include "proc/proc_info.h"
#include "proc/control/channel.h"
#include "proc/control/shim_channel.h"

#define FIELD(f) (c->page + offsetof(struct fvbpf_control, f))

int shim_channel_capable(const struct control_page *c)
{
	uint32_t python;
	int err;

	if (!c->page)
		return 0;
	err = proc_read_u32(c->pid, FIELD(python), &python);
	return err ? err : python == 1;
}

int shim_channel_request(const struct control_page *c, const char *req, size_t len,
			 uint32_t *gen)
{
	struct iovec local = { (void *)req, len }, remote = { (void *)(uintptr_t)FIELD(py_req), len };

	if (!c->page)
		return -ENOENT;
	if (len > FVBPF_PY_REQ_MAX)
		return -E2BIG;
	if (len && process_vm_writev(c->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		return -errno;
	return channel_post(c, CHANNEL_PY, (uint32_t)len, gen);
}
