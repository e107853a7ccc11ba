// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/file/file_open.h"
#include "proc/proc_maps.h"

bool proc_map_is_file(const struct proc_map *m)
{
	return m->ino && m->path[0] == '/';
}

/* ---- one line ---- */

struct cursor {
	const char *p, *end;
};

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

/* A hexadecimal number of 1 to 16 digits (more would overflow). */
static bool take_hex(struct cursor *c, unsigned long long *v)
{
	int n = 0, d;

	*v = 0;
	while (c->p < c->end && (d = hex_digit(*c->p)) >= 0) {
		if (++n > 16)
			return false;
		*v = *v << 4 | (unsigned long long)d;
		c->p++;
	}
	return n > 0;
}

/* A decimal number that fits 64 bits. */
static bool take_dec(struct cursor *c, unsigned long long *v)
{
	const char *start = c->p;

	*v = 0;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (__builtin_mul_overflow(*v, 10, v) ||
		    __builtin_add_overflow(*v, (unsigned long long)(*c->p - '0'), v))
			return false;
		c->p++;
	}
	return c->p > start;
}

static bool take_char(struct cursor *c, char ch)
{
	if (c->p == c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

static bool take_perms(struct cursor *c, char perms[5])
{
	int i;

	if (c->end - c->p < 4)
		return false;
	for (i = 0; i < 4; i++) {
		if (!memchr("rwxsp-", c->p[i], 6))
			return false;
		perms[i] = c->p[i];
	}
	perms[4] = '\0';
	c->p += 4;
	return true;
}

/* "start-end perms offset": the fields before the device. */
static bool take_range(struct cursor *c, struct proc_map *m)
{
	return take_hex(c, &m->start) && take_char(c, '-') && take_hex(c, &m->end) &&
	       m->start < m->end && take_char(c, ' ') && take_perms(c, m->perms) &&
	       take_char(c, ' ') && take_hex(c, &m->pgoff) && take_char(c, ' ');
}

/* "major:minor inode" */
static bool take_file_id(struct cursor *c, struct proc_map *m)
{
	unsigned long long maj, min;

	if (!take_hex(c, &maj) || !take_char(c, ':') || !take_hex(c, &min) ||
	    !take_char(c, ' ') || !take_dec(c, &m->ino))
		return false;
	if (maj > 0xfff || min > 0xfffff) /* the kernel's dev_t: 12 and 20 bits */
		return false;
	m->dev = makedev((unsigned int)maj, (unsigned int)min);
	return true;
}

int proc_maps_parse_line(char *line, size_t len, struct proc_map *m)
{
	static const char del[] = " (deleted)";
	const size_t dlen = sizeof(del) - 1;
	struct cursor c = { line, line + len };
	char *path;
	size_t n;

	memset(m, 0, sizeof(*m));
	m->path = "";
	/* The kernel never writes a NUL; a path cut short by one would name
	 * another file. */
	if (memchr(line, '\0', len) || !take_range(&c, m) || !take_file_id(&c, m))
		return -EINVAL;
	if (c.p == c.end)
		return 0; /* anonymous memory */
	if (!take_char(&c, ' '))
		return -EINVAL;
	while (c.p < c.end && *c.p == ' ')
		c.p++; /* the padding before the path */
	path = line + (c.p - line);
	n = (size_t)(c.end - c.p);
	if (n >= dlen && !memcmp(path + n - dlen, del, dlen)) {
		/* Or a file really named so: map_files opens the mapping,
		 * whatever its name says. */
		m->deleted = true;
		n -= dlen;
	}
	path[n] = '\0';
	m->path = path;
	return 0;
}

/* ---- the whole file ---- */

struct line_reader {
	int fd;
	char *buf;         /* PROC_MAPS_LINE_MAX + 1 bytes */
	size_t have;       /* bytes in buf */
	size_t skipped;
	bool discard;      /* inside a line too long: drop up to its newline */
};

/* Hand one line to @fn, unless it is malformed. */
static int one_line(struct line_reader *r, char *line, size_t len, proc_map_fn fn, void *ctx)
{
	struct proc_map m;

	if (proc_maps_parse_line(line, len, &m)) {
		r->skipped++;
		return 0;
	}
	return fn(&m, ctx);
}

/* Read more bytes: > 0, 0 at the end, or -errno. */
static ssize_t fill(struct line_reader *r)
{
	ssize_t n;

	do
		n = read(r->fd, r->buf + r->have, PROC_MAPS_LINE_MAX - r->have);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	r->have += (size_t)n;
	return n;
}

/* The complete lines in the buffer, then what follows the last newline
 * moved to the front. */
static int drain(struct line_reader *r, proc_map_fn fn, void *ctx)
{
	size_t off = 0, len;
	char *nl;
	int ret = 0;

	while (!ret && (nl = memchr(r->buf + off, '\n', r->have - off))) {
		len = (size_t)(nl - (r->buf + off));
		if (!r->discard)
			ret = one_line(r, r->buf + off, len, fn, ctx);
		r->discard = false;
		off += len + 1;
	}
	memmove(r->buf, r->buf + off, r->have - off);
	r->have -= off;
	if (r->have == PROC_MAPS_LINE_MAX) {
		/* No newline in a full buffer: no line of the kernel's. */
		if (!r->discard)
			r->skipped++;
		r->discard = true;
		r->have = 0;
	}
	return ret;
}

int proc_maps_read_fd(int fd, proc_map_fn fn, void *ctx, size_t *skipped)
{
	struct line_reader r = { .fd = fd };
	ssize_t n;
	int ret = 0;

	r.buf = malloc(PROC_MAPS_LINE_MAX + 1);
	if (!r.buf)
		return -ENOMEM;
	while (!ret && (n = fill(&r)) > 0)
		ret = drain(&r, fn, ctx);
	if (!ret && n < 0)
		ret = (int)n;
	/* A last line without its newline (not the kernel's habit). */
	if (!ret && r.have && !r.discard)
		ret = one_line(&r, r.buf, r.have, fn, ctx);
	if (skipped)
		*skipped = r.skipped;
	free(r.buf);
	return ret < 0 ? ret : 0;
}

int proc_maps_foreach(pid_t pid, proc_map_fn fn, void *ctx)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	ret = proc_maps_read_fd(fd, fn, ctx, NULL);
	close(fd);
	return ret;
}

/* ---- the file behind a mapping ---- */

static void map_files_path(char *p, size_t n, pid_t pid, const struct proc_map *m)
{
	snprintf(p, n, "/proc/%d/map_files/%llx-%llx", (int)pid, m->start, m->end);
}

/* /proc/PID/root<path>: the path as the target sees it, from our side of a
 * mount namespace.  -ENOENT for a deleted file. */
static int root_path(char *p, size_t n, pid_t pid, const struct proc_map *m)
{
	int len;

	if (m->deleted)
		return -ENOENT;
	len = snprintf(p, n, "/proc/%d/root%s", (int)pid, m->path);
	return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

static void copy_path(char *dst, size_t n, const char *src)
{
	if (dst && n)
		snprintf(dst, n, "%s", src);
}

int proc_map_open(pid_t pid, const struct proc_map *m, struct stat *st, char *kpath,
		  size_t kplen)
{
	char p[PATH_MAX + 64];
	int fd, ret;

	if (!proc_map_is_file(m))
		return -ENOENT;
	map_files_path(p, sizeof(p), pid, m);
	fd = open_regular(p, false, FILE_OPEN_MAX_SIZE, st);
	if (fd >= 0 || fd == -ENOEXEC || fd == -EFBIG) {
		/* The mapped file itself, good or not: no other way round. */
		if (fd >= 0)
			copy_path(kpath, kplen, p);
		return fd;
	}
	/* No CAP_SYS_ADMIN: by its path, if that holds the mapped inode
	 * still (a symbolic link put in its place is not followed). */
	ret = root_path(p, sizeof(p), pid, m);
	if (ret)
		return fd;
	fd = open_regular(p, true, FILE_OPEN_MAX_SIZE, st);
	if (fd < 0)
		return fd;
	if (st->st_ino != m->ino) {
		close(fd);
		return -ESTALE;
	}
	copy_path(kpath, kplen, p);
	return fd;
}

int proc_map_stat(pid_t pid, const struct proc_map *m, struct stat *st)
{
	char p[PATH_MAX + 64];
	int ret;

	if (!proc_map_is_file(m))
		return -ENOENT;
	map_files_path(p, sizeof(p), pid, m);
	ret = stat_regular(p, false, FILE_OPEN_MAX_SIZE, st);
	if (!ret || ret == -ENOEXEC || ret == -EFBIG)
		return ret;
	if (root_path(p, sizeof(p), pid, m))
		return ret;
	ret = stat_regular(p, true, FILE_OPEN_MAX_SIZE, st);
	if (!ret && st->st_ino != m->ino)
		ret = -ESTALE;
	return ret;
}
