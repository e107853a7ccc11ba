/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The hint for a -p process fvbpf cannot trace whose descendants it can. */
#ifndef FVBPF_LAUNCHER_HINT_H
#define FVBPF_LAUNCHER_HINT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Look for descendants of @pid that map the fvbpf markers or (with
 * @torch_ops) libtorch_cpu; when some do, write "; its children 4242,
 * 4243 map libtorch_cpu: attach with --children (or -p 4242,4243)" into
 * @buf, else "".  The count found, or -errno.
 */
int launcher_hint(pid_t pid, bool torch_ops, char *buf, size_t len);

#endif /* FVBPF_LAUNCHER_HINT_H */
