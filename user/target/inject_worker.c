// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * `--inject`'s ptrace work, in a process of its own (inject_worker.h).
 *
 * The target's main thread is seized and interrupted at a place where it
 * holds none of libc's or the loader's locks.  Two syscalls run in it from
 * a `syscall` instruction of its libc: an mmap for our code, stack and
 * state, then an mprotect making the code executable.  The thread is then
 * started on that code (inject_tramp.h), which blocks signals, calls
 * dlopen on its own stack and waits; the worker stops it there and puts
 * back its registers and signal mask, so the kernel restarts the syscall
 * it was in and delivers what arrived meanwhile, with its siginfo, as if
 * nothing had happened.
 *
 * Signals that come while the thread is stopped at its own place are
 * passed on at once (PTRACE_CONT with the signal keeps its siginfo).  One
 * that comes while the thread is set up for one of our syscalls finds it
 * not yet run (or run): the thread gets its own registers back first and
 * the signal is delivered there, and we start over.
 *
 * Every moment the thread runs our code it can finish alone: if the
 * worker dies, the code restores the thread itself after a short wait.
 * Only the two single syscalls run with registers the thread cannot
 * return from without us: microseconds, in a process no terminal signal
 * reaches.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target/inject_copy.h"
#include "target/inject_tramp.h"
#include "target/inject_worker.h"
#include "target/proc_info.h"

/* Time a call must have left to be started (dlopen takes about 0.2 ms). */
#define CALL_MIN_NS (50ULL * 1000000ULL)
/* How long the code waits for us at the end before it returns alone. */
#define TRAMP_SPINS 250u
/* After a report of a dlopen still running: how long we stay to restore
 * the thread ourselves, before leaving that to the code. */
#define LINGER_NS (60ULL * 1000000000ULL)
/* Stops at an unsafe place: retried after 0.2 ms, doubling up to 50 ms. */
#define RETRY_MIN_NS 200000ULL
#define RETRY_MAX_NS 50000000ULL

struct worker {
	const struct inject_job *job;
	struct inject_outcome *out;
	int report_fd;
	pid_t pid;
	uint64_t deadline;
	uint64_t gadget;              /* a `syscall` instruction in the target */
	struct tramp_layout lo;
	struct tramp_params tp;
	bool mapped, code_rx, stalled;
	bool in_handler;              /* a signal was passed on before this stop */
	uint64_t restorer;            /* glibc's __restore_rt in the target, 0: unknown */
	struct iovec xstate;          /* the thread's FP state at its place */
	uint64_t stop_t0;             /* when the current stop began */
	struct user_regs_struct saved;  /* the thread at its own place */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void why(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->out->info.why, sizeof(w->out->info.why), fmt, ap);
	va_end(ap);
}

/* The one report to fvbpf (it may be gone: then nobody reads it). */
static void report(struct worker *w)
{
	const char *p = (const char *)w->out;
	size_t done = 0;
	ssize_t n;

	if (w->report_fd < 0)
		return;
	while (done < sizeof(*w->out)) {
		n = write(w->report_fd, p + done, sizeof(*w->out) - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	close(w->report_fd);
	w->report_fd = -1;
}

/* ---- the target ---- */

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static char proc_state(pid_t pid)
{
	char path[64], buf[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return 'X';
	p = strstr(buf, "\nState:");
	if (!p)
		return '?';
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p;
}

/* A hexadecimal field of /proc/PID/task/PID/status (SigPnd, ShdPnd, SigBlk). */
static uint64_t status_hex(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* Signals pending for the main thread (its own and the process's). */
static uint64_t pending_signals(pid_t pid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	return status_hex(buf, "\nSigPnd:") | status_hex(buf, "\nShdPnd:");
}

static bool gone(pid_t pid)
{
	char s = proc_state(pid);

	return s == 'X' || s == 'Z';
}

/* The process still runs but its memory is not what it was: it exec'd. */
static bool execd(const struct worker *w)
{
	uint8_t insn[2];

	if (!w->gadget || gone(w->pid))
		return false;
	return read_mem(w->pid, w->gadget, insn, 2) || insn[0] != 0x0f || insn[1] != 0x05;
}

/* A `syscall` instruction in the target's libc text (any 0f 05 decodes so). */
static int find_gadget(struct worker *w)
{
	const struct text_range *t = &w->job->libc_text;
	unsigned char buf[65536];
	uint64_t at = t->start, n;
	size_t i;

	while (at < t->end && at - t->start < (4u << 20)) {
		n = t->end - at < sizeof(buf) ? t->end - at : sizeof(buf);
		if (read_mem(w->pid, at, buf, (size_t)n))
			return -EFAULT;
		for (i = 0; i + 1 < n; i++)
			if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
				w->gadget = at + i;
				return 0;
			}
		at += n - 1;
	}
	return -ENOENT;
}

static void xsave_caps(struct tramp_params *tp, uint32_t *size)
{
	unsigned int a, b, c, d;

	tp->xsave = false;
	*size = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)))
		return;
	if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d) || !b)
		return;
	tp->xsave = true;
	/* x87, SSE, AVX, MPX, AVX-512: what libc and a library's start-up
	 * may touch; AMX tiles (whose use the kernel traps) are left alone. */
	tp->xmask = 0xff;
	*size = b;
}

