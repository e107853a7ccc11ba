// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file/cache_drop.h"
#include "util/file/output_files.h"

/* The invoking user under sudo, else -1 (leave ownership alone). */
static void sudo_owner(uid_t *uid, gid_t *gid)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (geteuid() != 0 || !u || !g)
		return;
	*uid = (uid_t)strtoul(u, NULL, 10);
	*gid = (gid_t)strtoul(g, NULL, 10);
}

static void give_to_user(const char *path)
{
	uid_t uid;
	gid_t gid;

	sudo_owner(&uid, &gid);
	if (uid != (uid_t)-1 && chown(path, uid, gid)) {
		/* Best effort: the file is still there for root. */
	}
}

static void give_fd_to_user(int fd)
{
	uid_t uid;
	gid_t gid;

	sudo_owner(&uid, &gid);
	if (uid != (uid_t)-1 && fchown(fd, uid, gid)) {
		/* Best effort, as above. */
	}
}

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX], *p;
	struct stat st;

	if (strlen(dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, dir);
	for (p = buf + 1; ; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = '\0';
		if (stat(buf, &st)) {
			if (errno != ENOENT)
				return -errno;
			if (!mkdir(buf, 0755)) {
				give_to_user(buf);
			} else if (errno != EEXIST) {
				return -errno;
			} else if (stat(buf, &st) || !S_ISDIR(st.st_mode)) {
				/* Another fvbpf (the next node's, on a shared
				 * file system) made it between our stat and
				 * mkdir: fine if it is a directory. */
				return -ENOTDIR;
			}
		} else if (!S_ISDIR(st.st_mode)) {
			return -ENOTDIR;
		}
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

int outdir_prepare(const char *dir, char *err, size_t errlen)
{
	char probe[PATH_MAX];
	int fd, ret;

	ret = mkdir_p(dir);
	if (ret) {
		snprintf(err, errlen, "cannot create output directory %s: %s; choose another with -o",
			 dir, strerror(-ret));
		return ret;
	}
	snprintf(probe, sizeof(probe), "%s/.fvbpf-write-test.%d", dir, getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "output directory %s is not writable: %s; choose another with -o",
			 dir, strerror(errno));
		return ret;
	}
	close(fd);
	unlink(probe);
	return 0;
}

int out_open(struct out_file *of, const char *dir, const char *name)
{
	int fd, n;

	memset(of, 0, sizeof(*of));
	n = snprintf(of->path, sizeof(of->path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(of->path))
		return -ENAMETOOLONG;
	n = snprintf(of->tmp, sizeof(of->tmp), "%s/.%s.tmp.%d", dir, name, getpid());
	if (n < 0 || (size_t)n >= sizeof(of->tmp))
		return -ENAMETOOLONG;
	/* Never through a planted symlink; never someone else's file.  A
	 * leftover is removed only when there is one: an unlink per file was
	 * a twentieth of the writer with short segments. */
	fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		unlink(of->tmp);
		fd = open(of->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	if (fd < 0)
		return -errno;
	give_fd_to_user(fd);
	of->f = fdopen(fd, "w");
	if (!of->f) {
		n = -errno;
		close(fd);
		unlink(of->tmp);
		return n;
	}
	setvbuf(of->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

int out_commit(struct out_file *of)
{
	int ret = 0;

	errno = 0;
	if (fflush(of->f) || ferror(of->f))
		ret = -(errno ? errno : EIO);
	if (!ret)
		cache_drop_add(fcntl(fileno(of->f), F_DUPFD_CLOEXEC, 0));
	if (fclose(of->f) && !ret)
		ret = -(errno ? errno : EIO);
	of->f = NULL;
	if (!ret && rename(of->tmp, of->path))
		ret = -errno;
	if (ret)
		unlink(of->tmp);
	return ret;
}

void out_abort(struct out_file *of)
{
	if (of->f)
		fclose(of->f);
	of->f = NULL;
	unlink(of->tmp);
}

void out_sanitize_name(char *dst, size_t len, const char *src)
{
	size_t i;

	if (!len)
		return;
	for (i = 0; src[i] && i < len - 1; i++) {
		char c = src[i];

		dst[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-') ? c : '_';
	}
	dst[i] = '\0';
}
