// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * libc10.so's allocator functions for --profile-memory (fvbpf_mem.h): the
 * mapped file (never what its path holds now) is read for the three
 * exported symbols, and one session-uprobe link carries them, the cookie
 * holding the process's slot and the function's kind.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "proc/elf/elf_file.h"
#include "proc/elf/elf_symbols.h"
#include "proc/proc_maps.h"
#include "probes/mem_probes.h"
#include "probes/uprobe_multi.h"

#include "fvbpf_mem.h"

/* Itanium names: the same in torch 2.13 and 2.14 (checked with nm -D). */
static const char *const mem_syms[] = {
	"_ZN3c1025ProfiledCPUMemoryReporter3NewEPvm",
	"_ZN3c1025ProfiledCPUMemoryReporter6DeleteEPv",
	"_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE",
};
static const __u8 mem_kinds[] = { FVBPF_MEM_CPU_NEW, FVBPF_MEM_CPU_DELETE, FVBPF_MEM_REPORT };
#define NSYMS (sizeof(mem_syms) / sizeof(mem_syms[0]))

void mem_probes_init(struct mem_probes *mp, pid_t pid, unsigned int slot)
{
	memset(mp, 0, sizeof(*mp));
	mp->pid = pid;
	mp->slot = slot;
	mp->link = -1;
}

bool mem_is_libc10(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc10.so", 9);
}

struct find_ctx {
	struct proc_map m;
	char path[PATH_MAX];
	bool found;
};

static int find_cb(const struct proc_map *m, void *arg)
{
	struct find_ctx *c = arg;

	if (!proc_map_is_file(m) || !mem_is_libc10(m->path))
		return 0;
	c->m = *m;
	snprintf(c->path, sizeof(c->path), "%s", m->path);
	c->m.path = c->path;
	c->found = true;
	return 1;
}

/* The three symbols' file offsets: how many were found, or -errno. */
static int read_offsets(pid_t pid, int fd, const struct stat *st, uint64_t *offs,
			uint64_t *cookies, uint64_t slot)
{
	struct elf_sym_info info[NSYMS];
	bool code[NSYMS] = { true, true, true };
	struct elf_file *ef;
	size_t i;
	int n = 0, err;

	err = elf_file_open_fd(fd, (uint64_t)st->st_size, &ef);
	if (err)
		return err;
	memset(info, 0, sizeof(info));
	elf_find_symbols_code(ef, mem_syms, code, NSYMS, info);
	elf_file_close(ef);
	for (i = 0; i < NSYMS; i++) {
		if (!info[i].found) {
			log_warn("pid %d: %s not in libc10.so: those allocator events are not seen",
				 pid, mem_syms[i]);
			continue;
		}
		offs[n] = info[i].file_off;
		cookies[n++] = slot | mem_kinds[i];
	}
	return n;
}

static int attach(struct mem_probes *mp, int prog_fd, const struct find_ctx *c)
{
	uint64_t offs[NSYMS], cookies[NSYMS], slot = (uint64_t)mp->slot << FVBPF_COOKIE_SLOT_SHIFT;
	char kpath[PATH_MAX + 64];
	struct stat st;
	int fd, n, lfd;

	fd = proc_map_open(mp->pid, &c->m, &st, kpath, sizeof(kpath));
	if (fd < 0)
		return fd;
	n = read_offsets(mp->pid, fd, &st, offs, cookies, slot);
	close(fd);
	if (n <= 0)
		return n < 0 ? n : -ENOENT;
	lfd = uprobe_session_attach(prog_fd, kpath, mp->pid, offs, cookies, (size_t)n);
	if (lfd < 0)
		return lfd;
	mp->link = lfd;
	mp->nprobed = (unsigned int)n;
	return 0;
}

int mem_probes_scan(struct mem_probes *mp, int prog_fd)
{
	struct find_ctx *c;
	int err;

	if (mp->tried)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	proc_maps_foreach(mp->pid, find_cb, c);
	if (!c->found) {
		free(c);
		return 0;
	}
	mp->tried = true;
	snprintf(mp->path, sizeof(mp->path), "%s", c->path);
	err = attach(mp, prog_fd, c);
	free(c);
	if (err) {
		log_warn("pid %d: --profile-memory: cannot probe the allocator in %s: %s; no memory "
			 "events", mp->pid, mp->path, strerror(-err));
		return err;
	}
	log_info("pid %d: --profile-memory: %u allocator functions probed in %s", mp->pid,
		 mp->nprobed, mp->path);
	return 1;
}

void mem_probes_detach(struct mem_probes *mp)
{
	if (mp->link >= 0)
		close(mp->link);
	mp->link = -1;
}

struct mem_probes *mem_probes__new(void)
{
	struct mem_probes *mp = malloc(sizeof(*mp));

	if (mp)
		mem_probes_init(mp, 0, 0); /* no link */
	return mp;
}

void mem_probes__free(struct mem_probes *mp)
{
	if (!mp)
		return;
	mem_probes_detach(mp);
	free(mp);
}
