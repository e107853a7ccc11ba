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
#include "offline/hta_export.h"
#include "offline/manifest_read.h"
#include "util/log.h"

#define EXPORT_DIRS_MAX 4096

struct export_opts {
	const char *dirs[EXPORT_DIRS_MAX];
	size_t ndirs;
	const char *output;
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct export_opts *o = state->input;

	switch (key) {
	case 'o':
		o->output = arg;
		return 0;
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
	{ 0 }
};

static const struct argp export_argp = {
	options, parse_opt, "DIR [DIR...] -o OUT",
	"Write the traces of fvbpf output directories (one per node) as a folder that "
	"HolisticTraceAnalysis and TensorBoard's profiler plugin open as they are: "
	"OUT/REGION/stepNNNN/rankR.pt.trace.json[.gz], one folder per step with every "
	"rank's trace (hard links where the filesystem allows, else copies; pftrace "
	"files are skipped).",
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

static int export_dir(const char *dir, int outfd, struct hta_export_stats *st)
{
	struct manifest m;
	char err[PATH_MAX + 512];
	int ret;

	ret = mf_read(dir, &m, err, sizeof(err));
	if (!ret)
		ret = mf_read_summaries(&m, NULL, false, err, sizeof(err));
	if (!ret)
		ret = hta_export(&m, outfd, st, err, sizeof(err));
	if (ret)
		log_error("%s", err);
	mf_free(&m);
	return ret;
}

int export_command(int argc, char **argv)
{
	struct export_opts *o = calloc(1, sizeof(*o));
	struct hta_export_stats st = { 0 };
	int outfd = -1, ret = 1;
	size_t i;

	if (!o) {
		log_error("out of memory");
		return 1;
	}
	argp_err_exit_status = 2;
	if (argp_parse(&export_argp, argc, argv, 0, NULL, o)) {
		free(o);
		return 2;
	}
	outfd = open_out(o->output);
	if (outfd < 0)
		goto out;
	for (i = 0; i < o->ndirs; i++)
		if (export_dir(o->dirs[i], outfd, &st))
			goto out;
	printf("exported %llu traces into %s (%llu step folders; %llu hard links, %llu copies)\n",
	       (unsigned long long)st.traces, o->output, (unsigned long long)st.steps,
	       (unsigned long long)st.linked, (unsigned long long)st.copied);
	if (st.skipped_pftrace)
		log_warn("%llu pftrace files skipped: HTA and TensorBoard read JSON traces (attach "
			 "with --format json or json.gz)", (unsigned long long)st.skipped_pftrace);
	if (st.skipped_unranked)
		log_info("%llu traces of processes without a rank (launchers) left out: HTA would "
			 "read them as rank 0", (unsigned long long)st.skipped_unranked);
	if (!st.traces)
		log_warn("no JSON trace to export in %s", o->dirs[0]);
	printf("HolisticTraceAnalysis: TraceAnalysis(trace_dir=\"%s/REGION/stepNNNN\")\n", o->output);
	ret = 0;
out:
	if (outfd >= 0)
		close(outfd);
	free(o);
	return ret;
}
