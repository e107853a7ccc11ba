// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The target's own torch reports its TensorImpl layout and schemas
 * (torch_layout.h): a sibling process of the target's interpreter, as the
 * target's user, bounded in time and output, its report cached per build id.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "target/build_id.h"
#include "target/torch_layout.h"

#define ENV_MAX (256u << 10)

static void cache_dir(char *buf, size_t len)
{
	const char *d = getenv("FVBPF_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME");

	if (d && d[0] == '/')
		snprintf(buf, len, "%s", d);
	else if (x && x[0] == '/')
		snprintf(buf, len, "%s/fvbpf", x);
	else
		snprintf(buf, len, "/var/cache/fvbpf");
}

/* A cached report: ours (root's, not writable by others), bounded. */
static int cache_read(const char *path, struct torch_layout_report *r)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_size <= 0 || st.st_size > TORCH_LAYOUT_MAX_BYTES) {
		close(fd);
		return -EPERM;
	}
	r->text = malloc((size_t)st.st_size + 1);
	n = r->text ? read(fd, r->text, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(r->text);
		r->text = NULL;
		return -EIO;
	}
	r->text[n] = '\0';
	r->len = (size_t)n;
	r->cached = true;
	if (strncmp(r->text, TORCH_LAYOUT_HEADER, strlen(TORCH_LAYOUT_HEADER))) {
		torch_layout_free(r);
		r->cached = false;
		return -ESTALE;
	}
	return 0;
}

