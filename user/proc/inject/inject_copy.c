// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The library copy `--inject` places in the target's filesystem. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fvbpf_events.h"
#include "proc/inject/inject_copy.h"
#include "proc/proc_info.h"
#include "proc/proc_read.h"

#define INJECT_LIB_MAX (64u << 20)   /* bytes of libfvbpf.so we copy */

static const char *const copy_dirs[] = { "dev/shm", "tmp", "var/tmp", "run" };
#define NDIRS (sizeof(copy_dirs) / sizeof(copy_dirs[0]))

static int open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

static int open_root(pid_t pid)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	return open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n, w, done;

	for (;;) {
		n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		total += (size_t)n;
		if (total > INJECT_LIB_MAX)
			return -EFBIG;
		for (done = 0; done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
		}
	}
}

static uint64_t random_u64(void)
{
	struct timespec ts;
	uint64_t rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), 0) == sizeof(rnd))
		return rnd;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^ (uint64_t)getpid() << 48;
}

/* The first usable directory's fd, with a new file @name in it (*fd), or
 * -ENOENT. */
static int create_in_dirs(int rootfd, const char *name, int *fd, size_t *which)
{
	struct statvfs sv;
	size_t i;
	int dirfd;

	for (i = 0; i < NDIRS; i++) {
		dirfd = open_in_root(rootfd, copy_dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			continue;
		if (!fstatvfs(dirfd, &sv) && !(sv.f_flag & (ST_NOEXEC | ST_RDONLY))) {
			*fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				     0644);
			if (*fd >= 0) {
				*which = i;
				return dirfd;
			}
		}
		close(dirfd);
	}
	return -ENOENT;
}

int lib_copy_make(pid_t pid, const char *lib, struct lib_copy *c, char *why, size_t wlen)
{
	struct stat st;
	int rootfd, src, fd = -1, err;
	size_t which = 0;

	c->dirfd = -1;
	src = open(lib, O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, wlen, "cannot read %.100s: %s", lib, strerror(src < 0 ? errno : EINVAL));
		if (src >= 0)
			close(src);
		return -ENOENT;
	}
	rootfd = open_root(pid);
	if (rootfd < 0) {
		err = -errno;
		snprintf(why, wlen, "cannot open /proc/%d/root: %s", pid, strerror(-err));
		close(src);
		return err;
	}
	snprintf(c->name, sizeof(c->name), "%s%d-%d-%016llx.so", FVBPF_INJECT_PREFIX, pid,
		 (int)getpid(), (unsigned long long)random_u64());
	c->dirfd = create_in_dirs(rootfd, c->name, &fd, &which);
	close(rootfd);
	if (c->dirfd < 0) {
		c->dirfd = -1;
		snprintf(why, wlen, "no writable, executable directory (/dev/shm, /tmp, /var/tmp, "
			 "/run) in the target's filesystem for the library copy");
		close(src);
		return -ENOENT;
	}
	snprintf(c->target_path, sizeof(c->target_path), "/%s/%s", copy_dirs[which], c->name);
	err = copy_fd(src, fd);
	if (!err && (fchmod(fd, 0644) || fsync(fd)))
		err = -errno;
	close(src);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		snprintf(why, wlen, "cannot copy %.80s into the target's %.100s: %s", lib,
			 c->target_path, strerror(-err));
		lib_copy_remove(c);
	}
	return err;
}

void lib_copy_remove(struct lib_copy *c)
{
	if (c->dirfd < 0)
		return;
	unlinkat(c->dirfd, c->name, 0);
	close(c->dirfd);
	c->dirfd = -1;
}

pid_t lib_copy_owner(const char *name)
{
	size_t plen = sizeof(FVBPF_INJECT_PREFIX) - 1;
	unsigned long long rnd;
	int target, owner, used = 0;

	if (strncmp(name, FVBPF_INJECT_PREFIX, plen))
		return 0;
	if (sscanf(name + plen, "%9d-%9d-%16llx.so%n", &target, &owner, &rnd, &used) != 3 ||
	    !used || name[plen + (size_t)used] || target <= 0 || owner <= 0)
		return 0;
	return (pid_t)owner;
}

/* Whether @pid is a running maker of copies (its command name says so). */
static bool owner_runs(pid_t pid)
{
	char comm[32];

	return !proc_read_comm(pid, pid, comm, sizeof(comm)) && !strcmp(comm, INJECT_WORKER_COMM);
}

static int sweep_dir(int dirfd)
{
	struct dirent *e;
	struct stat st;
	pid_t owner;
	int fd, n = 0;
	DIR *d;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((e = readdir(d))) {
		owner = lib_copy_owner(e->d_name);
		if (!owner || owner_runs(owner))
			continue;
		/* Only our regular files: never follow what someone put there. */
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (!unlinkat(dirfd, e->d_name, 0))
			n++;
	}
	closedir(d);
	return n;
}

int lib_copy_sweep(pid_t pid)
{
	int rootfd, dirfd, n = 0;
	size_t i;

	rootfd = open_root(pid);
	if (rootfd < 0)
		return 0;
	for (i = 0; i < NDIRS; i++) {
		dirfd = open_in_root(rootfd, copy_dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			continue;
		n += sweep_dir(dirfd);
		close(dirfd);
	}
	close(rootfd);
	return n;
}
