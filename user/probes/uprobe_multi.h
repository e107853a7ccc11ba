/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Session uprobes through BPF_LINK_CREATE with uprobe_multi, which
 * libbpf 1.1 predates: one link per (file, process) for all of its probed
 * functions, each with its own cookie, and one program that sees both
 * entry and return (and can skip the return).
 */
#ifndef FVBPF_UPROBE_MULTI_H
#define FVBPF_UPROBE_MULTI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* enum bpf_attach_type values newer than Debian 12's UAPI headers. */
#define FVBPF_ATTACH_UPROBE_MULTI   48
#define FVBPF_ATTACH_UPROBE_SESSION 57

/* Returns the link fd (close it to detach) or -errno. */
int uprobe_session_attach(int prog_fd, const char *path, pid_t pid, const uint64_t *offsets,
			  const uint64_t *cookies, size_t cnt);

/*
 * One plain uprobe (no return) as a uprobe_multi link, the semaphore at
 * @ref_ctr_offset raised while it exists (0: none).  Unlike a perf-event
 * uprobe, closing it does not wait for the kernel's trace-event mutex, so
 * many processes detach concurrently.  The link fd or -errno.
 */
int uprobe_multi_attach_one(int prog_fd, const char *path, pid_t pid, uint64_t offset,
			    uint64_t ref_ctr_offset, uint64_t cookie);

#endif /* FVBPF_UPROBE_MULTI_H */
