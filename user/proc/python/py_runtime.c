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

#include "proc/elf/elf_symbols.h"
#include "proc/proc_maps.h"
#include "proc/python/py_runtime.h"
#include "util/log.h"

/*
 * x86-64 layouts, from offsetof() over each version's own internal headers
 * (pycore_runtime.h, pycore_interp.h, pycore_frame.h, cpython/code.h,
 * cpython/unicodeobject.h); these structs do not change within a minor
 * version.  3.13 is checked at attach against the _Py_DebugOffsets its
 * _PyRuntime starts with.  3.14 changed _Py_DebugOffsets and the frame
 * again: not here.  3.10 (pycore_runtime.h, pycore_interp.h,
 * cpython/pystate.h, cpython/frameobject.h, cpython/code.h) chains
 * PyFrameObjects and names its thread states by pthread_t: frame_object;
 * it has no co_qualname (co_name instead) and its co_code is a bytes
 * object, not inline (co_code there is only the end of what is read).
 */
static const struct py_layout layouts[] = {
	{
		.major = 3, .minor = 10,
		.rt_interp_head = 32, .interp_threads = 8 /* tstate_head */, .ts_next = 8,
		.ts_interp = 16, .ts_native_tid = 176 /* thread_id */, .ts_cframe = 24 /* frame */,
		.cf_current = 0xffff,
		.fr_base = 24, .fr_code = 32, .fr_previous = 24 /* f_back */, .fr_instr = 96 /* f_lasti */,
		.fr_owner = 24 /* none: owner_cstack 0 */, .owner_cstack = 0,
		.frame_object = 1,
		.ob_type = 8, .var_size = 16,
		.co_firstlineno = 40, .co_filename = 104, .co_name = 112, .co_qualname = 112,
		.co_linetable = 120, .co_code = 48, .co_read = 128,
		.uni_state = 32, .uni_ascii_data = 48, .uni_compact_data = 72,
		.bytes_data = 32,
	},
	{
		.major = 3, .minor = 11,
		.rt_interp_head = 40, .interp_threads = 16, .ts_next = 8, .ts_interp = 16,
		.ts_native_tid = 160, .ts_cframe = 56, .cf_current = 8,
		.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69,
		.owner_cstack = 0, /* no C-stack frames in 3.11 */
		.ob_type = 8, .var_size = 16,
		.co_firstlineno = 72, .co_filename = 112, .co_name = 120, .co_qualname = 128,
		.co_linetable = 136, .co_code = 184, .co_read = 184,
		.uni_state = 32, .uni_ascii_data = 48, .uni_compact_data = 72,
		.bytes_data = 32,
	},
	{
		.major = 3, .minor = 12,
		.rt_interp_head = 40, .interp_threads = 72, .ts_next = 8, .ts_interp = 16,
		.ts_native_tid = 144, .ts_cframe = 56, .cf_current = 0,
		.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
		.owner_cstack = 3,
		.ob_type = 8, .var_size = 16,
		.co_firstlineno = 68, .co_filename = 112, .co_name = 120, .co_qualname = 128,
		.co_linetable = 136, .co_code = 192, .co_read = 192,
		.uni_state = 32, .uni_ascii_data = 40, .uni_compact_data = 56,
		.bytes_data = 32,
	},
	{
		.major = 3, .minor = 13,
		.rt_interp_head = 632, .interp_threads = 7344, .ts_next = 8, .ts_interp = 16,
		.ts_native_tid = 160, .ts_cframe = 72 /* current_frame */, .cf_current = 0xffff,
		.fr_code = 0 /* f_executable */, .fr_previous = 8, .fr_instr = 56 /* instr_ptr */,
		.fr_owner = 70, .owner_cstack = 3,
		.ob_type = 8, .var_size = 16,
		.co_firstlineno = 68, .co_filename = 112, .co_name = 120, .co_qualname = 128,
		.co_linetable = 136, .co_code = 200, .co_read = 200,
		.uni_state = 32, .uni_ascii_data = 40, .uni_compact_data = 56,
		.bytes_data = 32,
		.debug_offsets = 1,
	},
};

