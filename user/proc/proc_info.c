// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc/proc_info.h"
#include "proc/proc_rank.h"
#include "proc/proc_scan.h"
#include "util/file/file_memo.h"

static const char *const marker_names[MARKER_NSYMS] = {
	[MARKER_BEGIN] = "fvbpf_probe_region_begin",
	[MARKER_END] = "fvbpf_probe_region_end",
	[MARKER_SEMAPHORE] = "fvbpf_semaphore",
	[MARKER_SYNC] = "fvbpf_probe_thread_sync",
	[MARKER_CONTROL] = "fvbpf_control",
	[MARKER_CORRELATION] = "fvbpf_probe_correlation",
	[MARKER_GPU_BATCH] = "fvbpf_probe_gpu_batch",
	[MARKER_AGENT_STATUS] = "fvbpf_probe_agent_status",
	[MARKER_SCOPE_END] = "fvbpf_probe_scope_end",
	[MARKER_PY_STACK] = "fvbpf_probe_py_stack",
	[MARKER_BEGIN_TS] = "fvbpf_probe_region_begin_ts",
	[MARKER_END_TS] = "fvbpf_probe_region_end_ts",
};
/* Which of them fvbpf probes: found only in executable code.  The two
 * variables are written by the kernel (semaphore) and read (control). */
static const bool marker_code[MARKER_NSYMS] = {
	[MARKER_BEGIN] = true, [MARKER_END] = true, [MARKER_SYNC] = true,
	[MARKER_CORRELATION] = true, [MARKER_GPU_BATCH] = true, [MARKER_AGENT_STATUS] = true,
	[MARKER_SCOPE_END] = true, [MARKER_PY_STACK] = true,
	[MARKER_BEGIN_TS] = true, [MARKER_END_TS] = true,
};


struct epoch_ctx {
	struct marker_lib *lib;
	bool found;
};

static int epoch_cb(const struct proc_map *m, void *arg)
{
	struct epoch_ctx *c = arg;
	uint64_t off = c->lib->syms[MARKER_CONTROL].file_off;

	/* The writable mapping: a file page can also be mapped read-only
	 * (text or RELRO sharing the page), and that copy is not the one the
	 * markers read. */
	if (strcmp(m->path, c->lib->path) || m->perms[1] != 'w' || off < m->pgoff ||
	    off >= m->pgoff + (m->end - m->start))
		return 0;
	c->lib->control_addr = m->start + (off - m->pgoff);
	c->found = true;
	return 1;
}

/* Where the fvbpf_control pointer is in the target's memory. */
static int epoch_address(pid_t pid, struct marker_lib *lib)
{
	struct epoch_ctx c = { .lib = lib };
	int ret = proc_maps_foreach(pid, epoch_cb, &c);

	return ret ? ret : c.found ? 0 : -ENOENT;
}

int proc_read_u32(pid_t pid, uint64_t addr, uint32_t *val)
{
	struct iovec local = { val, sizeof(*val) }, remote = { (void *)(uintptr_t)addr, sizeof(*val) };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(*val) ? 0 : -errno;
}

bool proc_control_ready(pid_t pid, const struct marker_lib *lib)
{
	uint64_t page = 0;
	struct iovec local = { &page, sizeof(page) },
		     remote = { (void *)(uintptr_t)lib->control_addr, sizeof(page) };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == sizeof(page) && page;
}

int proc_write_u32(pid_t pid, uint64_t addr, uint32_t val)
{
	struct iovec local = { &val, sizeof(val) }, remote = { (void *)(uintptr_t)addr, sizeof(val) };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == sizeof(val) ? 0 : -errno;
}

struct marker_ctx {
	pid_t pid;
	struct marker_lib *lib;
	unsigned long long last_dev, last_ino;
	bool found;
};

/* Whether the file open at @fd defines every marker symbol.  Every mapped
 * file of every process is asked (twice with --inject): the answers, mostly
 * "no" for the job's big libraries, are kept by file
 * (util/file/file_memo.h). */
static bool has_markers(int fd, const struct stat *st, struct marker_lib *lib)
{
	struct elf_file *ef;
	bool found;
	size_t i;

	if (file_memo_get(FILE_MEMO_MARKERS, st, lib->syms, sizeof(lib->syms)) !=
	    (long)sizeof(lib->syms)) {
		if (elf_file_open_fd(fd, (uint64_t)st->st_size, &ef))
			return false;
		elf_find_symbols_code(ef, marker_names, marker_code, MARKER_NSYMS, lib->syms);
		elf_file_close(ef);
		file_memo_put(FILE_MEMO_MARKERS, st, lib->syms, sizeof(lib->syms));
	}
	/* all but the optional last ones (an older library lacks them) */
	found = true;
	for (i = 0; i < MARKER_SCOPE_END; i++)
		found = found && lib->syms[i].found;
	return found;
}

static int marker_cb(const struct proc_map *m, void *arg)
{
	struct marker_ctx *c = arg;
	struct marker_lib *lib = c->lib;
	struct stat st;
	int fd;

	if (!proc_map_is_file(m) || (m->dev == c->last_dev && m->ino == c->last_ino))
		return 0; /* the same file's next mapping */
	c->last_dev = m->dev;
	c->last_ino = m->ino;
	memset(lib, 0, sizeof(*lib));
	/* The mapped file itself, never what its path holds now. */
	fd = proc_map_open(c->pid, m, &st, lib->open_path, sizeof(lib->open_path));
	if (fd < 0)
		return 0;
	c->found = has_markers(fd, &st, lib);
	close(fd);
	if (c->found)
		snprintf(lib->path, sizeof(lib->path), "%s", m->path);
	return c->found;
}

int proc_find_marker_lib(pid_t pid, struct marker_lib *lib)
{
	struct marker_ctx c = { .pid = pid, .lib = lib };
	int ret;

	ret = proc_maps_foreach(pid, marker_cb, &c);
	if (!ret)
		ret = c.found ? epoch_address(pid, lib) : -ENOENT;
	if (ret)
		memset(lib, 0, sizeof(*lib));
	return ret;
}

int proc_target_init(struct proc_target *t, pid_t pid)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	if (!proc_alive(pid))
		return -ESRCH;
	err = proc_read_comm(pid, pid, t->comm, sizeof(t->comm));
	if (err)
		return err;
	proc_read_cmdline(pid, t->cmdline, sizeof(t->cmdline));
	proc_read_rank_info(pid, &t->ri);
	t->rank = t->ri.rank;
	t->rank_from_env = t->ri.source != RANK_DEFAULT;
	t->ppid = proc_read_ppid(pid);
	t->ns_pid = proc_ns_pid(pid);
	return 0;
}

const char *proc_thread_name(struct proc_target *t, uint32_t tid)
{
	struct tid_name *n;
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return t->threads[i].name;
	n = realloc(t->threads, (t->nthreads + 1) * sizeof(*n));
	if (!n)
		return "?";
	t->threads = n;
	n = &t->threads[t->nthreads++];
	n->tid = tid;
	if (proc_read_comm(t->pid, (pid_t)tid, n->name, sizeof(n->name)))
		snprintf(n->name, sizeof(n->name), "thread %u", tid);
	return n->name;
}

void proc_target_free(struct proc_target *t)
{
	free(t->threads);
	t->threads = NULL;
	t->nthreads = 0;
}

struct proc_target *proc_target__new(void)
{
	return calloc(1, sizeof(struct proc_target));
}

void proc_target__free(struct proc_target *t)
{
	if (!t)
		return;
	proc_target_free(t);
	free(t);
}
