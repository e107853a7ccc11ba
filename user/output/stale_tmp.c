// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Temporary files that a killed fvbpf left in an output directory
 * (".trace_*.json.tmp.PID", written and then renamed): the next run removes
 * those whose PID no longer runs an fvbpf.  A live fvbpf's are never
 * touched; in doubt, a file stays.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "proc/proc_info.h"
#include "output/stale_tmp.h"

/* What out_open() and outdir_prepare() name their temporary files, and
 * spill files (spill.c). */
static const char *const tmp_prefixes[] = { ".trace_", ".summary_", ".manifest.json", ".spill_" };
#define TMP_MARK ".tmp."
#define PROBE_PREFIX ".fvbpf-write-test."

/* A decimal PID that fills @s: 1..INT_MAX, else 0. */
static pid_t parse_pid(const char *s)
{
	long long v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (pid_t)v;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

pid_t stale_tmp_owner(const char *name)
{
	const char *mark = NULL, *p;
	size_t i;

	if (has_prefix(name, PROBE_PREFIX))
		return parse_pid(name + strlen(PROBE_PREFIX));
	for (i = 0; i < sizeof(tmp_prefixes) / sizeof(tmp_prefixes[0]); i++)
		if (has_prefix(name, tmp_prefixes[i]))
			break;
	if (i == sizeof(tmp_prefixes) / sizeof(tmp_prefixes[0]))
		return 0;
	/* The last ".tmp.": a region name may hold one too. */
	for (p = name; (p = strstr(p, TMP_MARK)); p++)
		mark = p;
	return mark ? parse_pid(mark + strlen(TMP_MARK)) : 0;
}

static bool name_is_fvbpf(const char *s, size_t len)
{
	return len == strlen("fvbpf") && memcmp(s, "fvbpf", len) == 0;
}

/* The base name of /proc/PID/exe is "fvbpf" (" (deleted)" when rebuilt
 * since it started); -1 when it cannot be read. */
static int exe_is_fvbpf(pid_t pid)
{
	static const char deleted[] = " (deleted)";
	char path[64], exe[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	if ((size_t)n > strlen(deleted) && !strcmp(exe + n - strlen(deleted), deleted))
		exe[n - strlen(deleted)] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	return name_is_fvbpf(base, strlen(base));
}

/* /proc/PID/comm is "fvbpf"; -1 when it cannot be read. */
static int comm_is_fvbpf(pid_t pid)
{
	char path[64], comm[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	if (comm[n - 1] == '\n')
		n--;
	return name_is_fvbpf(comm, (size_t)n);
}

/* A zombie (killed, not yet reaped) writes nothing more. */
static bool is_zombie(pid_t pid)
{
	char state = 0;

	return !proc_read_stat(pid, &state, NULL) && (state == 'Z' || state == 'X');
}

/* Whether @pid may still be the fvbpf that writes the file: alive, and its
 * executable or comm says fvbpf, or we cannot tell. */
static bool maybe_live_fvbpf(pid_t pid)
{
	int exe, comm;

	if ((kill(pid, 0) && errno == ESRCH) || is_zombie(pid))
		return false;
	exe = exe_is_fvbpf(pid);
	comm = comm_is_fvbpf(pid);
	if (exe == 1 || comm == 1)
		return true;
	/* Another program now has that PID: the fvbpf is gone. */
	return exe < 0 && comm < 0;
}

/* "1234" or "1234, 5678 and others" into @buf. */
static void list_pids(char *buf, size_t len, const pid_t *pids, unsigned int n, bool more)
{
	size_t off = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? ", " : "", (int)pids[i]);
	if (more && off < len)
		snprintf(buf + off, len - off, " and others");
}

static bool remember_pid(pid_t *pids, unsigned int *n, unsigned int max, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < *n; i++)
		if (pids[i] == pid)
			return true;
	if (*n == max)
		return false;
	pids[(*n)++] = pid;
	return true;
}

int stale_tmp_clean(const char *dir)
{
	pid_t pids[4], pid, self = getpid();
	unsigned int npids = 0, removed = 0;
	bool more = false;
	char who[96];
	struct dirent *e;
	struct stat st;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		pid = stale_tmp_owner(e->d_name);
		if (!pid || pid == self)
			continue;
		/* Regular files only: never follow or remove anything else. */
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (maybe_live_fvbpf(pid))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0)) {
			log_warn("cannot remove %s/%s left by a killed fvbpf: %s", dir, e->d_name,
				 strerror(errno));
			continue;
		}
		removed++;
		if (!remember_pid(pids, &npids, sizeof(pids) / sizeof(pids[0]), pid))
			more = true;
	}
	closedir(d);
	if (removed) {
		list_pids(who, sizeof(who), pids, npids, more);
		log_info("removed %u temporary file%s left in %s by fvbpf PID%s %s, which no longer "
			 "run%s", removed, removed == 1 ? "" : "s", dir, npids > 1 ? "s" : "", who,
			 npids > 1 ? "" : "s");
	}
	return (int)removed;
}
