/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The copy of libfvbpf.so that `--inject` has the target dlopen(): placed
 * in the target's own filesystem (through /proc/PID/root, so another mount
 * namespace works), named after the target and the process that made it,
 * so that a copy whose maker was killed is found and removed later.
 */
#ifndef FVBPF_INJECT_COPY_H
#define FVBPF_INJECT_COPY_H

#include <stddef.h>
#include <sys/types.h>

struct lib_copy {
	int dirfd;                   /* the directory it is in; -1 when none */
	char name[96];
	char target_path[128];       /* as the target opens it */
};

/*
 * Copy @lib into the first of /dev/shm, /tmp, /var/tmp, /run of @pid's
 * filesystem that is writable and not mounted noexec, named for @pid and
 * this process.  0, or -errno with the cause in @why.
 */
int lib_copy_make(pid_t pid, const char *lib, struct lib_copy *c, char *why, size_t wlen);
/* Remove the copy (the target may keep it mapped: that is harmless). */
void lib_copy_remove(struct lib_copy *c);
/*
 * Remove, from those directories of @pid's filesystem, copies whose maker
 * no longer runs (a killed injection).  How many went.
 */
int lib_copy_sweep(pid_t pid);
/* Pure: the maker's PID in a copy's file name, else 0. */
pid_t lib_copy_owner(const char *name);

/* The command name of the process that makes and removes the copies. */
#define INJECT_WORKER_COMM "fvbpf-inject"

#endif /* FVBPF_INJECT_COPY_H */
