// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The --inject worker as a process: forked, its own session, deaf to the
 * terminal's signals, none of fvbpf's descriptors, one report through a
 * pipe (inject_worker.h).
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
	out.err = inject_work(&w);
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
