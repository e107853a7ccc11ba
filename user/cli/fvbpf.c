// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* fvbpf: profile regions of a running PyTorch/CUDA job with eBPF. */
#include <stdio.h>
#include <string.h>

#include "attach/attach.h"
#include "cli/cli_report.h"
#include "util/log.h"
#include "pipeline/registry.h"

#define FVBPF_VERSION "0.1.0"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fvbpf COMMAND [OPTIONS]\n"
		"\n"
		"Commands:\n"
		"  attach -p PID[,PID...] -r REGIONS [-o DIR] [-d SECONDS] [-n SEGMENTS]\n"
		"         [--region-file FILE] [-v]   trace regions of running processes\n"
		"  report DIR [DIR...] [--json] [--top N]\n"
		"                                     segment times per rank, slowest rank, top ops\n"
		"  merge DIR [DIR...] -o FILE [--region NAME] [--segment N]\n"
		"                                     one step of every rank in one Chrome trace\n"
		"  regions [--region-file FILE]       list the region registry\n"
		"  version                            print the version\n"
		"\n"
		"Run 'fvbpf attach --help' for all attach options.\n");
}

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

int main(int argc, char **argv)
{
	static char attach_name[] = "fvbpf attach", report_name[] = "fvbpf report",
		    merge_name[] = "fvbpf merge";

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "attach")) {
		argv[1] = attach_name;
		return attach_command(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "report")) {
		argv[1] = report_name;
		return report_command(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "merge")) {
		argv[1] = merge_name;
		return merge_command(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "regions"))
		return regions_command(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("fvbpf %s\n", FVBPF_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	log_error("unknown command '%s': try 'fvbpf --help'", argv[1]);
	return 2;
}
