// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* fvbpf: profile regions of a running PyTorch/CUDA job with eBPF. */
#include <stdio.h>
#include <string.h>

#include "attach/attach.h"
#include "cli/cli_dump.h"
#include "cli/cli_export.h"
#include "cli/cli_report.h"
#include "util/log.h"
#include "pipeline/registry.h"

#define FVBPF_VERSION "0.1.0"

static int regions_command(int argc, char **argv)
{
	struct region_registry reg;
	char err[512];
	unsigned int i;

	registry_init(&reg);
	if (argc == 3 && !strcmp(argv[1], "--region-file")) {
		if (registry_load_file(&reg, argv[2], err, sizeof(err))) {
			log_error("%s", err);
			return 1;
		}
	} else if (argc != 1) {
		log_error("usage: fvbpf regions [--region-file FILE]");
		return 2;
	}
	for (i = 0; i < reg.count; i++)
		printf("%-32s %s%s\n", reg.defs[i].name, reg.defs[i].desc,
		       reg.defs[i].builtin ? "" : " [from region file]");
	return 0;
}

static int version_command(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("fvbpf %s\n", FVBPF_VERSION);
	return 0;
}

static int help_command(int argc, char **argv);

/*
 * The commands, as bpftool's `cmd` array: name, handler, arguments and one
 * line of help.  `fvbpf --help` is printed from this table; each command's
 * own options are in its --help (attach's from cli/attach_options.c).
 */
static const struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	const char *args; /* lines after the first are indented under it */
	const char *help;
} cmds[] = {
	{ "attach", attach_command,
	  "(-p PID[,PID...] [--children] | --match REGEX [--wait SECONDS])\n"
	  "[--step-by GLOB | -r REGIONS | --window SECONDS] [-o DIR] [-d SECONDS] [-n SEGMENTS]\n"
	  "[--format FORMAT] [--inject] [--region-file FILE] [-v] ...",
	  "trace running processes, one segment per training step (--step-by,\n"
	  "the default for PyTorch jobs), region (-r) or time window (--window)" },
	{ "dump", dump_command, "(-p PID[,PID...] [--children] | --match REGEX) [--json]",
	  "where every process (rank) of a job is now: Python stacks, blocked\n"
	  "system calls, the collective ranks wait in and the ranks absent from it;\n"
	  "nothing is stopped" },
	{ "report", report_command, "DIR [DIR...] [--json | --html FILE] [--top N] [--max-memory SIZE]",
	  "segment times per rank, slowest rank, top ops" },
	{ "merge", merge_command,
	  "DIR [DIR...] -o FILE [--region NAME] [--segment N] [--max-memory SIZE]",
	  "one step of every rank in one Chrome trace" },
	{ "export", export_command, "DIR [DIR...] -o OUT",
	  "the traces as one folder per step, every rank's trace in it, for\n"
	  "HolisticTraceAnalysis and TensorBoard" },
	{ "regions", regions_command, "[--region-file FILE]", "list the region registry" },
	{ "version", version_command, "", "print the version" },
	{ "help", help_command, "", "print this help" },
};

/* Spellings of commands as options. */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "--version", "version" },
	{ "--help", "help" },
	{ "-h", "help" },
};

static const char *line_end(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl ? nl : s + strlen(s);
}

/* Each line of @text after @indent spaces. */
static void print_indented(FILE *f, int indent, const char *text)
{
	const char *nl;

	while (*text) {
		nl = line_end(text);
		fprintf(f, "%*s%.*s\n", indent, "", (int)(nl - text), text);
		text = *nl ? nl + 1 : nl;
	}
}

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: fvbpf COMMAND [OPTIONS]\n\nCommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		fprintf(f, "  %s", cmds[i].name);
		if (*cmds[i].args) {
			const char *nl = line_end(cmds[i].args);

			fprintf(f, " %.*s\n", (int)(nl - cmds[i].args), cmds[i].args);
			if (*nl)
				print_indented(f, 4 + (int)strlen(cmds[i].name), nl + 1);
		} else {
			fputc('\n', f);
		}
		print_indented(f, 6, cmds[i].help);
	}
	fprintf(f, "\nRun 'fvbpf attach --help' for all attach options (docs/options.md).\n");
}

static int help_command(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static const struct cmd *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].alias))
			name = aliases[i].name;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	/* argp names the program by argv[0]: "fvbpf attach: ..." */
	static char prog[64];
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	c = find_command(argv[1]);
	if (!c) {
		log_error("unknown command '%s': try 'fvbpf --help'", argv[1]);
		return 2;
	}
	snprintf(prog, sizeof(prog), "fvbpf %s", c->name);
	argv[1] = prog;
	return c->func(argc - 1, argv + 1);
}
