// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The measuring sibling's life (torch_layout_sibling.h): who it runs as,
 * what it runs, its start in a PID namespace of its own, its exit polled
 * and its death made sure of.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/torch/torch_layout_sibling.h"
#include "util/log.h"

#define ENV_MAX (256u << 10)

int layout_sibling_owner(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -ESRCH;
	*uid = st.st_uid;
	*gid = st.st_gid;
	return 0;
}

/* The target's variable @name from its environ into @out ("" if none). */
static void env_of(const char *env, size_t len, const char *name, char *out, size_t olen)
{
	size_t nl = strlen(name), i = 0;

	out[0] = '\0';
	while (i < len) {
		const char *e = env + i;
		size_t el = strnlen(e, len - i);

		if (el > nl && e[nl] == '=' && !strncmp(e, name, nl)) {
			snprintf(out, olen, "%.*s", (int)(el - nl - 1), e + nl + 1);
			return;
		}
		i += el + 1;
	}
}

/* The interpreter's argv[0] as a path (the child runs it when it is the
 * same file as /proc/PID/exe: a venv's python keeps its venv).  Only read
 * here; the child compares the files, since a path in the target's cwd
 * may be on a filesystem its owner serves, and a stat there could block. */
static void pick_argv0(pid_t pid, struct layout_sibling *sb)
{
	char path[64], argv0[PATH_MAX];
	ssize_t n;
	int fd;

	sb->argv0[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, argv0, sizeof(argv0) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	argv0[n] = '\0';
	if (argv0[0] == '/')
		snprintf(sb->argv0, sizeof(sb->argv0), "%s", argv0);
	else if (strchr(argv0, '/'))
		snprintf(sb->argv0, sizeof(sb->argv0), "/proc/%d/cwd/%s", (int)pid, argv0);
}

int layout_sibling_setup(pid_t pid, const char *libpath, uid_t uid, gid_t gid,
			 struct layout_sibling *sb)
{
	char path[64], *env, site[PATH_MAX], tpp[PATH_MAX];
	ssize_t n = -1;
	char *p;
	int fd, i;

	sb->uid = uid;
	sb->gid = gid;
	snprintf(sb->cwd, sizeof(sb->cwd), "/proc/%d/cwd", (int)pid);
	snprintf(sb->exe, sizeof(sb->exe), "/proc/%d/exe", (int)pid);
	pick_argv0(pid, sb);
	/* .../site-packages/torch/lib/libtorch_cpu.so -> .../site-packages */
	snprintf(site, sizeof(site), "%s", libpath);
	for (i = 0; i < 3 && (p = strrchr(site, '/')); i++)
		*p = '\0';
	if (i < 3 || !site[0])
		return -ENOENT;
	env = malloc(ENV_MAX);
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = env ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		n = read(fd, env, ENV_MAX);
		close(fd);
	}
	if (n < 0)
		n = 0;
	if (env) {
		env_of(env, (size_t)n, "PYTHONPATH", tpp, sizeof(tpp));
		env_of(env, (size_t)n, "HOME", sb->home, sizeof(sb->home));
	} else {
		tpp[0] = sb->home[0] = '\0';
	}
	free(env);
	snprintf(sb->pypath, sizeof(sb->pypath), "PYTHONPATH=%s%s%s", site, tpp[0] ? ":" : "", tpp);
	if (!sb->home[0] || strlen(sb->home) >= PATH_MAX)
		snprintf(sb->home, sizeof(sb->home), "/");
	memmove(sb->home + 5, sb->home, strlen(sb->home) + 1);
	memcpy(sb->home, "HOME=", 5); /* the child only copies (fvbpf has threads) */
	return 0;
}

/*
 * Siblings started and not yet reaped: a signal handler reads them
 * (layout_sibling_kill_now), the consumer and the detach threads change
 * them under the lock.
 */
#define SIBLINGS_MAX 64
static volatile sig_atomic_t live[SIBLINGS_MAX];
static bool killed[SIBLINGS_MAX];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;

static int live_find(pid_t pid)
{
	int i;

	for (i = 0; i < SIBLINGS_MAX; i++)
		if (live[i] == pid)
			return i;
	return -1;
}

/*
 * In the child of a raw clone(): glibc's fork handlers did not run and it
 * still believes in fvbpf's other threads, so only plain system calls
 * here (its setuid() would signal those threads: raw set*id instead).
 * The target's user, a session of its own, no descriptor of ours but @out
 * on 1, a lower priority, death with fvbpf; then the interpreter.
 */
