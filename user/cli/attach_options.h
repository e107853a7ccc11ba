// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The options of `fvbpf attach`: one table, the only place their ranges and
 * defaults are written.  The parser (attach_cli.c) checks against it and
 * names its bounds in its errors; `fvbpf attach --help` and the option
 * reference in docs/options.md (`fvbpf attach --help-markdown`, compared by
 * tests/bats/options.bats) are rendered from it.
 */
#ifndef FVBPF_CLI_ATTACH_OPTIONS_H
#define FVBPF_CLI_ATTACH_OPTIONS_H

#include <argp.h>
#include <stdio.h>

/* argp keys of the options without a short letter. */
enum {
	OPT_REGION_FILE = 0x100,
	OPT_RINGBUF,
	OPT_GPU_WAIT,
	OPT_NO_TORCH,
	OPT_STEP_BY,
	OPT_WINDOW,
	OPT_CHILDREN,
	OPT_MATCH,
	OPT_WAIT,
	OPT_INJECT,
	OPT_INJECT_TIMEOUT,
	OPT_INJECT_LIB,
	OPT_FORMAT,
	OPT_MAX_MEMORY,
	OPT_RECORD_SHAPES,
	OPT_WITH_FLOPS,
	OPT_HELP_MARKDOWN,
	OPT_SCHEDULE,
	OPT_WITH_STACK,
	OPT_GROUP_BY_STACK,
	OPT_PROFILE_MEMORY,
	OPT_OP_SOURCE,
	OPT_LAUNCH_SOURCE,
	OPT_START_AT,
	OPT_OVERWRITE,
	OPT_DUMP_ON_STALL,
};

/* The table's rows, in --help order. */
enum attach_opt_id {
	AO_PID,
	AO_CHILDREN,
	AO_MATCH,
	AO_WAIT,
	AO_REGIONS,
	AO_STEP_BY,
	AO_OUTPUT,
	AO_OVERWRITE,
	AO_DURATION,
	AO_SEGMENTS,
	AO_SCHEDULE,
	AO_START_AT,
	AO_DUMP_ON_STALL,
	AO_REGION_FILE,
	AO_RINGBUF,
	AO_FORMAT,
	AO_GPU_WAIT,
	AO_MAX_MEMORY,
	AO_WINDOW,
	AO_NO_TORCH,
	AO_OP_SOURCE,
	AO_LAUNCH_SOURCE,
	AO_RECORD_SHAPES,
	AO_WITH_FLOPS,
	AO_WITH_STACK,
	AO_GROUP_BY_STACK,
	AO_PROFILE_MEMORY,
	AO_INJECT,
	AO_INJECT_TIMEOUT,
	AO_INJECT_LIB,
	AO_VERBOSE,
	AO_COUNT,
};

/* How a value is read, and so how its range reads. */
enum attach_opt_kind {
	AK_FLAG,	/* no value */
	AK_TEXT,	/* a string; max > 0: 1 to max bytes */
	AK_SECONDS,	/* a decimal number of seconds, min to max */
	AK_COUNT,	/* decimal digits, min to max */
	AK_POW2,	/* a count that is a power of two */
	AK_SIZE,	/* a byte count with K, M or G (budget_parse_size) */
};

struct attach_opt {
	const char *name;	/* long name */
	int key;		/* short letter or OPT_* */
	const char *arg;	/* the value's name; NULL for a flag */
	enum attach_opt_kind kind;
	double min, max;	/* the accepted range (AK_TEXT: max bytes, 0: any) */
	unsigned int most;	/* > 0: at most this many values in all */
	double def;		/* the default when has_def */
	int has_def;
	const char *def_text;	/* a default that is not a number */
	const char *help;	/* what it does, one phrase */
	const char *accepted;	/* what else the value must be, after the range */
	const char *see;	/* docs/options.md only: a link to more */
};

extern const struct attach_opt attach_opt_table[AO_COUNT];

/* What the value must be and its default, in words, from the row. */
void attach_opt_accepted(const struct attach_opt *o, char *buf, size_t n);
void attach_opt_default(const struct attach_opt *o, char *buf, size_t n);
/* argp's option array, each option's help with its range and default. */
const struct argp_option *attach_argp_options(void);
/* docs/options.md's table, for --help-markdown. */
void attach_options_markdown(FILE *f);

#endif