const struct py_layout *py_layout_for(unsigned int major, unsigned int minor)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
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

/*
 * Py_Version is 3.11's: before it, the file's name says the version
 * (libpython3.10.so*, python3.10) and _PyRuntime's size must be that
 * version's sizeof(_PyRuntimeState) (672 on 3.10, x86-64); 0: not one
 * fvbpf knows.
 */
static uint32_t version_before_311(const char *path, uint64_t runtime_size)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "libpython3.10.so", 16) && strcmp(base, "python3.10"))
		return 0;
	return runtime_size == 672 ? 0x030a0000u : 0;
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
	if (elf_file_open_fd(fd, (uint64_t)st.st_size, &ef) || elf_find_symbols(ef, names, 5, info) < 4 ||
	    !info[0].found || !info[2].found || !info[3].found || !info[4].found) {
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
	if (!c->r->runtime || !c->r->code_type)
		return;
	if (!info[1].found)
		ver = version_before_311(c->path, info[0].size);
	else if (py_mem_read(c->pid, to_addr(c, info[1].file_off), &ver, 4))
		return;
	if (!ver)
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

/* x86-64 glibc's struct pthread: the TCB starts with a pointer to itself
 * (the TLS ABI), and its tid is at 0x2d0 (glibc 2.26 to 2.36 at least). */
#define GLIBC_PTHREAD_TID 0x2d0

/*
 * 3.10 names a thread state's thread by its pthread_t, the thread pointer
 * BPF compares with the fs base: the main thread's must be one (a TCB
 * pointing at itself) whose glibc tid is the pid.  Another thread's may be
 * gone (a state not yet cleared): not the main thread, not an error.
 */
static bool thread_is_main(pid_t pid, const struct py_layout *L, uint64_t name)
{
	uint64_t self;
	uint32_t tid;

	if (!L->frame_object)
		return name == (uint64_t)pid;
	return !read_u64(pid, name, &self) && self == name &&
	       !py_mem_read(pid, name + GLIBC_PTHREAD_TID, &tid, sizeof(tid)) && tid == (uint32_t)pid;
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
		if (thread_is_main(pid, L, tid))
			return 0;
		if (read_u64(pid, ts + L->ts_next, &ts))
			return -EPROTO;
	}
	return -EPROTO;
}

/*
 * 3.13's _Py_DebugOffsets (the start of _PyRuntime): the interpreter's own
 * word on the offsets fvbpf uses, each compared with the table.  A
 * free-threaded build (another object layout) is refused here too.
 */
static int check_debug_offsets(pid_t pid, const struct py_runtime *r)
{
	const struct py_layout *L = r->lay;
	uint64_t d[46];
	/* word of _Py_DebugOffsets (offsetof() / 8 over 3.13's header) -> the table's value */
	const struct { unsigned int word; uint64_t want; } checks[] = {
		{ 1, r->version }, { 2, 0 /* not free-threaded */ },
		{ 5, L->rt_interp_head }, { 9, L->interp_threads },
		{ 21, L->ts_next }, { 22, L->ts_interp }, { 23, L->ts_cframe },
		{ 25, L->ts_native_tid },
		{ 29, L->fr_previous }, { 30, L->fr_code }, { 31, L->fr_instr }, { 33, L->fr_owner },
		{ 35, L->co_filename }, { 36, L->co_name }, { 37, L->co_qualname },
		{ 38, L->co_linetable }, { 39, L->co_firstlineno }, { 43, L->co_code },
		{ 45, L->ob_type },
	};
	size_t i;

	if (py_mem_read(pid, r->runtime, d, sizeof(d)) || memcmp(d, "xdebugpy", 8))
		return -EPROTO;
	for (i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
		if (d[checks[i].word] != checks[i].want)
			return -EPROTO;
	return 0;
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
	if (r->lay->debug_offsets && check_debug_offsets(pid, r))
		return -EPROTO;
	return check_layout(pid, r);
}
