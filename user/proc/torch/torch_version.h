/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Which PyTorch a process runs: the wheel's torch/version.py beside the
 * mapped torch/lib/libtorch_cpu.so, read through /proc/PID/root.  The
 * operator fast path is asked for only on versions whose RecordFunction
 * callback layout was checked (tests/lib/torch_abi_check.cpp).
 */
#ifndef FVBPF_TORCH_VERSION_H
#define FVBPF_TORCH_VERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The __version__ string of the torch whose libtorch_cpu.so @pid maps at
 * @lib (as /proc/PID/maps names it) into @ver: 0 or -errno. */
int torch_version_read(pid_t pid, const char *lib, char *ver, size_t len);
/* Parse __version__ out of @text (a version.py): 0 or -ENOENT. */
int torch_version_parse(const char *text, char *ver, size_t len);
/* The callback layout fvbpf's library knows (FVBPF_FAST_LAYOUT_*) for
 * @ver, 0 for a version not checked. */
unsigned int torch_version_layout(const char *ver);

#endif /* FVBPF_TORCH_VERSION_H */
