// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The one /proc/PID/maps parser and the one way to open a mapped file
 * (user/proc/proc_maps.c, user/util/file/file_open.c): hostile lines, and
 * mapped files whose path now names something else (a FIFO, another file, a
 * device).  Runs as any user: without CAP_SYS_ADMIN /proc/PID/map_files is
 * closed, and the answers differ, but must stay safe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/file/file_open.h"
#include "proc/proc_maps.h"
#include "unit.h"

/* Parse a copy of @text (a writable buffer, as the reader's). */
static int parse(const char *text, struct proc_map *m, char *buf, size_t len)
{
	snprintf(buf, len, "%s", text);
	return proc_maps_parse_line(buf, strlen(buf), m);
}

static void test_parse_lines(void)
{
	struct proc_map m;
	char buf[512];

	CHECK_EQ(parse("7f0000001000-7f0000003000 r-xp 00002000 fd:01 1234567   "
		       "          /usr/lib/libc.so.6", &m, buf, sizeof(buf)), 0);
	CHECK_EQ(m.start, 0x7f0000001000ull);
	CHECK_EQ(m.end, 0x7f0000003000ull);
	CHECK_EQ(m.pgoff, 0x2000);
	CHECK_EQ(m.dev, makedev(0xfd, 1));
	CHECK_EQ(m.ino, 1234567);
	CHECK_STR(m.perms, "r-xp");
	CHECK_STR(m.path, "/usr/lib/libc.so.6");
	CHECK(!m.deleted && proc_map_is_file(&m));

	/* Anonymous memory, with and without a name. */
	CHECK_EQ(parse("7ffd1000-7ffd2000 rw-p 00000000 00:00 0", &m, buf, sizeof(buf)), 0);
	CHECK_STR(m.path, "");
	CHECK(!proc_map_is_file(&m));
	CHECK_EQ(parse("01000-02000 rw-p 00000000 00:00 0    [heap]", &m, buf, sizeof(buf)), 0);
	CHECK_STR(m.path, "[heap]");
	CHECK(!proc_map_is_file(&m));

	/* Spaces in the path are part of it; an escaped newline stays escaped. */
	CHECK_EQ(parse("1000-2000 r--p 00000000 08:02 77 /tmp/a b  c\\012d", &m, buf,
		       sizeof(buf)), 0);
	CHECK_STR(m.path, "/tmp/a b  c\\012d");

	/* " (deleted)" is cut and remembered; only at the very end. */
	CHECK_EQ(parse("1000-2000 r--p 00000000 08:02 77 /tmp/lib.so (deleted)", &m, buf,
		       sizeof(buf)), 0);
	CHECK_STR(m.path, "/tmp/lib.so");
	CHECK(m.deleted);
	CHECK_EQ(parse("1000-2000 r--p 00000000 08:02 77 /tmp/x (deleted) y", &m, buf,
		       sizeof(buf)), 0);
	CHECK_STR(m.path, "/tmp/x (deleted) y");
	CHECK(!m.deleted);
	CHECK_EQ(parse("1000-2000 r--p 00000000 08:02 77  (deleted)", &m, buf, sizeof(buf)), 0);
	CHECK_STR(m.path, "(deleted)");
	CHECK(!m.deleted && !proc_map_is_file(&m));

	/* The largest values the fields hold. */
	CHECK_EQ(parse("fffffffffffff000-ffffffffffffffff r--p ffffffffffffffff fff:fffff "
		       "18446744073709551615 /x", &m, buf, sizeof(buf)), 0);
	CHECK_EQ(m.ino, UINT64_MAX);
	CHECK_EQ(m.pgoff, UINT64_MAX);
}

