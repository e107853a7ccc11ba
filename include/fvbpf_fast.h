/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The operator fast path: where libfvbpf.so is in a PyTorch process, it
 * registers RecordFunction callbacks with PyTorch (at::addGlobalCallback)
 * while the process is inside a segment, and writes one compact record per
 * operator or node begin and end into shared memory that fvbpf maps and
 * drains beside the BPF ring: no trap per operator.
 *
 * The memory is a memfd of the library's (fvbpf opens /proc/PID/fd/N):
 * a header, then FVBPF_FAST_THREADS single-producer rings, one per thread
 * of the job that records.  The producer advances `head`, the consumer
 * `tail`, both byte counts (positions modulo ring_bytes); a record never
 * straddles the end (a PAD record fills the rest).  A record that does
 * not fit is counted in `drops`, never half-written.
 */
#ifndef FVBPF_FAST_H
#define FVBPF_FAST_H

#ifdef __BPF__
/* vmlinux.h provides __u32 */
#else
#include <linux/types.h>
#endif

#define FVBPF_FAST_MAGIC 0x74736166u     /* "fast" */
/* 5: the library follows and records segments from its answer on, not
 * from the odd epoch (fvbpf skips what comes before its attach); a loader
 * and a library of different versions use uprobes. */
#define FVBPF_FAST_VERSION 5u
#define FVBPF_FAST_THREADS 64
#define FVBPF_FAST_RING_BYTES (2048u * 1024u) /* ~50,000 records: 150 ms at 350 k/s */
#define FVBPF_FAST_NAME 160              /* bytes of name kept (torch's names are shorter) */

/*
 * The layouts of PyTorch's RecordFunctionCallback and RecordScope this
 * library knows, which fvbpf names in its request after checking the
 * target's torch version; the library never guesses one.
 * 1: torch 2.x (checked against the headers of 2.13.0 and 2.14.1 by
 *    tests/lib/torch_abi_check.cpp): {start, end, double sampling_prob,
 *    bool scopes[10], bool needs_inputs, needs_outputs, needs_ids},
 *    40 bytes; FUNCTION 0, BACKWARD_FUNCTION 1, USER_SCOPE 7.  Inside
 *    at::RecordFunction (private fields behind inline accessors, so read
 *    at their offsets): sequence_nr_ (seqNr(), int64) at 200,
 *    step_callbacks_.thread_id_ (threadId(), uint64) at 88,
 *    fwd_thread_id_ (forwardThreadId(), uint64) at 304.
 */
#define FVBPF_FAST_LAYOUT_TORCH2 1u

#ifndef __BPF__
/* Layout 1's at::RecordFunctionCallback, as the library builds it and
 * hands it to at::addGlobalCallback by value (trivially copyable, 40
 * bytes: passed in memory, like this struct). */
#define FVBPF_RF_NUM_SCOPES 10
enum {
	FVBPF_RF_FUNCTION = 0,
	FVBPF_RF_BACKWARD_FUNCTION = 1,
	FVBPF_RF_USER_SCOPE = 7,
};
/* Byte offsets of three fields in layout 1's at::RecordFunction. */
#define FVBPF_RF_OFF_SEQ_NR 200
#define FVBPF_RF_OFF_THREAD_ID 88
#define FVBPF_RF_OFF_FWD_THREAD_ID 304
struct fvbpf_rf_callback {
	void *start;             /* std::unique_ptr<ObserverContext> (*)(const RecordFunction &) */
	void *end;               /* void (*)(const RecordFunction &, ObserverContext *) */
	double sampling_prob;
	_Bool scopes[FVBPF_RF_NUM_SCOPES];
	_Bool needs_inputs, needs_outputs, needs_ids;
};
#endif