static void sibling_exec(const struct layout_sibling *sb, const char *script, int out,
			 int parent_fd)
{
	char *const argv[] = { (char *)"python", (char *)"-s", (char *)"-B", (char *)"-c",
			       (char *)script, NULL };
	/* PYTHONNOUSERSITE empty is unset to CPython: 1, and -s above */
	char *envp[] = { (char *)sb->pypath, (char *)"PATH=/usr/local/bin:/usr/bin:/bin",
			 (char *)"CUDA_VISIBLE_DEVICES=", (char *)"OMP_NUM_THREADS=1",
			 (char *)"PYTHONNOUSERSITE=1", (char *)sb->home, NULL };
	struct pollfd pf = { .fd = parent_fd, .events = POLLIN };
	struct sigaction sa, dfl = { .sa_handler = SIG_DFL };
	const char *exe = sb->exe;
	uint64_t no_signals = 0;
	struct stat a, b;
	int null, sig;

	/* fvbpf's handlers are not for this process: default, then unblocked
	 * (all were blocked across the clone, so none ran here before) */
	for (sig = 1; sig < NSIG; sig++)
		if (!sigaction(sig, NULL, &sa) && sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL)
			sigaction(sig, &dfl, NULL);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, NULL, sizeof(no_signals));
	setsid();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
		_exit(126);
	if (chdir(sb->cwd))
		(void)!chdir("/");
	if (sb->argv0[0] && !stat(sb->argv0, &a) && !stat(sb->exe, &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		exe = sb->argv0;
	setpriority(PRIO_PROCESS, 0, 10);
	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, sb->gid, sb->gid, sb->gid) ||
	    syscall(SYS_setresuid, sb->uid, sb->uid, sb->uid))
		_exit(126);
	/* after the user change, which clears it; and fvbpf may have died
	 * before it was set: then nobody would stop this one */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || (parent_fd >= 0 && poll(&pf, 1, 0) != 0))
		_exit(125);
	syscall(SYS_close_range, 3, ~0U, 0);
	execve(exe, argv, envp);
	_exit(127);
}

int layout_sibling_spawn(const struct layout_sibling *sb, const char *script, pid_t *child,
			 int *fd)
{
	int fds[2], self, slot, err;
	sigset_t all, old;
	long pid = -1;

	pthread_mutex_lock(&live_lock);
	slot = live_find(0);
	if (slot >= 0)
		live[slot] = -1; /* taken; the signal handler skips it */
	pthread_mutex_unlock(&live_lock);
	if (slot < 0)
		return -EBUSY;
	if (pipe2(fds, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	/* the child checks it once its death signal is set */
	self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWPID | SIGCHLD), NULL, NULL, NULL, NULL);
	if (pid == 0)
		sibling_exec(sb, script, fds[1], self);
	err = pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (self >= 0)
		close(self);
	close(fds[1]);
	if (err) {
		close(fds[0]);
		goto cleanup;
	}
	*child = (pid_t)pid;
	*fd = fds[0];
	fcntl(*fd, F_SETFL, O_NONBLOCK);
cleanup:
	pthread_mutex_lock(&live_lock);
	live[slot] = err ? 0 : (sig_atomic_t)pid;
	killed[slot] = false;
	pthread_mutex_unlock(&live_lock);
	return err;
}

static void forget(pid_t child)
{
	int i;

	pthread_mutex_lock(&live_lock);
	i = live_find(child);
	if (i >= 0) {
		live[i] = 0;
		killed[i] = false;
	}
	pthread_mutex_unlock(&live_lock);
}

int layout_sibling_reap(pid_t child, int *status)
{
	pid_t r;

	if (child <= 0)
		return -ECHILD;
	do
		r = waitpid(child, status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	if (r < 0 && errno != ECHILD)
		return -errno; /* still ours, state unknown */
	forget(child); /* exited, or reaped by another (SIGCHLD ignored) */
	return r < 0 ? -ECHILD : 1;
}

void layout_sibling_kill(pid_t child)
{
	int status, i, r;

	if (child <= 0)
		return;
	/* PID 1 of its namespace: the kernel kills the rest when it dies;
	 * its process group too, for what is on its way out of it */
	kill(-child, SIGKILL);
	kill(child, SIGKILL);
	r = layout_sibling_reap(child, &status);
	if (r == 1 || r == -ECHILD)
		return; /* reaped, or no longer ours */
	pthread_mutex_lock(&live_lock);
	i = live_find(child);
	if (i >= 0)
		killed[i] = true;
	pthread_mutex_unlock(&live_lock);
}

void layout_sibling_reap_killed(void)
{
	pid_t pids[SIBLINGS_MAX];
	int i, n = 0, status;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < SIBLINGS_MAX; i++)
		if (live[i] && killed[i])
			pids[n++] = (pid_t)live[i];
	pthread_mutex_unlock(&live_lock);
	for (i = 0; i < n; i++)
		layout_sibling_reap(pids[i], &status);
}

void layout_sibling_end(unsigned int ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned int waited = 0;
	int i, left;

	for (;;) {
		pthread_mutex_lock(&live_lock);
		for (i = 0, left = 0; i < SIBLINGS_MAX; i++) {
			if (!live[i])
				continue;
			left++;
			if (!killed[i]) {
				kill(-(pid_t)live[i], SIGKILL);
				kill((pid_t)live[i], SIGKILL);
				killed[i] = true;
			}
		}
		pthread_mutex_unlock(&live_lock);
		if (!left)
			return;
		layout_sibling_reap_killed();
		if (waited >= ms)
			break;
		nanosleep(&tick, NULL);
		waited += 10;
	}
	pthread_mutex_lock(&live_lock);
	for (i = 0; i < SIBLINGS_MAX; i++)
		if (live[i])
			log_warn("torch layout measurement PID %d did not die within %u ms of SIGKILL "
				 "(held in the kernel); it dies when the kernel lets it go",
				 (int)live[i], ms);
	pthread_mutex_unlock(&live_lock);
}

void layout_sibling_kill_now(void)
{
	int i;
	pid_t p;

	for (i = 0; i < SIBLINGS_MAX; i++) {
		p = (pid_t)live[i];
		if (p > 0) {
			kill(-p, SIGKILL);
			kill(p, SIGKILL);
		}
	}
}