static void test_parse_bad_lines(void)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"1000-2000",
		"2000-1000 r--p 00000000 08:02 77 /x",         /* start after end */
		"1000-1000 r--p 00000000 08:02 77 /x",         /* empty */
		"10000000000000000-20000000000000000 r--p 0 08:02 77 /x", /* 17 digits */
		"1000-2000 r--p 00000000 08:02 18446744073709551616 /x",  /* inode wraps */
		"1000-2000 rwz- 00000000 08:02 77 /x",         /* perms */
		"1000-2000 r--p 00000000 1000:02 77 /x",       /* major > 12 bits */
		"1000-2000 r--p 00000000 08:100000 77 /x",     /* minor > 20 bits */
		"1000-2000 r--p 00000000 08:02 /x",            /* no inode */
		"1000-2000 r--p 00000000 08:02 77/x",          /* no space */
		"1000-2000 r--p 0000zz00 08:02 77 /x",
		"1000-2000  r--p 00000000 08:02 77 /x",
		"-2000 r--p 00000000 08:02 77 /x",
		"1000-2000 r--p 00000000 08:02 77 /x\tlib",    /* fine: a tab in a name */
	};
	struct proc_map m;
	char buf[256];
	size_t i;

	for (i = 0; i + 1 < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &m, buf, sizeof(buf)) != -EINVAL)
			printf("# accepted: \"%s\"\n", bad[i]);
		CHECK_EQ(parse(bad[i], &m, buf, sizeof(buf)), -EINVAL);
	}
	CHECK_EQ(parse(bad[i], &m, buf, sizeof(buf)), 0);
	/* A NUL inside the line (never the kernel's): refused, not cut. */
	memcpy(buf, "1000-2000 r--p 00000000 08:02 77 /a\0b", 38);
	CHECK_EQ(proc_maps_parse_line(buf, 38, &m), -EINVAL);
}

/* Maps text from a file descriptor. */
struct collected {
	int n;
	unsigned long long last_start;
	char last_path[64];
};

static int collect(const struct proc_map *m, void *arg)
{
	struct collected *c = arg;

	c->n++;
	c->last_start = m->start;
	snprintf(c->last_path, sizeof(c->last_path), "%.60s", m->path);
	return 0;
}

/* Run the reader over @len bytes of @text. */
static int read_text(const char *text, size_t len, struct collected *c, size_t *skipped)
{
	int fd = memfd_create("maps", MFD_CLOEXEC), ret;

	memset(c, 0, sizeof(*c));
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET)) {
		CHECK(0);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ret = proc_maps_read_fd(fd, collect, c, skipped);
	close(fd);
	return ret;
}

static void test_read_hostile(void)
{
	static const char good[] = "1000-2000 r--p 00000000 08:02 77 /good\n";
	size_t huge = 3 * PROC_MAPS_LINE_MAX, skipped, n;
	struct collected c;
	char *text = malloc(huge + 256);

	CHECK(text != NULL);
	if (!text)
		return;
	/* A line longer than any of the kernel's, then a good one: the long
	 * one is dropped whole, and its tail (a forged line starting where
	 * the line buffer ends) is no line of its own. */
	n = (size_t)snprintf(text, 64, "3000-4000 r--p 00000000 08:02 77 /");
	memset(text + n, 'a', PROC_MAPS_LINE_MAX - n);
	n = PROC_MAPS_LINE_MAX;
	n += (size_t)sprintf(text + n, "5000-6000 r--p 00000000 08:02 77 /fake\n%s", good);
	CHECK_EQ(read_text(text, n, &c, &skipped), 0);
	CHECK_EQ(c.n, 1);
	CHECK_STR(c.last_path, "/good");
	CHECK_EQ(skipped, 1);

	/* Several buffers long. */
	n = (size_t)snprintf(text, 64, "3000-4000 r--p 00000000 08:02 77 /");
	memset(text + n, 'a', huge - n);
	memcpy(text + huge - 1, "\n", 1);
	memcpy(text + huge, good, sizeof(good));
	CHECK_EQ(read_text(text, huge + sizeof(good) - 1, &c, &skipped), 0);
	CHECK_EQ(c.n, 1);
	CHECK_STR(c.last_path, "/good");
	CHECK_EQ(skipped, 1);

	/* A long line with no newline at all, then the end. */
	memset(text, 'b', huge);
	CHECK_EQ(read_text(text, huge, &c, &skipped), 0);
	CHECK_EQ(c.n, 0);
	CHECK_EQ(skipped, 1);

	/* The longest line allowed still parses. */
	n = (size_t)snprintf(text, 64, "7000-8000 r--p 00000000 08:02 77 /");
	memset(text + n, 'c', PROC_MAPS_LINE_MAX - 1 - n);
	text[PROC_MAPS_LINE_MAX - 1] = '\n';
	CHECK_EQ(read_text(text, PROC_MAPS_LINE_MAX, &c, &skipped), 0);
	CHECK_EQ(c.n, 1);
	CHECK_EQ(c.last_start, 0x7000);
	CHECK_EQ(skipped, 0);

	/* The last line without its newline; malformed lines in between. */
	n = (size_t)snprintf(text, 256, "%sjunk\n\n%s", good, "9000-a000 r--p 0 00:00 0 /last");
	CHECK_EQ(read_text(text, n, &c, &skipped), 0);
	CHECK_EQ(c.n, 2);
	CHECK_STR(c.last_path, "/last");
	CHECK_EQ(skipped, 2);
	free(text);
}

