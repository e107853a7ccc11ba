// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The options of `fvbpf attach`, one row each: what the parser checks, what
 * --help says and what docs/options.md lists all come from here, so a
 * range written once cannot disagree with itself.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "cli/attach_options.h"
#include "attach/attach.h"
#include "proc/inject/inject.h"
#include "util/budget.h"

#define PID_MAX_LIMIT 4194304 /* the kernel's largest pid_max */
/* Leaves PATH_MAX room for "/.trace_rank..._segment..._<region>.json.tmp.PID". */
#define OUTDIR_MAX 3900

const struct attach_opt attach_opt_table[AO_COUNT] = {
	[AO_PID] = { "pid", 'p', "PID[,PID...]", AK_COUNT, 1, PID_MAX_LIMIT,
		     .most = ATTACH_MAX_PIDS,
		     .help = "Processes to trace (repeatable; PIDs apart by commas or whitespace)" },
	[AO_CHILDREN] = { "children", OPT_CHILDREN, NULL, AK_FLAG,
			  .help = "Trace the -p processes and all their descendants, those alive "
				  "now and those started later (torchrun workers, restarted "
				  "workers); forked copies (DataLoader workers) are listed, not traced",
			  .see = "[Whole jobs](whole-jobs.md#whole-jobs-torchrun-process-trees-several-nodes)" },
	[AO_MATCH] = { "match", OPT_MATCH, "REGEX", AK_TEXT, 1, 1024,
		       .help = "Trace processes whose command line matches REGEX (POSIX extended), "
			       "now and as they start, and their descendants as --children does" },
	[AO_WAIT] = { "wait", OPT_WAIT, "SECONDS", AK_SECONDS, 0, 86400, .has_def = 1,
		      .def_text = "0: fail at once",
		      .help = "With --match: wait up to this long for a first match" },
	[AO_REGIONS] = { "regions", 'r', "LIST", AK_TEXT,
			 .def_text = "$FASTVIDEO_TORCH_PROFILE_REGIONS",
			 .help = "Regions to trace, comma separated, FastVideo names (a Python job's "
				 "fastvideo.profiler regions count too, through the Python shim); "
				 "an entry torch:GLOB makes each PyTorch record_function scope whose "
				 "name matches GLOB (fnmatch) a region, an entry py:MODULE:QUALNAME "
				 "each call of that Python function",
			 .accepted = "any length; names of 1 to 63 characters (others are warned "
				     "about and ignored); at most 16 torch: patterns and 16 py: "
				     "functions" },
	[AO_STEP_BY] = { "step-by", OPT_STEP_BY, "GLOB", AK_TEXT,
			 .help = "One segment per training step, region 'step': from the end of one "
				 "torch scope matching GLOB (e.g. 'Optimizer.step*') to the end of "
				 "the next; needs no markers",
			 .accepted = "a glob" },
	[AO_OUTPUT] = { "output", 'o', "DIR", AK_TEXT, 1, OUTDIR_MAX,
			.def_text = "./fvbpf-traces",
			.help = "Output directory, created if needed" },
	[AO_OVERWRITE] = { "overwrite", OPT_OVERWRITE, NULL, AK_FLAG,
			   .help = "Remove an earlier attach's files (manifest.json and the "
				   "segment files) from the output directory first; without it, a "
				   "directory that holds them is refused, since two runs in one "
				   "directory would be read as one" },
	[AO_DURATION] = { "duration", 'd', "SECONDS", AK_SECONDS, 0.001, 31536000,
			  .help = "Stop after this long", .accepted = "(365 days)" },
	[AO_SEGMENTS] = { "segments", 'n', "N", AK_COUNT, 1, 1000000000,
			  .help = "Stop once every traced process has written N segments" },
	[AO_SCHEDULE] = { "schedule", OPT_SCHEDULE, "SPEC", AK_TEXT, 1, 200,
			  .help = "Write only some steps, as torch.profiler's schedule: per process, "
				  "skip skip_first segments, then cycles of wait + warmup segments "
				  "dropped and active written, repeat cycles (0: forever), then stop; "
				  "e.g. wait=1,warmup=1,active=3,repeat=2",
			  .accepted = "KEY=N items, comma separated: skip_first, wait, warmup, "
				      "active (at least 1), repeat, each 0 to 1000000; not with -n" },
	[AO_START_AT] = { "start-at", OPT_START_AT, "TIME", AK_TEXT, 1, 32,
			  .help = "Cut no segment before TIME, then begin at each process's first step "
				  "boundary after it, so that attaches started apart (one per node, "
				  "or one per group of ranks) begin on the same step. TIME: Unix "
				  "seconds (1765101600.5), HH:MM:SS[.frac] today in local time, or "
				  "/Ns or /Nm: the next multiple of N seconds or minutes of Unix time "
				  "(/10s: the next 10-second boundary, the same on every node whose "
				  "clock is synchronised)",
			  .accepted = "a time up to 24 hours ahead; one in the past cuts at once, with "
				      "a warning",
			  .see = "[Whole jobs](whole-jobs.md#the-same-step-on-every-rank)" },
	[AO_DUMP_ON_STALL] = { "dump-on-stall", OPT_DUMP_ON_STALL, "SECONDS", AK_SECONDS, 0.1, 86400,
			       .help = "When a process that had ended a segment ends none for this "
				       "long, write what `fvbpf dump` shows of every traced process "
				       "(Python stacks, blocked calls, the ranks a collective waits "
				       "for) into the output directory as dump_stallNNNN.txt and "
				       ".json, once per stall, and say so in the exit report",
			       .see = "[When a job hangs](hangs.md#watch-a-job---dump-on-stall)" },
	[AO_REGION_FILE] = { "region-file", OPT_REGION_FILE, "FILE", AK_TEXT,
			     .help = "Extra regions, one per line: NAME [description], # comments",
			     .accepted = "a regular file of at most 1 MiB, lines of at most 512 "
					 "bytes, plain UTF-8 text (no control characters but tabs); "
					 "at most 256 regions with the 18 built in" },
	[AO_RINGBUF] = { "ringbuf-size", OPT_RINGBUF, "MB", AK_POW2, 1, 1024,
			 .def_text = "8, 32 with --record-shapes, --with-stack or --profile-memory, "
				     "twice that for --children, --match or more than two -p "
				     "processes",
			 .help = "Ring buffer size in MiB (one for all the traced processes)" },
	[AO_FORMAT] = { "format", OPT_FORMAT, "FORMAT", AK_TEXT, .def_text = "json",
			.help = "Trace file format: json (Chrome JSON), json.gz (the same JSON "
				"gzipped) or pftrace (Perfetto's protobuf trace, several times "
				"smaller); summaries are always written",
			.accepted = "json, json.gz or pftrace",
			.see = "[Trace formats](formats.md#trace-formats)" },
	[AO_GPU_WAIT] = { "gpu-wait", OPT_GPU_WAIT, "SECONDS", AK_SECONDS, 0, 600, .def = 2,
			  .has_def = 1,
			  .help = "How long a closed segment waits for its GPU records" },
	[AO_MAX_MEMORY] = { "max-memory", OPT_MAX_MEMORY, "SIZE", AK_SIZE, 1,
			    (double)BUDGET_MAX_MEMORY, .def = (double)BUDGET_DEFAULT, .has_def = 1,
			    .help = "The most memory (RSS) fvbpf may use; past its shares closed "
				    "segments wait on disk and a segment too big stops growing "
				    "(counted)",
			    .accepted = "(1024-based); must leave at least 8 MiB for segments "
					"once attached (three quarters of what remains; a quarter "
					"is for names and stacks)",
			    .see = "[Memory](memory.md#memory---max-memory)" },
	[AO_WINDOW] = { "window", OPT_WINDOW, "SECONDS", AK_SECONDS, 0.01, 86400,
			.help = "Consecutive time windows of this length as segments (region "
				"'window'), from the attach on, with or without markers, torch or "
				"libfvbpf.so in the process (a C++ CUDA server)" },
	[AO_NO_TORCH] = { "no-torch-ops", OPT_NO_TORCH, NULL, AK_FLAG,
			  .help = "Do not probe PyTorch operators, autograd nodes and scopes (on "
				  "whenever libtorch_cpu.so is mapped)" },
	[AO_OP_SOURCE] = { "op-source", OPT_OP_SOURCE, "SOURCE", AK_TEXT, .def_text = "auto",
			   .help = "Where PyTorch operators come from: callbacks (PyTorch's own "
				   "RecordFunction callbacks, registered by libfvbpf.so in the "
				   "process while a segment is open: no trap per operator), "
				   "uprobes (out of process, nothing of fvbpf in the job), or auto "
				   "(callbacks where the library is in the process, its torch "
				   "version is one fvbpf checked and no --record-shapes, "
				   "--with-stack or --profile-memory asks for uprobes' data)",
			   .accepted = "auto, callbacks (refused where they cannot be had) or uprobes",
			   .see = "[PyTorch jobs](pytorch.md#operators-through-pytorchs-callbacks---op-source)" },
	[AO_LAUNCH_SOURCE] = { "launch-source", OPT_LAUNCH_SOURCE, "SOURCE", AK_TEXT,
			       .def_text = "auto",
			       .help = "Where cudaLaunchKernel calls inside segments come from: auto "
				       "(libfvbpf.so's hook on the PLT slots that call it, where "
				       "the library is in the process: no trap per launch; every "
				       "other call through its uprobe) or uprobes (all of them)",
			       .accepted = "auto or uprobes",
			       .see = "[CUDA calls](cuda.md#launches-through-the-librarys-hook---launch-source)" },
	[AO_RECORD_SHAPES] = { "record-shapes", OPT_RECORD_SHAPES, NULL, AK_FLAG,
			       .def_text = "$FASTVIDEO_TORCH_PROFILER_RECORD_SHAPES",
			       .help = "PyTorch operators' input shapes, read out of process: "
				       "summary rows per (name, shapes) with torch's `shapes` "
				       "string, Kineto's Input Dims and Input type on trace slices",
			       .accepted = "the variable: 1, true, yes or on (0, false, no, off "
					   "or empty: off)",
			       .see = "[Shapes and FLOPs](pytorch.md#shapes-and-flops---record-shapes---with-flops)" },
	[AO_WITH_FLOPS] = { "with-flops", OPT_WITH_FLOPS, NULL, AK_FLAG,
			    .def_text = "$FASTVIDEO_TORCH_PROFILER_WITH_FLOPS",
			    .help = "FLOPs per operator from its shapes, as torch.profiler counts "
				    "them (mm, addmm, bmm, baddbmm, conv2d, mul, add), and apart "
				    "the ones it does not (linear, matmul, conv1d/3d, attention)",
			    .accepted = "as --record-shapes",
			    .see = "[Shapes and FLOPs](pytorch.md#shapes-and-flops---record-shapes---with-flops)" },
	[AO_WITH_STACK] = { "with-stack", OPT_WITH_STACK, NULL, AK_FLAG,
			    .def_text = "on when $FASTVIDEO_TORCH_PROFILER_WITH_STACK is set (not 0)",
			    .help = "Give each PyTorch operator inside a segment the Python stack "
				    "of the thread that called it (read by BPF from the "
				    "interpreter's frames; CPython 3.10 to 3.13), and write per segment "
				    "a folded-stacks file and an SVG flame graph",
			    .see = "[Python stacks](python-stacks.md#python-stacks---with-stack)" },
	[AO_GROUP_BY_STACK] = { "group-by-stack", OPT_GROUP_BY_STACK, "N", AK_COUNT, 1, 16,
				.def = 1, .has_def = 1,
				.help = "With --with-stack: each segment's pylines_*.txt table "
					"groups time by the innermost N Python frames, and its "
					"summaries' torch rows by name and those frames (as torch's "
					"key_averages(group_by_stack_n=N)); without it the "
					"summaries are not grouped by stack",
				.see = "[Python stacks](python-stacks.md#python-stacks---with-stack)" },
	[AO_PROFILE_MEMORY] = { "profile-memory", OPT_PROFILE_MEMORY, NULL, AK_FLAG,
				.def_text = "$FASTVIDEO_TORCH_PROFILER_WITH_PROFILE_MEMORY",
				.help = "PyTorch allocations and frees inside segments, CPU and CUDA "
					"(libc10.so's allocator, out of process): per-op memory "
					"columns, [memory] trace events, peaks per device, a "
					"timeline picture and a torch memory snapshot per segment",
				.see = "[Memory profile](memory-profile.md)" },
	[AO_INJECT] = { "inject", OPT_INJECT, NULL, AK_FLAG,
			.help = "Load libfvbpf.so (markers and the CUPTI agent, for GPU time) into "
				"each traced process that lacks it, without a restart: ptrace "
				"stops its main thread for about a millisecond to call its own "
				"dlopen(); refused for a process already being traced",
			.see = "[Injecting the agent](inject.md#injecting-the-agent---inject)" },
	[AO_INJECT_TIMEOUT] = { "inject-timeout", OPT_INJECT_TIMEOUT, "SECONDS", AK_SECONDS,
				INJECT_TIMEOUT_MIN, INJECT_TIMEOUT_MAX,
				.def = INJECT_TIMEOUT_DEFAULT, .has_def = 1,
				.help = "With --inject: give up after this long, target restored, "
					"attach without the agent" },
	[AO_INJECT_LIB] = { "inject-lib", OPT_INJECT_LIB, "FILE", AK_TEXT, 1, PATH_MAX - 1,
			    .def_text = "libfvbpf.so beside fvbpf, in .. or ../lib",
			    .help = "With --inject: the library to load",
			    .accepted = "a regular file" },
	[AO_VERBOSE] = { "verbose", 'v', NULL, AK_FLAG, .most = 2,
			 .help = "More messages; -vv adds libbpf's own (verifier log)" },
};

