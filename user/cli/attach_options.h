// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The options of `fvbpf attach` (moved out of attach_cli.c). */
#ifndef FVBPF_CLI_ATTACH_OPTIONS_H
#define FVBPF_CLI_ATTACH_OPTIONS_H

#include <argp.h>

enum {
	OPT_REGION_FILE = 0x100,
	OPT_RINGBUF,
	OPT_GPU_WAIT,
	OPT_NO_TORCH,
	OPT_STEP_BY,
	OPT_WINDOW,
	OPT_CHILDREN,
	OPT_MATCH,
	OPT_WAIT,
	OPT_INJECT,
	OPT_INJECT_TIMEOUT,
	OPT_INJECT_LIB,
	OPT_FORMAT,
	OPT_MAX_MEMORY,
};

/* The accepted ranges, as the README's Usage table lists them. */
#define PID_MAX_LIMIT   4194304         /* the kernel's largest pid_max */
#define DURATION_MIN_S  0.001
#define DURATION_MAX_S  31536000.0      /* 365 days */
#define SEGMENTS_MAX    1000000000ULL
#define RINGBUF_MAX_MB  1024ULL
#define GPU_WAIT_MAX_S  600.0
#define WINDOW_MIN_S    0.01
#define WINDOW_MAX_S    86400.0
/* Leaves PATH_MAX room for "/.trace_rank..._segment..._<region>.json.tmp.PID". */
#define OUTDIR_MAX      3900
#define VERBOSE_MAX     2
#define WAIT_MAX_S      86400.0
#define MATCH_MAX       1024

extern const struct argp_option attach_options[];

#endif