static int stop_at_second(const struct proc_map *m, void *arg)
{
	(void)m;
	return ++*(int *)arg == 2 ? -EIO : 0;
}

static void test_read_stops(void)
{
	int n = 0;

	/* Our own maps: many lines; the callback's error ends the walk. */
	CHECK_EQ(proc_maps_foreach(getpid(), stop_at_second, &n), -EIO);
	CHECK_EQ(n, 2);
	CHECK_EQ(proc_maps_foreach(-5, stop_at_second, &n), -ESRCH);
}

/* ---- opening mapped files ---- */

struct find_ctx {
	uintptr_t addr;
	struct proc_map m;
	char path[PATH_MAX];
	bool found;
};

static int find_addr(const struct proc_map *m, void *arg)
{
	struct find_ctx *c = arg;

	if (c->addr < m->start || c->addr >= m->end)
		return 0;
	c->m = *m;
	snprintf(c->path, sizeof(c->path), "%s", m->path);
	c->m.path = c->path;
	c->found = true;
	return 1;
}

/* Our own maps line for @addr. */
static bool own_map(const void *addr, struct find_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->addr = (uintptr_t)addr;
	return !proc_maps_foreach(getpid(), find_addr, c) && c->found;
}

static const char *tmpdir(void)
{
	return getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
}

/* A temporary file holding @text, mapped: its mapping, or MAP_FAILED. */
static void *map_text(const char *name, const char *text, char *path, size_t plen)
{
	size_t len = strlen(text);
	void *map;
	int fd;

	snprintf(path, plen, "%s/%s", tmpdir(), name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return MAP_FAILED;
	if (write(fd, text, len) != (ssize_t)len) {
		close(fd);
		return MAP_FAILED;
	}
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	return map;
}

static bool have_map_files(void)
{
	char p[64];
	struct stat st;
	void *code = (void *)(uintptr_t)&have_map_files;
	struct find_ctx c;

	if (!own_map(code, &c))
		return false;
	snprintf(p, sizeof(p), "/proc/self/map_files/%llx-%llx", c.m.start, c.m.end);
	return stat(p, &st) == 0;
}

/* What the descriptor reads: the first bytes of the file. */
static void expect_content(int fd, const char *want)
{
	char buf[32] = "";
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

	CHECK(n >= 0);
	if (n >= 0)
		buf[n] = '\0';
	CHECK_STR(buf, want);
}

static void on_alarm(int sig)
{
	(void)sig;
	/* An open that blocked: fail loudly rather than hang the suite. */
	static const char msg[] = "not ok - proc_map_open blocked\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(2);
}

/*
 * The path of a mapping now names a FIFO, then another regular file: the
 * mapped file itself is read (map_files), or, without CAP_SYS_ADMIN,
 * nothing: never the FIFO (an open that would block) nor the other file.
 */
static void test_open_swapped(void)
{
	char path[PATH_MAX], fifo[PATH_MAX], other[PATH_MAX], kpath[PATH_MAX];
	bool mf = have_map_files();
	struct find_ctx c;
	struct stat st;
	void *map;
	int fd;

	map = map_text("fvbpf-maps-orig", "original", path, sizeof(path));
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK(own_map(map, &c));
	snprintf(fifo, sizeof(fifo), "%s/fvbpf-maps-fifo", tmpdir());
	unlink(fifo);
	CHECK(mkfifo(fifo, 0600) == 0);
	signal(SIGALRM, on_alarm);
	alarm(10);

	/* The same mapping, as a maps line naming the FIFO would say it. */
	c.m.path = fifo;
	fd = proc_map_open(getpid(), &c.m, &st, kpath, sizeof(kpath));
	if (mf) {
		expect_content(fd, "original");
		CHECK(!strncmp(kpath, "/proc/", 6) && strstr(kpath, "/map_files/"));
	} else {
		CHECK_EQ(fd, -ENOEXEC);
	}
	if (fd >= 0)
		close(fd);

	/* Naming another regular file: never read. */
	CHECK(map_text("fvbpf-maps-other", "impostor", other, sizeof(other)) != MAP_FAILED);
	c.m.path = other;
	fd = proc_map_open(getpid(), &c.m, &st, NULL, 0);
	if (mf)
		expect_content(fd, "original");
	else
		CHECK_EQ(fd, -ESTALE);
	if (fd >= 0)
		close(fd);
	CHECK_EQ(proc_map_stat(getpid(), &c.m, &st), mf ? 0 : -ESTALE);

	/* A device (no mapping at that range any more): refused unopened. */
	c.m.path = "/dev/null";
	c.m.start = 0x1000;
	c.m.end = 0x2000;
	CHECK_EQ(proc_map_open(getpid(), &c.m, &st, NULL, 0), -ENOEXEC);
	alarm(0);
	munmap(map, 4096);
	unlink(path);
	unlink(fifo);
	unlink(other);
}

/* A deleted file, and files named with spaces, a newline, "(deleted)". */
static void test_open_odd_names(void)
{
	static const char *const names[] = { "fvbpf maps a b", "fvbpf-maps\nnl",
					     "fvbpf-maps (deleted)" };
	char path[PATH_MAX];
	bool mf = have_map_files();
	struct find_ctx c;
	struct stat st;
	size_t i;
	void *map;
	int fd;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		map = map_text(names[i], "named", path, sizeof(path));
		CHECK(map != MAP_FAILED && own_map(map, &c));
		if (map == MAP_FAILED)
			continue;
		/* A newline comes escaped; "(deleted)" reads as deleted. */
		CHECK(!strchr(c.path, '\n'));
		CHECK_EQ(c.m.deleted, i == 2);
		fd = proc_map_open(getpid(), &c.m, &st, NULL, 0);
		if (mf || i == 0)
			expect_content(fd, "named");
		else
			CHECK(fd < 0);
		if (fd >= 0)
			close(fd);
		munmap(map, 4096);
		unlink(path);
	}

	/* Deleted while mapped: only map_files reaches it. */
	map = map_text("fvbpf-maps-gone", "gone", path, sizeof(path));
	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	unlink(path);
	CHECK(own_map(map, &c));
	CHECK(c.m.deleted);
	CHECK(!strcmp(c.path, path));
	fd = proc_map_open(getpid(), &c.m, &st, NULL, 0);
	if (mf)
		expect_content(fd, "gone");
	else
		CHECK(fd == -EPERM || fd == -EACCES);
	if (fd >= 0)
		close(fd);
	munmap(map, 4096);
}

