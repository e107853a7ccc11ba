// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `fvbpf attach --inject`: load libfvbpf.so into a running process.
 *
 * The target's main thread is seized and interrupted (PTRACE_SEIZE,
 * PTRACE_INTERRUPT), its registers and extended FP state saved, and it is
 * made to call its own libc's dlopen() on a copy of the library placed in
 * its own filesystem (through /proc/PID/root, so another mount namespace
 * works), returning to address 0: the call ends in a SIGSEGV stop that we
 * catch.  Then every register is put back as it was (a syscall the thread
 * was blocked in restarts or returns EINTR exactly as without us) and the
 * thread is detached, with the signals that arrived meanwhile delivered.
 * The whole of it is bounded in time; whatever goes wrong, the target is
 * left running, as it was.
 *
 * The ptrace work runs on a thread of its own: a target in uninterruptible
 * sleep may not stop within the time allowed, and a tracee that stops
 * must be detached by its tracer thread, so that thread stays behind to
 * release it while the attach goes on without the agent.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf_file.h"
#include "elf_symbols.h"
#include "fvbpf_events.h"
#include "inject.h"
#include "log.h"
#include "proc_info.h"
#include "proc_maps.h"
#include "session.h"

#define INJECT_LIB_MAX (64u << 20)   /* bytes of libfvbpf.so we copy */
#define INJECT_MAX_SIGNALS 32
#define XSTATE_MAX (64u << 10)
/* Time a call must have left to be started (dlopen takes about 0.2 ms). */
#define INJECT_CALL_MIN_NS (50ULL * 1000000ULL)

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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- pure parts ---- */

int inject_frame_layout(const struct user_regs_struct *saved, uint64_t fn, size_t len, int mode,
			struct inject_frame *fr, struct user_regs_struct *call)
{
	uint64_t sp = saved->rsp, str;

	if (!len || len > PATH_MAX || sp < INJECT_RED_ZONE + len + 64)
		return -EINVAL;
	/* Below the red zone; the string 16-aligned, and the return address
	 * just below it, so that rsp + 8 is 16-aligned at the first
	 * instruction, as after a `call` from aligned code. */
	str = (sp - INJECT_RED_ZONE - len) & ~15ULL;
	fr->str_addr = str;
	fr->ret_addr = str - 8;
	fr->rsp = fr->ret_addr;
	fr->low = fr->ret_addr;
	*call = *saved;
	call->rip = fn;
	call->rdi = str;
	call->rsi = (unsigned long long)(unsigned int)mode;
	call->rsp = fr->rsp;
	call->rax = 0;
	/* Not in a syscall: no restart logic applies to our call. */
	call->orig_rax = (unsigned long long)-1;
	call->eflags &= ~((1ULL << 10) | (1ULL << 8)); /* DF (the ABI wants it clear), TF */
	return 0;
}

enum inject_fn_kind inject_find_dlopen(struct elf_file *ef, uint64_t *file_off)
{
	static const char *const names[] = { "dlopen", "__libc_dlopen_mode" };
	struct elf_sym_info out[2];

	elf_find_symbols(ef, names, 2, out);
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

struct text_range {
	uint64_t start, end;
};

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
	struct text_range unsafe[4];
	int nunsafe;
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
	if (m->perms[2] == 'x' && (is_libc_name(b) || is_ldso_name(b)) && c->nunsafe < 4)
		c->unsafe[c->nunsafe++] = (struct text_range){ m->start, m->end };
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
		snprintf(c->path, sizeof(c->path), "%s", m->path);
	}
	return 0;
}

static int read_tracer(pid_t pid, pid_t *tracer, char *state)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strstr(buf, "\nTracerPid:");
	*tracer = p ? (pid_t)atoi(p + 11) : 0;
	p = strstr(buf, "\nState:");
	*state = '?';
	if (p) {
		p += 7;
		while (*p == ' ' || *p == '\t')
			p++;
		*state = *p;
	}
	return 0;
}

