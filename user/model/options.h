/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The options of one `fvbpf attach` run, as attach_cli.c parsed them:
 * read by the stages that set up probes and write the manifest. */
#ifndef FVBPF_OPTIONS_H
#define FVBPF_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define ATTACH_MAX_PIDS 64

/* --format: how the trace file is written (the summaries never change);
 * output/seg_output.h names and parses it. */
enum trace_format { TRACE_JSON = 0, TRACE_JSON_GZ, TRACE_PFTRACE };

/* --schedule, as parsed (pipeline/schedule.h parses and applies it). */
struct step_schedule {
	bool set;
	unsigned int skip_first, wait, warmup, active, repeat;
};

/* --op-source */
enum { OP_SOURCE_AUTO = 0, OP_SOURCE_CALLBACKS = 1, OP_SOURCE_UPROBES = 2 };
/* --launch-source */
enum { LAUNCH_SOURCE_AUTO = 0, LAUNCH_SOURCE_UPROBES = 1 };

struct attach_opts {
	pid_t pids[ATTACH_MAX_PIDS];
	int npids;
	const char *regions;       /* NULL: FASTVIDEO_TORCH_PROFILE_REGIONS */
	const char *outdir;
	bool overwrite;            /* --overwrite: an earlier run's files in outdir go */
	double duration_s;         /* 0: until stopped */
	unsigned int max_segments; /* 0: unlimited */
	struct step_schedule schedule; /* --schedule; .set false: every segment */
	const char *region_file;
	unsigned int ringbuf_mb;
	double gpu_wait_s;         /* how long a closed segment waits for GPU records */
	bool no_torch_ops;         /* --no-torch-ops */
	int op_source;             /* --op-source: OP_SOURCE_* */
	int launch_source;         /* --launch-source: LAUNCH_SOURCE_* */
	bool with_stack;           /* --with-stack (or FASTVIDEO_TORCH_PROFILER_WITH_STACK) */
	unsigned int group_by_stack; /* --group-by-stack N, 0: not given */
	bool profile_memory;       /* --profile-memory */
	double window_s;           /* --window: time windows for unmarked processes */
	const char *step_by;       /* --step-by GLOB: segments from one scope end to the next */
	bool children;             /* --children: the -p processes' descendants too */
	const char *match;         /* --match REGEX: processes by command line */
	double wait_s;             /* --wait: for a --match that matches nothing yet */
	bool inject;               /* --inject: load libfvbpf.so into targets without it */
	double inject_timeout_s;   /* --inject-timeout */
	const char *inject_lib;    /* --inject-lib: the library to load (default: beside fvbpf) */
	enum trace_format format;  /* --format */
	uint64_t max_memory;       /* --max-memory, bytes */
	bool record_shapes;        /* --record-shapes: operators' input shapes */
	bool with_flops;           /* --with-flops: FLOPs from those shapes */
	/* --start-at: no segment before this CLOCK_REALTIME time (ns), or
	 * before the next multiple of start_every_ns; both 0: none */
	uint64_t start_at_real_ns;
	uint64_t start_every_ns;
	double dump_on_stall_s;    /* --dump-on-stall: 0 off */
};

#endif /* FVBPF_OPTIONS_H */
