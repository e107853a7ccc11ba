// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `fvbpf attach --inject`: load libfvbpf.so into a running process.
 *
 * This file decides whether a process may be injected (not traced
 * already, not stopped, x86-64, no seccomp filter, a libc with dlopen),
 * hands the work to a worker process (inject_worker.c: ptrace, the code
 * run in the target, inject_tramp.c) and turns its report into one line.
 * Whatever goes wrong, the target is left running as it was.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proc/elf/elf_file.h"
#include "proc/elf/elf_symbols.h"
#include "proc/inject/inject.h"
#include "proc/inject/inject_worker.h"
#include "util/log.h"
#include "proc/proc_info.h"
#include "proc/proc_read.h"
#include "proc/proc_maps.h"

const char *inject_state_name(enum inject_state s)
{
	switch (s) {
	case INJECT_INJECTED: return "injected";
	case INJECT_REUSED: return "reused";
	case INJECT_REFUSED: return "refused";
	case INJECT_FAILED: return "failed";
	default: return "none";
	}
}

const char *inject_origin(const struct inject_info *info, bool has_library)
{
	if (info->state != INJECT_NONE)
		return inject_state_name(info->state);
	return has_library ? "loaded by the job" : "none";
}

void inject_wallclock(const struct inject_info *info, char *buf, size_t len)
{
	time_t sec = (time_t)(info->wallclock_ns / 1000000000ULL);
	struct tm tm;
	char date[32];

	if (!info->wallclock_ns || !gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "%s", "");
		return;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06uZ", date, (unsigned)(info->wallclock_ns % 1000000000ULL / 1000));
}

enum inject_fn_kind inject_find_dlopen(struct elf_file *ef, uint64_t *file_off)
{
	static const char *const names[] = { "dlopen", "__libc_dlopen_mode" };
	static const bool code[] = { true, true };
	struct elf_sym_info out[2];

