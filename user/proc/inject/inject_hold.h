/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Inside the --inject worker (inject_worker.h): its hold on the target's
 * main thread, shared by the call's steps (inject_worker.c), the ptrace
 * primitives (inject_ptrace.c), the safe-place checks (inject_safe.c) and
 * the process around them (inject_spawn.c).  Not for use elsewhere.
 */
#ifndef FVBPF_INJECT_HOLD_H
#define FVBPF_INJECT_HOLD_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>

#include "proc/inject/inject_tramp.h"
#include "proc/inject/inject_worker.h"
#include "util/clock.h"

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

enum { W_TIMEOUT = 0, W_STATUS = 1 };

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* inject_worker.c */
void why(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report(struct worker *w);
int inject_work(struct worker *w);

/* inject_ptrace.c */
int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);
int write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len);
char proc_state(pid_t pid);
uint64_t pending_signals(pid_t pid);
bool gone(pid_t pid);
bool execd(const struct worker *w);
int find_gadget(struct worker *w);
void xsave_caps(struct tramp_params *tp, uint32_t *size);
int wait_tracee(pid_t pid, int *status, uint64_t deadline);
bool job_control(int sig);
int stop_thread(struct worker *w, uint64_t deadline);
void account_stop(struct worker *w);
void insn_before(const struct worker *w, uint64_t rip, uint8_t insn[2]);
void detach(struct worker *w);
int back_and_deliver(struct worker *w, int sig);
int put_back(struct worker *w, const uint64_t *mask);
int remote_syscall(struct worker *w, long nr, const uint64_t a[6], uint64_t *ret, bool *ran);

/* inject_safe.c */
bool in_text(const struct worker *w, uint64_t rip, enum text_kind kind);
bool blocking_wait(long nr);
bool in_unsafe_code(const struct worker *w, const struct user_regs_struct *r);
bool temp_mask_exposed(const struct worker *w, const struct user_regs_struct *r);
bool in_rseq_cs(const struct worker *w, const struct user_regs_struct *r);
void find_restorer(struct worker *w);
bool in_handler(const struct worker *w, const struct user_regs_struct *r);
bool unsafe_here(struct worker *w);
void stall(const struct worker *w);
int save_fp_and_check(struct worker *w);

#endif /* FVBPF_INJECT_HOLD_H */