/* The library's answer in the control page's fast channel (its state). */
enum fvbpf_fast_state {
	FVBPF_FAST_NONE = 0,
	FVBPF_FAST_READY = 1,        /* callbacks in place, rings in the answer's fd */
	FVBPF_FAST_NO_TORCH = 2,     /* no libtorch_cpu.so in the process */
	FVBPF_FAST_NO_SYMBOL = 3,    /* addGlobalCallback/removeCallback/name not found */
	FVBPF_FAST_BAD_LAYOUT = 4,   /* a layout this library does not know */
	FVBPF_FAST_NO_MEMORY = 5,    /* memfd_create/ftruncate/mmap failed (the answer's err) */
	FVBPF_FAST_OFF = 6,          /* FVBPF_FAST=off in the job's environment */
};

enum fvbpf_fast_kind {
	FVBPF_FAST_PAD = 0,          /* skip to the end of the ring */
	FVBPF_FAST_OP = 1,           /* begin, RecordScope FUNCTION */
	FVBPF_FAST_NODE = 2,         /* begin, RecordScope BACKWARD_FUNCTION */
	FVBPF_FAST_END = 3,          /* the end of the thread's innermost recorded begin */
	FVBPF_FAST_STACK = 4,        /* --with-stack: the Python frames of the begin after it */
	FVBPF_FAST_API = 5,          /* a hooked CUDA call's entry (struct fvbpf_fast_api) */
	FVBPF_FAST_API_END = 6,      /* its return (struct fvbpf_fast_api_end) */
};

/* The library's answer in the control page's cuda channel (its state). */
enum fvbpf_cuda_hook_state {
	FVBPF_HOOK_NONE = 0,
	FVBPF_HOOK_READY = 1,        /* the answer's slots: PLT slots point at the wrapper */
	FVBPF_HOOK_NO_CUDART = 2,    /* no libcudart.so with cudaLaunchKernel in the process */
	FVBPF_HOOK_PROLOGUE = 3,     /* cudaLaunchKernel starts with an instruction we do not run */
	FVBPF_HOOK_NO_CALLER = 4,    /* no loaded object calls it through a PLT slot */
	FVBPF_HOOK_NO_MEMORY = 5,    /* the rings could not be made (the answer's err) */
	FVBPF_HOOK_OFF = 6,          /* FVBPF_FAST=off in the job's environment */
	FVBPF_HOOK_UNSUPPORTED = 7,  /* not an x86-64 build of the library */
};

/* The calls the hook knows (struct fvbpf_fast_api's call). */
enum fvbpf_hook_call {
	FVBPF_HOOK_LAUNCH_KERNEL = 0, /* cudaLaunchKernel */
};

struct fvbpf_fast_rec {
	__u8 kind;                   /* enum fvbpf_fast_kind */
	__u8 flags;                  /* FVBPF_FAST_CUT */
	__u16 size;                  /* bytes of the record, a multiple of 8 */
	__u32 tid;
	__u64 ts_ns;                 /* CLOCK_MONOTONIC, as bpf_ktime_get_ns() */
	/* begins only: */
	__u32 name_len;
	__u32 pad;
	__s64 seq_nr;                /* seqNr(): the autograd sequence number, -1 none */
	__u64 rf_tid;                /* threadId(): torch's id of the recording thread */
	__u64 fwd_tid;               /* forwardThreadId(): a node's forward thread, else 0 */
	/* char name[name_len], then zeros to the next multiple of 8 */
};

/*
 * A STACK record: the calling thread's CPython frames, innermost first,
 * walked by the library itself (its own thread's, so nothing is read
 * across threads) at an outermost operator's begin, which follows it on
 * the same ring with the same ts_ns.  The frames are struct
 * fvbpf_py_frame's (fvbpf_pystack.h): code object, instruction.
 */
struct fvbpf_fast_stack {
	__u8 kind;                   /* FVBPF_FAST_STACK */
	__u8 flags;                  /* FVBPF_FAST_CUT: more frames than the walk takes */
	__u16 size;                  /* FVBPF_FAST_STACK_SIZE + 16 * nframes */
	__u32 tid;
	__u64 ts_ns;
	__u32 nframes;               /* 1 to FVBPF_PY_DEPTH_MAX */
	__u32 pad;
	/* then nframes x { __u64 code, instr } */
};
#define FVBPF_FAST_STACK_SIZE 24u

