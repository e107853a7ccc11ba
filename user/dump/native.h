/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What a thread does below Python, as the kernel says it in /proc without
 * stopping it: its state, the system call it is blocked in and where in the
 * kernel it sleeps, and how long it has been off the CPU (the scheduler's
 * se.exec_start in /proc/PID/task/TID/sched: when the thread last stopped
 * running, against the same CPU's clock now).
 */
#ifndef FVBPF_DUMP_NATIVE_H
#define FVBPF_DUMP_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum native_call {
	NATIVE_SYSCALL,             /* blocked in system call nr */
	NATIVE_NOT_IN_SYSCALL,      /* blocked, but not in a system call (a page fault) */
	NATIVE_RUNNING,             /* on a CPU or runnable: no call to tell */
	NATIVE_UNKNOWN,             /* the kernel would not say */
};

struct dump_native {
	char state;                 /* /proc stat's: R S D T t Z X I P, '?' */
	enum native_call call;
	long nr;                    /* the system call, NATIVE_SYSCALL */
	uint64_t args[6], sp, pc;
	char wchan[64];             /* kernel function it sleeps in, "" none */
	int64_t off_cpu_ns;         /* -1: unknown, or running */
	int cpu;                    /* the CPU it last ran on, -1 unknown */
};

/* Each CPU's scheduler clock now, read once per dump (fvbpf moves its own
 * thread there for a moment). */
struct sched_now;
struct sched_now *sched_now_new(void);
void sched_now_free(struct sched_now *s);

/* Thread @tid of @pid: 0, or -ESRCH (gone). */
int native_read(pid_t pid, pid_t tid, struct sched_now *now, struct dump_native *n);
/* "futex", "syscall 999", "running", ...: what the text says it is in. */
const char *native_call_name(const struct dump_native *n, char *buf, size_t len);
/* The state letter in words: "sleeping", "disk sleep", ... */
const char *native_state_name(char state);
/* Parse a /proc/PID/task/TID/syscall line into @n (tests): 0 or -EINVAL. */
int native_parse_syscall(const char *line, struct dump_native *n);
/* se.exec_start of a /proc/.../sched text, in ns: 0 or -EINVAL. */
int native_parse_exec_start(const char *text, uint64_t *ns);

#endif /* FVBPF_DUMP_NATIVE_H */
