/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Reading /proc files: the bottom of proc/'s /proc readers. */
#ifndef FVBPF_PROC_READ_H
#define FVBPF_PROC_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

bool proc_alive(pid_t pid);
/* State letter and start time (clock ticks after boot) from /proc/PID/stat,
 * either may be NULL: 0 or -errno. */
int proc_read_stat(pid_t pid, char *state, unsigned long long *start_time);
/* Parent and start time: 0 or -errno. */
int proc_read_stat_ppid(pid_t pid, pid_t *ppid, unsigned long long *start_time);
int proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t len);
int proc_read_cmdline(pid_t pid, char *buf, size_t len);
/* Up to @len - 1 bytes of a /proc file, NUL added: the count or -errno. */
ssize_t proc_read_file(const char *path, char *buf, size_t len);
/* The parent's PID from /proc/PID/stat, 0 when unknown. */
pid_t proc_read_ppid(pid_t pid);

/* What /proc/PID/task/TID/status says of a thread and its process. */
struct proc_status {
	char state;                   /* '?' when absent */
	pid_t tracer;                 /* TracerPid */
	int seccomp;                  /* 0 none, 1 strict, 2 filter */
	uint64_t sig_pending;         /* SigPnd | ShdPnd: its own and the process's */
	uint64_t sig_blocked;         /* SigBlk */
};
/* @tid 0: the process's main thread (/proc/PID/status).  0 or -ESRCH. */
int proc_read_status(pid_t pid, pid_t tid, struct proc_status *st);

#endif /* FVBPF_PROC_READ_H */