/* ---- ptrace ---- */

enum { W_TIMEOUT = 0, W_STATUS = 1 };

/* A state change of the tracee before @deadline (0: none): W_STATUS,
 * W_TIMEOUT, or -ESRCH when it is gone or no longer ours. */
static int wait_tracee(pid_t pid, int *status, uint64_t deadline)
{
	unsigned int spins = 0;
	pid_t r;

	for (;;) {
		r = waitpid(pid, status, __WALL | (deadline ? WNOHANG : 0));
		if (r == pid)
			return WIFEXITED(*status) || WIFSIGNALED(*status) ? -ESRCH : W_STATUS;
		if (r < 0 && errno != EINTR)
			return -ESRCH;
		if (deadline && mono_ns() >= deadline)
			return W_TIMEOUT;
		if (spins++ < 100)
			sched_yield();
		else
			sleep_ns(50000);
	}
}

static bool job_control(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * Interrupt the thread and wait for that stop before @deadline, passing
 * on the signals that come first.  0, -ETIMEDOUT, -EAGAIN (a job-control
 * stop), -ENOEXEC (exec), -ESRCH.
 */
static int stop_thread(struct worker *w, uint64_t deadline)
{
	int status, r, sig, ev;

	w->in_handler = false;
	if (ptrace(PTRACE_INTERRUPT, w->pid, 0, 0))
		return -ESRCH;
	for (;;) {
		r = wait_tracee(w->pid, &status, deadline);
		if (r < 0)
			return r;
		if (r == W_TIMEOUT)
			return -ETIMEDOUT;
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		ev = status >> 16;
		if (ev == PTRACE_EVENT_EXEC)
			return -ENOEXEC;
		if (ev == PTRACE_EVENT_STOP) {
			w->stop_t0 = mono_ns();
			return job_control(sig) ? -EAGAIN : 0;
		}
		if (ev || sig == (SIGTRAP | 0x80)) {
			sig = 0;
		} else {
			w->out->info.signals++;
			/* Our stop then comes at its handler's first instruction,
			 * whatever code (malloc?) the signal interrupted. */
			w->in_handler = true;
		}
		/* Delivered now, at the thread's own place, with its siginfo. */
		if (ptrace(PTRACE_CONT, w->pid, 0, (void *)(uintptr_t)sig))
			return -ESRCH;
	}
}

static void account_stop(struct worker *w)
{
	if (w->stop_t0)
		w->out->info.stopped_ns += mono_ns() - w->stop_t0;
	w->stop_t0 = 0;
}

/* The two bytes before @rip (zeros when unreadable). */
static void insn_before(const struct worker *w, uint64_t rip, uint8_t insn[2])
{
	if (rip < 2 || read_mem(w->pid, rip - 2, insn, 2))
		insn[0] = insn[1] = 0;
}

/* Let go of a stopped thread with its registers as they are. */
static void detach(struct worker *w)
{
	account_stop(w);
	ptrace(PTRACE_DETACH, w->pid, 0, 0);
}

/*
 * Give the stopped thread its own registers back and deliver @sig there:
 * it runs on as if stopped for nothing.
 */
static int back_and_deliver(struct worker *w, int sig)
{
	account_stop(w);
	if (ptrace(PTRACE_SETREGS, w->pid, 0, &w->saved))
		return -ESRCH;
	w->out->info.signals++;
	if (ptrace(PTRACE_CONT, w->pid, 0, (void *)(uintptr_t)sig))
		return -ESRCH;
	return -EINTR;
}

/*
 * Back at its place from a stop: the mask first (a worker killed between
 * the two leaves the thread's own code running with its own mask), then
 * the registers, a wait our stop failed with EINTR run again unless a
 * signal is pending that would fail it anyway.  @mask: NULL to leave it.
 */
static int put_back(struct worker *w, const uint64_t *mask)
{
	struct user_regs_struct back;
	uint8_t insn[2];
	uint64_t blocked = mask ? *mask : 0;

	if (mask && ptrace(PTRACE_SETSIGMASK, w->pid, sizeof(*mask), mask))
		return -ESRCH;
	insn_before(w, w->saved.rip, insn);
	if (!mask)
		ptrace(PTRACE_GETSIGMASK, w->pid, sizeof(blocked), &blocked);
	if (pending_signals(w->pid) & ~blocked)
		back = w->saved;
	else
		w->out->info.restarted = tramp_ptrace_regs(&w->saved, insn, &back);
	return ptrace(PTRACE_SETREGS, w->pid, 0, &back) ? -ESRCH : 0;
}

/*
 * Run syscall @nr in the stopped thread, at w->gadget: 0 with *@ret and
 * the thread stopped on the syscall's way out; -EINTR when a signal came
 * (the thread is back at its place and got it; *@ran says whether the
 * syscall ran, *@ret its result); -EAGAIN (job-control stop, thread back
 * at its place and stopped); -ENOEXEC; -ESRCH.
 */
static int remote_syscall(struct worker *w, long nr, const uint64_t a[6], uint64_t *ret, bool *ran)
{
	struct user_regs_struct r = w->saved;
	struct __ptrace_syscall_info si;
	int status, wr, ev, sig;

	*ran = false;
	r.rip = w->gadget;
	r.rax = (unsigned long long)nr;
	r.orig_rax = (unsigned long long)-1;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.r10 = a[3];
	r.r8 = a[4];
	r.r9 = a[5];
	r.eflags &= ~((1ULL << 8) | (1ULL << 10));
	if (ptrace(PTRACE_SETREGS, w->pid, 0, &r) || ptrace(PTRACE_SYSCALL, w->pid, 0, 0))
		return -ESRCH;
	for (;;) {
		wr = wait_tracee(w->pid, &status, 0);
		if (wr < 0)
			return wr;
		if (!WIFSTOPPED(status))
			continue;
		sig = WSTOPSIG(status);
		ev = status >> 16;
		if (sig == (SIGTRAP | 0x80)) {
			if (ptrace(PTRACE_GET_SYSCALL_INFO, w->pid, sizeof(si), &si) <= 0)
				return -ESRCH;
			if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
				*ran = true;
				*ret = (uint64_t)si.exit.rval;
				return 0;
			}
			if (ptrace(PTRACE_SYSCALL, w->pid, 0, 0))
				return -ESRCH;
			continue;
		}
		if (ev == PTRACE_EVENT_EXEC)
			return -ENOEXEC;
		if (ptrace(PTRACE_GETREGS, w->pid, 0, &r))
			return -ESRCH;
		if (r.rip == w->gadget + 2) {
			*ran = true;
			*ret = r.rax;
		}
		if (ev == PTRACE_EVENT_STOP) {
			if (!job_control(sig)) {
				if (ptrace(PTRACE_SYSCALL, w->pid, 0, 0))
					return -ESRCH;
				continue;
			}
			ptrace(PTRACE_SETREGS, w->pid, 0, &w->saved);
			return -EAGAIN;
		}
		return back_and_deliver(w, ev ? 0 : sig);
	}
}

