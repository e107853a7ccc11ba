/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Taking charge of one target's markers: one fvbpf per process (a lock),
 * the library's fork-wiped control page (epochs), and the probe functions'
 * code, which a process forked from a traced parent inherits patched.
 */
#ifndef FVBPF_CONTROL_PAGE_H
#define FVBPF_CONTROL_PAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/proc_info.h"

struct control_page {
	pid_t pid;
	int lock_fd;             /* held while we trace the process */
	char lock_path[128];     /* empty: no lock held (a zeroed struct holds none) */
	uint64_t page;           /* struct fvbpf_control in the target */
	uint32_t magic;          /* as found: 0 in a forked child */
	unsigned int repaired;   /* probe functions whose stale patch we undid */
};

/* Directory of the per-process locks; a test may point it elsewhere. */
#define TARGET_LOCK_DIR "/run/fvbpf"

/*
 * Lock the process for this fvbpf and, with @markers, find its control
 * page and make sure its probe functions hold the library's own bytes
 * (repairing those a fork inherited).  Says what is wrong in one line and
 * returns -errno.
 */
int control_page_open(struct control_page *c, const struct proc_target *p, bool markers);
/* Write an epoch: even keeps the markers off the probes, odd lets them on. */
int control_page_set_epoch(const struct control_page *c, uint32_t epoch);
/* The epoch under which the markers call the _ts region probes (0: none). */
int control_page_set_marker_ts(const struct control_page *c, uint32_t epoch);
/* An odd epoch that no thread of the target can hold from an earlier
 * attach, its parent's included. */
uint32_t control_page_fresh_epoch(const struct control_page *c);
void control_page_close(struct control_page *c);

/* Compare @len bytes at @addr of process @pid with @want; with @repair,
 * write @want over them through /proc/PID/mem.  1 differed (and was
 * repaired), 0 equal, -errno.  (Exposed for tests.) */
int text_check_bytes(pid_t pid, uint64_t addr, const uint8_t *want, size_t len, bool repair);

/* A target's control page, holding no lock until control_page_open() (NULL:
 * out of memory); control_page__free() closes it first (NULL is fine). */
struct control_page *control_page__new(void);
void control_page__free(struct control_page *c);

#endif /* FVBPF_CONTROL_PAGE_H */