/*
 * A hooked CUDA call: its entry with the arguments as BPF's uprobe would
 * have read them (System V registers, then the stack: struct
 * fvbpf_api_enter's args), and its return.  Both on the calling thread's
 * ring, the entry before the call, the return after it.
 */
struct fvbpf_fast_api {
	__u8 kind;                   /* FVBPF_FAST_API */
	__u8 flags;
	__u16 size;                  /* FVBPF_FAST_API_SIZE */
	__u32 tid;
	__u64 ts_ns;
	__u32 call;                  /* enum fvbpf_hook_call */
	__u32 pad;
	__u64 args[10];              /* FVBPF_API_ARGS */
};
#define FVBPF_FAST_API_SIZE 104u

struct fvbpf_fast_api_end {
	__u8 kind;                   /* FVBPF_FAST_API_END */
	__u8 flags;
	__u16 size;                  /* FVBPF_FAST_API_END_SIZE */
	__u32 tid;
	__u64 ts_ns;
	__s32 ret;                   /* cudaError_t */
	__u32 call;
};
#define FVBPF_FAST_API_END_SIZE 24u

#define FVBPF_FAST_CUT 1u            /* the name was longer than FVBPF_FAST_NAME;
				      * a STACK: the walk was cut at its depth */
#define FVBPF_FAST_SAME 2u           /* --with-stack: inside a recorded op, its stack */
#define FVBPF_FAST_END_SIZE 16u      /* an END record: kind..ts_ns */
#define FVBPF_FAST_BEGIN_SIZE 48u    /* a begin's fixed part */

struct fvbpf_fast_ring {
	__u32 tid;                   /* owner, 0: free (its records may still be unread) */
	__u32 pad;
	__u64 head;                  /* producer: bytes written (store-release) */
	__u64 tail;                  /* consumer: bytes read (store-release) */
	__u64 drops;                 /* records that did not fit */
	__u64 reserved[4];
	/* then FVBPF_FAST_RING_BYTES of records */
};

struct fvbpf_fast_hdr {
	__u32 magic;
	__u32 version;
	__u32 nthreads;              /* rings that follow */
	__u32 ring_bytes;
	__u64 no_ring;               /* records lost by threads that found no free ring */
	__u64 late;                  /* segments the callbacks were registered late for */
	__u64 outside;               /* callback calls outside segments (registration lag) */
	__u64 reserved[3];
};

static inline __u64 fvbpf_fast_ring_off(__u32 i)
{
	return sizeof(struct fvbpf_fast_hdr) +
	       (__u64)i * (sizeof(struct fvbpf_fast_ring) + FVBPF_FAST_RING_BYTES);
}

#define FVBPF_FAST_BYTES fvbpf_fast_ring_off(FVBPF_FAST_THREADS)

#if !defined(__BPF__) && !defined(__cplusplus)
_Static_assert(sizeof(struct fvbpf_fast_rec) == FVBPF_FAST_BEGIN_SIZE, "fast record layout");
_Static_assert(sizeof(struct fvbpf_fast_stack) == FVBPF_FAST_STACK_SIZE, "fast stack layout");
_Static_assert(sizeof(struct fvbpf_fast_api) == FVBPF_FAST_API_SIZE, "fast api layout");
_Static_assert(sizeof(struct fvbpf_fast_api_end) == FVBPF_FAST_API_END_SIZE, "fast api end layout");
_Static_assert(sizeof(struct fvbpf_fast_ring) == 64, "fast ring layout");
_Static_assert(sizeof(struct fvbpf_fast_hdr) == 64, "fast header layout");
_Static_assert(sizeof(struct fvbpf_rf_callback) == 40, "RecordFunctionCallback, layout 1");
/* The rings' size travels in a control-page channel's 32-bit bytes. */
_Static_assert(sizeof(struct fvbpf_fast_hdr) + (__u64)FVBPF_FAST_THREADS *
		       (sizeof(struct fvbpf_fast_ring) + FVBPF_FAST_RING_BYTES) <= 0xffffffffu,
	       "the rings' size fits a channel's bytes");
#endif

#endif /* FVBPF_FAST_H */
