/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Every thread's Python frames, read from outside while the process runs
 * (fvbpf dump): the interpreter's thread states and each one's frame chain,
 * through process_vm_readv, with the layouts of proc/python/py_runtime.h.
 *
 * Nothing is stopped, so a running thread's stack can change under the
 * walk: a walk is kept only when the thread's innermost frame and its
 * instruction are the same after it as before (a caller's frame cannot
 * change while its callee runs); otherwise it is walked again, at most
 * PYW_TRIES times, and the last walk is kept and marked torn.  The target
 * owns every pointer: reads are bounded, chains are cut at PYW_DEPTH_MAX
 * frames and PYW_THREADS_MAX thread states, and a failed read ends a
 * chain (marked), never the dump.
 */
#ifndef FVBPF_PY_WALK_H
#define FVBPF_PY_WALK_H

#include <stdint.h>
#include <sys/types.h>

#include "proc/python/py_runtime.h"

#define PYW_DEPTH_MAX 128
#define PYW_THREADS_MAX 1024
#define PYW_TRIES 4

struct pyw_frame {
	uint64_t addr;      /* the frame (locals are read from it) */
	uint64_t code;      /* its code object */
	uint64_t instr;     /* prev_instr / instr_ptr; 3.10: f_lasti */
};

enum pyw_flag {
	PYW_CUT = 1,        /* more than PYW_DEPTH_MAX frames (or a cycle) */
	PYW_FAULT = 2,      /* a frame could not be read: the chain ends there */
	PYW_TORN = 4,       /* it changed under every try */
	PYW_NO_TID = 8,     /* 3.10: the thread state's pthread_t names no live thread */
};

struct pyw_stack {
	uint64_t tstate;
	pid_t tid;          /* the kernel's thread id, 0 when unknown */
	unsigned int flags; /* enum pyw_flag */
	unsigned int tries; /* walks it took */
	unsigned int nframes;
	struct pyw_frame frames[PYW_DEPTH_MAX]; /* innermost first */
};

/* What a walk of the thread list met. */
struct pyw_list {
	unsigned int states;     /* thread states walked */
	unsigned int cut;        /* the list went past PYW_THREADS_MAX (or cycled) */
	unsigned int bad;        /* a state that does not name the interpreter, or unreadable */
};

/*
 * Every thread state of @r's interpreter with its frames: *@out (malloc'd,
 * free() it) holds the count returned, or -errno (-EFAULT: the interpreter
 * or its thread list cannot be read).
 */
int pyw_threads(const struct py_runtime *r, struct pyw_stack **out, struct pyw_list *list);
/* The frames of one thread state into @st (tstate set by the caller). */
void pyw_walk(const struct py_runtime *r, struct pyw_stack *st);

#endif /* FVBPF_PY_WALK_H */
