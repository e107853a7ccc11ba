/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The one /proc/PID/maps parser, and the one way to open a file a mapping
 * names.  The target chooses its file names (spaces, "(deleted)" at the
 * end, thousands of characters) and may replace a file after mapping it,
 * so lines are parsed strictly and bounded, and the file read is the one
 * mapped (through /proc/PID/map_files), never whatever its path holds now.
 */
#ifndef FVBPF_PROC_MAPS_H
#define FVBPF_PROC_MAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The kernel writes a newline in a path as "\012", so a path of PATH_MAX
 * bytes takes up to four times that; longer lines are not the kernel's. */
#define PROC_MAPS_LINE_MAX (4 * PATH_MAX + 256)

/* One line of /proc/PID/maps. */
struct proc_map {
	unsigned long long start, end, pgoff;
	unsigned long long dev;   /* makedev(major, minor), comparable to st_dev */
	unsigned long long ino;   /* 0: not backed by a file */
	char perms[5];            /* "rw-p" */
	const char *path;         /* as the target sees it, "" if none; valid during the call */
	bool deleted;             /* " (deleted)" followed the path; cut off */
};

/* A mapping of a file (not anonymous, [heap], [vdso], ...). */
bool proc_map_is_file(const struct proc_map *m);

/*
 * Parse one line (without its newline; @line is modified: the path is
 * NUL-terminated in place).  0, or -EINVAL for a line that is not
 * "start-end perms offset major:minor inode [path]".
 */
int proc_maps_parse_line(char *line, size_t len, struct proc_map *m);

/* Call @fn for each mapping until it returns non-zero. */
typedef int (*proc_map_fn)(const struct proc_map *m, void *ctx);

/*
 * Parse maps text from @fd: lines longer than PROC_MAPS_LINE_MAX and lines
 * that do not parse are skipped (counted in *@skipped when not NULL); a
 * last line without a newline counts.  Returns 0, @fn's negative value, or
 * -errno of a failed read.
 */
int proc_maps_read_fd(int fd, proc_map_fn fn, void *ctx, size_t *skipped);

/* The same over /proc/@pid/maps: -ESRCH when there is no such process. */
int proc_maps_foreach(pid_t pid, proc_map_fn fn, void *ctx);

/*
 * Open the file mapped by @m, read-only: through /proc/PID/map_files (the
 * mapped inode itself, even if deleted or replaced since, in any mount
 * namespace; needs CAP_SYS_ADMIN), else through /proc/PID/root/<path> if
 * that still holds the mapped inode.  Only a regular file of at most
 * FILE_OPEN_MAX_SIZE bytes is opened: never a FIFO or a device.  @st gets
 * its status; @kpath (may be NULL) the path by which the kernel reaches the
 * same file (for uprobes).  Returns the descriptor or -errno (-ESTALE: the
 * path holds another file now).
 */
int proc_map_open(pid_t pid, const struct proc_map *m, struct stat *st, char *kpath,
		  size_t kplen);

/* stat() of the file mapped by @m, by the same ways, opening nothing. */
int proc_map_stat(pid_t pid, const struct proc_map *m, struct stat *st);

#endif /* FVBPF_PROC_MAPS_H */