/* open_regular() itself: a FIFO does not block, a device is not opened,
 * a symbolic link is refused when asked, the size cap holds. */
static void test_open_regular(void)
{
	char fifo[PATH_MAX], link[PATH_MAX], file[PATH_MAX];
	struct stat st;
	void *map;
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/fvbpf-or-fifo", tmpdir());
	snprintf(link, sizeof(link), "%s/fvbpf-or-link", tmpdir());
	unlink(fifo);
	unlink(link);
	CHECK(mkfifo(fifo, 0600) == 0);
	signal(SIGALRM, on_alarm);
	alarm(10);
	CHECK_EQ(open_regular(fifo, true, FILE_OPEN_MAX_SIZE, &st), -ENOEXEC);
	alarm(0);
	CHECK_EQ(open_regular("/dev/null", false, FILE_OPEN_MAX_SIZE, &st), -ENOEXEC);
	CHECK_EQ(open_regular("/", false, FILE_OPEN_MAX_SIZE, &st), -ENOEXEC);
	map = map_text("fvbpf-or-file", "0123456789", file, sizeof(file));
	CHECK(map != MAP_FAILED);
	CHECK(symlink(file, link) == 0);
	/* O_PATH | O_NOFOLLOW: the link itself, which is no regular file. */
	CHECK_EQ(open_regular(link, true, FILE_OPEN_MAX_SIZE, &st), -ENOEXEC);
	fd = open_regular(link, false, FILE_OPEN_MAX_SIZE, &st);
	expect_content(fd, "0123456789");
	if (fd >= 0)
		close(fd);
	CHECK_EQ(open_regular(file, true, 9, &st), -EFBIG);
	CHECK_EQ(stat_regular(file, true, 10, &st), 0);
	CHECK_EQ(st.st_size, 10);
	CHECK_EQ(stat_regular(fifo, true, 10, &st), -ENOEXEC);
	if (map != MAP_FAILED)
		munmap(map, 4096);
	unlink(file);
	unlink(link);
	unlink(fifo);
}

int main(void)
{
	RUN(test_parse_lines);
	RUN(test_parse_bad_lines);
	RUN(test_read_hostile);
	RUN(test_read_stops);
	RUN(test_open_swapped);
	RUN(test_open_odd_names);
	RUN(test_open_regular);
	UNIT_DONE();
}
