// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/file/file_open.h"
#include "proc/elf/uprobe_site.h"
#include "probes/uprobe_multi.h"

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
	uint64_t *sites;
	struct stat st;
	size_t i;
	int fd, file;

	if (!cnt)
		return -EINVAL;
	/*
	 * A function that starts with the 5-byte NOP (-mfentry -mnop-mcount,
	 * patchable entries) would get an optimised uprobe, which a child
	 * forked while it is in place inherits without its trampoline and
	 * dies on.  Probing the instruction after the NOP sees the same
	 * registers and stack, and stays on the int3 path a child survives.
	 */
	file = open_regular(path, false, FILE_OPEN_MAX_SIZE, &st);
	if (file < 0)
		return file;
	sites = calloc(cnt, sizeof(*sites));
	if (!sites) {
		close(file);
		return -ENOMEM;
	}
	for (i = 0; i < cnt; i++)
		sites[i] = uprobe_site_offset(file, offsets[i]);
	close(file);
	offsets = sites;
	memset(&attr, 0, sizeof(attr));
	lc->prog_fd = (uint32_t)prog_fd;
	lc->attach_type = FVBPF_ATTACH_UPROBE_SESSION;
	lc->path = (uint64_t)(uintptr_t)path;
	lc->offsets = (uint64_t)(uintptr_t)offsets;
	lc->cookies = (uint64_t)(uintptr_t)cookies;
	lc->cnt = (uint32_t)cnt;
	lc->pid = (uint32_t)pid;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		fd = -errno;
	free(sites);
	return fd;
}

int uprobe_multi_attach_one(int prog_fd, const char *path, pid_t pid, uint64_t offset,
			    uint64_t ref_ctr_offset, uint64_t cookie)
{
	union bpf_attr attr;
	struct link_create_uprobe_multi *lc = (void *)&attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	lc->prog_fd = (uint32_t)prog_fd;
	lc->attach_type = FVBPF_ATTACH_UPROBE_MULTI;
	lc->path = (uint64_t)(uintptr_t)path;
	lc->offsets = (uint64_t)(uintptr_t)&offset;
	lc->ref_ctr_offsets = ref_ctr_offset ? (uint64_t)(uintptr_t)&ref_ctr_offset : 0;
	lc->cookies = (uint64_t)(uintptr_t)&cookie;
	lc->cnt = 1;
	lc->pid = (uint32_t)pid;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
