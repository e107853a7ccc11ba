/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Shared bits of the libFuzzer harnesses (tests/fuzz/README.md). */
#ifndef FVBPF_FUZZ_H
#define FVBPF_FUZZ_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * A memory file holding @size bytes of @data, reused across inputs (one
 * descriptor for the whole run): its descriptor at offset 0, or abort() -
 * a harness that cannot set up must not report "no crash".
 */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0)
		fd = memfd_create("fuzz", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET)) {
		perror("fuzz: memfd");
		abort();
	}
	return fd;
}

/* "/proc/self/fd/N" of @fd, for code that opens a path. */
static inline const char *fuzz_fd_path(int fd)
{
	static char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}

#endif /* FVBPF_FUZZ_H */
