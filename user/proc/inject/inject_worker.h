/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The process that does `--inject`'s ptrace work.  fvbpf forks it into a
 * session of its own, deaf to SIGINT, SIGTERM and SIGHUP, holding none of
 * fvbpf's descriptors: whatever happens to fvbpf (Ctrl-C, `timeout`,
 * SIGKILL), the worker finishes what it started and leaves the target as
 * it was, then removes the library copy.  It reports to fvbpf once, through
 * a pipe.
 */
#ifndef FVBPF_INJECT_WORKER_H
#define FVBPF_INJECT_WORKER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/inject/inject.h"

struct text_range {
	uint64_t start, end;
};

#define INJECT_UNSAFE_MAX 4

enum text_kind { TEXT_LIBC = 1, TEXT_LDSO = 2 };

struct inject_job {
	pid_t pid;
	char lib[PATH_MAX];           /* libfvbpf.so, in fvbpf's filesystem */
	uint64_t fn;                  /* dlopen in the target */
	int mode;
	/* code where the thread must not be stopped for our call (libc, ld.so) */
	struct text_range unsafe[INJECT_UNSAFE_MAX];
	enum text_kind unsafe_kind[INJECT_UNSAFE_MAX];
	int nunsafe;
	struct text_range libc_text;  /* where a `syscall` instruction is found */
	uint64_t libc_base;           /* where the chosen libc's file offset 0 is */
	unsigned long long libc_dev, libc_ino;
	double timeout_s;
	/* test builds only */
	unsigned int stall_ms;        /* keep the target stopped this long first */
	bool abandon;                 /* let go at once, as a killed fvbpf would */
};

struct inject_outcome {
	int err;                      /* 0 or -errno, the cause in info.why */
	uint64_t handle;              /* dlopen's result */
	bool running;                 /* dlopen had not returned when reported */
	char target_path[128];        /* the copy, as the target opened it */
	struct inject_info info;
};

/*
 * Start the worker on @job and wait for its report, at most the job's
 * timeout and a little.  0 with @out filled, -ETIMEDOUT when no report
 * came in time (the worker goes on), or -errno when it could not start.
 */
int inject_worker_run(const struct inject_job *job, struct inject_outcome *out);

#endif /* FVBPF_INJECT_WORKER_H */
