// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uprobe_multi.h"

/* The link_create member of union bpf_attr, as kernel 6.6+ lays it out. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

_Static_assert(sizeof(struct link_create_uprobe_multi) <= sizeof(union bpf_attr),
	       "fits in bpf_attr");

int uprobe_session_attach(int prog_fd, const char *path, pid_t pid, const uint64_t *offsets,
			  const uint64_t *cookies, size_t cnt)
{
	union bpf_attr attr;
	struct link_create_uprobe_multi *lc = (void *)&attr;
	int fd;

	if (!cnt)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	lc->prog_fd = (uint32_t)prog_fd;
	lc->attach_type = FVBPF_ATTACH_UPROBE_SESSION;
	lc->path = (uint64_t)(uintptr_t)path;
	lc->offsets = (uint64_t)(uintptr_t)offsets;
	lc->cookies = (uint64_t)(uintptr_t)cookies;
	lc->cnt = (uint32_t)cnt;
	lc->pid = (uint32_t)pid;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
