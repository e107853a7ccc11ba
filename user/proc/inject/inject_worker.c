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

#include "proc/inject/inject_copy.h"
#include "proc/inject/inject_hold.h"
#include "proc/proc_info.h"

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

void why(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->out->info.why, sizeof(w->out->info.why), fmt, ap);
	va_end(ap);
}

/* The one report to fvbpf (it may be gone: then nobody reads it). */
void report(struct worker *w)
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

/* ---- ptrace ---- */

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

int inject_work(struct worker *w)
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

