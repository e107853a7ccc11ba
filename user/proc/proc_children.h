/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A process's forked children, in the order it forked them. */
#ifndef FVBPF_PROC_CHILDREN_H
#define FVBPF_PROC_CHILDREN_H

#include <sys/types.h>

/*
 * A DataLoader worker's worker_id: its place (0, 1, ...) among @trainer's
 * live children that run its image without an exec (forked copies), or
 * among those the spawn method started, or among the forks of @trainer's
 * forkserver, ordered by start time, then PID; -1 when it is none of
 * these.  A DataLoader starts its workers in worker_id order, so this is
 * their worker_id while one loader's workers live at a time.
 */
int proc_worker_rank(pid_t trainer, pid_t worker);

/* How many of @parent's live children run its image without an exec
 * (0 on any error). */
int proc_forked_children(pid_t parent);

#endif /* FVBPF_PROC_CHILDREN_H */
