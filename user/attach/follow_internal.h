/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The state of --children and --match, shared by follow.c (following the
 * tree) and follow_report.c (the manifest's "followed" object, the exit
 * report's lines). */
#ifndef FVBPF_FOLLOW_INTERNAL_H
#define FVBPF_FOLLOW_INTERNAL_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/proc_tree.h"

struct follow {
	struct proc_tree tree;
	regex_t re;
	bool has_re;
	const char *pattern;
	bool children;
	pid_t *excluded;            /* fvbpf and its ancestors: never --match'd */
	size_t nexcluded;
	uint64_t last_scan_ns;
	unsigned int max_segments;
	bool warned_limit;
	uint64_t map_full;          /* tree map inserts that failed */
	uint64_t attach_latency_max_ns; /* fork/exec seen -> traced */
	uint64_t attach_latency_sum_ns;
	unsigned int attach_latency_n;
	unsigned int traced, copies;
	/* follow_start(): the processes there at the attach are armed as one
	 * batch (their probes, then their libraries' answers together) */
	bool batch;
	size_t *pending;             /* tree indexes begun, waiting for target_attach_end() */
	size_t npending, pending_cap;
};

#endif /* FVBPF_FOLLOW_INTERNAL_H */
