/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Which processes a dump covers, from /proc: the PIDs given, with their
 * descendants (--children), or those whose command line matches (--match,
 * each with its descendants, as attach follows them); and what to call
 * each, by attach's rule (docs/whole-jobs.md): its rank from the
 * environment, else its PID beside others; a forked copy of another dumped
 * process (a DataLoader worker) is named after it.
 */
#ifndef FVBPF_DUMP_PROCS_H
#define FVBPF_DUMP_PROCS_H

#include <stdbool.h>
#include <sys/types.h>

#include "dump/dump.h"

/* @pids with every descendant alive now added (and those added while the
 * walk ran): *@out malloc'd, *@n of at most DUMP_PROCS_MAX (*@cut: more
 * were left out).  0 or -errno. */
int dump_procs_expand(const pid_t *pids, unsigned int npids, pid_t **out, unsigned int *n,
		      bool *cut);
/* Processes whose command line matches @re (POSIX extended) and whose
 * parent's does not, fvbpf and its ancestors excepted: *@out malloc'd.
 * 0, -ENOENT (none), -EINVAL (a bad pattern: said in @err), -errno. */
int dump_procs_match(const char *re, pid_t **out, unsigned int *n, char *err, size_t errlen);
/* Names, ranks and workers once every process was read. */
void dump_procs_name(struct dump *d);
/* Ranked processes first by rank, then the others by PID. */
void dump_procs_sort(struct dump *d);

#endif /* FVBPF_DUMP_PROCS_H */
