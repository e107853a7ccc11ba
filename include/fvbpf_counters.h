/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * BPF's loss counters, shared by the BPF programs and the loader: one
 * struct, one .bss variable (`counters`, bpf/fvbpf_common.bpf.h), read
 * through the loader (bpf_counters_read) for the exit report, the manifest
 * and the process-tree report.  BPF only adds to them.
 */
#ifndef FVBPF_COUNTERS_H
#define FVBPF_COUNTERS_H

#ifdef __BPF__
/* vmlinux.h provides __u64 */
#else
#include <linux/types.h>
#endif

struct fvbpf_counters {
	__u64 ringbuf_drops;    /* records lost to a full ring (process records aside) */
	__u64 unbalanced_ends;  /* region ends without their begin (begun before attach) */
	__u64 scope_untracked;  /* torch scopes begun whose end cannot be seen */
	__u64 eval_unknown;     /* evaluate_function on a node class not in torch_vtables */
	__u64 tree_full;        /* children not followed: the tree map was full */
	__u64 tree_drops;       /* process records lost to a full ring */
	__u64 py_stacks;        /* --with-stack: Python stacks recorded */
	__u64 py_drops;         /* ... lost to a full ring */
	__u64 py_no_thread;     /* thread-state lookups that found no Python thread */
	__u64 py_fault;         /* ... that could not read the thread list (not cached) */
};

#endif /* FVBPF_COUNTERS_H */