static bool in_text(const struct worker *w, uint64_t rip, enum text_kind kind)
{
	int i;

	for (i = 0; i < w->job->nunsafe; i++)
		if (w->job->unsafe_kind[i] == kind && rip >= w->job->unsafe[i].start &&
		    rip < w->job->unsafe[i].end)
			return true;
	return false;
}

/* Where programs wait, which glibc does not enter holding a lock dlopen
 * or malloc needs (a thread waiting for such a lock holds none). */
static bool blocking_wait(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_readv: case SYS_pread64: case SYS_preadv:
	case SYS_recvfrom: case SYS_recvmsg: case SYS_recvmmsg: case SYS_sendto:
	case SYS_sendmsg: case SYS_accept: case SYS_accept4: case SYS_connect:
	case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_epoll_pwait2:
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_futex:
	case SYS_wait4: case SYS_waitid: case SYS_pause: case SYS_rt_sigsuspend:
	case SYS_rt_sigtimedwait: case SYS_semop: case SYS_semtimedop:
	case SYS_msgrcv: case SYS_msgsnd: case SYS_io_getevents: case SYS_io_pgetevents:
	case SYS_io_uring_enter: case SYS_flock: case SYS_fcntl:
		return true;
	default:
		return false;
	}
}

static bool in_unsafe_code(const struct worker *w, const struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;

	if (nr >= 0) {
		/* The loader's own syscalls run under its lock; libc's others
		 * (fork's clone, malloc_stats' write, malloc's mmap) may too. */
		if (in_text(w, r->rip, TEXT_LDSO))
			return true;
		return in_text(w, r->rip, TEXT_LIBC) && !blocking_wait(nr);
	}
	/* In user code of libc or the loader: perhaps holding their locks. */
	return in_text(w, r->rip, TEXT_LIBC) || in_text(w, r->rip, TEXT_LDSO);
}

