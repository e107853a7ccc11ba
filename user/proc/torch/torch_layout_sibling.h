/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The process that measures a torch build for --record-shapes
 * (torch_layout.h): the target's interpreter, as the target's user, with
 * the target's PYTHONPATH and HOME, so everything in it is the job
 * owner's.  It runs as PID 1 of a PID namespace of its own: when it dies,
 * the kernel kills whatever it started, a grandchild that left its session
 * included, so nothing of it outlives the measurement.  Nothing here
 * blocks: its exit is polled, a kill is reaped later if the kernel is slow.
 */
#ifndef FVBPF_TORCH_LAYOUT_SIBLING_H
#define FVBPF_TORCH_LAYOUT_SIBLING_H

#include <limits.h>
#include <sys/types.h>

struct layout_sibling {
	char exe[64];                 /* /proc/PID/exe */
	char argv0[2 * PATH_MAX];     /* the same file as its argv[0] named it ("" none) */
	char cwd[64];
	char pypath[2 * PATH_MAX + 16], home[PATH_MAX + 8];   /* "NAME=value" */
	uid_t uid;
	gid_t gid;
};

/* Who the sibling of @pid runs as: the owner of /proc/PID.  0 or -errno. */
int layout_sibling_owner(pid_t pid, uid_t *uid, gid_t *gid);
/* What it runs, as @uid/@gid (layout_sibling_owner's, the cache's key):
 * @pid's interpreter, cwd, PYTHONPATH (the site-packages of @libpath
 * first) and HOME.  0 or -errno. */
int layout_sibling_setup(pid_t pid, const char *libpath, uid_t uid, gid_t gid,
			 struct layout_sibling *sb);
/* Starts it running @script, its stdout on *@fd (non-blocking).  0, or
 * -errno (-EPERM and the like: no PID namespace to be had). */
int layout_sibling_spawn(const struct layout_sibling *sb, const char *script, pid_t *child,
			 int *fd);
/* Never blocks: 1 and *@status when @child has exited (reaped), 0 while
 * it runs, -errno when it cannot be waited for (then it is not known). */
int layout_sibling_reap(pid_t child, int *status);
/* SIGKILL to @child (not yet reaped) and its namespace; reaped now or by
 * a later layout_sibling_reap_killed(). */
void layout_sibling_kill(pid_t child);
/* Reaps the killed ones that have died since. */
void layout_sibling_reap_killed(void);
/* At fvbpf's end: kills what still runs, waits up to @ms for all of them,
 * says which stay (stuck in the kernel: gone when it lets them go). */
void layout_sibling_end(unsigned int ms);
/* From a signal handler, before fvbpf dies of it: SIGKILL to every
 * sibling (async-signal-safe). */
void layout_sibling_kill_now(void);

#endif /* FVBPF_TORCH_LAYOUT_SIBLING_H */