/* Whole numbers without a fraction, others as %g: 0.001, 31536000. */
static void fmt_num(char *buf, size_t n, double v)
{
	if (v == (double)(long long)v)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "%g", v);
}

/* The largest of G, M, K that divides the size exactly. */
static void fmt_size(char *buf, size_t n, double v)
{
	static const char units[] = "GMK";
	uint64_t b = (uint64_t)v;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t u = 1ULL << (30 - 10 * i);

		if (b >= u && b % u == 0) {
			snprintf(buf, n, "%llu%c", (unsigned long long)(b / u), units[i]);
			return;
		}
	}
	snprintf(buf, n, "%llu", (unsigned long long)b);
}

/* What the value must be, in words, from the table's numbers. */
void attach_opt_accepted(const struct attach_opt *o, char *buf, size_t n)
{
	char lo[32], hi[32];
	size_t len;

	fmt_num(lo, sizeof(lo), o->min);
	fmt_num(hi, sizeof(hi), o->max);
	buf[0] = '\0';
	switch (o->kind) {
	case AK_FLAG:
		if (o->most > 1)
			snprintf(buf, n, "up to %u times", o->most);
		break;
	case AK_TEXT:
		if (o->max > 0)
			snprintf(buf, n, "%s to %s bytes", lo, hi);
		break;
	case AK_SECONDS:
	case AK_COUNT:
		snprintf(buf, n, "%s to %s", lo, hi);
		break;
	case AK_POW2:
		snprintf(buf, n, "a power of two from %s to %s", lo, hi);
		break;
	case AK_SIZE:
		fmt_size(hi, sizeof(hi), o->max);
		snprintf(buf, n, "1 byte to %s, a decimal count with an optional K, M or G", hi);
		break;
	}
	len = strlen(buf);
	if (o->kind != AK_FLAG && o->most)
		len += snprintf(buf + len, n - len, ", at most %u in all", o->most);
	if (o->accepted && len < n)
		len += snprintf(buf + len, n - len, "%s%s", !len ? "" : o->accepted[0] == '(' ? " " : "; ",
				o->accepted);
	if (o->kind == AK_SECONDS && len < n)
		snprintf(buf + len, n - len, ", decimal");
}

