/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --record-shapes needs two facts of the target's own libtorch build: the
 * c10::TensorImpl layout and every operator's schema.  Neither is in the
 * file in a form fvbpf could trust across releases, so the target's own
 * interpreter reports them: a sibling process (the same executable, the
 * torch the target mapped first on sys.path, the target's cwd and user)
 * imports torch, measures the layout with ctypes on tensors of known sizes
 * and prints the schemas (torch_layout_script.c).  Whatever it prints is
 * the job owner's word (a sitecustomize can print anything), so the report
 * is kept per libtorch_cpu build id AND the user it ran as, in the cache
 * directory ($FVBPF_CACHE_DIR, $XDG_CACHE_HOME/fvbpf or /var/cache/fvbpf):
 * one build is measured once per user, and a job never believes another
 * user's measurement.  The sibling is polled, never waited for: one
 * deadline for all of it (torch_layout_sibling.h).
 */
#ifndef FVBPF_TORCH_LAYOUT_H
#define FVBPF_TORCH_LAYOUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A report's first line: what the script prints, and what a cache entry
 * must start with to be read (an older script's entry is measured again). */
#define TORCH_LAYOUT_HEADER "fvbpf-torch-layout 2\n"
#define TORCH_LAYOUT_MAX_BYTES (4u << 20)   /* a report (4,400 schemas: ~300 KB) */
#define TORCH_LAYOUT_TIMEOUT_S 120          /* importing torch: seconds on a busy VM */

/* The deadline of a measurement, in seconds (TORCH_LAYOUT_TIMEOUT_S; the
 * test build takes $FVBPF_TEST_LAYOUT_TIMEOUT_S). */
unsigned int torch_layout_timeout_s(void);

struct torch_layout_report {
	char *text;             /* NUL-terminated, at most TORCH_LAYOUT_MAX_BYTES */
	size_t len;
	char build_id[41];      /* hex; "" when the file has none */
	bool cached;            /* read from the cache */
	double run_s;           /* the sibling's run time (0 cached) */
};

/* The script the sibling runs (torch_layout_script.c). */
extern const char torch_layout_script[];

/* A measurement in flight: the sibling runs while fvbpf goes on. */
struct torch_layout_job {
	struct torch_layout_report r;
	pid_t child;            /* the sibling, 0 none */
	bool exited;            /* reaped, its status in @status */
	int status;
	int fd;                 /* its stdout (non-blocking), -1 at EOF */
	size_t cap;
	uint64_t t0, deadline;  /* CLOCK_MONOTONIC ns: one for the whole measurement */
	uid_t uid;              /* the user it runs as: the cache's key with the build id */
	gid_t gid;
	char key[64];           /* build id and user: "" without a build id */
	unsigned long long dev, ino;   /* the file the target maps */
	bool measuring;         /* its sibling measures the build (listed in flight) */
	bool waiting;           /* another process's sibling measures it: wait for the cache */
	uint64_t next_look;     /* waiting: its next look for the cache file */
	pid_t pid;              /* the target, for a measurement of its own after all */
	char libpath[PATH_MAX];
	char dir[PATH_MAX - 128], path[PATH_MAX];  /* the cache's, "" without a build id */
};

/*
 * The report for the libtorch_cpu.so @pid maps, open at @fd with status
 * @st, whose path in the target is @libpath: 1 and @j->r from the cache,
 * 0 with the sibling started (torch_layout_poll() it), or -errno with one
 * line in @why.
 */
int torch_layout_start(pid_t pid, int fd, const struct stat *st, const char *libpath,
		       struct torch_layout_job *j, char *why, size_t wlen);
/* Never blocks: 1 and @j->r ready (cached for next time), 0 still running,
 * -errno with @why (the job freed; the sibling killed past the deadline,
 * or when it closed its output without exiting by then). */
int torch_layout_poll(struct torch_layout_job *j, char *why, size_t wlen);
/* Kills a sibling still running (never waits), frees the report. */
void torch_layout_job_free(struct torch_layout_job *j);
/* A report that failed its check on the live target: its cache file
 * @path (a job's path, "" none) goes, so the next attach measures again. */
void torch_layout_cache_drop(const char *path);
/* At fvbpf's end: every sibling killed, waited for a moment, never left. */
void torch_layout_end(void);
/* From a signal handler about to end fvbpf: every sibling killed now. */
void torch_layout_kill_now(void);
void torch_layout_free(struct torch_layout_report *r);

#endif /* FVBPF_TORCH_LAYOUT_H */
