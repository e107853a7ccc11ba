// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The process's own loaded objects by file name, through dl_iterate_phdr(). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "dl_find.h"

bool dl_name_is(const char *path, const char *prefix)
{
	const char *b;

	if (!path || !path[0])
		return false;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return !strncmp(b, prefix, strlen(prefix));
}

struct want {
	const char *prefix;
	struct dl_found *out;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct want *w = arg;

	(void)size;
	if (!dl_name_is(info->dlpi_name, w->prefix))
		return 0;
	strncpy(w->out->path, info->dlpi_name, sizeof(w->out->path) - 1);
	w->out->path[sizeof(w->out->path) - 1] = '\0';
	w->out->base = info->dlpi_addr;
	w->out->phdr = info->dlpi_phdr;
	w->out->phnum = info->dlpi_phnum;
	return 1;
}

bool dl_find(const char *prefix, struct dl_found *out)
{
	struct want w = { prefix, out };

	return dl_iterate_phdr(find_cb, &w) != 0;
}

int dl_file_read(const struct dl_found *o, uintptr_t addr, void *out, size_t n)
{
	uintptr_t v = addr - o->base;
	ssize_t got = -1;
	int i, fd;

	for (i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];

		if (p->p_type != PT_LOAD || v < p->p_vaddr || v - p->p_vaddr > p->p_filesz ||
		    n > p->p_filesz - (v - p->p_vaddr))
			continue;
		fd = open(o->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		got = pread(fd, out, n, (off_t)(p->p_offset + (v - p->p_vaddr)));
		close(fd);
		break;
	}
	return got == (ssize_t)n ? 0 : -EIO;
}