/* A wait with a temporary signal mask (sigsuspend, ppoll, pselect,
 * epoll_pwait): the first resume puts the thread's own mask back, and a
 * pending signal the temporary one held would then be delivered. */
static bool temp_mask_exposed(const struct worker *w, const struct user_regs_struct *r)
{
	long nr = (long)r->orig_rax;
	uint64_t arg;

	switch (nr) {
	case SYS_rt_sigsuspend: arg = r->rdi; break;
	case SYS_ppoll: arg = r->r10; break;
	case SYS_pselect6: arg = r->r9; break;
	case SYS_epoll_pwait: case SYS_epoll_pwait2: arg = r->r8; break;
	default: return false;
	}
	return arg && pending_signals(w->pid);
}

/* Inside an rseq critical section: our detour would make the kernel
 * forget it, and the section would resume without its abort. */
static bool in_rseq_cs(const struct worker *w, const struct user_regs_struct *r)
{
	struct { uint64_t ptr; uint32_t size, sig, flags, pad; } conf;
	struct { uint32_t version, flags; uint64_t start, post_commit, abort; } cs;
	uint64_t cs_ptr;

	if (ptrace(0x420f /* PTRACE_GET_RSEQ_CONFIGURATION */, w->pid, sizeof(conf), &conf) <= 0 ||
	    !conf.ptr || read_mem(w->pid, conf.ptr + 8, &cs_ptr, sizeof(cs_ptr)) || !cs_ptr ||
	    read_mem(w->pid, cs_ptr, &cs, sizeof(cs)))
		return false;
	return r->rip >= cs.start && r->rip - cs.start < cs.post_commit;
}

/* glibc's __restore_rt in the target, through our own libc when the
 * target maps the same file: every handler glibc installs returns there. */
static void find_restorer(struct worker *w)
{
	struct { uint64_t handler, flags, restorer, mask; } k;
	struct stat st;
	Dl_info di;

	if (syscall(SYS_rt_sigaction, SIGINT, NULL, &k, 8) || !k.restorer ||
	    !dladdr((void *)(uintptr_t)k.restorer, &di) || !di.dli_fname ||
	    stat(di.dli_fname, &st) || (unsigned long long)st.st_dev != w->job->libc_dev ||
	    (unsigned long long)st.st_ino != w->job->libc_ino)
		return;
	w->restorer = w->job->libc_base + (k.restorer - (uint64_t)(uintptr_t)di.dli_fbase);
}

/* A signal handler runs (its return address to __restore_rt is near the
 * top of the stack): whatever it interrupted may hold malloc's lock. */
static bool in_handler(const struct worker *w, const struct user_regs_struct *r)
{
	uint64_t words[512];
	struct iovec local = { words, sizeof(words) }, remote = { (void *)(uintptr_t)r->rsp, sizeof(words) };
	ssize_t n;
	size_t i;

	if (!w->restorer)
		return false;
	/* Near the stack's top fewer bytes are there: a partial read. */
	n = process_vm_readv(w->pid, &local, 1, &remote, 1, 0);
	for (i = 0; n > 0 && i < (size_t)n / sizeof(words[0]); i++)
		if (words[i] == w->restorer)
			return true;
	return false;
}

