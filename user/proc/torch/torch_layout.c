// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The target's own torch reports its TensorImpl layout and schemas
 * (torch_layout.h): a sibling process of the target's interpreter, as the
 * target's user (torch_layout_sibling.c), bounded in time and output, its
 * report cached per build id and user.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "proc/elf/build_id.h"
#include "proc/torch/torch_layout.h"
#include "proc/torch/torch_layout_sibling.h"

unsigned int torch_layout_timeout_s(void)
{
#ifdef FVBPF_TEST_HOOKS
	/* build/fvbpf-test only: the hostile-sibling tests' short deadline */
	const char *t = getenv("FVBPF_TEST_LAYOUT_TIMEOUT_S");

	if (t && atoi(t) > 0)
		return (unsigned int)atoi(t);
#endif
	return TORCH_LAYOUT_TIMEOUT_S;
}

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

/*
 * Measurements in flight, by build id and user: a second process of the
 * same build and user (the ranks of one job) waits for the first's cache
 * file instead of importing torch once more.  The consumer thread starts
 * and polls jobs; the detach threads end them, hence the lock.
 */
#define INFLIGHT_MAX 64
static char inflight[INFLIGHT_MAX][64];
static pthread_mutex_t inflight_lock = PTHREAD_MUTEX_INITIALIZER;

static int inflight_find_locked(const char *key)
{
	int i;

	for (i = 0; i < INFLIGHT_MAX; i++)
		if (inflight[i][0] && !strcmp(inflight[i], key))
			return i;
	return -1;
}

static bool inflight_has(const char *key)
{
	bool r;

	pthread_mutex_lock(&inflight_lock);
	r = inflight_find_locked(key) >= 0;
	pthread_mutex_unlock(&inflight_lock);
	return r;
}

static bool inflight_put(const char *key)
{
	bool r = false;
	int i;

	pthread_mutex_lock(&inflight_lock);
	for (i = 0; i < INFLIGHT_MAX && !r; i++)
		if (!inflight[i][0]) {
			snprintf(inflight[i], sizeof(inflight[i]), "%s", key);
			r = true;
		}
	pthread_mutex_unlock(&inflight_lock);
	return r;
}

static void inflight_drop(struct torch_layout_job *j)
{
	int i;

	if (!j->measuring)
		return;
	pthread_mutex_lock(&inflight_lock);
	i = inflight_find_locked(j->key);
	if (i >= 0)
		inflight[i][0] = '\0';
	pthread_mutex_unlock(&inflight_lock);
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
	struct layout_sibling *sb = calloc(1, sizeof(*sb));
	int err;

	if (!sb)
		return -ENOMEM;
	err = layout_sibling_setup(pid, libpath, j->uid, j->gid, sb);
	if (err) {
		snprintf(why, wlen, "cannot tell the target's python or site-packages (%s)",
			 strerror(-err));
		goto cleanup;
	}
	err = -ENOMEM;
	j->cap = 1 << 16;
	j->r.text = malloc(j->cap);
	if (!j->r.text)
		goto cleanup;
	j->r.text[0] = '\0';
	j->exited = false;
	err = layout_sibling_spawn(sb, torch_layout_script, &j->child, &j->fd);
	if (err == -EBUSY)
		snprintf(why, wlen, "too many measurements running at once");
	else if (err)
		snprintf(why, wlen, "cannot start the target's python in a PID namespace of its own "
			 "(%s)", strerror(-err));
	if (err)
		goto cleanup;
	j->t0 = clock_ns(CLOCK_MONOTONIC);
	j->deadline = j->t0 + torch_layout_timeout_s() * 1000000000ull;
cleanup:
	free(sb);
	return err;
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
	err = layout_sibling_owner(pid, &j->uid, &j->gid);
	if (err) {
		snprintf(why, wlen, "cannot tell the target's user (%s)", strerror(-err));
		return err;
	}
	torch_build_id(fd, j->r.build_id);
	cache_dir(dir, sizeof(dir));
	if (j->r.build_id[0]) {
		snprintf(j->key, sizeof(j->key), "%s-u%u", j->r.build_id, (unsigned int)j->uid);
		snprintf(j->dir, sizeof(j->dir), "%s", dir);
		snprintf(j->path, sizeof(j->path), "%s/torch-layout-%s.txt", dir, j->key);
		if (!cache_read(j->path, &j->r))
			return 1;
		if (inflight_has(j->key)) {
			j->waiting = true;
			j->t0 = clock_ns(CLOCK_MONOTONIC);
			j->deadline = j->t0 + (torch_layout_timeout_s() + 10) * 1000000000ull;
			return 0;
		}
	}
	err = start_sibling(pid, libpath, j, why, wlen);
	if (!err && j->key[0])
		j->measuring = inflight_put(j->key);
	if (err)
		torch_layout_job_free(j);
	return err;
}

