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
#include "util/log.h"
#include "util/mem_budget.h"
#include "util/parse_count.h"
#include "pipeline/registry.h"

/* The table's row for an option: its bounds are the ones checked and named. */
#define ROW(id) (&attach_opt_table[id])
#define MIN_OF(id) (ROW(id)->min)
#define MAX_OF(id) (ROW(id)->max)
#define UMIN_OF(id) ((unsigned long long)ROW(id)->min)
#define UMAX_OF(id) ((unsigned long long)ROW(id)->max)

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
		if (parse_count(tok, UMIN_OF(AO_PID), UMAX_OF(AO_PID), &v)) {
			log_error("invalid PID '%s' for -p: give a process id from %llu to %llu, e.g. -p 1234",
				  tok, UMIN_OF(AO_PID), UMAX_OF(AO_PID));
			return EINVAL;
		}
		/* the table's count, and never past the array it fills */
		if ((unsigned int)o->npids >= ROW(AO_PID)->most || o->npids >= ATTACH_MAX_PIDS) {
			log_error("too many PIDs for -p: at most %u per attach", ROW(AO_PID)->most);
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
	if (!*arg || strlen(arg) > UMAX_OF(AO_OUTPUT)) {
		log_error("invalid -o: give a directory name of 1 to %llu bytes", UMAX_OF(AO_OUTPUT));
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
		if (parse_seconds(arg, MIN_OF(AO_DURATION), MAX_OF(AO_DURATION), &o->duration_s))
			break;
		return 0;
	case 'n':
		if (parse_count(arg, UMIN_OF(AO_SEGMENTS), UMAX_OF(AO_SEGMENTS), &v))
			break;
		o->max_segments = (unsigned int)v;
		return 0;
	case OPT_RINGBUF:
		if (parse_count(arg, UMIN_OF(AO_RINGBUF), UMAX_OF(AO_RINGBUF), &v) || (v & (v - 1)))
			break;
		o->ringbuf_mb = (unsigned int)v;
		return 0;
	case OPT_GPU_WAIT:
		if (parse_seconds(arg, MIN_OF(AO_GPU_WAIT), MAX_OF(AO_GPU_WAIT), &o->gpu_wait_s))
			break;
		return 0;
	case OPT_WINDOW:
		if (parse_seconds(arg, MIN_OF(AO_WINDOW), MAX_OF(AO_WINDOW), &o->window_s))
			break;
		return 0;
	case OPT_WAIT:
		if (parse_seconds(arg, MIN_OF(AO_WAIT), MAX_OF(AO_WAIT), &o->wait_s))
			break;
		return 0;
	case OPT_INJECT_TIMEOUT:
		if (parse_seconds(arg, MIN_OF(AO_INJECT_TIMEOUT), MAX_OF(AO_INJECT_TIMEOUT),
				  &o->inject_timeout_s))
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
			  MIN_OF(AO_DURATION), MAX_OF(AO_DURATION));
		break;
	case 'n':
		log_error("invalid -n '%s': give a segment count from %llu to %llu, e.g. -n 3", arg,
			  UMIN_OF(AO_SEGMENTS), UMAX_OF(AO_SEGMENTS));
		break;
	case OPT_RINGBUF:
		log_error("invalid --ringbuf-size '%s': give a power of two from %llu to %llu (MiB)", arg,
			  UMIN_OF(AO_RINGBUF), UMAX_OF(AO_RINGBUF));
		break;
	case OPT_GPU_WAIT:
		log_error("invalid --gpu-wait '%s': give seconds from %g to %.0f", arg,
			  MIN_OF(AO_GPU_WAIT), MAX_OF(AO_GPU_WAIT));
		break;
	case OPT_WINDOW:
		log_error("invalid --window '%s': give seconds from %g to %.0f", arg, MIN_OF(AO_WINDOW),
			  MAX_OF(AO_WINDOW));
		break;
	case OPT_WAIT:
		log_error("invalid --wait '%s': give seconds from %g to %.0f", arg, MIN_OF(AO_WAIT),
			  MAX_OF(AO_WAIT));
		break;
	case OPT_INJECT_TIMEOUT:
		log_error("invalid --inject-timeout '%s': give seconds from %g to %.0f, e.g. "
			  "--inject-timeout 5", arg, MIN_OF(AO_INJECT_TIMEOUT), MAX_OF(AO_INJECT_TIMEOUT));
		break;
	case OPT_MAX_MEMORY:
		log_error("invalid --max-memory '%s': give a size from 1 byte to %lluG with an "
			  "optional K, M or G suffix, e.g. --max-memory 512M", arg,
			  UMAX_OF(AO_MAX_MEMORY) >> 30);
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
		if (!*arg || strlen(arg) > UMAX_OF(AO_INJECT_LIB)) {
			log_error("invalid --inject-lib: give the path of libfvbpf.so");
			return EINVAL;
		}
		o->inject_lib = arg;
		return 0;
	case OPT_CHILDREN:
		o->children = true;
		return 0;
	case OPT_MATCH:
		if (!*arg || strlen(arg) > UMAX_OF(AO_MATCH)) {
			log_error("invalid --match: give a regular expression of %llu to %llu bytes",
				  UMIN_OF(AO_MATCH), UMAX_OF(AO_MATCH));
			return EINVAL;
		}
		o->match = arg;
		return 0;
	case OPT_NO_TORCH:
		o->no_torch_ops = true;
		return 0;
	case OPT_PROFILE_MEMORY:
		o->profile_memory = true;
		return 0;
	case OPT_STEP_BY:
		o->step_by = arg;
		return 0;
	case OPT_REGION_FILE:
		o->region_file = arg;
		return check_region_file(arg);
	case 'v':
		if (log_verbosity < (int)ROW(AO_VERBOSE)->most)
			log_verbosity++;
		return 0;
	case OPT_HELP_MARKDOWN:
		attach_options_markdown(stdout);
		exit(0); /* as argp's own --help does */
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

static const char attach_doc[] =
	"Attach to running processes and write one trace segment per outermost region "
	"invocation (-r, the fvbpf markers) or per training step (--step-by, PyTorch jobs "
	"without markers).\v"
	"Examples (as root):\n"
	"  fvbpf attach -p 1234 -r training_train_one_step,training_forward -o out/\n"
	"  fvbpf attach -p 1234 --step-by 'Optimizer.step*' -n 3 -o out/\n"
	"  fvbpf attach -p LAUNCHER --children --step-by 'Optimizer.step*' -o out/\n"
	"Every option's range: docs/options.md.";

int attach_command(int argc, char **argv)
{
	struct attach_opts o = { .outdir = ROW(AO_OUTPUT)->def_text,
				 .ringbuf_mb = (unsigned int)ROW(AO_RINGBUF)->def,
				 .gpu_wait_s = ROW(AO_GPU_WAIT)->def,
				 .max_memory = (uint64_t)ROW(AO_MAX_MEMORY)->def };
	const struct argp attach_argp = { .options = attach_argp_options(), .parser = parse_attach,
					  .args_doc = "", .doc = attach_doc };
	int err;

	argp_err_exit_status = 2;
	err = argp_parse(&attach_argp, argc, argv, 0, NULL, &o);
	if (err)
		return 2;
	return attach_run(&o);
}
