/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack in the JSON trace: each cpu_op's args name its stack
 * ("Python stack": id, "Python line": the innermost frame), the trace's
 * "pythonStacks" table gives each id's frames (innermost first), and
 * python_function slices rebuilt from the stacks seen go on a track of
 * their own beside each thread (derived from the operators' entries: a
 * function's slice spans its first to its last operator, not its call).
 */
#ifndef FVBPF_PYSTACK_TRACE_H
#define FVBPF_PYSTACK_TRACE_H

#include "output/seg_output.h"
#include "pipeline/segment.h"
#include "util/text_out.h"

#define PYSTACK_TRACK_BIT (1u << 30)  /* tid of a thread's python_function track */
#define PYSTACK_THREADS_MAX 256        /* threads given python_function slices, at most */
#define PYSTACK_DERIVED_NOTE "from the Python stacks of its torch calls (fvbpf --with-stack)"

/* A derived python_function slice: the function, called from the same
 * line of the same caller (frames outside it agree), from its first
 * operator's start to its last one's end. */
struct pystack_derived {
	uint32_t func, file;
	int32_t firstline, caller_line;
	uint64_t start, end;
};

typedef void (*pystack_derived_fn)(void *ctx, uint32_t tid, const struct pystack_derived *d);

/* The threads of @c's segment whose torch calls have stacks, in order of
 * their first one, at most @max into @tids; how many. */
size_t pystack_trace_tids(const struct segment *s, uint32_t *tids, size_t max);
/* @fn per python_function slice of thread @tid, innermost first where they
 * end together; @open: TORCH_STACK_MAX entries of scratch. */
void pystack_derive(const struct seg_output_ctx *c, uint32_t tid, struct pystack_derived *open,
		    pystack_derived_fn fn, void *ctx);

/* `,"Python stack":ID,"Python line":"..."` for a slice with @stack (0: nothing). */
void pystack_trace_args(struct obuf *f, const struct seg_output_ctx *c, uint32_t stack);
/* A torch call's: its stack's, and Kineto's "Sequence number" and "Fwd
 * thread id" where it has one (the callbacks); a backward node with its
 * forward op's stack adds `"Python stack (forward)":ID,"Python line
 * (forward)":"..."`. */
void pystack_trace_op_args(struct obuf *f, const struct seg_output_ctx *c,
			   const struct torch_call *op);
void pystack_trace_slices(struct obuf *f, const struct seg_output_ctx *c);
/* `,\n"pythonStacks":{...}` after traceEvents' closing bracket. */
void pystack_trace_table(struct obuf *f, const struct seg_output_ctx *c);

#endif /* FVBPF_PYSTACK_TRACE_H */