/* Exited (a zombie counts: it runs nothing any more). */
static bool process_gone(pid_t pid)
{
	pid_t tracer;
	char state;

	return read_tracer(pid, &tracer, &state) || state == 'Z' || state == 'X';
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

/* ---- the copy in the target's filesystem ---- */

struct lib_copy {
	int dirfd;
	char name[80];
	char target_path[128];       /* as the target opens it */
};

static int open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n, w, done;

	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		total += (size_t)n;
		if (total > INJECT_LIB_MAX)
			return -EFBIG;
		for (done = 0; done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
		}
	}
}

/*
 * A copy of @lib in the first of /dev/shm, /tmp, /var/tmp, /run of the
 * target's filesystem that is writable and not mounted noexec (dlopen
 * maps it executable).  Symlinks resolve inside the target's root.
 */
static int lib_copy_make(pid_t pid, const char *lib, struct lib_copy *c, char *why, size_t wlen)
{
	static const char *const dirs[] = { "dev/shm", "tmp", "var/tmp", "run" };
	char root[64];
	struct statvfs sv;
	struct stat st;
	uint64_t rnd = 0;
	int rootfd, src, fd = -1, err = -ENOENT;
	size_t i;

	c->dirfd = -1;
	src = open(lib, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, wlen, "cannot read %.100s: %s", lib, strerror(src < 0 ? errno : EINVAL));
		if (src >= 0)
			close(src);
		return -ENOENT;
	}
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		err = -errno;
		snprintf(why, wlen, "cannot open %s: %s", root, strerror(errno));
		close(src);
		return err;
	}
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = mono_ns() ^ (uint64_t)getpid() << 32;
	snprintf(c->name, sizeof(c->name), "%s%d-%016llx.so", FVBPF_INJECT_PREFIX, pid,
		 (unsigned long long)rnd);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		c->dirfd = open_in_root(rootfd, dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c->dirfd < 0)
			continue;
		if (fstatvfs(c->dirfd, &sv) || (sv.f_flag & (ST_NOEXEC | ST_RDONLY))) {
			close(c->dirfd);
			c->dirfd = -1;
			continue;
		}
		fd = openat(c->dirfd, c->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0)
			break;
		close(c->dirfd);
		c->dirfd = -1;
	}
	close(rootfd);
	if (fd < 0) {
		snprintf(why, wlen, "no writable, executable directory (/dev/shm, /tmp, /var/tmp, "
			 "/run) in the target's filesystem for the library copy");
		close(src);
		return -ENOENT;
	}
	snprintf(c->target_path, sizeof(c->target_path), "/%s/%s", dirs[i], c->name);
	err = copy_fd(src, fd);
	if (!err && (fchmod(fd, 0644) || fsync(fd)))
		err = -errno;
	close(src);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		snprintf(why, wlen, "cannot copy %.80s into the target's %.100s: %s", lib, c->target_path,
			 strerror(-err));
		unlinkat(c->dirfd, c->name, 0);
		close(c->dirfd);
		c->dirfd = -1;
	}
	return err;
}

static void lib_copy_remove(struct lib_copy *c)
{
	if (c->dirfd < 0)
		return;
	unlinkat(c->dirfd, c->name, 0);
	close(c->dirfd);
	c->dirfd = -1;
}

/* ---- ptrace ---- */

struct hijack {
	pid_t pid;
	uint64_t fn;
	int mode;
	const char *path;             /* in the target */
	uint64_t deadline;            /* CLOCK_MONOTONIC */
	unsigned int stall_ms;        /* test builds: stop this long before the call */
	struct text_range unsafe[4];
	int nunsafe;
	/* results */
	int err;
	uint64_t handle;
	struct inject_info info;
	int sigs[INJECT_MAX_SIGNALS];
	int nsigs;
	/* hand-over between the caller and the tracer thread */
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done, abandoned;
};

