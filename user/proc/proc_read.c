// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The one reader of /proc files: stat, comm, cmdline and any file whole.
 * proc_info (the target record), proc_rank (environ) and proc_scan (the
 * process list, auxv, status) build on it and never on each other.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc/proc_read.h"

/* State, parent and start time (clock ticks after boot) from
 * /proc/PID/stat; any may be NULL. */
static int read_stat(pid_t pid, char *state, pid_t *ppid, unsigned long long *start_time)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	int i, pp;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = proc_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	/* "PID (comm) S ...": comm is the process's own choice, ')' and newlines
	 * included, so fields count from its last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EIO;
	if (state)
		*state = p[2];
	if (ppid) {
		if (sscanf(p + 3, " %d", &pp) != 1 || pp < 0)
			return -EIO;
		*ppid = pp;
	}
	if (!start_time)
		return 0;
	/* starttime is field 22: step over the spaces before fields 3 to 22 */
	for (i = 3; i <= 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return -EIO;
	*start_time = start;
	return 0;
}

int proc_read_stat(pid_t pid, char *state, unsigned long long *start_time)
{
	return read_stat(pid, state, NULL, start_time);
}

int proc_read_stat_ppid(pid_t pid, pid_t *ppid, unsigned long long *start_time)
{
	return read_stat(pid, NULL, ppid, start_time);
}

pid_t proc_read_ppid(pid_t pid)
{
	pid_t ppid = 0;

	return read_stat(pid, NULL, &ppid, NULL) ? 0 : ppid;
}

bool proc_alive(pid_t pid)
{
	char state = 0;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	/* A zombie still answers kill(); it is gone for our purposes. */
	return !proc_read_stat(pid, &state, NULL) && state != 'Z' && state != 'X';
}

ssize_t proc_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - (size_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

int proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	n = proc_read_file(path, buf, len);
	if (n < 0)
		return (int)n;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int proc_read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	n = proc_read_file(path, buf, len);
	if (n < 0)
		return (int)n;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return 0;
}

static const char *status_at(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	if (!p)
		return NULL;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static long long status_dec(const char *buf, const char *key)
{
	const char *p = status_at(buf, key);

	return p ? strtoll(p, NULL, 10) : 0;
}

static uint64_t status_hex(const char *buf, const char *key)
{
	const char *p = status_at(buf, key);

	return p ? strtoull(p, NULL, 16) : 0;
}

int proc_read_status(pid_t pid, pid_t tid, struct proc_status *st)
{
	char path[64], buf[4096];
	const char *p;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = status_at(buf, "\nState:");
	st->state = p && *p ? *p : '?';
	st->tracer = (pid_t)status_dec(buf, "\nTracerPid:");
	st->seccomp = (int)status_dec(buf, "\nSeccomp:");
	st->sig_pending = status_hex(buf, "\nSigPnd:") | status_hex(buf, "\nShdPnd:");
	st->sig_blocked = status_hex(buf, "\nSigBlk:");
	return 0;
}