/* The default in words, or "" for none. */
void attach_opt_default(const struct attach_opt *o, char *buf, size_t n)
{
	buf[0] = '\0';
	if (o->def_text)
		snprintf(buf, n, "%s", o->def_text);
	else if (o->has_def && o->kind == AK_SIZE)
		fmt_size(buf, n, o->def);
	else if (o->has_def)
		fmt_num(buf, n, o->def);
}

/* argp's option array, built once: each help line is the row's phrase,
 * then in brackets its range and default as docs/options.md has them. */
const struct argp_option *attach_argp_options(void)
{
	static struct argp_option opts[AO_COUNT + 2];
	static char docs[AO_COUNT][1024];
	char acc[512], def[128];
	int i;

	if (opts[0].name)
		return opts;
	for (i = 0; i < AO_COUNT; i++) {
		const struct attach_opt *o = &attach_opt_table[i];

		attach_opt_accepted(o, acc, sizeof(acc));
		attach_opt_default(o, def, sizeof(def));
		if (*acc || *def)
			snprintf(docs[i], sizeof(docs[i]), "%s [%s%s%s%s]", o->help, acc,
				 *acc && *def ? ", " : "", *def ? "default " : "", def);
		else
			snprintf(docs[i], sizeof(docs[i]), "%s", o->help);
		opts[i] = (struct argp_option){ .name = o->name, .key = o->key, .arg = o->arg,
						.doc = docs[i] };
	}
	opts[AO_COUNT] = (struct argp_option){ .name = "help-markdown", .key = OPT_HELP_MARKDOWN,
					       .flags = OPTION_HIDDEN,
					       .doc = "Print docs/options.md's option table" };
	return opts;
}

/* Markdown text: a table cell must not end early on '|' nor turn a glob's
 * '*' into emphasis. */
static void md_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '*' || *s == '_' || *s == '<')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void attach_options_markdown(FILE *f)
{
	char acc[512], def[128];
	int i;

	fprintf(f, "| option | meaning | accepted | default |\n| --- | --- | --- | --- |\n");
	for (i = 0; i < AO_COUNT; i++) {
		const struct attach_opt *o = &attach_opt_table[i];

		attach_opt_accepted(o, acc, sizeof(acc));
		attach_opt_default(o, def, sizeof(def));
		if (o->key < 0x100)
			fprintf(f, "| `-%c%s%s`, `--%s` | ", o->key, o->arg ? " " : "",
				o->arg ? o->arg : "", o->name);
		else
			fprintf(f, "| `--%s%s%s` | ", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		md_text(f, o->help);
		if (o->see)
			fprintf(f, " (see %s)", o->see);
		fputs(" | ", f);
		md_text(f, acc);
		fputs(" | ", f);
		if (*def)
			fprintf(f, "`%s`", def);
		fputs(" |\n", f);
	}
}