/* Not a place for our call: try again a little later. */
static bool unsafe_here(struct worker *w)
{
	const struct user_regs_struct *r = &w->saved;

	return w->in_handler || in_unsafe_code(w, r) || temp_mask_exposed(w, r) ||
	       in_rseq_cs(w, r) || in_handler(w, r);
}

static void stall(const struct worker *w)
{
	uint64_t until = mono_ns() + (uint64_t)w->job->stall_ms * 1000000ULL;

	while (mono_ns() < until && mono_ns() < w->deadline)
		sleep_ns(1000000);
}

/* ---- the call ---- */

static int syscall_step(struct worker *w, long nr, const uint64_t a[6], uint64_t *ret)
{
	bool ran;
	int err = remote_syscall(w, nr, a, ret, &ran);

	if (err == -EINTR && ran && nr == SYS_mmap && *ret < (uint64_t)-4095) {
		w->mapped = true;
		tramp_layout_place(&w->lo, *ret);
	}
	if (err == -EINTR && ran && nr == SYS_mprotect)
		w->code_rx = a[2] & PROT_EXEC;
	return err;
}

/*
 * The mapping, the code page written for w->saved and made executable,
 * the state zeroed.  0 with the thread stopped, -EINTR (start over), or
 * another -errno with the thread back at its place.
 */
