// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Argument parsing of `fvbpf report` and `fvbpf merge`, and their runs. */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli_report.h"
#include "job_report.h"
#include "log.h"
#include "manifest_read.h"
#include "trace_merge.h"

#define DIRS_MAX 4096

enum {
	OPT_JSON = 0x100,
	OPT_TOP,
	OPT_REGION,
	OPT_SEGMENT,
};

struct cli_opts {
	const char *dirs[DIRS_MAX];
	size_t ndirs;
	bool json;
	unsigned int top;
	const char *output;
	const char *region;
	long long segment;
	bool merge;
};

/* Decimal digits only, 0..max. */
static int parse_count(const char *arg, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!*arg || strspn(arg, "0123456789") != strlen(arg))
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct cli_opts *o = state->input;
	unsigned long long v;

	switch (key) {
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_TOP:
		if (parse_count(arg, JR_TOP_MAX, &v) || !v) {
			log_error("--top: a count from 1 to %d, not '%s'", JR_TOP_MAX, arg);
			return EINVAL;
		}
		o->top = (unsigned int)v;
		return 0;
	case 'o':
		if (!*arg) {
			log_error("-o: an empty file name");
			return EINVAL;
		}
		o->output = arg;
		return 0;
	case OPT_REGION:
		o->region = arg;
		return 0;
	case OPT_SEGMENT:
		if (parse_count(arg, 4294967295ULL, &v)) {
			log_error("--segment: a segment number from 0 to 4294967295, not '%s'", arg);
			return EINVAL;
		}
		o->segment = (long long)v;
		return 0;
	case ARGP_KEY_ARG:
		if (o->ndirs == DIRS_MAX) {
			log_error("more than %d directories", DIRS_MAX);
			return EINVAL;
		}
		o->dirs[o->ndirs++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!o->ndirs) {
			log_error("no directory given: fvbpf %s DIR [DIR...]%s", o->merge ? "merge" : "report",
				  o->merge ? " -o FILE" : "");
			return EINVAL;
		}
		if (o->merge && !o->output) {
			log_error("no output file: fvbpf merge DIR... -o FILE");
			return EINVAL;
		}
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option report_options[] = {
	{ "json", OPT_JSON, NULL, 0, "Print one JSON object instead of text", 0 },
	{ "top", OPT_TOP, "N", 0, "Operators and kernels listed per region (default 10)", 0 },
	{},
};

static const struct argp_option merge_options[] = {
	{ "output", 'o', "FILE", 0, "The merged Chrome trace (required)", 0 },
	{ "region", OPT_REGION, "NAME", 0, "Region to merge (default: the one with most segments)", 0 },
	{ "segment", OPT_SEGMENT, "N", 0,
	  "Segment N of the reference (lowest) rank (default: its first complete one)", 0 },
	{},
};

static const struct argp report_argp = {
	.options = report_options,
	.parser = parse_opt,
	.args_doc = "DIR [DIR...]",
	.doc = "Summarise fvbpf attach output directories (one per node) across ranks: segment times "
	       "per rank, the slowest rank, the heaviest operators and kernels.",
};

static const struct argp merge_argp = {
	.options = merge_options,
	.parser = parse_opt,
	.args_doc = "DIR [DIR...]",
	.doc = "Merge one step of every rank into one Chrome trace, clocks aligned to wall time.",
};

static int load(struct cli_opts *o, struct manifest **out)
{
	struct manifest *ms;
	char err[PATH_MAX + 512];
	size_t i;
	int ret = 0;

	ms = calloc(o->ndirs, sizeof(*ms));
	if (!ms) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < o->ndirs; i++) {
		ret = mf_read(o->dirs[i], &ms[i], err, sizeof(err));
		if (!ret)
			ret = mf_read_summaries(&ms[i], o->merge ? o->region : NULL, !o->merge, err,
						sizeof(err));
		if (ret) {
			log_error("%s", err);
			break;
		}
	}
	if (ret) {
		for (i = 0; i < o->ndirs; i++)
			mf_free(&ms[i]);
		free(ms);
		return ret;
	}
	*out = ms;
	return 0;
}

static int run(int argc, char **argv, bool merge)
{
	struct cli_opts *o = calloc(1, sizeof(*o));
	struct manifest *ms = NULL;
	struct job_report r;
	char err[PATH_MAX + 512];
	json_object *j;
	size_t i;
	int ret = 1;

	if (!o) {
		log_error("out of memory");
		return 1;
	}
	o->top = JR_TOP_DEFAULT;
	o->segment = -1;
	o->merge = merge;
	argp_err_exit_status = 2;
	if (argp_parse(merge ? &merge_argp : &report_argp, argc, argv, 0, NULL, o)) {
		free(o);
		return 2;
	}
	if (load(o, &ms))
		goto cleanup;
	if (merge) {
		struct tm_opts mo = { .output = o->output, .region = o->region, .segment = o->segment,
				     .info = stdout };

		if (trace_merge(ms, o->ndirs, &mo, err, sizeof(err)))
			log_error("merge: %s", err);
		else
			ret = 0;
	} else if (job_report_build(ms, o->ndirs, &r)) {
		log_error("report: out of memory");
	} else {
		if (o->json) {
			j = job_report_json(&r, o->top);
			if (j) {
				puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
								    JSON_C_TO_STRING_NOSLASHESCAPE));
				ret = 0;
			}
			json_object_put(j);
		} else {
			ret = job_report_print(stdout, &r, o->top) ? 1 : 0;
		}
		job_report_free(&r);
		if (fflush(stdout) || ferror(stdout)) {
			log_error("report: writing the output failed");
			ret = 1;
		}
	}
cleanup:
	for (i = 0; ms && i < o->ndirs; i++)
		mf_free(&ms[i]);
	free(ms);
	free(o);
	return ret;
}

int report_command(int argc, char **argv)
{
	return run(argc, argv, false);
}

int merge_command(int argc, char **argv)
{
	return run(argc, argv, true);
}