static void note_signal(struct hijack *h, int sig)
{
	int i;

	h->info.signals++;
	for (i = 0; i < h->nsigs; i++)
		if (h->sigs[i] == sig && sig < SIGRTMIN)
			return; /* a standard signal pending twice is one */
	if (h->nsigs < INJECT_MAX_SIGNALS)
		h->sigs[h->nsigs++] = sig;
}

enum wait_result { W_STATUS = 1, W_TIMEOUT = 0 };

/* A state change of the tracee before @deadline (0: none): W_STATUS with
 * *status, W_TIMEOUT, or -ESRCH when it is gone. */
static int wait_tracee(pid_t pid, int *status, uint64_t deadline)
{
	unsigned int spins = 0;
	struct timespec ts = { 0, 50000 };
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, __WALL | (deadline ? WNOHANG : 0));
		if (r == pid) {
			if (WIFEXITED(*status) || WIFSIGNALED(*status))
				return -ESRCH;
			return W_STATUS;
		}
		if (r < 0 && errno != EINTR)
			return -ESRCH; /* ECHILD: no longer ours to wait for */
		if (deadline && mono_ns() >= deadline)
			return W_TIMEOUT;
		if (spins++ < 100)
			sched_yield();
		else
			nanosleep(&ts, NULL);
	}
}

/* Wait for the stop PTRACE_INTERRUPT asked for, passing signals by (they
 * are delivered at detach).  0, -ETIMEDOUT, -ESRCH, -EAGAIN (job-control
 * stop: the process is stopped, leave it so). */
static int wait_interrupt_stop(struct hijack *h, uint64_t deadline)
{
	int status, r, sig;

	for (;;) {
		r = wait_tracee(h->pid, &status, deadline);
		if (r < 0)
			return r;
		if (r == W_TIMEOUT)
			return -ETIMEDOUT;
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				return -EAGAIN;
			return 0;
		}
		/* A signal-delivery-stop: keep it for later, run on to our stop. */
		note_signal(h, sig);
		if (ptrace(PTRACE_CONT, h->pid, 0, 0))
			return -ESRCH;
	}
}

static bool in_unsafe_code(const struct hijack *h, const struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;
	int i;

	/* In a syscall: malloc and the loader may hold their locks in these. */
	if (nr >= 0)
		return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mremap || nr == SYS_brk ||
		       nr == SYS_mprotect || nr == SYS_madvise;
	/* In user code of libc or the loader: perhaps holding their locks. */
	for (i = 0; i < h->nunsafe; i++)
		if (r->rip >= h->unsafe[i].start && r->rip < h->unsafe[i].end)
			return true;
	return false;
}

static int write_frame(pid_t pid, const struct inject_frame *fr, const char *path, size_t len)
{
	size_t total = (size_t)(fr->str_addr - fr->low) + len;
	char buf[PATH_MAX + 32];
	struct iovec local = { buf, total }, remote = { (void *)(uintptr_t)fr->low, total };

	if (total > sizeof(buf))
		return -ENAMETOOLONG;
	memset(buf, 0, total);
	memcpy(buf + (fr->str_addr - fr->low), path, len);
	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)total ? 0 : -EFAULT;
}

static void stall(const struct hijack *h)
{
	uint64_t until = mono_ns() + (uint64_t)h->stall_ms * 1000000ULL;
	struct timespec ts = { 0, 1000000 };

	while (mono_ns() < until && mono_ns() < h->deadline)
		nanosleep(&ts, NULL);
}

/*
 * The call itself, the thread stopped and its state saved: 0 with
 * h->handle, or -errno (the caller restores).
 */
