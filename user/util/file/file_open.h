/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Opening a file that a traced process named (a path in its /proc/PID/maps)
 * without letting it choose what the open does: the file is looked at
 * through an O_PATH descriptor first, which opens nothing, and only a
 * regular file of a bounded size is then opened for reading.  A FIFO would
 * block the reader, a device (/dev/nvidia*) would run its driver's open.
 */
#ifndef FVBPF_FILE_OPEN_H
#define FVBPF_FILE_OPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

/* Larger files are not read: no ELF we need comes near (libtorch_cuda.so
 * is about 2 GiB). */
#define FILE_OPEN_MAX_SIZE (16ull << 30)

/*
 * Open @path read-only if it is a regular file of at most @max_size bytes;
 * @nofollow refuses a symbolic link as the last component (a path from
 * maps never is one, a swapped file may be).  Magic links (/proc/PID/
 * map_files/..., /proc/PID/root) are followed unless @nofollow.  @st gets
 * the file's status.  Returns the descriptor (O_CLOEXEC), -ENOEXEC for a
 * file that is not regular, -EFBIG for one too large, or another -errno.
 */
int open_regular(const char *path, bool nofollow, uint64_t max_size, struct stat *st);

/* stat() of @path under the same rules, without opening it for reading. */
int stat_regular(const char *path, bool nofollow, uint64_t max_size, struct stat *st);

/*
 * Open @name read-only for `fvbpf report` and `merge`, which run as root on
 * directories other users may write.  With @dirfd a directory, @name must
 * resolve beneath it without any symbolic link (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS; before Linux 5.6, a name without '/' and O_NOFOLLOW);
 * with AT_FDCWD, @name is a path the user gave and only its last component
 * must not be a link.  The file is opened first (O_NONBLOCK: a FIFO does
 * not block), then its descriptor must be a regular file of at most
 * @max_size bytes, so a swap after any check changes nothing.  Returns the
 * descriptor (O_CLOEXEC), -ELOOP for a symbolic link, -EXDEV for a name
 * leaving the directory, -ENOEXEC for a file that is not regular, -EFBIG,
 * or another -errno.
 */
int open_regular_at(int dirfd, const char *name, uint64_t max_size, struct stat *st);
/* Why open_regular_at() refused, for a message: "a symbolic link", ... */
const char *open_regular_why(int err);

#endif /* FVBPF_FILE_OPEN_H */
