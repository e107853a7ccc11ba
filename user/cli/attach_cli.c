// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Argument parsing of `fvbpf attach`. */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "attach/attach.h"
#include "cli/attach_options.h"
#include "util/log.h"
#include "cli/pid_list.h"
#include "util/budget.h"
#include "util/clock.h"
#include "util/parse_count.h"
#include "util/start_time.h"
#include "pipeline/registry.h"
#include "pipeline/schedule.h"
#include "output/seg_output.h"

/* The table's row for an option: its bounds are the ones checked and named. */
#define ROW(id) (&attach_opt_table[id])
#define MIN_OF(id) (ROW(id)->min)
#define MAX_OF(id) (ROW(id)->max)
#define UMIN_OF(id) ((unsigned long long)ROW(id)->min)
#define UMAX_OF(id) ((unsigned long long)ROW(id)->max)

/* FastVideo's boolean variable @name as the default of a flag not given
 * (*@on false): 0, or -EINVAL (said) for a value that is neither. */
static int env_flag(const char *name, bool *on)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "", "0", "false", "no", "off" };
	const char *v = getenv(name);
	size_t i;

	if (*on || !v)
		return 0;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		if (!strcasecmp(v, yes[i]))
			*on = true;
	for (i = 0; !*on && i < sizeof(no) / sizeof(no[0]); i++)
		if (!strcasecmp(v, no[i]))
			return 0;
	if (*on)
		return 0;
	log_error("invalid %s='%.32s': give 1 or 0 (true/false, yes/no, on/off)", name, v);
	return -EINVAL;
}

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
	/* the table's count, and never past the array it fills */
	unsigned int most = ROW(AO_PID)->most < ATTACH_MAX_PIDS ? ROW(AO_PID)->most : ATTACH_MAX_PIDS;
	unsigned int n = (unsigned int)o->npids;
	int ret;

	ret = pid_list_parse(arg, UMIN_OF(AO_PID), UMAX_OF(AO_PID), o->pids, &n, most, "per attach");
	o->npids = (int)n;
	return ret;
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
	case OPT_DUMP_ON_STALL:
		if (parse_seconds(arg, MIN_OF(AO_DUMP_ON_STALL), MAX_OF(AO_DUMP_ON_STALL),
				  &o->dump_on_stall_s))
			break;
		return 0;
	case OPT_INJECT_TIMEOUT:
		if (parse_seconds(arg, MIN_OF(AO_INJECT_TIMEOUT), MAX_OF(AO_INJECT_TIMEOUT),
				  &o->inject_timeout_s))
			break;
		return 0;
	case OPT_MAX_MEMORY:
		if (budget_parse_size(arg, &o->max_memory))
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
	case OPT_DUMP_ON_STALL:
		log_error("invalid --dump-on-stall '%s': give seconds from %g to %.0f", arg,
			  MIN_OF(AO_DUMP_ON_STALL), MAX_OF(AO_DUMP_ON_STALL));
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
static int parse_schedule(struct attach_opts *o, const char *arg)
{
	char err[160];

	if (strlen(arg) > UMAX_OF(AO_SCHEDULE) || schedule_parse(arg, &o->schedule, err, sizeof(err))) {
		log_error("invalid --schedule '%.200s': %s", arg,
			  strlen(arg) > UMAX_OF(AO_SCHEDULE) ? "too long" : err);
		return EINVAL;
	}
	return 0;
}