static int run_call(struct hijack *h, const struct user_regs_struct *saved)
{
	struct user_regs_struct call, r;
	struct inject_frame fr;
	size_t len = strlen(h->path) + 1;
	int status, w, sig, err;

	err = inject_frame_layout(saved, h->fn, len, h->mode, &fr, &call);
	if (err) {
		snprintf(h->info.why, sizeof(h->info.why), "the main thread's stack pointer "
			 "(0x%llx) leaves no room for the call", (unsigned long long)saved->rsp);
		return err;
	}
	err = write_frame(h->pid, &fr, h->path, len);
	if (err) {
		snprintf(h->info.why, sizeof(h->info.why), "cannot write the call's frame below the "
			 "main thread's stack pointer 0x%llx", (unsigned long long)saved->rsp);
		return err;
	}
	if (ptrace(PTRACE_SETREGS, h->pid, 0, &call) || ptrace(PTRACE_CONT, h->pid, 0, 0))
		return -ESRCH;
	for (;;) {
		w = wait_tracee(h->pid, &status, h->deadline);
		if (w < 0)
			return w;
		if (w == W_TIMEOUT) {
			snprintf(h->info.why, sizeof(h->info.why), "dlopen() in the target did not "
				 "return in time (--inject-timeout): abandoned and the thread restored; "
				 "if it held the loader's lock, the job's next dlopen may block");
			if (ptrace(PTRACE_INTERRUPT, h->pid, 0, 0))
				return -ESRCH;
			/* It stops at once unless in uninterruptible sleep: no deadline. */
			err = wait_interrupt_stop(h, 0);
			return err ? err : -ETIMEDOUT;
		}
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (ptrace(PTRACE_CONT, h->pid, 0, 0))
				return -ESRCH;
			continue;
		}
		if (sig == SIGSEGV) {
			if (ptrace(PTRACE_GETREGS, h->pid, 0, &r))
				return -ESRCH;
			if (r.rip == 0) {
				h->handle = r.rax;
				return 0;
			}
			snprintf(h->info.why, sizeof(h->info.why), "dlopen() in the target faulted at "
				 "0x%llx: the thread restored", (unsigned long long)r.rip);
			return -EFAULT;
		}
		note_signal(h, sig);
		if (ptrace(PTRACE_CONT, h->pid, 0, 0))
			return -ESRCH;
	}
}

/*
 * Linux fails a few waits with EINTR after any stop of the thread, even
 * without a signal handler (signal(7): epoll_wait and its variants): a
 * program that was blocked in one would see an error that only our stop
 * caused.  When no signal came meanwhile, such a wait is restarted as
 * though never interrupted (a finite timeout starts again).  1 when
 * @r was changed.
 */
int inject_restart_eintr(struct user_regs_struct *r, const uint8_t insn[2])
{
	long nr = (long)r->orig_rax;

	if ((long long)r->rax != -EINTR || insn[0] != 0x0f || insn[1] != 0x05)
		return 0;
	if (nr != SYS_epoll_wait && nr != SYS_epoll_pwait && nr != SYS_epoll_pwait2)
		return 0;
	r->rax = r->orig_rax;
	r->rip -= 2;
	return 1;
}

static void restore_regs(struct hijack *h, const struct user_regs_struct *saved)
{
	struct user_regs_struct r = *saved;
	uint8_t insn[2] = { 0, 0 };
	struct iovec local = { insn, 2 }, remote = { (void *)(uintptr_t)(saved->rip - 2), 2 };

	if (!h->nsigs && (long long)saved->rax == -EINTR && (long)saved->orig_rax >= 0 &&
	    process_vm_readv(h->pid, &local, 1, &remote, 1, 0) == 2 && inject_restart_eintr(&r, insn))
		h->info.restarted = true;
	ptrace(PTRACE_SETREGS, h->pid, 0, &r);
}

/* Put the saved state back and let go: the signals that came meanwhile
 * are delivered now, the first through the detach itself. */
static void restore_and_detach(struct hijack *h, const struct user_regs_struct *saved,
			       struct iovec *xs, bool have_regs)
{
	int i, first = 0;

	if (have_regs) {
		restore_regs(h, saved);
		if (xs->iov_len)
			ptrace(PTRACE_SETREGSET, h->pid, (void *)NT_X86_XSTATE, xs);
	}
	for (i = 0; i < h->nsigs; i++) {
		if (!first) {
			first = h->sigs[i];
			continue;
		}
		syscall(SYS_tgkill, h->pid, h->pid, h->sigs[i]);
	}
	ptrace(PTRACE_DETACH, h->pid, 0, (void *)(uintptr_t)first);
}

