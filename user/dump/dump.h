/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * fvbpf dump: where every process (rank) of a job is now, without stopping
 * it: each thread's Python stack (dump/py_walk.h), what it is blocked in
 * below Python (/proc, dump/native.h), the collective or region its frames
 * show, and across ranks which ones wait in a collective and which of its
 * ranks are absent (dump/verdict.h).  No ptrace, no signal, no BPF: /proc
 * and process_vm_readv only, every read bounded.
 */
#ifndef FVBPF_DUMP_H
#define FVBPF_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "dump/native.h"
#include "dump/py_walk.h"

#define DUMP_PROCS_MAX 1024     /* processes in one dump */
#define DUMP_THREADS_MAX 4096   /* threads of one process */
#define DUMP_REGIONS_MAX 8      /* regions kept per thread */
#define DUMP_NAME_LEN 128       /* a collective's, group's or region's name */

struct dump_frame {
	char *function, *file;      /* malloc'd UTF-8, as the target wrote them */
	int line, first_line;       /* 0: unknown */
	uint64_t code;              /* the code object (0 for none) */
	bool unreadable;            /* not a code object fvbpf could read */
};

struct dump_thread {
	pid_t tid;
	pid_t ns_tid;               /* the tid in the process's own PID namespace */
	char name[64];              /* comm, raw */
	struct dump_native nat;
	bool python;                /* it has a Python thread state */
	unsigned int py_flags;      /* enum pyw_flag */
	unsigned int nframes;
	struct dump_frame *frames;  /* innermost first */
	/* what its frames show (dump/frames_say.c) */
	int coll_frame;             /* the collective's frame, -1 none */
	char collective[DUMP_NAME_LEN];
	char group[DUMP_NAME_LEN];  /* "default", "another group", "" unknown */
	unsigned int nregions;
	char regions[DUMP_REGIONS_MAX][DUMP_NAME_LEN]; /* outermost first */
};

enum dump_py {
	DUMP_PY_OK,
	DUMP_PY_NONE,               /* no CPython mapped */
	DUMP_PY_UNSUPPORTED,        /* a version fvbpf cannot walk: py_version says */
	DUMP_PY_MISMATCH,           /* its layout does not check out */
	DUMP_PY_UNREADABLE,         /* its thread list could not be read */
};

struct dump_proc {
	pid_t pid, ppid;
	unsigned long long start;   /* starttime: the same process throughout */
	int rank;                   /* -1: none */
	bool rank_from_env;
	int world_size;             /* -1: unknown */
	bool worker;                /* a forked copy of another dumped process */
	pid_t worker_of;
	char name[64];              /* "rank 1", "pid 4711", "rank 1 worker 4712" */
	char comm[32];
	char cmdline[512];
	enum dump_py py;
	unsigned long py_version;   /* Py_Version, 0 unknown */
	char py_path[256];
	struct pyw_list pylist;
	unsigned int py_states_unmatched; /* thread states naming no live thread */
	bool exited;                /* gone before or during the dump */
	unsigned int nthreads, threads_cut;
	struct dump_thread *threads; /* the main thread first */
};

struct dump_absent {
	int proc;                   /* index in procs, -1: a rank not dumped */
	int rank;
};

struct dump_verdict {
	bool waiting;               /* some participant waits in a collective */
	char collective[DUMP_NAME_LEN], group[DUMP_NAME_LEN];
	int *wait;                  /* indexes of the waiting processes */
	unsigned int nwait;
	struct dump_absent *absent;
	unsigned int nabsent;
	unsigned int participants;  /* ranks (or processes) the verdict is about */
	char line[2048];            /* the text's first line, without "fvbpf dump: " */
};

struct dump {
	struct timespec when;       /* CLOCK_REALTIME at the start */
	uint64_t took_ns;
	char host[64];
	unsigned int nprocs, exited;
	struct dump_proc *procs;
	struct dump_verdict v;
};

/* The processes: @pids (n of them), with every descendant when @children. */
struct dump_request {
	const pid_t *pids;
	unsigned int npids;
	bool children;
};

/* Dump the processes of @req into *@out (dump_free() it): 0, or -errno
 * with a line said (no process left to dump, out of memory). */
int dump_take(const struct dump_request *req, struct dump **out);
void dump_free(struct dump *d);
/* How long one thread has been off the CPU, for the text: "12.0 s". */
void dump_fmt_duration(char *buf, size_t len, int64_t ns);

/* The two forms (dump/dump_text.c, dump/dump_json.c): -errno of a write. */
int dump_write_text(const struct dump *d, FILE *f);
int dump_write_json(const struct dump *d, FILE *f);

#endif /* FVBPF_DUMP_H */
