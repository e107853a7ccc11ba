// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* `fvbpf export DIR [DIR...] -o OUT`: the traces of fvbpf output directories
 * as a folder HolisticTraceAnalysis and TensorBoard open (hta_export.h). */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_export.h"
#include "cli/cli_offline.h"
#include "offline/clock_align.h"
#include "offline/export/hta_export.h"
#include "offline/manifest/manifest_read.h"
#include "util/log.h"
#include "util/budget.h"

#define EXPORT_DIRS_MAX 4096

enum { OPT_UNCOUNTED = 0x100, OPT_MAX_MEMORY };

struct export_opts {
	const char *dirs[EXPORT_DIRS_MAX];
	size_t ndirs;
	const char *output;
	bool with_uncounted;
	uint64_t max_memory;
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct export_opts *o = state->input;

	switch (key) {
	case 'o':
		o->output = arg;
		return 0;
	case OPT_UNCOUNTED:
		o->with_uncounted = true;
		return 0;
	case OPT_MAX_MEMORY:
		return offline_max_memory(arg, &o->max_memory);
	case ARGP_KEY_ARG:
		if (o->ndirs == EXPORT_DIRS_MAX)
			argp_error(state, "more than %d directories", EXPORT_DIRS_MAX);
		o->dirs[o->ndirs++] = arg;
		return 0;
	case ARGP_KEY_END:
		if (!o->ndirs)
			argp_error(state, "give the fvbpf output directories to export");
		if (!o->output)
			argp_error(state, "give the folder to write with -o OUT");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp_option options[] = {
	{ "output", 'o', "OUT", 0, "The folder to write (made if missing)", 0 },
	{ "include-uncounted", OPT_UNCOUNTED, NULL, 0, OFFLINE_UNCOUNTED_DOC, 0 },
	{ "max-memory", OPT_MAX_MEMORY, "SIZE", 0,
	  "The most memory (RSS) to use, e.g. 512M (default 256M); directories that list more "
	  "than fits are refused", 0 },
	{ 0 }
};

static const struct argp export_argp = {
	options, parse_opt, "DIR [DIR...] -o OUT",
	"Write the traces of fvbpf output directories (one per node, or per attach) as a folder "
	"that HolisticTraceAnalysis and TensorBoard's profiler plugin open as they are: "
	"OUT/REGION/stepNNNN/rankR.pt.trace.json[.gz], one folder per training step with that "
	"step of every rank.  Ranks are paired by step across all the directories (the step key, "
	"else the overlap of their wall-clock times), never by segment number; NNNN counts a "
	"region's steps in time order.  Hard links where the filesystem allows, else copies; "
	"pftrace files are skipped.",
	NULL, NULL, NULL
};

static int open_out(const char *path)
{
	int fd;

	if (mkdir(path, 0755) && errno != EEXIST) {
		log_error("cannot make %s: %s", path, strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		log_error("cannot open %s: %s (give a folder with -o)", path, strerror(errno));
	return fd;
}

/* Every directory read, its summaries' metadata too (no rows). */
static int load(const struct export_opts *o, struct mf_budget *b, struct manifest *ms)
{
	char err[PATH_MAX + 512];
	size_t i;
	int ret = 0;

	offline_raise_nofile(o->ndirs);
	for (i = 0; i < o->ndirs && !ret; i++) {
		ret = mf_read_budget(o->dirs[i], &ms[i], b, err, sizeof(err));
		if (!ret)
			ret = mf_read_summaries(&ms[i], NULL, false, err, sizeof(err));
		if (ret)
			log_error("%s", err);
		else
			offline_warn(&ms[i]);
	}
	/* steps paired on one clock: other hosts' by the collectives they share */
	if (!ret && clock_align_collectives(ms, o->ndirs)) {
		log_error("out of memory");
		ret = -ENOMEM;
	}
	return ret;
}

static void say_skipped(const struct export_opts *o, const struct hta_export_stats *st)
{
	if (st->skipped_pftrace)
		log_warn("%llu pftrace files skipped: HTA and TensorBoard read JSON traces (attach "
			 "with --format json or json.gz)", (unsigned long long)st->skipped_pftrace);
	if (st->skipped_unranked)
		log_info("%llu traces of processes without a rank (launchers) left out: HTA would "
			 "read them as rank 0", (unsigned long long)st->skipped_unranked);
	if (st->uncounted && !o->with_uncounted)
		log_info("%llu segment%s that do%s not count (begun before the attach, ...) left out: "
			 "--include-uncounted exports them", (unsigned long long)st->uncounted,
			 st->uncounted == 1 ? "" : "s", st->uncounted == 1 ? "es" : "");
	if (st->no_times)
		log_warn("%llu segment%s without wall-clock times (no start_us, or no clock in the "
			 "manifest nor start_wallclock in the summary): cannot be paired by step, not "
			 "exported", (unsigned long long)st->no_times, st->no_times == 1 ? "" : "s");
	if (st->steps_missing)
		log_info("%llu of %llu steps lack a rank (no segment of it at that step): "
			 "fvbpf report lists them", (unsigned long long)st->steps_missing,
			 (unsigned long long)st->step_sets);
}

int export_command(int argc, char **argv)
{
	struct export_opts *o = calloc(1, sizeof(*o));
	struct hta_export_stats st = { 0 };
	struct hta_export_opts eo = { 0 };
	struct manifest *ms = NULL;
	struct mf_budget budget;
	char err[PATH_MAX + 512];
	int outfd = -1, ret = 1;
	size_t i;

	if (!o) {
		log_error("out of memory");
		return 1;
	}
	o->max_memory = BUDGET_DEFAULT;
	argp_err_exit_status = 2;
	if (argp_parse(&export_argp, argc, argv, 0, NULL, o)) {
		free(o);
		return 2;
	}
	budget_tune_malloc();
	ms = calloc(o->ndirs, sizeof(*ms));
	if (!ms) {
		log_error("out of memory");
		goto out;
	}
	if (offline_budget(o->max_memory, "export", &budget) || load(o, &budget, ms))
		goto out;
	outfd = open_out(o->output);
	if (outfd < 0)
		goto out;
	eo.with_uncounted = o->with_uncounted;
	eo.budget = &budget;
	if (hta_export(ms, o->ndirs, outfd, &eo, &st, err, sizeof(err))) {
		log_error("%s", err);
		goto out;
	}
	printf("exported %llu traces into %s (%llu steps, %llu step folders; %llu hard links, "
	       "%llu copies)\n", (unsigned long long)st.traces, o->output,
	       (unsigned long long)st.step_sets, (unsigned long long)st.steps,
	       (unsigned long long)st.linked, (unsigned long long)st.copied);
	say_skipped(o, &st);
	if (!st.traces)
		log_warn("no JSON trace to export in %s", o->dirs[0]);
	printf("HolisticTraceAnalysis: TraceAnalysis(trace_dir=\"%s/REGION/stepNNNN\")\n", o->output);
	ret = 0;
out:
	if (outfd >= 0)
		close(outfd);
	for (i = 0; ms && i < o->ndirs; i++)
		mf_free(&ms[i]);
	free(ms);
	free(o);
	return ret;
}