static void hijack_run(struct hijack *h)
{
	struct user_regs_struct saved;
	struct iovec xs = { NULL, 0 };
	uint64_t t0, now;
	int err;

	if (ptrace(PTRACE_SEIZE, h->pid, 0, 0)) {
		h->err = -errno;
		return;
	}
	xs.iov_base = malloc(XSTATE_MAX);
	for (;;) {
		t0 = mono_ns();
		if (!h->info.wallclock_ns) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			h->info.wallclock_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		}
		h->info.tries++;
		if (ptrace(PTRACE_INTERRUPT, h->pid, 0, 0)) {
			err = -ESRCH;
			break;
		}
		err = wait_interrupt_stop(h, h->deadline);
		if (err == -ETIMEDOUT) {
			/* Release it once it stops, however long that takes. */
			h->err = err;
			snprintf(h->info.why, sizeof(h->info.why), "the target did not stop in time "
				 "(uninterruptible sleep?): released when it stops");
			err = wait_interrupt_stop(h, 0);
			if (!err)
				restore_and_detach(h, &saved, &xs, false);
			h->info.stopped_ns += mono_ns() - t0;
			goto out;
		}
		if (err == -EAGAIN) {
			snprintf(h->info.why, sizeof(h->info.why), "the target is stopped (job "
				 "control): left stopped, nothing loaded");
			restore_and_detach(h, &saved, &xs, false);
			h->info.stopped_ns += mono_ns() - t0;
			break;
		}
		if (err)
			break;
		if (ptrace(PTRACE_GETREGS, h->pid, 0, &saved)) {
			err = -ESRCH;
			break;
		}
		xs.iov_len = xs.iov_base ? XSTATE_MAX : 0;
		if (xs.iov_len && ptrace(PTRACE_GETREGSET, h->pid, (void *)NT_X86_XSTATE, &xs))
			xs.iov_len = 0;
		now = mono_ns();
		if (!in_unsafe_code(h, &saved) || now >= h->deadline) {
			if (in_unsafe_code(h, &saved)) {
				err = -EBUSY;
				snprintf(h->info.why, sizeof(h->info.why), "the main thread was always "
					 "inside libc or the loader when stopped (their locks): not loaded");
				restore_and_detach(h, &saved, &xs, true);
				h->info.stopped_ns += mono_ns() - t0;
				break;
			}
			if (h->stall_ms)
				stall(h);
			/* Never start a call that could not finish in time. */
			if (mono_ns() + INJECT_CALL_MIN_NS > h->deadline) {
				err = -ETIMEDOUT;
				snprintf(h->info.why, sizeof(h->info.why), "out of time before the "
					 "call (--inject-timeout): nothing loaded");
				restore_and_detach(h, &saved, &xs, true);
				h->info.stopped_ns += mono_ns() - t0;
				break;
			}
			err = run_call(h, &saved);
			/* Whatever failed, a live thread gets its state back; one that
			 * still runs our call is stopped first. */
			if (err == -ESRCH && !process_gone(h->pid) &&
			    !ptrace(PTRACE_INTERRUPT, h->pid, 0, 0))
				wait_interrupt_stop(h, mono_ns() + 1000000000ULL); /* may be stopped already */
			if (!process_gone(h->pid))
				restore_and_detach(h, &saved, &xs, true);
			h->info.stopped_ns += mono_ns() - t0;
			break;
		}
		/* Inside libc or the loader: let it run on a little and retry. */
		if (ptrace(PTRACE_CONT, h->pid, 0, 0)) {
			err = -ESRCH;
			break;
		}
		h->info.stopped_ns += mono_ns() - t0;
		{
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
	}
	h->err = err;
out:
	free(xs.iov_base);
}

