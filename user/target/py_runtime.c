// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "target/elf_symbols.h"
#include "target/proc_maps.h"
#include "target/py_runtime.h"
#include "util/log.h"

/*
 * CPython 3.11 (x86-64), from offsetof() over 3.11.7's internal headers
 * (pycore_runtime.h, pycore_interp.h, pycore_frame.h, cpython/code.h):
 * these structs did not change between 3.11.0 and 3.11.x.  3.12 moved
 * cframe's users and 3.13 replaced it with _Py_DebugOffsets; neither has
 * a layout here yet.
 */
static const struct py_layout py311 = {
	.major = 3, .minor = 11,
	.rt_interp_head = 40, .interp_threads = 16, .ts_next = 8, .ts_interp = 16,
	.ts_native_tid = 160, .ts_cframe = 56, .cf_current = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56,
	.ob_type = 8, .var_size = 16,
	.co_firstlineno = 72, .co_filename = 112, .co_name = 120, .co_qualname = 128,
	.co_linetable = 136, .co_code = 184,
	.uni_state = 32, .uni_ascii_data = 48, .uni_compact_data = 72,
	.bytes_data = 32,
};

const struct py_layout *py_layout_for(unsigned int major, unsigned int minor)
{
	if (major == 3 && minor == 11)
		return &py311;
	return NULL;
}

int py_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	if (!addr)
		return -EFAULT;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int read_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return py_mem_read(pid, addr, v, sizeof(*v));
}

#define PY_MAPS_MAX 16

struct find_ctx {
	pid_t pid;
	struct py_runtime *r;
	struct proc_map maps[PY_MAPS_MAX]; /* of the file being looked at */
	size_t nmaps;
	unsigned long long ino, dev;
	char path[256];
	bool found;
	int tried;
};

static bool python_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libpython3", 10) || !strncmp(base, "python3", 7);
}

/* A symbol's file offset as an address in the target, through the file's
 * mappings seen so far. */
static uint64_t to_addr(const struct find_ctx *c, uint64_t off)
{
	size_t i;

	for (i = 0; i < c->nmaps; i++)
		if (off >= c->maps[i].pgoff && off - c->maps[i].pgoff < c->maps[i].end - c->maps[i].start)
			return c->maps[i].start + (off - c->maps[i].pgoff);
	return 0;
}

static void try_file(struct find_ctx *c)
{
	static const char *const names[] = { "_PyRuntime", "Py_Version", "PyCode_Type",
					     "PyUnicode_Type", "PyBytes_Type" };
	struct elf_sym_info info[5];
	struct elf_file *ef = NULL;
	struct stat st;
	uint32_t ver = 0;
	int fd;

	c->tried++;
	fd = proc_map_open(c->pid, &c->maps[0], &st, NULL, 0);
	if (fd < 0)
		return;
	if (elf_file_open_fd(fd, (uint64_t)st.st_size, &ef) || elf_find_symbols(ef, names, 5, info) < 5) {
		if (ef)
			elf_file_close(ef);
		close(fd);
		return;
	}
	elf_file_close(ef);
	close(fd);
	c->r->runtime = to_addr(c, info[0].file_off);
	c->r->code_type = to_addr(c, info[2].file_off);
	c->r->unicode_type = to_addr(c, info[3].file_off);
	c->r->bytes_type = to_addr(c, info[4].file_off);
	if (!c->r->runtime || !c->r->code_type || py_mem_read(c->pid, to_addr(c, info[1].file_off), &ver, 4))
		return;
	c->r->version = ver;
	snprintf(c->r->path, sizeof(c->r->path), "%s", c->path);
	c->found = true;
}

/* Maps come in file order per object: gather one file's, then look at it. */
static int map_cb(const struct proc_map *m, void *arg)
{
	struct find_ctx *c = arg;

	if (c->found)
		return 1;
	if (!m->ino || m->ino != c->ino || m->dev != c->dev) {
		if (c->nmaps)
			try_file(c);
		if (c->found)
			return 1;
		c->nmaps = 0;
		c->ino = 0;
		if (!m->ino || !m->path || !python_name(m->path))
			return 0;
		c->ino = m->ino;
		c->dev = m->dev;
		snprintf(c->path, sizeof(c->path), "%s", m->path); /* valid during the call only */
	}
	if (c->nmaps < PY_MAPS_MAX) {
		c->maps[c->nmaps] = *m;
		c->maps[c->nmaps].path = c->path;
		c->nmaps++;
	}
	return 0;
}

/* The live interpreter agrees with the layout: the main thread is in the
 * thread list, and every thread state there names this interpreter. */
static int check_layout(pid_t pid, const struct py_runtime *r)
{
	const struct py_layout *L = r->lay;
	uint64_t interp, ts, back, tid;
	int i;

	if (read_u64(pid, r->runtime + L->rt_interp_head, &interp) || !interp ||
	    read_u64(pid, interp + L->interp_threads, &ts))
		return -EPROTO;
	for (i = 0; i < 64 && ts; i++) {
		if (read_u64(pid, ts + L->ts_interp, &back) || back != interp ||
		    read_u64(pid, ts + L->ts_native_tid, &tid))
			return -EPROTO;
		if (tid == (uint64_t)pid)
			return 0;
		if (read_u64(pid, ts + L->ts_next, &ts))
			return -EPROTO;
	}
	return -EPROTO;
}

int py_runtime_find(pid_t pid, struct py_runtime *r)
{
	struct find_ctx *c;
	int err;

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->pid = pid;
	c->r = r;
	err = proc_maps_foreach(pid, map_cb, c);
	if (!c->found && c->nmaps)
		try_file(c);
	err = c->found ? 0 : (err < 0 ? err : -ENOENT);
	free(c);
	if (err)
		return err;
	r->lay = py_layout_for((unsigned)(r->version >> 24) & 0xff, (unsigned)(r->version >> 16) & 0xff);
	if (!r->lay)
		return -ENOTSUP;
	return check_layout(pid, r);
}
