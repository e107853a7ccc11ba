// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Argument parsing of `fvbpf attach`. */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "log.h"

enum {
	OPT_REGION_FILE = 0x100,
	OPT_RINGBUF,
	OPT_GPU_WAIT,
};

static const struct argp_option attach_options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Processes to trace (repeatable)", 0 },
	{ "regions", 'r', "LIST", 0,
	  "Regions to trace, comma separated, FastVideo names (default: $FASTVIDEO_TORCH_PROFILE_REGIONS)", 0 },
	{ "output", 'o', "DIR", 0, "Output directory (default ./fvbpf-traces)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after this many seconds", 0 },
	{ "segments", 'n', "N", 0, "Stop once every traced process has written N segments", 0 },
	{ "region-file", OPT_REGION_FILE, "FILE", 0,
	  "Extra regions, one per line: NAME [description]", 0 },
	{ "ringbuf-size", OPT_RINGBUF, "MB", 0, "Ring buffer size in MiB, a power of two (default 8)", 0 },
	{ "gpu-wait", OPT_GPU_WAIT, "SECONDS", 0,
	  "How long a closed segment waits for its GPU records (default 2)", 0 },
	{ "verbose", 'v', NULL, 0, "Say more (repeat for libbpf's own messages)", 0 },
	{},
};

static int parse_pids(struct attach_opts *o, char *arg)
{
	char *tok, *save = NULL, *end;
	long v;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || end == tok || v <= 0 || v > 0x3fffffff) {
			log_error("invalid PID '%s': give a positive process id, e.g. -p 1234", tok);
			return -EINVAL;
		}
		if (o->npids == ATTACH_MAX_PIDS) {
			log_error("too many PIDs: at most %d per attach", ATTACH_MAX_PIDS);
			return -E2BIG;
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	return 0;
}

static error_t parse_attach(int key, char *arg, struct argp_state *state)
{
	struct attach_opts *o = state->input;
	char *end;

	switch (key) {
	case 'p':
		if (parse_pids(o, arg))
			argp_failure(state, 2, 0, "see fvbpf attach --help");
		break;
	case 'r':
		o->regions = arg;
		break;
	case 'o':
		o->outdir = arg;
		break;
	case 'd':
		errno = 0;
		o->duration_s = strtod(arg, &end);
		if (errno || *end || o->duration_s <= 0)
			argp_error(state, "invalid duration '%s': give seconds > 0, e.g. -d 30", arg);
		break;
	case 'n':
		errno = 0;
		o->max_segments = (unsigned int)strtoul(arg, &end, 10);
		if (errno || *end || !o->max_segments || *arg == '-')
			argp_error(state, "invalid segment count '%s': give a number > 0, e.g. -n 3", arg);
		break;
	case OPT_REGION_FILE:
		o->region_file = arg;
		break;
	case OPT_RINGBUF:
		o->ringbuf_mb = (unsigned int)strtoul(arg, &end, 10);
		if (*end || !o->ringbuf_mb || (o->ringbuf_mb & (o->ringbuf_mb - 1)) || o->ringbuf_mb > 1024)
			argp_error(state, "invalid ring buffer size '%s': a power of two from 1 to 1024 MiB", arg);
		break;
	case OPT_GPU_WAIT:
		errno = 0;
		o->gpu_wait_s = strtod(arg, &end);
		if (errno || *end || o->gpu_wait_s < 0 || o->gpu_wait_s > 600)
			argp_error(state, "invalid GPU wait '%s': give seconds from 0 to 600", arg);
		break;
	case 'v':
		log_verbosity++;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!o->npids)
			argp_error(state, "no process given: use -p PID");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp attach_argp = {
	.options = attach_options,
	.parser = parse_attach,
	.args_doc = "",
	.doc = "Attach to running processes that use the fvbpf region markers and write one "
	       "trace segment per outermost region invocation.\v"
	       "Example: sudo fvbpf attach -p 1234 -r training_train_one_step,training_forward -o traces/",
};

int attach_command(int argc, char **argv)
{
	struct attach_opts o = { .outdir = "./fvbpf-traces", .ringbuf_mb = 8, .gpu_wait_s = 2 };
	int err;

	argp_err_exit_status = 2;
	err = argp_parse(&attach_argp, argc, argv, 0, NULL, &o);
	if (err)
		return 2;
	return attach_run(&o);
}
