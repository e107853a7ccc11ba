/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The op tree of a segment's threads: each torch call's parent, from entry
 * order and depth on its thread, as the summary (torch_summary.c), the
 * memory columns (mem_output.c) and the folded stacks (pystack_fold.c) all
 * read it.
 *
 * A call at depth d has as parent the innermost call of its thread still
 * open above it, when that one is at depth d - 1 and in the segment.  It
 * has none (-1) when its caller began before the segment (a side thread's
 * record_function scope open across a step end), when the caller was not
 * recorded (lost, cut), and when the call lies at TORCH_STACK_MAX or deeper
 * (pairing keeps none there; the callbacks' depths are the target's word).
 * Such a call is a root: its time and memory count for itself only.
 */
#ifndef FVBPF_OP_TREE_H
#define FVBPF_OP_TREE_H

#include <stdbool.h>
#include <stddef.h>

#include "pipeline/segment.h"

struct op_tree {
	long *parent;           /* index in seg->ops of the parent call, -1 none */
	unsigned int *kids;     /* direct children */
	/* profiler_util's _remove_dup_nodes: a call with its parent's name and
	 * kind that is that parent's only child is merged into the parent
	 * (aten::div calling aten::div) */
	bool *merged;
	size_t n;               /* seg->nops */
	size_t too_deep;        /* calls at TORCH_STACK_MAX or deeper */
};

/* The tree of @seg's calls into @t (arrays of seg->nops).  0 or -ENOMEM. */
int op_tree_build(const struct segment *seg, struct op_tree *t);
/* @i, or the call it is merged into; -1 stays -1. */
long op_tree_resolve(const struct op_tree *t, long i);
void op_tree_free(struct op_tree *t);

#endif /* FVBPF_OP_TREE_H */
