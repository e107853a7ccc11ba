/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The processes a --children/--match attach follows: what fvbpf knows of
 * each (how it came, whether it is traced, listed or gone), fed by the
 * fork/exec/exit records and by /proc scans.  No I/O: the caller reads
 * /proc and decides; this keeps the races testable.
 */
#ifndef FVBPF_PROC_TREE_H
#define FVBPF_PROC_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_TREE_MAX 16384     /* entries kept, exited ones included */

enum tree_origin {
	TREE_GIVEN,             /* -p with --children */
	TREE_MATCHED,           /* --match */
	TREE_AT_ATTACH,         /* a descendant alive at attach (or found by a rescan) */
	TREE_FORKED,            /* forked while attached */
	TREE_EXECD,             /* exec'd while attached (a new program in a known PID) */
};

enum tree_state {
	TREE_CANDIDATE,         /* traced once it maps fvbpf markers or libtorch_cpu */
	TREE_TRACED,            /* a session target */
	TREE_FORK_COPY,         /* forked from a traced process, no exec: listed only */
	TREE_OVER_LIMIT,        /* traceable, but the target limit was reached */
	TREE_ATTACH_FAILED,     /* exited or refused while fvbpf attached */
};

struct tree_proc {
	pid_t pid, ppid;
	unsigned long long start;   /* /proc/PID/stat starttime (ticks): with the
				     * PID, the process's identity; 0 unknown */
	uint64_t seen_ns;           /* when fvbpf learnt of it (or of its exec) */
	uint64_t next_check_ns;     /* candidates: next look at its mappings */
	enum tree_origin origin;
	enum tree_state state;
	bool exited;
	bool replaced;              /* exec'd: a newer entry holds the PID */
	int slot;                   /* TREE_TRACED: the session target, else -1 */
	uint64_t maps_sig;          /* candidates: /proc/PID/maps when last looked at */
	uint64_t checked_ns;        /* when its mappings were found traceable (0: never) */
	signed char rank_env;       /* a rank in its environment: 1, 0, -1 not read yet */
	char comm[32];
};

struct proc_tree {
	struct tree_proc *procs;
	size_t n, cap;
	size_t live;                /* entries neither exited nor replaced */
	uint64_t not_kept;          /* past PROC_TREE_MAX */
	uint64_t forks, execs, exits;
};

void proc_tree_init(struct proc_tree *t);
void proc_tree_free(struct proc_tree *t);
/* The live entry of @pid (the newest), or NULL. */
struct tree_proc *proc_tree_find(struct proc_tree *t, pid_t pid);
/*
 * A process fvbpf learnt of: added as a candidate, or a fork copy when
 * @parent_traced.  A live entry with the same PID and start is the same
 * process (found twice, by a scan and a record): returned as it is; one
 * with another start missed its exit and is closed first.  NULL when full.
 */
struct tree_proc *proc_tree_add(struct proc_tree *t, pid_t pid, pid_t ppid,
				unsigned long long start, enum tree_origin origin,
				bool parent_traced, uint64_t now_ns);
/* A fork record: the parent's state decides (a traced parent's copy is
 * listed); NULL when the parent is unknown or the tree is full. */
struct tree_proc *proc_tree_fork(struct proc_tree *t, pid_t pid, pid_t ppid,
				 unsigned long long start, uint64_t now_ns);
/*
 * An exec record of time @exec_ns: the old entry (returned in *@old) is
 * replaced by a new candidate of origin TREE_EXECD.  An exec from before
 * fvbpf found the entry traceable is already in what it saw: the
 * entry is returned as it is, *@old NULL.  NULL when @pid is not in the
 * tree (the caller may add it, e.g. for --match) or the tree is full.
 */
struct tree_proc *proc_tree_exec(struct proc_tree *t, pid_t pid, uint64_t exec_ns,
				 uint64_t now_ns, struct tree_proc **old);
/* An exit (record, pidfd or failed check); the entry, or NULL. */
struct tree_proc *proc_tree_exit(struct proc_tree *t, pid_t pid);
/* Any entry, gone ones included, for this process (PID and start): a
 * zombie a walk still finds is not new. */
bool proc_tree_known(const struct proc_tree *t, pid_t pid, unsigned long long start);
void proc_tree_mark_exited(struct proc_tree *t, struct tree_proc *p);
/*
 * Whether a candidate's mappings are due for a look at @now, and the next
 * time: every loop during its first seconds (when a launcher's child maps
 * its libraries), then once a second.
 */
bool proc_tree_due(struct tree_proc *p, uint64_t now_ns);
const char *proc_tree_origin_name(enum tree_origin o);
const char *proc_tree_state_name(enum tree_state s);

#endif /* FVBPF_PROC_TREE_H */