static int prepare(struct worker *w)
{
	unsigned char page[INJECT_PAGE];
	uint8_t insn[2];
	uint64_t a[6] = { 0 }, ret = 0, zero[4] = { 0 };
	int err;

	if (!w->mapped) {
		a[1] = w->lo.len;
		a[2] = PROT_READ | PROT_WRITE;
		a[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
		a[4] = (uint64_t)-1;
		err = syscall_step(w, SYS_mmap, a, &ret);
		if (err)
			return err;
		if (ret >= (uint64_t)-4095) {
			why(w, "mmap() in the target failed: %s", strerror((int)-ret));
			return -ENOMEM;
		}
		w->mapped = true;
		tramp_layout_place(&w->lo, ret);
	}
	if (w->code_rx) {
		a[0] = w->lo.code;
		a[1] = INJECT_PAGE;
		a[2] = PROT_READ | PROT_WRITE;
		err = syscall_step(w, SYS_mprotect, a, &ret);
		if (err)
			return err;
		w->code_rx = false;
	}
	insn_before(w, w->saved.rip, insn);
	err = tramp_page_build(page, &w->lo, &w->tp, &w->saved, insn);
	if (err) {
		why(w, "the library's path in the target is too long");
		return err;
	}
	if (write_mem(w->pid, w->lo.code, page, sizeof(page)) ||
	    write_mem(w->pid, w->lo.code + (TW_STATE), zero, sizeof(zero)))
		return -EFAULT;
	a[0] = w->lo.code;
	a[1] = INJECT_PAGE;
	a[2] = PROT_READ | PROT_EXEC;
	err = syscall_step(w, SYS_mprotect, a, &ret);
	if (err)
		return err;
	if (ret) {
		why(w, "the target may not make memory executable (mprotect: %s)",
		    strerror((int)-ret));
		return -ENOTSUP;
	}
	w->code_rx = true;
	return 0;
}

static int read_state(const struct worker *w, uint64_t *state)
{
	return read_mem(w->pid, w->lo.code + TW_STATE, state, sizeof(*state));
}

/*
 * The thread waits in our code (or is leaving it): stop it and, where it
 * is still in the code, give it back its registers and signal mask.
 */
static int finish(struct worker *w)
{
	uint64_t wait_off = (uint64_t)(inject_tramp_wait - inject_tramp_code);
	uint64_t end_off = (uint64_t)(inject_tramp_end - inject_tramp_code);
	struct user_regs_struct cur;
	uint64_t oldset;
	int err;

	err = stop_thread(w, 0);
	if (err && err != -EAGAIN) /* a job-control stop: restored, left stopped */
		return err;
	if (ptrace(PTRACE_GETREGS, w->pid, 0, &cur))
		return -ESRCH;
	if (cur.rip >= w->lo.code + wait_off && cur.rip < w->lo.code + end_off &&
	    !read_mem(w->pid, w->lo.code + TW_OLDSET, &oldset, sizeof(oldset)) &&
	    put_back(w, &oldset))
		return -ESRCH;
	detach(w);
	return 0;
}

/* A signal stop while our code runs: 0 when dealt with (the code goes
 * on), -EINTR when the code had not started (the thread is back at its
 * place with the signal), else -errno with the thread let go. */
static int signal_while_running(struct worker *w, int status)
{
	struct user_regs_struct cur;
	siginfo_t si;
	uint64_t state = 0;
	int sig = WSTOPSIG(status), ev = status >> 16;

	if (ev == PTRACE_EVENT_EXEC)
		return -ENOEXEC;
	if (ev == PTRACE_EVENT_STOP && job_control(sig)) {
		/* Left stopped as asked; our code finishes alone once continued. */
		why(w, "the target was stopped (job control) during the call: the library loads "
		       "and the thread returns by itself when it is continued");
		detach(w);
		return -EAGAIN;
	}
	if (ev)
		return ptrace(PTRACE_CONT, w->pid, 0, 0) ? -ESRCH : 0;
	w->stop_t0 = mono_ns();
	if (ptrace(PTRACE_GETREGS, w->pid, 0, &cur) || read_state(w, &state))
		return -ESRCH;
	if (state == TRAMP_LAUNCHED && cur.rip == w->lo.code)
		return back_and_deliver(w, sig);
	if (!ptrace(PTRACE_GETSIGINFO, w->pid, 0, &si) && si.si_code > 0 &&
	    (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)) {
		/* A fault in dlopen: the job would die of it; it gets its state
		 * back instead, and the loader's lock may stay held. */
		why(w, "dlopen() in the target faulted (signal %d at 0x%llx): the thread was "
		       "restored, but the loader's lock may be held", sig, (unsigned long long)cur.rip);
		if (!read_mem(w->pid, w->lo.code + TW_OLDSET, &state, sizeof(state)))
			put_back(w, &state);
		else
			put_back(w, NULL);
		if (w->xstate.iov_len)
			ptrace(PTRACE_SETREGSET, w->pid, (void *)NT_X86_XSTATE, &w->xstate);
		detach(w);
		return -EFAULT;
	}
	account_stop(w);
	w->out->info.signals++;
	return ptrace(PTRACE_CONT, w->pid, 0, (void *)(uintptr_t)sig) ? -ESRCH : 0;
}

/* Test builds: let go at once, as a killed worker would, and watch. */
static int abandon_and_watch(struct worker *w)
{
	uint64_t state = 0, until = mono_ns() + 10ULL * 1000000000ULL;

	detach(w);
	while (mono_ns() < until && !read_state(w, &state) && state < TRAMP_LEAVING)
		sleep_ns(1000000);
	read_mem(w->pid, w->lo.code + TW_HANDLE, &w->out->handle, sizeof(w->out->handle));
	sleep_ns(20000000); /* the few instructions after the state's last change */
	return state == TRAMP_LEAVING ? 0 : -ETIMEDOUT;
}

/*
 * Start the thread on our code and see it through: 0 when it returned to
 * its place, -EINTR to start over, else -errno.
 */
static int launch(struct worker *w)
{
	struct user_regs_struct start;
	uint64_t state = 0, until = w->deadline;
	int status, r, err;

	tramp_start_regs(&w->saved, &w->lo, &start);
	if (ptrace(PTRACE_SETREGS, w->pid, 0, &start))
		return -ESRCH;
	if (w->job->abandon)
		return abandon_and_watch(w);
	account_stop(w);
	if (ptrace(PTRACE_CONT, w->pid, 0, 0))
		return -ESRCH;
	for (;;) {
		r = waitpid(w->pid, &status, __WALL | WNOHANG);
		if (r == w->pid) {
			if (!WIFSTOPPED(status))
				return -ESRCH;
			err = signal_while_running(w, status);
			if (err)
				return err;
			continue;
		}
		if (r < 0 && errno != EINTR)
			return -ESRCH;
		if (read_state(w, &state))
			return -ESRCH;
		if (state >= TRAMP_WAITING) {
			read_mem(w->pid, w->lo.code + TW_HANDLE, &w->out->handle,
				 sizeof(w->out->handle));
			return finish(w);
		}
		if (mono_ns() >= until) {
			if (!w->out->running) {
				/* Said now; we stay a while to put the thread back. */
				w->out->running = true;
				w->out->err = -ETIMEDOUT;
				why(w, "dlopen() had not returned within --inject-timeout: it goes on in "
				       "the target, whose thread returns by itself when it does");
				report(w);
				until = mono_ns() + LINGER_NS;
				continue;
			}
			err = stop_thread(w, 0);
			if (!err)
				detach(w);
			return -ETIMEDOUT;
		}
		sleep_ns(100000);
	}
}

static uint64_t backoff_ns(unsigned int tries)
{
	uint64_t ns = RETRY_MIN_NS << (tries < 10 ? tries : 10);

	return ns < RETRY_MAX_NS ? ns : RETRY_MAX_NS;
}

/* The thread stopped at a safe place: run the call.  -EINTR: start over. */
static int call_from_here(struct worker *w)
{
	int err;

	if (w->job->stall_ms && !w->stalled) {
		w->stalled = true;
		stall(w);
	}
	if (mono_ns() + CALL_MIN_NS > w->deadline) {
		why(w, "out of time before the call (--inject-timeout): nothing loaded");
		detach(w);
		return -ETIMEDOUT;
	}
	err = prepare(w);
	if (err == -EAGAIN) {
		why(w, "the target was stopped (job control): left stopped, nothing loaded");
		detach(w);
	} else if (err && err != -EINTR && !gone(w->pid)) {
		/* Stopped: back at its place, and let go. */
		put_back(w, NULL);
		detach(w);
	}
	return err ? err : launch(w);
}

/* The thread never stopped in time: say so, then release it when it does. */
static int never_stopped(struct worker *w)
{
	char s = proc_state(w->pid);
	int err;

	w->out->err = -ETIMEDOUT;
	why(w, "the target did not stop within --inject-timeout%s: released when it stops",
	    s == 'D' ? " (it is in uninterruptible sleep)" : "");
	report(w);
	err = stop_thread(w, 0);
	if (!err || err == -EAGAIN)
		detach(w);
	return -ETIMEDOUT;
}

/* At a stop: the FP state kept for a failed call, and the seccomp check
 * again (a filter may have come since fvbpf looked). */
static int save_fp_and_check(struct worker *w)
{
	static unsigned char xbuf[64 << 10];
	char path[64], buf[4096];

	w->xstate.iov_base = xbuf;
	w->xstate.iov_len = sizeof(xbuf);
	if (ptrace(PTRACE_GETREGSET, w->pid, (void *)NT_X86_XSTATE, &w->xstate))
		w->xstate.iov_len = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", w->pid);
	if (proc_read_file(path, buf, sizeof(buf)) >= 0 && strstr(buf, "\nSeccomp:") &&
	    atoi(strstr(buf, "\nSeccomp:") + 9)) {
		why(w, "it runs under seccomp now: a call made in it could be refused or kill it; "
		       "not injected");
		return -ECANCELED;
	}
	return 0;
}

static int hijack(struct worker *w)
{
	unsigned int unsafe = 0;
	int err;

	for (;;) {
		w->out->info.tries++;
		err = stop_thread(w, w->deadline);
		if (err == -ETIMEDOUT)
			return never_stopped(w);
		if (err == -EAGAIN) {
			why(w, "the target is stopped (job control): left stopped, nothing loaded");
			detach(w);
			return err;
		}
		if (err)
			return err;
		if (ptrace(PTRACE_GETREGS, w->pid, 0, &w->saved))
			return -ESRCH;
		err = save_fp_and_check(w);
		if (err) {
			detach(w);
			return err;
		}
		if (unsafe_here(w)) {
			unsafe++;
			if (mono_ns() + backoff_ns(unsafe) >= w->deadline) {
				why(w, "the main thread was at no safe place each of the %u times it was "
				       "stopped (inside libc or the loader, a signal handler, an rseq "
				       "section: their locks): not loaded", unsafe);
				detach(w);
				return -EBUSY;
			}
			account_stop(w);
			if (ptrace(PTRACE_CONT, w->pid, 0, 0))
				return -ESRCH;
			sleep_ns(backoff_ns(unsafe));
			continue;
		}
		err = call_from_here(w);
		if (err != -EINTR)
			return err;
	}
}

static int seize(struct worker *w)
{
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC;
	uint32_t xsize;
	int err;

	xsave_caps(&w->tp, &xsize);
	if (tramp_layout_for(w->tp.xsave ? xsize : 0, &w->lo)) {
		why(w, "this CPU's XSAVE area (%u bytes) is larger than fvbpf keeps", xsize);
		return -E2BIG;
	}
	find_restorer(w);
	if (ptrace(PTRACE_SEIZE, w->pid, 0, (void *)opts))
		return -errno;
	err = find_gadget(w);
	if (err)
		why(w, "no syscall instruction found in the target's libc");
	return err;
}

static int work(struct worker *w)
{
	struct lib_copy copy = { .dirfd = -1 };
	int err;

	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	w->out->info.wallclock_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	lib_copy_sweep(w->pid);
	err = lib_copy_make(w->pid, w->job->lib, &copy, w->out->info.why,
			    sizeof(w->out->info.why));
	if (err)
		return err;
	snprintf(w->out->target_path, sizeof(w->out->target_path), "%s", copy.target_path);
	w->tp.fn = w->job->fn;
	w->tp.mode = w->job->mode;
	w->tp.spins = TRAMP_SPINS;
	w->tp.path = copy.target_path;
	err = seize(w);
	if (!err)
		err = hijack(w);
	else if (err != -EPERM && err != -EACCES && err != -ESRCH)
		ptrace(PTRACE_DETACH, w->pid, 0, 0);
	if (err == -ENOEXEC)
		ptrace(PTRACE_DETACH, w->pid, 0, 0); /* stopped at the exec event */
	if (err == -ENOEXEC || ((err == -ESRCH || err == -EFAULT) && execd(w))) {
		err = -ENOEXEC;
		why(w, "the process exec'd during the injection: nothing loaded");
	}
	lib_copy_remove(&copy);
	return err;
}

/* In the worker: no descriptor of fvbpf's but @keep (BPF links among
 * them would hold its probes while we live). */
static int close_others(int keep)
{
	int null;

	/* Out of 0-2 first (fvbpf may have run with one closed). */
	keep = fcntl(keep, F_DUPFD, 10);
	if (keep < 0)
		return -errno;
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	/* Not fvbpf's output either: a pipe reading it would wait for us. */
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2 && null != keep)
			close(null);
	}
	if (dup2(keep, 3) < 0)
		return -errno;
	if (syscall(SYS_close_range, 4, ~0U, 0)) {
		long fd, max = sysconf(_SC_OPEN_MAX);

		for (fd = 4; fd < max && fd < 65536; fd++)
			close((int)fd);
	}
	return 3;
}

