// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The options of `fvbpf attach` (moved out of attach_cli.c). */
#include "cli/attach_options.h"

const struct argp_option attach_options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Processes to trace (repeatable, at most 64)", 0 },
	{ "regions", 'r', "LIST", 0,
	  "Regions to trace, comma separated, FastVideo names (default: $FASTVIDEO_TORCH_PROFILE_REGIONS)", 0 },
	{ "output", 'o', "DIR", 0, "Output directory (default ./fvbpf-traces)", 0 },
	{ "duration", 'd', "SECONDS", 0, "Stop after this many seconds (0.001 to 31536000)", 0 },
	{ "segments", 'n', "N", 0,
	  "Stop once every traced process has written N segments (1 to 1000000000)", 0 },
	{ "region-file", OPT_REGION_FILE, "FILE", 0,
	  "Extra regions, one per line: NAME [description] (a regular file, at most 1 MiB)", 0 },
	{ "ringbuf-size", OPT_RINGBUF, "MB", 0,
	  "Ring buffer size in MiB, a power of two from 1 to 1024 (default 8)", 0 },
	{ "gpu-wait", OPT_GPU_WAIT, "SECONDS", 0,
	  "How long a closed segment waits for its GPU records, 0 to 600 (default 2)", 0 },
	{ "no-torch-ops", OPT_NO_TORCH, NULL, 0,
	  "Do not probe PyTorch operators, autograd nodes and scopes (on when libtorch_cpu is mapped)", 0 },
	{ "step-by", OPT_STEP_BY, "GLOB", 0,
	  "One segment per training step: from the end of one torch scope matching GLOB "
	  "(e.g. 'Optimizer.step*') to the end of the next; needs no markers", 0 },
	{ "window", OPT_WINDOW, "SECONDS", 0,
	  "For a process with neither markers nor torch scopes: consecutive time windows of this "
	  "length as segments (region 'window')", 0 },
	{ "children", OPT_CHILDREN, NULL, 0,
	  "Trace the -p processes and all their descendants, those alive now and those started "
	  "later (torchrun workers, restarted workers); forked copies (DataLoader workers) are "
	  "listed, not traced", 0 },
	{ "match", OPT_MATCH, "REGEX", 0,
	  "Trace processes whose command line matches REGEX (POSIX extended), now and as they "
	  "start, and their descendants as --children does", 0 },
	{ "wait", OPT_WAIT, "SECONDS", 0,
	  "With --match: wait up to this long for a first match (0 to 86400, default 0)", 0 },
	{ "inject", OPT_INJECT, NULL, 0,
	  "Load libfvbpf.so (markers and the CUPTI agent, for GPU time) into each traced process "
	  "that lacks it: ptrace stops its main thread for about a millisecond to call its own "
	  "dlopen(); refused for a process already being traced", 0 },
	{ "inject-timeout", OPT_INJECT_TIMEOUT, "SECONDS", 0,
	  "With --inject: give up (target restored, no agent) after this long, 0.1 to 600 (default 5)", 0 },
	{ "inject-lib", OPT_INJECT_LIB, "FILE", 0,
	  "With --inject: the library to load (default: libfvbpf.so beside fvbpf, or ../lib/)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "Trace file format: json (default, Chrome JSON), json.gz (the same gzipped) or pftrace "
	  "(Perfetto's protobuf trace, several times smaller); summaries are always written", 0 },
	{ "max-memory", OPT_MAX_MEMORY, "SIZE", 0,
	  "Most memory fvbpf may use, with K, M or G (default 256M, at most 1024G); past its share "
	  "closed segments wait on disk and a segment too big stops growing (counted)", 0 },
	{ "verbose", 'v', NULL, 0, "Say more (repeat for libbpf's own messages)", 0 },
	{},
};