/* Waiting for another process's measurement of the same build and user:
 * 1 when its cache file came, 0 not yet, or a measurement of our own once
 * it is over without one (an unwritable cache). */
static int wait_other(struct torch_layout_job *j, char *why, size_t wlen)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	int err;

	if (now < j->next_look)
		return 0; /* polled on every tick: a job's ranks need not open it that often */
	j->next_look = now + 100000000ull;
	if (!cache_read(j->path, &j->r)) {
		j->waiting = false;
		return 1;
	}
	if (now >= j->deadline) {
		snprintf(why, wlen, "another process's measurement of this build did not end");
		return -ETIMEDOUT;
	}
	if (inflight_has(j->key))
		return 0;
	j->waiting = false;
	err = start_sibling(j->pid, j->libpath, j, why, wlen);
	if (!err)
		j->measuring = inflight_put(j->key);
	return err;
}

/* The child has exited and its output ended: its status, the report's
 * header and library checked. */
static int finish(struct torch_layout_job *j, char *why, size_t wlen)
{
	int status = j->status;

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

/* The deadline passed: why, by what was still missing. */
static int overdue(const struct torch_layout_job *j, char *why, size_t wlen)
{
	unsigned int t = torch_layout_timeout_s();

	if (j->exited)
		snprintf(why, wlen, "a process the target's python started kept its output open "
			 "past %u s (killed)", t);
	else if (j->fd < 0)
		snprintf(why, wlen, "the target's python closed its output but did not exit within "
			 "%u s (killed)", t);
	else
		snprintf(why, wlen, "the target's python did not finish its report within %u s "
			 "(killed)", t);
	return -ETIMEDOUT;
}

/* One look at the sibling: its output read, its exit polled.  1 when both
 * ended, 0 not yet, -errno (@why). */
static int look(struct torch_layout_job *j, char *why, size_t wlen)
{
	int err;

	if (j->fd >= 0) {
		err = collect_some(j, why, wlen);
		if (err < 0)
			return err;
		if (err > 0) {
			close(j->fd);
			j->fd = -1;
		}
	}
	if (!j->exited) {
		/* EOF is not an exit: it may close stdout and go on */
		err = layout_sibling_reap(j->child, &j->status);
		if (err < 0) {
			snprintf(why, wlen, "cannot wait for the target's python (%s)", strerror(-err));
			return err;
		}
		j->exited = err > 0;
	}
	if (j->exited && j->fd < 0)
		return 1;
	return clock_ns(CLOCK_MONOTONIC) >= j->deadline ? overdue(j, why, wlen) : 0;
}

int torch_layout_poll(struct torch_layout_job *j, char *why, size_t wlen)
{
	int err;

	why[0] = '\0';
	layout_sibling_reap_killed();
	if (j->waiting) {
		err = wait_other(j, why, wlen);
		if (err < 0)
			torch_layout_job_free(j);
		return err;
	}
	if (!j->child)
		return j->r.text ? 1 : -EINVAL;
	err = look(j, why, wlen);
	if (err > 0)
		err = finish(j, why, wlen);
	if (err < 0)
		torch_layout_job_free(j);
	return err;
}

void torch_layout_job_free(struct torch_layout_job *j)
{
	if (j->child > 0 && !j->exited)
		layout_sibling_kill(j->child); /* never waits: reaped later if slow */
	j->child = 0;
	j->exited = false;
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

void torch_layout_cache_drop(const char *path)
{
	if (path[0])
		unlink(path);
}

void torch_layout_end(void)
{
	layout_sibling_end(1000);
}

void torch_layout_kill_now(void)
{
	layout_sibling_kill_now();
}
