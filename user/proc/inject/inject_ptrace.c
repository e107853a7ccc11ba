// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The --inject worker's ptrace primitives: the target's memory and
 * status, stopping the main thread, a syscall run in it, and putting it
 * back (inject_hold.h).
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
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/inject/inject_copy.h"
#include "proc/inject/inject_hold.h"
#include "proc/proc_info.h"
#include "proc/proc_read.h"

int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

char proc_state(pid_t pid)
{
	struct proc_status st;

	return proc_read_status(pid, 0, &st) ? 'X' : st.state;
}

/* Signals pending for the main thread (its own and the process's). */
uint64_t pending_signals(pid_t pid)
{
	struct proc_status st;

	return proc_read_status(pid, pid, &st) ? 0 : st.sig_pending;
}

bool gone(pid_t pid)
{
	char s = proc_state(pid);

	return s == 'X' || s == 'Z';
}

/* The process still runs but its memory is not what it was: it exec'd. */
bool execd(const struct worker *w)
{
	uint8_t insn[2];

	if (!w->gadget || gone(w->pid))
		return false;
	return read_mem(w->pid, w->gadget, insn, 2) || insn[0] != 0x0f || insn[1] != 0x05;
}

/* A `syscall` instruction in the target's libc text (any 0f 05 decodes so). */
int find_gadget(struct worker *w)
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

void xsave_caps(struct tramp_params *tp, uint32_t *size)
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

/* A state change of the tracee before @deadline (0: none): W_STATUS,
 * W_TIMEOUT, or -ESRCH when it is gone or no longer ours. */
int wait_tracee(pid_t pid, int *status, uint64_t deadline)
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

bool job_control(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/*
 * Interrupt the thread and wait for that stop before @deadline, passing
 * on the signals that come first.  0, -ETIMEDOUT, -EAGAIN (a job-control
 * stop), -ENOEXEC (exec), -ESRCH.
 */
int stop_thread(struct worker *w, uint64_t deadline)
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

void account_stop(struct worker *w)
{
	if (w->stop_t0)
		w->out->info.stopped_ns += mono_ns() - w->stop_t0;
	w->stop_t0 = 0;
}

/* The two bytes before @rip (zeros when unreadable). */
void insn_before(const struct worker *w, uint64_t rip, uint8_t insn[2])
{
	if (rip < 2 || read_mem(w->pid, rip - 2, insn, 2))
		insn[0] = insn[1] = 0;
}

/* Let go of a stopped thread with its registers as they are. */
void detach(struct worker *w)
{
	account_stop(w);
	ptrace(PTRACE_DETACH, w->pid, 0, 0);
}

/*
 * Give the stopped thread its own registers back and deliver @sig there:
 * it runs on as if stopped for nothing.
 */
int back_and_deliver(struct worker *w, int sig)
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
int put_back(struct worker *w, const uint64_t *mask)
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
int remote_syscall(struct worker *w, long nr, const uint64_t a[6], uint64_t *ret, bool *ran)
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