static void cache_write(const char *dir, const char *path, const struct torch_layout_report *r)
{
	char tmp[PATH_MAX + 32];
	int fd;

	mkdir(dir, 0755);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return; /* no cache: measured again next time */
	if (write(fd, r->text, r->len) != (ssize_t)r->len || close(fd) || rename(tmp, path))
		unlink(tmp);
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

struct sibling {
	char exe[PATH_MAX], cwd[64], pypath[2 * PATH_MAX + 16], home[PATH_MAX + 8];
	uid_t uid;
	gid_t gid;
};

/* The interpreter the target runs, as its argv[0] named it when that is
 * the same file (a venv's python keeps its venv), else /proc/PID/exe. */
static void pick_exe(pid_t pid, struct sibling *sb)
{
	char path[64], argv0[PATH_MAX], full[2 * PATH_MAX];
	struct stat a, b;
	ssize_t n;
	int fd;

	snprintf(sb->exe, sizeof(sb->exe), "/proc/%d/exe", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, argv0, sizeof(argv0) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	argv0[n] = '\0';
	if (argv0[0] == '/')
		snprintf(full, sizeof(full), "%s", argv0);
	else if (strchr(argv0, '/'))
		snprintf(full, sizeof(full), "/proc/%d/cwd/%s", (int)pid, argv0);
	else
		return;
	if (!stat(full, &a) && !stat(sb->exe, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
	    strlen(full) < sizeof(sb->exe))
		snprintf(sb->exe, sizeof(sb->exe), "%s", full);
}

static int sibling_setup(pid_t pid, const char *libpath, struct sibling *sb)
{
	char path[64], *env, site[PATH_MAX], tpp[PATH_MAX];
	struct stat st;
	ssize_t n = -1;
	char *p;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -ESRCH;
	sb->uid = st.st_uid;
	sb->gid = st.st_gid;
	snprintf(sb->cwd, sizeof(sb->cwd), "/proc/%d/cwd", (int)pid);
	pick_exe(pid, sb);
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

/* In the child: the target's user, its cwd, no descriptor of ours but
 * @out on 1, a lower priority; then the interpreter.  Never returns; only
 * system calls between fork and exec (fvbpf has threads). */
static void sibling_exec(const struct sibling *sb, int out)
{
	char *const argv[] = { (char *)"python", (char *)"-B", (char *)"-c",
			       (char *)torch_layout_script, NULL };
	char *envp[] = { (char *)sb->pypath, (char *)"PATH=/usr/local/bin:/usr/bin:/bin",
			 (char *)"CUDA_VISIBLE_DEVICES=", (char *)"OMP_NUM_THREADS=1",
			 (char *)"PYTHONNOUSERSITE=", (char *)sb->home, NULL };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(null, 2) < 0)
		_exit(126);
	syscall(SYS_close_range, 3, ~0U, 0);
	if (chdir(sb->cwd))
		(void)!chdir("/");
	setpriority(PRIO_PROCESS, 0, 10);
	if (setgroups(0, NULL) || setgid(sb->gid) || setuid(sb->uid))
		_exit(126);
	execve(sb->exe, argv, envp);
	_exit(127);
}

/*
 * Builds this fvbpf is measuring: a second process of the same build (the
 * ranks of one job) waits for the first's cache file instead of importing
 * torch once more.  The consumer thread alone starts and polls jobs.
 */
#define INFLIGHT_MAX 64
static char inflight[INFLIGHT_MAX][41];

static int inflight_find(const char *id)
{
	int i;

	for (i = 0; i < INFLIGHT_MAX; i++)
		if (inflight[i][0] && !strcmp(inflight[i], id))
			return i;
	return -1;
}

static bool inflight_put(const char *id)
{
	int i;

	for (i = 0; i < INFLIGHT_MAX; i++)
		if (!inflight[i][0]) {
			snprintf(inflight[i], sizeof(inflight[i]), "%s", id);
			return true;
		}
	return false;
}

static void inflight_drop(struct torch_layout_job *j)
{
	int i = j->measuring ? inflight_find(j->r.build_id) : -1;

	if (i >= 0)
		inflight[i][0] = '\0';
	j->measuring = false;
}

/* More of the child's stdout: 1 at EOF, 0 for more later, -errno (@why). */
static int collect_some(struct torch_layout_job *j, char *why, size_t wlen)
{
	ssize_t n;

	for (;;) {
		if (j->r.len + 1 == j->cap) {
			char *t = j->cap >= TORCH_LAYOUT_MAX_BYTES ? NULL : realloc(j->r.text, j->cap * 2);

			if (!t) {
				snprintf(why, wlen, "its report passed %u bytes", TORCH_LAYOUT_MAX_BYTES);
				return -E2BIG;
			}
			j->r.text = t;
			j->cap *= 2;
		}
		n = read(j->fd, j->r.text + j->r.len, j->cap - 1 - j->r.len);
		if (n == 0)
			return 1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		j->r.len += (size_t)n;
		j->r.text[j->r.len] = '\0';
	}
}

static int start_sibling(pid_t pid, const char *libpath, struct torch_layout_job *j, char *why,
			 size_t wlen)
{
	struct sibling sb = { 0 };
	int fds[2], err;

	err = sibling_setup(pid, libpath, &sb);
	if (err) {
		snprintf(why, wlen, "cannot tell the target's python or site-packages (%s)",
			 strerror(-err));
		return err;
	}
	j->cap = 1 << 16;
	j->r.text = malloc(j->cap);
	if (!j->r.text)
		return -ENOMEM;
	j->r.text[0] = '\0';
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	j->child = fork();
	if (j->child < 0) {
		err = -errno;
		j->child = 0;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (!j->child)
		sibling_exec(&sb, fds[1]);
	close(fds[1]);
	j->fd = fds[0];
	fcntl(j->fd, F_SETFL, O_NONBLOCK);
	j->t0 = clock_ns(CLOCK_MONOTONIC);
	j->deadline = j->t0 + TORCH_LAYOUT_TIMEOUT_S * 1000000000ull;
	return 0;
}

/* The report's "lib DEV INO PATH" line names the file the target maps. */
static bool same_lib(const struct torch_layout_job *j)
{
	const char *l = strstr(j->r.text, "\nlib ");
	unsigned long long dev, ino;

	return l && sscanf(l + 5, "%llu %llu", &dev, &ino) == 2 && dev == j->dev && ino == j->ino;
}

int torch_layout_start(pid_t pid, int fd, const struct stat *st, const char *libpath,
		       struct torch_layout_job *j, char *why, size_t wlen)
{
	char dir[PATH_MAX - 128];
	int err;

	memset(j, 0, sizeof(*j));
	j->fd = -1;
	j->dev = (unsigned long long)st->st_dev;
	j->ino = (unsigned long long)st->st_ino;
	j->pid = pid;
	snprintf(j->libpath, sizeof(j->libpath), "%s", libpath);
	why[0] = '\0';
	torch_build_id(fd, j->r.build_id);
	cache_dir(dir, sizeof(dir));
	if (j->r.build_id[0]) {
		snprintf(j->dir, sizeof(j->dir), "%s", dir);
		snprintf(j->path, sizeof(j->path), "%s/torch-layout-%s.txt", dir, j->r.build_id);
		if (!cache_read(j->path, &j->r))
			return 1;
		if (inflight_find(j->r.build_id) >= 0) {
			j->waiting = true;
			j->t0 = clock_ns(CLOCK_MONOTONIC);
			j->deadline = j->t0 + (TORCH_LAYOUT_TIMEOUT_S + 10) * 1000000000ull;
			return 0;
		}
	}
	err = start_sibling(pid, libpath, j, why, wlen);
	if (!err && j->r.build_id[0])
		j->measuring = inflight_put(j->r.build_id);
	if (err)
		torch_layout_job_free(j);
	return err;
}

/* Waiting for another process's measurement of the same build: 1 when its
 * cache file came, 0 not yet, or a measurement of our own once it is over
 * without one (an unwritable cache). */
static int wait_other(struct torch_layout_job *j, char *why, size_t wlen)
{
	int err;

	if (!cache_read(j->path, &j->r)) {
		j->waiting = false;
		return 1;
	}
	if (clock_ns(CLOCK_MONOTONIC) >= j->deadline) {
		snprintf(why, wlen, "another process's measurement of this build did not end");
		return -ETIMEDOUT;
	}
	if (inflight_find(j->r.build_id) >= 0)
		return 0;
	j->waiting = false;
	err = start_sibling(j->pid, j->libpath, j, why, wlen);
	if (!err)
		j->measuring = inflight_put(j->r.build_id);
	return err;
}

/* The child's end: its status, the report's header and library checked. */
static int finish(struct torch_layout_job *j, char *why, size_t wlen)
{
	int status = 0;

	waitpid(j->child, &status, 0);
	j->child = 0;
	inflight_drop(j); /* its cache file, if any, is written below */
	j->r.run_s = (double)(clock_ns(CLOCK_MONOTONIC) - j->t0) / 1e9;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, wlen, "the target's python could not import torch (exit %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return -ENOEXEC;
	}
	if (strncmp(j->r.text, TORCH_LAYOUT_HEADER, strlen(TORCH_LAYOUT_HEADER))) {
		snprintf(why, wlen, "the target's python gave no layout report");
		return -EPROTO;
	}
	if (!same_lib(j)) {
		snprintf(why, wlen, "the target's python imports another torch than the one it maps");
		return -ESTALE;
	}
	if (j->path[0])
		cache_write(j->dir, j->path, &j->r);
	return 1;
}

int torch_layout_poll(struct torch_layout_job *j, char *why, size_t wlen)
{
	int err;

	why[0] = '\0';
	if (j->waiting) {
		err = wait_other(j, why, wlen);
		if (err < 0)
			torch_layout_job_free(j);
		return err;
	}
	if (!j->child)
		return j->r.text ? 1 : -EINVAL;
	err = collect_some(j, why, wlen);
	if (!err && clock_ns(CLOCK_MONOTONIC) >= j->deadline) {
		snprintf(why, wlen, "the target's python did not report within %d s",
			 TORCH_LAYOUT_TIMEOUT_S);
		err = -ETIMEDOUT;
	}
	if (err > 0)
		err = finish(j, why, wlen);
	if (err) {
		close(j->fd);
		j->fd = -1;
	}
	if (err < 0)
		torch_layout_job_free(j);
	return err;
}

void torch_layout_job_free(struct torch_layout_job *j)
{
	if (j->child > 0) {
		kill(-j->child, SIGKILL); /* its own session: the child and what it started */
		waitpid(j->child, NULL, 0);
		j->child = 0;
	}
	inflight_drop(j);
	j->waiting = false;
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	torch_layout_free(&j->r);
}

void torch_layout_free(struct torch_layout_report *r)
{
	free(r->text);
	r->text = NULL;
	r->len = 0;
}
