// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Argument parsing of `fvbpf attach`. */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attach/attach.h"
#include "cli/attach_options.h"
#include "target/inject.h"
#include "util/log.h"
#include "util/mem_budget.h"
#include "util/parse_count.h"
#include "pipeline/registry.h"

/* A decimal number of seconds.  strtod() alone would take "nan", "inf"
 * and hex, which no comparison rejects. */
static int parse_seconds(const char *arg, double min, double max, double *out)
{
	char *end;
	double v;

	if (!*arg || strspn(arg, "0123456789.eE+-") != strlen(arg))
		return -EINVAL;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || end == arg || !isfinite(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_pids(struct attach_opts *o, char *arg)
{
	char *tok, *save = NULL;
	unsigned long long v;

	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_count(tok, 1, PID_MAX_LIMIT, &v)) {
			log_error("invalid PID '%s' for -p: give a process id from 1 to %d, e.g. -p 1234",
				  tok, PID_MAX_LIMIT);
			return EINVAL;
		}
		if (o->npids == ATTACH_MAX_PIDS) {
			log_error("too many PIDs for -p: at most %d per attach", ATTACH_MAX_PIDS);
			return EINVAL; /* not E2BIG: that is ARGP_ERR_UNKNOWN */
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	return 0;
}

/* The region file is read here once, so that every problem with it is a
 * usage error before anything is attached. */
static int check_region_file(const char *path)
{
	struct region_registry *reg = malloc(sizeof(*reg));
	char err[512];
	int ret;

	if (!reg) {
		log_error("out of memory");
		return ENOMEM;
	}
	registry_init(reg);
	ret = registry_load_file(reg, path, err, sizeof(err));
	if (ret)
		log_error("--region-file: %s", err);
	free(reg);
	return ret ? EINVAL : 0;
}

static int parse_outdir(struct attach_opts *o, const char *arg)
{
	if (!*arg || strlen(arg) > OUTDIR_MAX) {
		log_error("invalid -o: give a directory name of 1 to %d bytes", OUTDIR_MAX);
		return EINVAL;
	}
	o->outdir = arg;
	return 0;
}

static int parse_option(int key, char *arg, struct attach_opts *o)
{
	unsigned long long v;

	switch (key) {
	case 'd':
		if (parse_seconds(arg, DURATION_MIN_S, DURATION_MAX_S, &o->duration_s))
			break;
		return 0;
	case 'n':
		if (parse_count(arg, 1, SEGMENTS_MAX, &v))
			break;
		o->max_segments = (unsigned int)v;
		return 0;
	case OPT_RINGBUF:
		if (parse_count(arg, 1, RINGBUF_MAX_MB, &v) || (v & (v - 1)))
			break;
		o->ringbuf_mb = (unsigned int)v;
		return 0;
	case OPT_GPU_WAIT:
		if (parse_seconds(arg, 0, GPU_WAIT_MAX_S, &o->gpu_wait_s))
			break;
		return 0;
	case OPT_WINDOW:
		if (parse_seconds(arg, WINDOW_MIN_S, WINDOW_MAX_S, &o->window_s))
			break;
		return 0;
	case OPT_WAIT:
		if (parse_seconds(arg, 0, WAIT_MAX_S, &o->wait_s))
			break;
		return 0;
	case OPT_INJECT_TIMEOUT:
		if (parse_seconds(arg, INJECT_TIMEOUT_MIN, INJECT_TIMEOUT_MAX, &o->inject_timeout_s))
			break;
		return 0;
	case OPT_MAX_MEMORY:
		if (mem_parse_size(arg, &o->max_memory))
			break;
		return 0;
	}
	switch (key) {
	case 'd':
		log_error("invalid -d '%s': give seconds from %g to %.0f (365 days), e.g. -d 30", arg,
			  DURATION_MIN_S, DURATION_MAX_S);
		break;
	case 'n':
		log_error("invalid -n '%s': give a segment count from 1 to %llu, e.g. -n 3", arg,
			  SEGMENTS_MAX);
		break;
	case OPT_RINGBUF:
		log_error("invalid --ringbuf-size '%s': give a power of two from 1 to %llu (MiB)", arg,
			  RINGBUF_MAX_MB);
		break;
	case OPT_GPU_WAIT:
		log_error("invalid --gpu-wait '%s': give seconds from 0 to %.0f", arg, GPU_WAIT_MAX_S);
		break;
	case OPT_WINDOW:
		log_error("invalid --window '%s': give seconds from %g to %.0f", arg, WINDOW_MIN_S,
			  WINDOW_MAX_S);
		break;
	case OPT_WAIT:
		log_error("invalid --wait '%s': give seconds from 0 to %.0f", arg, WAIT_MAX_S);
		break;
	case OPT_INJECT_TIMEOUT:
		log_error("invalid --inject-timeout '%s': give seconds from %g to %.0f, e.g. "
			  "--inject-timeout 5", arg, INJECT_TIMEOUT_MIN, INJECT_TIMEOUT_MAX);
		break;
	case OPT_MAX_MEMORY:
		log_error("invalid --max-memory '%s': give a size from 1 byte to %lluG with an "
			  "optional K, M or G suffix, e.g. --max-memory 512M", arg,
			  MEM_MAX_MEMORY >> 30);
		break;
	}
	return EINVAL;
}

/* Errors are one line (log_error) and a non-zero return: argp_parse()
 * stops there and attach_command() exits 2. */
static error_t parse_attach(int key, char *arg, struct argp_state *state)
{
	struct attach_opts *o = state->input;

	switch (key) {
	case 'p':
		return parse_pids(o, arg);
	case 'r':
		o->regions = arg;
		return 0;
	case 'o':
		return parse_outdir(o, arg);
	case 'd':
	case 'n':
	case OPT_RINGBUF:
	case OPT_GPU_WAIT:
	case OPT_WINDOW:
	case OPT_WAIT:
	case OPT_INJECT_TIMEOUT:
	case OPT_MAX_MEMORY:
		return parse_option(key, arg, o);
	case OPT_INJECT:
		o->inject = true;
		return 0;
	case OPT_FORMAT:
		if (trace_format_parse(arg, &o->format)) {
			log_error("invalid --format '%s': give json, json.gz or pftrace", arg);
			return EINVAL;
		}
		return 0;
	case OPT_INJECT_LIB:
		if (!*arg || strlen(arg) >= PATH_MAX) {
			log_error("invalid --inject-lib: give the path of libfvbpf.so");
			return EINVAL;
		}
		o->inject_lib = arg;
		return 0;
	case OPT_CHILDREN:
		o->children = true;
		return 0;
	case OPT_MATCH:
		if (!*arg || strlen(arg) > MATCH_MAX) {
			log_error("invalid --match: give a regular expression of 1 to %d bytes", MATCH_MAX);
			return EINVAL;
		}
		o->match = arg;
		return 0;
	case OPT_NO_TORCH:
		o->no_torch_ops = true;
		return 0;
	case OPT_STEP_BY:
		o->step_by = arg;
		return 0;
	case OPT_REGION_FILE:
		o->region_file = arg;
		return check_region_file(arg);
	case 'v':
		if (log_verbosity < VERBOSE_MAX)
			log_verbosity++;
		return 0;
	case ARGP_KEY_ARG:
		log_error("unexpected argument '%s': see fvbpf attach --help", arg);
		return EINVAL;
	case ARGP_KEY_END:
		if (!o->npids && !o->match) {
			log_error("no process given: use -p PID (with --children for its descendants) "
				  "or --match REGEX");
			return EINVAL;
		}
		if (!o->inject && (o->inject_lib || o->inject_timeout_s > 0)) {
			log_error("--inject-timeout and --inject-lib need --inject");
			return EINVAL;
		}
		if (o->wait_s > 0 && !o->match) {
			log_error("--wait needs --match: it waits for a process to match");
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
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
	struct attach_opts o = { .outdir = "./fvbpf-traces", .ringbuf_mb = 8, .gpu_wait_s = 2,
				 .max_memory = MEM_DEFAULT };
	int err;

	argp_err_exit_status = 2;
	err = argp_parse(&attach_argp, argc, argv, 0, NULL, &o);
	if (err)
		return 2;
	return attach_run(&o);
}
