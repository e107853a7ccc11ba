// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* Argument parsing of `fvbpf report` and `fvbpf merge`, and their runs. */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/cli_offline.h"
#include "cli/cli_report.h"
#include "offline/clock_align.h"
#include "offline/report/job_report.h"
#include "util/log.h"
#include "offline/manifest/manifest_read.h"
#include "util/budget.h"
#include "util/parse_count.h"
#include "offline/merge/trace_merge.h"

#define DIRS_MAX 4096

enum {
	OPT_JSON = 0x100,
	OPT_TOP,
	OPT_REGION,
	OPT_SEGMENT,
	OPT_MAX_MEMORY,
	OPT_HTML,
	OPT_UNCOUNTED,
	OPT_STEP,
};

struct cli_opts {
	const char *dirs[DIRS_MAX];
	size_t ndirs;
	bool json;
	unsigned int top;
	const char *output;
	const char *html;
	const char *region;
	long long segment, step;
	bool with_uncounted;
	bool merge;
	uint64_t max_memory;
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct cli_opts *o = state->input;
	unsigned long long v;

	switch (key) {
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_TOP:
		if (parse_count(arg, 0, JR_TOP_MAX, &v) || !v) {
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
	case OPT_HTML:
		if (!*arg) {
			log_error("--html: an empty file name");
			return EINVAL;
		}
		o->html = arg;
		return 0;
	case OPT_MAX_MEMORY:
		return offline_max_memory(arg, &o->max_memory);
	case OPT_SEGMENT:
		if (parse_count(arg, 0, 4294967295ULL, &v)) {
			log_error("--segment: a segment number from 0 to 4294967295, not '%s'", arg);
			return EINVAL;
		}
		o->segment = (long long)v;
		return 0;
	case OPT_STEP:
		if (parse_count(arg, 0, 4294967295ULL, &v)) {
			log_error("--step: a step number from 0 to 4294967295, not '%s'", arg);
			return EINVAL;
		}
		o->step = (long long)v;
		return 0;
	case OPT_UNCOUNTED:
		o->with_uncounted = true;
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
		if (o->json && o->html) {
			log_error("--json and --html: give one (--html writes the page, --json prints JSON)");
			return EINVAL;
		}
		if (o->step >= 0 && o->segment >= 0) {
			log_error("--step and --segment: give one (--step N takes the region's step N, "
				  "--segment N the step of the lowest rank's segment N)");
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

#define MAX_MEMORY_OPTION \
	{ "max-memory", OPT_MAX_MEMORY, "SIZE", 0, \
	  "The most memory (RSS) to use, e.g. 512M (default 256M); directories that list more " \
	  "than fits are refused", 0 }

static const struct argp_option report_options[] = {
	{ "json", OPT_JSON, NULL, 0, "Print one JSON object instead of text", 0 },
	{ "top", OPT_TOP, "N", 0, "Operators and kernels listed per region (default 10)", 0 },
	{ "html", OPT_HTML, "FILE", 0,
	  "Write the report as one self-contained HTML page (charts, tables, links to the traces) "
	  "instead of printing it", 0 },
	{ "include-uncounted", OPT_UNCOUNTED, NULL, 0, OFFLINE_UNCOUNTED_DOC, 0 },
	MAX_MEMORY_OPTION,
	{},
};

static const struct argp_option merge_options[] = {
	{ "output", 'o', "FILE", 0, "The merged Chrome trace (required)", 0 },
	{ "region", OPT_REGION, "NAME", 0, "Region to merge (default: the one with most segments)", 0 },
	{ "step", OPT_STEP, "N", 0,
	  "The region's step N, numbered from 0 in time order as report and export number them "
	  "(default: the first step every rank has complete)", 0 },
	{ "segment", OPT_SEGMENT, "N", 0,
	  "The step of the reference (lowest) rank's segment N", 0 },
	{ "include-uncounted", OPT_UNCOUNTED, NULL, 0, OFFLINE_UNCOUNTED_DOC, 0 },
	MAX_MEMORY_OPTION,
	{},
};

static const struct argp report_argp = {
	.options = report_options,
	.parser = parse_opt,
	.args_doc = "DIR [DIR...]",
	.doc = "Summarise fvbpf attach output directories (one per node) across ranks: segment times "
	       "per rank, the steps with every rank's segment of each side by side (paired by step "
	       "key, else by wall-clock overlap; never by segment number), the split of each region "
	       "into its sub-regions, the slowest rank, the heaviest operators and kernels.",
};

static const struct argp merge_argp = {
	.options = merge_options,
	.parser = parse_opt,
	.args_doc = "DIR [DIR...]",
	.doc = "Merge one training step of every rank into one Chrome trace, clocks aligned to wall "
	       "time (ranks paired by step key, else by wall-clock overlap).",
};

/* Read every directory; for report, each summary's rows go straight into
 * @r (streamed: no summary is held). */
static int load(struct cli_opts *o, struct mf_budget *b, struct job_report *r,
		struct manifest **out)
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
	offline_raise_nofile(o->ndirs);
	for (i = 0; i < o->ndirs && !ret; i++) {
		ret = mf_read_budget(o->dirs[i], &ms[i], b, err, sizeof(err));
		if (!ret && o->merge)
			ret = mf_read_summaries(&ms[i], o->region, false, err, sizeof(err));
		else if (!ret)
			ret = mf_read_summaries_each(&ms[i], NULL, jr_row, r, err, sizeof(err));
		if (!ret)
			offline_warn(&ms[i]);
		if (!ret && !o->merge) {
			ret = job_report_add(r, &ms[i]);
			if (ret == -ENOSPC)
				mf_budget_error(b, err, sizeof(err));
			else if (ret)
				snprintf(err, sizeof(err), "out of memory");
		}
		if (ret)
			log_error("%s", err);
	}
	/* other hosts' clocks, from the collectives they share with the first */
	if (!ret && clock_align_collectives(ms, o->ndirs)) {
		log_error("out of memory");
		ret = -ENOMEM;
	}
	if (!ret && !o->merge) {
		ret = job_report_finish(r, ms, o->ndirs);
		if (ret) {
			mf_budget_error(b, err, sizeof(err));
			log_error("report: %s", ret == -ENOSPC ? err : "out of memory");
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

/* --html FILE: the page, then one line saying where it is.  0 or 1. */
static int html_write(const struct cli_opts *o, const struct job_report *r,
		      const struct manifest *ms)
{
	char err[PATH_MAX + 512];

	if (job_report_html(o->html, r, ms, o->ndirs, o->top, err, sizeof(err))) {
		log_error("report: %s", err);
		return 1;
	}
	printf("fvbpf report: wrote %s\n", o->html);
	return 0;
}

static int run(int argc, char **argv, bool merge)
{
	struct cli_opts *o = calloc(1, sizeof(*o));
	struct manifest *ms = NULL;
	struct mf_budget budget;
	struct job_report r;
	char err[PATH_MAX + 512];
	size_t i;
	int ret = 1;

	if (!o) {
		log_error("out of memory");
		return 1;
	}
	o->top = JR_TOP_DEFAULT;
	o->segment = -1;
	o->step = -1;
	o->merge = merge;
	o->max_memory = BUDGET_DEFAULT;
	argp_err_exit_status = 2;
	if (argp_parse(merge ? &merge_argp : &report_argp, argc, argv, 0, NULL, o)) {
		free(o);
		return 2;
	}
	/* big arrays in their own mappings: freed, they leave the RSS */
	budget_tune_malloc();
	if (offline_budget(o->max_memory, merge ? "merge" : "report", &budget)) {
		free(o);
		return 1;
	}
	job_report_init(&r, &budget);
	r.with_uncounted = o->with_uncounted;
	if (load(o, &budget, &r, &ms))
		goto cleanup;
	if (merge) {
		struct tm_opts mo = { .output = o->output, .region = o->region, .segment = o->segment,
				     .step = o->step, .with_uncounted = o->with_uncounted,
				     .info = stdout };

		if (trace_merge(ms, o->ndirs, &mo, err, sizeof(err)))
			log_error("merge: %s", err);
		else
			ret = 0;
	} else {
		if (o->html)
			ret = html_write(o, &r, ms);
		else if (o->json)
			ret = job_report_print_json(stdout, &r, o->top) ? 1 : 0;
		else
			ret = job_report_print(stdout, &r, o->top) ? 1 : 0;
		if (fflush(stdout) || ferror(stdout)) {
			log_error("report: writing the output failed");
			ret = 1;
		}
	}
cleanup:
	job_report_free(&r);
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