static int parse_start_at(struct attach_opts *o, const char *arg)
{
	int err = strlen(arg) > UMAX_OF(AO_START_AT) ? -EINVAL :
		  start_time_parse(arg, clock_ns(CLOCK_REALTIME), &o->start_at_real_ns,
				   &o->start_every_ns);

	if (err == -ERANGE)
		log_error("invalid --start-at '%.40s': more than a day ahead, or a boundary period "
			  "outside 1 s to 1 h", arg);
	else if (err)
		log_error("invalid --start-at '%.40s': give Unix seconds (1765101600.5), HH:MM:SS "
			  "today in local time, or /Ns or /Nm (the next multiple of N seconds or "
			  "minutes, e.g. /10s)", arg);
	return err ? EINVAL : 0;
}

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
	case OPT_DUMP_ON_STALL:
	case OPT_INJECT_TIMEOUT:
	case OPT_MAX_MEMORY:
		return parse_option(key, arg, o);
	case OPT_INJECT:
		o->inject = true;
		return 0;
	case OPT_OVERWRITE:
		o->overwrite = true;
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
	case OPT_OP_SOURCE:
		if (!strcmp(arg, "auto"))
			o->op_source = OP_SOURCE_AUTO;
		else if (!strcmp(arg, "callbacks"))
			o->op_source = OP_SOURCE_CALLBACKS;
		else if (!strcmp(arg, "uprobes"))
			o->op_source = OP_SOURCE_UPROBES;
		else {
			log_error("invalid --op-source '%s': give auto, callbacks or uprobes", arg);
			return EINVAL;
		}
		return 0;
	case OPT_LAUNCH_SOURCE:
		if (!strcmp(arg, "auto"))
			o->launch_source = LAUNCH_SOURCE_AUTO;
		else if (!strcmp(arg, "uprobes"))
			o->launch_source = LAUNCH_SOURCE_UPROBES;
		else {
			log_error("invalid --launch-source '%s': give auto or uprobes", arg);
			return EINVAL;
		}
		return 0;
	case OPT_RECORD_SHAPES:
		o->record_shapes = true;
		return 0;
	case OPT_WITH_FLOPS:
		o->with_flops = true;
		return 0;
	case OPT_WITH_STACK:
		o->with_stack = true;
		return 0;
	case OPT_GROUP_BY_STACK: {
		unsigned long long v;

		if (parse_count(arg, UMIN_OF(AO_GROUP_BY_STACK), UMAX_OF(AO_GROUP_BY_STACK), &v)) {
			log_error("invalid --group-by-stack '%s': give a frame count from %llu to %llu, "
				  "e.g. --group-by-stack 2", arg, UMIN_OF(AO_GROUP_BY_STACK),
				  UMAX_OF(AO_GROUP_BY_STACK));
			return EINVAL;
		}
		o->group_by_stack = (unsigned int)v;
		return 0;
	}
	case OPT_PROFILE_MEMORY:
		o->profile_memory = true;
		return 0;
	case OPT_STEP_BY:
		o->step_by = arg;
		return 0;
	case OPT_SCHEDULE:
		return parse_schedule(o, arg);
	case OPT_START_AT:
		return parse_start_at(o, arg);
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
		if (o->npids && strspn(arg, "0123456789") == strlen(arg))
			log_error("unexpected argument '%s': several PIDs go in one -p, as -p 1,2 or "
				  "-p \"$(pgrep ...)\"; for a job's launcher take the oldest, "
				  "-p $(pgrep -o -f ...) --children", arg);
		else
			log_error("unexpected argument '%s': see fvbpf attach --help", arg);
		return EINVAL;
	case ARGP_KEY_END:
		if (env_flag("FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES", &o->record_shapes) ||
		    env_flag("FASTVIDEO_TORCH_PROFILER_WITH_FLOPS", &o->with_flops))
			return EINVAL;
		if (!o->npids && !o->match) {
			log_error("no process given: use -p PID (with --children for its descendants) "
				  "or --match REGEX");
			return EINVAL;
		}
		if (!o->inject && (o->inject_lib || o->inject_timeout_s > 0)) {
			log_error("--inject-timeout and --inject-lib need --inject");
			return EINVAL;
		}
		if (o->schedule.set && o->max_segments) {
			log_error("--schedule and -n both say when to stop: give one (repeat=N "
				  "ends a schedule)");
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
	"Attach to running processes and write one trace segment per training step or "
	"region. Three ways to cut segments: --step-by GLOB, from one PyTorch scope's end to "
	"the next (the default for a PyTorch job given no other: 'Optimizer.step*'); -r "
	"REGIONS, each outermost region invocation (fvbpf's markers and FastVideo's own "
	"regions, torch:GLOB scopes, py:MODULE:QUALNAME functions); --window SECONDS, time "
	"windows.\v"
	"Examples (as root):\n"
	"  fvbpf attach -p 1234 -n 3 -o out/              (a PyTorch job: 3 steps)\n"
	"  fvbpf attach -p 1234 -r training_train_one_step,training_forward -o out/\n"
	"  fvbpf attach --inject -p 1234 -r training_train_one_step -o out/\n"
	"  fvbpf attach -p LAUNCHER --children --step-by 'Optimizer.step*' -o out/\n"
	"Every option's range: docs/options.md.";

int attach_command(int argc, char **argv)
{
	struct attach_opts o = { .outdir = ROW(AO_OUTPUT)->def_text,
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