static void worker_main(const struct inject_job *job, int fd)
{
	struct inject_outcome out;
	struct worker w = { .job = job, .out = &out, .pid = job->pid };
	struct sigaction sa = { .sa_handler = SIG_IGN };

	memset(&out, 0, sizeof(out));
	setsid();
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	prctl(PR_SET_NAME, INJECT_WORKER_COMM, 0, 0, 0);
	w.report_fd = close_others(fd);
	w.deadline = mono_ns() + (uint64_t)(job->timeout_s * 1e9);
	out.err = work(&w);
	if (!out.running)
		report(&w);
	_exit(0);
}

static int read_outcome(int fd, struct inject_outcome *out, int timeout_ms)
{
	size_t done = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t until = mono_ns() + (uint64_t)timeout_ms * 1000000ULL, now;
	ssize_t n;
	int r;

	while (done < sizeof(*out)) {
		now = mono_ns();
		if (now >= until)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((until - now) / 1000000ULL) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -ETIMEDOUT;
		n = read(fd, (char *)out + done, sizeof(*out) - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		done += (size_t)n;
	}
	return 0;
}

/* The worker is our child (an orphan's zombie would wait for an init
 * that may never reap it): reaped once it reported, unless it stays to
 * finish (then the kernel gives it to init when we exit). */
static void reap(pid_t pid, bool may_run)
{
	int status, i;

	for (i = 0; i < (may_run ? 1 : 200); i++) {
		if (waitpid(pid, &status, WNOHANG) != 0)
			return;
		sleep_ns(5000000);
	}
}

int inject_worker_run(const struct inject_job *job, struct inject_outcome *out)
{
	int fds[2], err;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (!pid) {
		close(fds[0]);
		worker_main(job, fds[1]);
	}
	close(fds[1]);
	memset(out, 0, sizeof(*out));
	err = read_outcome(fds[0], out, (int)(job->timeout_s * 1000) + 3000);
	close(fds[0]);
	reap(pid, err || out->running);
	return err;
}