static void *hijack_thread(void *arg)
{
	struct hijack *h = arg;
	bool abandoned;

	hijack_run(h);
	pthread_mutex_lock(&h->lock);
	h->done = true;
	abandoned = h->abandoned;
	pthread_cond_signal(&h->done_cond);
	pthread_mutex_unlock(&h->lock);
	if (abandoned) {
		free((void *)h->path);
		free(h);
	}
	return NULL;
}

static unsigned int test_stall_ms(void)
{
#ifdef FVBPF_TEST_HOOKS
	const char *e = getenv("FVBPF_TEST_INJECT_STALL_MS");

	return e ? (unsigned int)strtoul(e, NULL, 10) : 0;
#else
	return 0;
#endif
}

static int yama_scope(void)
{
	char buf[16];

	if (proc_read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)) <= 0)
		return -1;
	return atoi(buf);
}

int inject_library(pid_t pid, const char *lib, double timeout_s, struct inject_info *info)
{
	struct resolve_ctx rc = { .pid = pid };
	struct lib_copy copy = { .dirfd = -1 };
	struct hijack *h = NULL;
	struct timespec until;
	pthread_attr_t attr;
	pthread_t th;
	pid_t tracer;
	char state;
	bool done;
	int err;

	memset(info, 0, sizeof(*info));
	info->state = INJECT_REFUSED;
#ifndef __x86_64__
	snprintf(info->why, sizeof(info->why), "injection is implemented for x86-64 only");
	return -EOPNOTSUPP;
#endif
	if (read_tracer(pid, &tracer, &state))
		return -ESRCH;
	if (tracer) {
		snprintf(info->why, sizeof(info->why), "it is already traced by PID %d (a debugger "
			 "or strace): detach that first", tracer);
		return -EBUSY;
	}
	if (state == 'T' || state == 't') {
		snprintf(info->why, sizeof(info->why), "it is stopped (state %c): continue it first",
			 state);
		return -EAGAIN;
	}
	if (state == 'Z' || state == 'X')
		return -ESRCH;
	err = check_machine(pid);
	if (err) {
		snprintf(info->why, sizeof(info->why), "%s", err == -ENOEXEC ? "it is not a 64-bit "
			 "x86 program" : "cannot read its executable");
		return err == -ENOEXEC ? -ENOEXEC : -ESRCH;
	}
	err = proc_maps_foreach(pid, resolve_cb, &rc);
	if (err)
		return -ESRCH;
	if (!rc.best) {
		snprintf(info->why, sizeof(info->why), "its libc has no usable dlopen (statically "
			 "linked, or not glibc)");
		return -ENOSYS;
	}
	err = lib_copy_make(pid, lib, &copy, info->why, sizeof(info->why));
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h) {
		lib_copy_remove(&copy);
		return -ENOMEM;
	}
	h->pid = pid;
	h->fn = rc.addr;
	h->mode = rc.mode;
	h->deadline = mono_ns() + (uint64_t)(timeout_s * 1e9);
	h->stall_ms = test_stall_ms();
	memcpy(h->unsafe, rc.unsafe, sizeof(rc.unsafe));
	h->nunsafe = rc.nunsafe;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->done_cond, NULL);
	h->path = strdup(copy.target_path);
	if (!h->path) {
		free(h);
		lib_copy_remove(&copy);
		return -ENOMEM;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&th, &attr, hijack_thread, h);
	pthread_attr_destroy(&attr);
	if (err) {
		free((void *)h->path);
		free(h);
		lib_copy_remove(&copy);
		return -err;
	}
	/* The thread keeps its own deadline; this one only guards against a
	 * target that never stops (uninterruptible sleep). */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)timeout_s + 1;
	pthread_mutex_lock(&h->lock);
	while (!h->done && pthread_cond_timedwait(&h->done_cond, &h->lock, &until) != ETIMEDOUT)
		;
	done = h->done;
	if (!done)
		h->abandoned = true; /* the thread frees it */
	else
		*info = h->info;
	pthread_mutex_unlock(&h->lock);
	if (!done) {
		info->state = INJECT_FAILED;
		snprintf(info->why, sizeof(info->why), "the target did not stop within %.1f s "
			 "(uninterruptible sleep?): it is released as soon as it stops", timeout_s);
		/* Past its deadline the thread makes no call: the copy can go. */
		lib_copy_remove(&copy);
		return -ETIMEDOUT;
	}
	err = h->err;
	if (err && process_gone(pid))
		err = -ESRCH;
	if (err == -EPERM || err == -EACCES) {
		info->state = INJECT_REFUSED;
		if (yama_scope() >= 2)
			snprintf(info->why, sizeof(info->why), "ptrace is not permitted "
				 "(kernel.yama.ptrace_scope=%d%s)", yama_scope(), yama_scope() >= 3 ?
				 ": no process may be traced until reboot" : ": needs CAP_SYS_PTRACE");
		else
			snprintf(info->why, sizeof(info->why), "ptrace is not permitted (%s): run "
				 "fvbpf as root or with CAP_SYS_PTRACE", strerror(-err));
	} else if (err == -ESRCH) {
		info->state = INJECT_FAILED;
		snprintf(info->why, sizeof(info->why), "the process exited during the injection");
	} else if (!err && !h->handle) {
		info->state = INJECT_FAILED;
		snprintf(info->why, sizeof(info->why), "dlopen(\"%.100s\") returned NULL in the target "
			 "(a noexec mount, a seccomp filter, a missing dependency?)", h->path);
		err = -ENOEXEC;
	} else if (err) {
		info->state = INJECT_FAILED;
		if (!info->why[0])
			snprintf(info->why, sizeof(info->why), "%s", strerror(-err));
	} else {
		info->state = INJECT_INJECTED;
	}
	lib_copy_remove(&copy);
	free((void *)h->path);
	free(h);
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

