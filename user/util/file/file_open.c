// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/file/file_open.h"

static int check_regular(const struct stat *st, uint64_t max_size)
{
	if (!S_ISREG(st->st_mode))
		return -ENOEXEC;
	if (st->st_size < 0 || (uint64_t)st->st_size > max_size)
		return -EFBIG;
	return 0;
}

/* An O_PATH descriptor of @path that passed check_regular(), or -errno. */
static int open_path_checked(const char *path, bool nofollow, uint64_t max_size, struct stat *st)
{
	int fd, ret;

	fd = open(path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	ret = fstat(fd, st) ? -errno : check_regular(st, max_size);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int stat_regular(const char *path, bool nofollow, uint64_t max_size, struct stat *st)
{
	int fd = open_path_checked(path, nofollow, max_size, st);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int open_regular(const char *path, bool nofollow, uint64_t max_size, struct stat *st)
{
	char self[64];
	struct stat again;
	int pfd, fd;

	pfd = open_path_checked(path, nofollow, max_size, st);
	if (pfd < 0)
		return pfd;
	/* Reopening the O_PATH descriptor reaches the very inode checked,
	 * whatever happened to @path since.  O_NONBLOCK: a file with a lease
	 * or a mandatory lock fails at once instead of waiting. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		fd = -errno;
	close(pfd);
	if (fd < 0)
		return fd;
	/* The same inode, so the same type; its size may have changed. */
	if (fstat(fd, &again) || again.st_ino != st->st_ino || again.st_dev != st->st_dev ||
	    check_regular(&again, max_size)) {
		close(fd);
		return -ESTALE;
	}
	*st = again;
	return fd;
}

/* openat2() beneath @dirfd, no link anywhere. */
static int open_beneath(int dirfd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)flags,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

	if (fd >= 0)
		return (int)fd;
	/* Before Linux 5.6 (ENOSYS), or a seccomp filter that does not know
	 * openat2 (EPERM, some container runtimes): a plain name with
	 * O_NOFOLLOW resolves the same. */
	if (errno != ENOSYS && errno != EPERM)
		return -errno;
	if (strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		return -EXDEV;
	fd = openat(dirfd, name, flags);
	return fd >= 0 ? (int)fd : -errno;
}

int open_regular_at(int dirfd, const char *name, uint64_t max_size, struct stat *st)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
	int fd, ret;

	if (dirfd == AT_FDCWD) {
		fd = open(name, flags);
		if (fd < 0)
			fd = -errno;
	} else {
		fd = open_beneath(dirfd, name, flags);
	}
	if (fd == -ENXIO)
		return -ENOEXEC; /* a socket, or a device without its driver */
	if (fd < 0)
		return fd;
	ret = fstat(fd, st) ? -errno : check_regular(st, max_size);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

const char *open_regular_why(int err)
{
	switch (err) {
	case -ELOOP:
		return "a symbolic link";
	case -EXDEV:
		return "outside the directory";
	case -ENOEXEC:
		return "not a regular file";
	case -EFBIG:
		return "too large";
	default:
		return strerror(-err);
	}
}