	/* Called in the target: a crafted libc must not send the call into
	 * its data. */
	elf_find_symbols_code(ef, names, code, 2, out);
	if (out[0].found) {
		*file_off = out[0].file_off;
		return INJECT_FN_DLOPEN;
	}
	if (out[1].found) {
		*file_off = out[1].file_off;
		return INJECT_FN_LIBC_DLOPEN_MODE;
	}
	return INJECT_FN_NONE;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static bool is_libc_name(const char *b)
{
	return !strcmp(b, "libc.so.6") || (!strncmp(b, "libc-2.", 7) && strstr(b, ".so"));
}

static bool is_libdl_name(const char *b)
{
	return !strcmp(b, "libdl.so.2") || (!strncmp(b, "libdl-2.", 8) && strstr(b, ".so"));
}

static bool is_ldso_name(const char *b)
{
	return !strncmp(b, "ld-linux-x86-64.so", 18) || !strncmp(b, "ld-2.", 5);
}

bool inject_is_libc_path(const char *path)
{
	const char *b = base_name(path);

	return is_libc_name(b) || is_libdl_name(b);
}

/* ---- what the target maps ---- */

struct resolve_ctx {
	pid_t pid;
	int best;                 /* 3 libc dlopen, 2 libdl dlopen, 1 __libc_dlopen_mode */
	uint64_t addr;
	int mode;
	char path[PATH_MAX];
	/* the file being looked at */
	unsigned long long dev, ino;
	int prio;                 /* of that file's function, 0 none */
	uint64_t off;
	/* code where the thread must not be stopped for our call */
	struct text_range unsafe[INJECT_UNSAFE_MAX];
	enum text_kind unsafe_kind[INJECT_UNSAFE_MAX];
	int nunsafe;
	struct text_range libc_text;  /* the chosen libc's executable mapping */
	uint64_t libc_base;
	unsigned long long libc_dev, libc_ino;
};

static int resolve_cb(const struct proc_map *m, void *arg)
{
	struct resolve_ctx *c = arg;
	const char *b;
	struct elf_file *ef;
	struct stat st;
	enum inject_fn_kind k;
	uint64_t off = 0;
	int fd;

	if (!proc_map_is_file(m))
		return 0;
	b = base_name(m->path);
	if (m->perms[2] == 'x' && (is_libc_name(b) || is_ldso_name(b)) &&
	    c->nunsafe < INJECT_UNSAFE_MAX) {
		c->unsafe_kind[c->nunsafe] = is_ldso_name(b) ? TEXT_LDSO : TEXT_LIBC;
		c->unsafe[c->nunsafe++] = (struct text_range){ m->start, m->end };
	}
	if (!is_libc_name(b) && !is_libdl_name(b))
		return 0;
	if (m->dev != c->dev || m->ino != c->ino) {
		c->dev = m->dev;
		c->ino = m->ino;
		c->prio = 0;
		fd = proc_map_open(c->pid, m, &st, NULL, 0);
		if (fd < 0)
			return 0;
		if (!elf_file_open_fd(fd, (uint64_t)st.st_size, &ef)) {
			k = inject_find_dlopen(ef, &off);
			if (k == INJECT_FN_DLOPEN)
				c->prio = is_libc_name(b) ? 3 : 2;
			else if (k == INJECT_FN_LIBC_DLOPEN_MODE && is_libc_name(b))
				c->prio = 1;
			c->off = off;
			elf_file_close(ef);
		}
		close(fd);
	}
	/* The executable mapping that holds the function. */
	if (c->prio > c->best && m->perms[2] == 'x' && c->off >= m->pgoff &&
	    c->off < m->pgoff + (m->end - m->start)) {
		c->best = c->prio;
		c->addr = m->start + (c->off - m->pgoff);
		c->mode = RTLD_NOW | RTLD_LOCAL;
		c->libc_text = (struct text_range){ m->start, m->end };
		c->libc_base = m->start - m->pgoff;
		c->libc_dev = m->dev;
		c->libc_ino = m->ino;
		snprintf(c->path, sizeof(c->path), "%s", m->path);
	}
	return 0;
}

/* 0 for a 64-bit x86 executable, -ENOEXEC otherwise. */
static int check_machine(pid_t pid)
{
	char path[64];
	Elf64_Ehdr eh;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &eh, sizeof(eh), 0);
	close(fd);
	if (n != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return -ENOEXEC;
	return 0;
}

/* Test builds: FVBPF_TEST_INJECT_STALL_MS keeps the target stopped that
 * long first; FVBPF_TEST_INJECT_ABANDON lets go of it as a killed worker
 * would, so the code in the target returns by itself. */
static void test_hooks(struct inject_job *job)
{
#ifdef FVBPF_TEST_HOOKS
	const char *e = getenv("FVBPF_TEST_INJECT_STALL_MS");

	job->stall_ms = e ? (unsigned int)strtoul(e, NULL, 10) : 0;
	job->abandon = getenv("FVBPF_TEST_INJECT_ABANDON") != NULL;
#else
	(void)job;
#endif
}

static int yama_scope(void)
{
	char buf[16];

	if (proc_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

/* Refused before anything is done: 0 when the process may be injected,
 * else -errno with the cause in info->why. */
static int inject_refusal(pid_t pid, struct inject_info *info)
{
	struct proc_status f;
	int err;

	if (proc_read_status(pid, 0, &f))
		return -ESRCH;
	if (f.tracer) {
		snprintf(info->why, sizeof(info->why), "it is already traced by PID %d (a debugger "
			 "or strace): detach that first", f.tracer);
		return -EBUSY;
	}
	if (f.state == 'T' || f.state == 't') {
		snprintf(info->why, sizeof(info->why), "it is stopped (state %c): continue it first",
			 f.state);
		return -EAGAIN;
	}
	if (f.state == 'Z' || f.state == 'X')
		return -ESRCH;
	/* Our syscalls (mmap, mprotect, rt_sigprocmask, dlopen's own) could
	 * be refused or kill it: a filter is the program's say. */
	if (f.seccomp) {
		snprintf(info->why, sizeof(info->why), "it runs under seccomp (%s): a call made in "
			 "it could be refused or kill it; not injected", f.seccomp == 1 ?
			 "strict mode" : "a syscall filter");
		return -EPERM;
	}
	err = check_machine(pid);
	if (err) {
		snprintf(info->why, sizeof(info->why), "%s", err == -ENOEXEC ? "it is not a 64-bit "
			 "x86 program" : "cannot read its executable");
		return err == -ENOEXEC ? -ENOEXEC : -ESRCH;
	}
	return 0;
}

/* The worker's report as the state and one line. */
static int inject_verdict(pid_t pid, int err, const struct inject_outcome *o,
			  struct inject_info *info)
{
	struct proc_status f;

	if (err == -ESRCH && proc_read_status(pid, 0, &f) == 0 && f.state != 'Z' && f.state != 'X') {
		err = -EIO;
		if (!info->why[0])
			snprintf(info->why, sizeof(info->why), "lost hold of the process during the "
				 "injection (it runs on)");
	}
	if (err == -EPERM || err == -EACCES) {
		info->state = INJECT_REFUSED;
		if (yama_scope() >= 2)
			snprintf(info->why, sizeof(info->why), "ptrace is not permitted "
				 "(kernel.yama.ptrace_scope=%d%s)", yama_scope(), yama_scope() >= 3 ?
				 ": no process may be traced until reboot" : ": needs CAP_SYS_PTRACE");
		else if (!info->why[0])
			snprintf(info->why, sizeof(info->why), "ptrace is not permitted (%s): run "
				 "fvbpf as root or with CAP_SYS_PTRACE", strerror(-err));
		return err;
	}
	info->state = INJECT_FAILED;
	if (err == -ESRCH) {
		snprintf(info->why, sizeof(info->why), "the process exited during the injection");
	} else if (!err && !o->handle) {
		snprintf(info->why, sizeof(info->why), "dlopen(\"%.100s\") returned NULL in the "
			 "target (a noexec mount, a missing dependency?)", o->target_path);
		err = -ENOEXEC;
	} else if (err) {
		if (!info->why[0])
			snprintf(info->why, sizeof(info->why), "%s", strerror(-err));
	} else {
		info->state = INJECT_INJECTED;
	}
	return err;
}

int inject_library(pid_t pid, const char *lib, double timeout_s, struct inject_info *info)
{
	struct resolve_ctx rc = { .pid = pid };
	struct inject_outcome *o = NULL;
	struct inject_job *job = NULL;
	int err;

	memset(info, 0, sizeof(*info));
	info->state = INJECT_REFUSED;
#ifndef __x86_64__
	snprintf(info->why, sizeof(info->why), "injection is implemented for x86-64 only");
	return -EOPNOTSUPP;
#endif
	err = inject_refusal(pid, info);
	if (err)
		return err;
	err = proc_maps_foreach(pid, resolve_cb, &rc);
	if (err)
		return -ESRCH;
	if (!rc.best) {
		snprintf(info->why, sizeof(info->why), "its libc has no usable dlopen (statically "
			 "linked, or not glibc)");
		return -ENOSYS;
	}
	job = calloc(1, sizeof(*job));
	o = calloc(1, sizeof(*o));
	if (!job || !o) {
		err = -ENOMEM;
		goto cleanup;
	}
	job->pid = pid;
	snprintf(job->lib, sizeof(job->lib), "%s", lib);
	job->fn = rc.addr;
	job->mode = rc.mode;
	memcpy(job->unsafe, rc.unsafe, sizeof(rc.unsafe));
	memcpy(job->unsafe_kind, rc.unsafe_kind, sizeof(rc.unsafe_kind));
	job->nunsafe = rc.nunsafe;
	job->libc_text = rc.libc_text;
	job->libc_base = rc.libc_base;
	job->libc_dev = rc.libc_dev;
	job->libc_ino = rc.libc_ino;
	job->timeout_s = timeout_s;
	test_hooks(job);
	err = inject_worker_run(job, o);
	if (err == -ETIMEDOUT) {
		info->state = INJECT_FAILED;
		snprintf(info->why, sizeof(info->why), "no word from the injection within %.1f s: "
			 "it goes on, and leaves the target as it was", timeout_s);
		goto cleanup;
	}
	if (err) {
		info->state = INJECT_FAILED;
		snprintf(info->why, sizeof(info->why), "cannot start the injection: %s",
			 strerror(-err));
		goto cleanup;
	}
	*info = o->info;
	err = inject_verdict(pid, o->err, o, info);
cleanup:
	free(job);
	free(o);
	return err;
}

int inject_find_library(const char *explicit_path, char *out, size_t len)
{
	static const char *const rel[] = { "libfvbpf.so", "../libfvbpf.so", "../lib/libfvbpf.so" };
	char exe[PATH_MAX], *slash;
	struct stat st;
	ssize_t n;
	size_t i;

	if (explicit_path) {
		if (stat(explicit_path, &st) || !S_ISREG(st.st_mode))
			return -ENOENT;
		snprintf(out, len, "%s", explicit_path);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(out, len, "%s/%s", exe, rel[i]) >= len)
			continue;
		if (!stat(out, &st) && S_ISREG(st.st_mode))
			return 0;
	}
	return -ENOENT;
}

static int cuda_map_cb(const struct proc_map *m, void *arg)
{
	const char *b = base_name(m->path);
	unsigned int *found = arg;

	if (!proc_map_is_file(m))
		return 0;
	if (!strncmp(b, "libcudart.so", 12))
		*found |= CUDA_MAPS_RUNTIME;
	else if (!strncmp(b, "libcuda.so", 10))
		*found |= CUDA_MAPS_DRIVER;
	else if (!strncmp(b, "libtorch_cuda.so", 16))
		*found |= CUDA_MAPS_TORCH;
	return 0;
}

unsigned int inject_cuda_maps(pid_t pid)
{
	unsigned int found = 0;

	proc_maps_foreach(pid, cuda_map_cb, &found);
	return found;
}
