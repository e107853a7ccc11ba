// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Where the --inject worker may start its call: not where the main thread
 * may hold a lock dlopen or malloc takes (inject_hold.h).
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

bool in_text(const struct worker *w, uint64_t rip, enum text_kind kind)
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
bool blocking_wait(long nr)
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

bool in_unsafe_code(const struct worker *w, const struct user_regs_struct *r)
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
bool temp_mask_exposed(const struct worker *w, const struct user_regs_struct *r)
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
bool in_rseq_cs(const struct worker *w, const struct user_regs_struct *r)
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
void find_restorer(struct worker *w)
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
bool in_handler(const struct worker *w, const struct user_regs_struct *r)
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
bool unsafe_here(struct worker *w)
{
	const struct user_regs_struct *r = &w->saved;

	return w->in_handler || in_unsafe_code(w, r) || temp_mask_exposed(w, r) ||
	       in_rseq_cs(w, r) || in_handler(w, r);
}

void stall(const struct worker *w)
{
	uint64_t until = mono_ns() + (uint64_t)w->job->stall_ms * 1000000ULL;

	while (mono_ns() < until && mono_ns() < w->deadline)
		sleep_ns(1000000);
}

/* At a stop: the FP state kept for a failed call, and the seccomp check
 * again (a filter may have come since fvbpf looked). */
int save_fp_and_check(struct worker *w)
{
	static unsigned char xbuf[64 << 10];
	struct proc_status st;

	w->xstate.iov_base = xbuf;
	w->xstate.iov_len = sizeof(xbuf);
	if (ptrace(PTRACE_GETREGSET, w->pid, (void *)NT_X86_XSTATE, &w->xstate))
		w->xstate.iov_len = 0;
	if (!proc_read_status(w->pid, 0, &st) && st.seccomp) {
		why(w, "it runs under seccomp now: a call made in it could be refused or kill it; "
		       "not injected");
		return -ECANCELED;
	}
	return 0;
}
