/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack: the calling thread's CPython frames at each torch operator
 * entry inside a segment.  Shared by BPF (bpf/pystack.bpf.c) and the loader
 * (user/proc/python/py_runtime.c finds the addresses, user/pipeline/pystack.c
 * interns and resolves the records).
 *
 * BPF finds the thread's PyThreadState in the interpreter's thread list
 * (native_thread_id == tid; cached per thread, checked again on every use)
 * rather than through _PyRuntime's GIL holder: torch's bindings release the
 * GIL before they call the dispatcher, so at an operator's entry the
 * calling thread does not hold it.  Then tstate->cframe->current_frame and
 * ->previous, at most FVBPF_PY_DEPTH_MAX frames, one bounded read each.
 *
 * CPython 3.10 (FVBPF_PY_FRAME_OBJECT): no native_thread_id, its thread
 * states name their thread by thread_id, the pthread_t, which on x86-64
 * glibc is the thread pointer (the fs base, read by BPF from the task);
 * the frames are PyFrameObjects (tstate->frame, ->f_back, ->f_code) and
 * the instruction is f_lasti, an int index of code units.
 */
#ifndef FVBPF_PYSTACK_H
#define FVBPF_PYSTACK_H

#include "fvbpf_events.h"

#define FVBPF_EV_PYSTACK 21      /* enum fvbpf_event_type: issue 21's number */
#define FVBPF_PY_DEPTH_MAX 128   /* frames copied, innermost first */
#define FVBPF_PY_THREADS_MAX 64  /* thread states looked at per lookup */
#define FVBPF_PY_WINDOW 80       /* bytes read from a frame: offsets below this */
#define FVBPF_PY_NO_CFRAME 0xffff /* cf_current: the thread state holds the frame itself (3.13, 3.10) */
#define FVBPF_PY_FRAME_OBJECT 0x1 /* mode: 3.10, see above */

/* Map "py_cfg", by the process's slot: what the loader measured. */
struct fvbpf_py_cfg {
	__u32 tgid;             /* 0: no stacks for this slot */
	__u32 depth;            /* frames to copy, at most FVBPF_PY_DEPTH_MAX */
	__u64 interp_head;      /* address of _PyRuntime.interpreters.head */
	__u16 interp_threads;   /* PyInterpreterState.threads.head */
	__u16 ts_next;          /* PyThreadState.next */
	__u16 ts_native_tid;    /* PyThreadState.native_thread_id (3.10: .thread_id) */
	__u16 ts_cframe;        /* PyThreadState.cframe (3.11, 3.12), .current_frame (3.13),
				 * .frame (3.10) */
	__u16 cf_current;       /* _PyCFrame.current_frame, FVBPF_PY_NO_CFRAME: none */
	__u16 fr_code;          /* _PyInterpreterFrame.f_code, less fr_base: 8-aligned,
				 * < FVBPF_PY_WINDOW */
	__u16 fr_previous;      /* .previous, likewise */
	__u16 fr_instr;         /* .prev_instr (.instr_ptr in 3.13, the int f_lasti in 3.10),
				 * likewise */
	__u16 fr_owner;         /* .owner (a byte), < FVBPF_PY_WINDOW */
	__u16 owner_cstack;     /* FRAME_OWNED_BY_CSTACK (3.12+): frames that are not
				 * Python code, skipped; 0: none */
	__u8 fr_base;           /* the window starts at frame + fr_base */
	__u8 mode;              /* FVBPF_PY_FRAME_OBJECT or 0 */
	__u16 pad;
};

#define FVBPF_PYSTACK_CUT 0x1u      /* more frames than depth */
#define FVBPF_PYSTACK_FAULT 0x2u    /* a frame could not be read */

struct fvbpf_py_frame {
	__u64 code;             /* PyCodeObject address */
	__u64 instr;            /* prev_instr: the instruction being executed */
};

/* Written just before the torch entry record it belongs to, same thread,
 * same ts_ns; hdr.size = 32 + 16 * nframes. */
struct fvbpf_pystack_event {
	struct fvbpf_event_hdr hdr;
	__u32 nframes;
	__u32 flags;            /* FVBPF_PYSTACK_* */
	struct fvbpf_py_frame frames[FVBPF_PY_DEPTH_MAX];
};

/*
 * Map "py_tstates", (tgid << 32 | tid) -> its PyThreadState (0: none, as
 * of @checked_ns), and the operator whose stack was walked last, while it
 * runs: an operator entered deeper in the C stack (@op_sp) while the
 * thread's innermost Python frame and instruction are still the ones seen
 * then was called by that operator with no Python in between, and has its
 * stack: its entry record says so (FVBPF_TORCH_SAME_STACK) instead of a
 * walk.  The operator's return clears @op_sp.
 */
struct fvbpf_py_tstate {
	__u64 tstate;
	__u64 checked_ns;
	__u64 op_sp;            /* stack pointer at that operator's entry, 0: none running */
	__u64 op_frame;         /* the innermost frame then */
	__u64 op_instr;         /* and its prev_instr */
};
#define FVBPF_TORCH_SAME_STACK (1u << 31)  /* in a torch entry's id: the stack of the
					    * thread's last walked operator */
#define FVBPF_PY_NEG_NS 200000000ull  /* a thread without Python is looked for again after this */

#ifndef __BPF__
_Static_assert(sizeof(struct fvbpf_py_cfg) == 40, "py cfg layout");
_Static_assert(sizeof(struct fvbpf_py_tstate) == 40, "py tstate layout");
_Static_assert(sizeof(struct fvbpf_pystack_event) == 32 + 16 * FVBPF_PY_DEPTH_MAX,
	       "pystack layout");
#endif

#endif /* FVBPF_PYSTACK_H */