/* ---- target_open()'s calls ---- */

void inject_for_target(struct session *s, struct session_target *t, pid_t pid)
{
	struct inject_info *info = &t->proc.inject;
	struct marker_lib *m;
	int err;

	if (!s->inject)
		return;
	m = malloc(sizeof(*m));
	if (!m)
		return;
	err = proc_find_marker_lib(pid, m);
	free(m);
	if (!err) {
		memset(info, 0, sizeof(*info));
		info->state = INJECT_REUSED;
		log_info("PID %d (%s): libfvbpf.so already loaded, nothing injected (reused)", pid,
			 t->proc.comm);
		return;
	}
	if (err != -ENOENT)
		return; /* gone or unreadable: target_open() says so */
	err = inject_library(pid, s->inject_lib, s->inject_timeout_s, info);
	if (!err) {
		log_info("PID %d (%s): libfvbpf.so injected, the target stopped %llu us", pid,
			 t->proc.comm, (unsigned long long)(info->stopped_ns / 1000));
		return;
	}
	if (err == -ESRCH && !info->why[0])
		return; /* exited before anything: target_open() says so */
	log_warn("PID %d (%s): --inject %s: %s; attaching without the agent", pid, t->proc.comm,
		 info->state == INJECT_REFUSED ? "refused" : "failed",
		 info->why[0] ? info->why : strerror(-err));
}

static int cuda_map_cb(const struct proc_map *m, void *arg)
{
	const char *b = base_name(m->path);
	bool *found = arg;

	if (proc_map_is_file(m) && (!strncmp(b, "libcudart.so", 12) || !strncmp(b, "libcuda.so", 10)))
		*found = true;
	return *found;
}

void inject_hint(struct session *s, struct session_target *t)
{
	bool found = false;

	if (s->inject || t->has_markers)
		return;
	proc_maps_foreach(t->proc.pid, cuda_map_cb, &found);
	if (found)
		log_info("PID %d (%s) maps CUDA but has no fvbpf agent: no GPU time; add --inject "
			 "to load it without a restart (stops the process for about a millisecond)",
			 t->proc.pid, t->proc.comm);
}
